//===- TileDialect.cpp - tile dialect registration and types --------------===//

#include "tilec/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace tilec::tile;

#include "tilec/Dialect/Tile/IR/TileDialect.cpp.inc"
#include "tilec/Dialect/Tile/IR/TileEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tilec/Dialect/Tile/IR/TileTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tilec/Dialect/Tile/IR/TileAttrs.cpp.inc"

void TileDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "tilec/Dialect/Tile/IR/TileTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tilec/Dialect/Tile/IR/TileAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tilec/Dialect/Tile/IR/TileOps.cpp.inc"
      >();
}

Operation *TileDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  if (auto typed = dyn_cast<TypedAttr>(value))
    if (arith::ConstantOp::isBuildableWith(typed, type))
      return arith::ConstantOp::create(builder, loc, type, typed);
  return nullptr;
}

LogicalResult PointerType::verify(function_ref<InFlightDiagnostic()> emitError,
                                  Type pointeeType, int addressSpace) {
  if (!pointeeType.isIntOrFloat() && !isa<PointerType>(pointeeType))
    return emitError() << "pointee type must be an integer, a float or a "
                          "pointer, got "
                       << pointeeType;
  if (addressSpace < 0)
    return emitError() << "address space must be non-negative, got "
                       << addressSpace;
  return success();
}

static bool isScalarOrPointer(Type type) {
  return type.isIntOrIndexOrFloat() || isa<PointerType>(type);
}

/// Fails, through `emitError`, when `type` is a static tensor of more
/// elements than a block tensor may hold.
static LogicalResult
verifyBlockTensorSize(function_ref<InFlightDiagnostic()> emitError, Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return success();
  constexpr int64_t limit = TileDialect::getMaxBlockTensorElements();
  std::optional<int64_t> count = 1;
  for (int64_t size : tensor.getShape())
    count = count ? llvm::checkedMul(*count, size) : std::nullopt;
  if (count && *count <= limit)
    return success();
  InFlightDiagnostic diagnostic = emitError();
  diagnostic << tensor << " has ";
  if (count)
    diagnostic << *count;
  else
    diagnostic << "more than " << std::numeric_limits<int64_t>::max();
  return diagnostic << " elements; a block tensor holds at most " << limit
                    << " (2^" << llvm::Log2_64(limit) << ")";
}

/// Checks every tensor a kernel computes, whatever dialect computes it
/// (tile, arith, math, scf, tilegpu), before any pass runs on it: a tensor
/// past the limit would only make later passes materialize it element by
/// element.
static LogicalResult verifyKernelTensors(func::FuncOp kernel) {
  WalkResult result = kernel.walk<WalkOrder::PreOrder>([](Operation *op) {
    for (Type type : op->getResultTypes())
      if (failed(verifyBlockTensorSize([&] { return op->emitError(); }, type)))
        return WalkResult::interrupt();
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments()) {
          auto emitError = [&] {
            return op->emitError()
                   << "block argument #" << argument.getArgNumber() << ": ";
          };
          if (failed(verifyBlockTensorSize(emitError, argument.getType())))
            return WalkResult::interrupt();
        }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

LogicalResult TileDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() == getKernelAttrName()) {
    auto func = dyn_cast<func::FuncOp>(op);
    if (!func)
      return op->emitError() << "'" << getKernelAttrName()
                             << "' may only be attached to func.func";
    // Dialect attributes are verified before the op's own invariants: a
    // function written in generic form may lack its name or type (found by
    // TtirFuzzer), which func.func's verifier reports next.
    if (!func.getSymNameAttr() || !func.getFunctionTypeAttr())
      return success();
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError()
             << "'" << getKernelAttrName() << "' must be a unit attribute";
    if (func.getFunctionType().getNumResults() != 0)
      return op->emitError() << "kernel must not return values, it returns "
                             << func.getFunctionType().getNumResults();
    // The name becomes the PTX entry's: a letter or '_' then letters,
    // digits, '_' or '$' (others aborted the NVPTX backend: "Symbol name
    // with unsupported characters").
    StringRef name = func.getSymName();
    auto isLetter = [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    };
    if (name.empty() || !isLetter(name.front()) ||
        !llvm::all_of(name, [&](char c) {
          return isLetter(c) || (c >= '0' && c <= '9') || c == '$';
        }))
      return op->emitError()
             << "kernel name '" << name
             << "' is not a PTX identifier (a letter or '_', then letters, "
                "digits, '_' or '$')";
    // A target dialect may append parameters of its own type, described by
    // an attribute of that dialect (tilegpu's tensor maps).
    auto isTargetParameter = [&](unsigned index, Type type) {
      DictionaryAttr attrs = func.getArgAttrDict(index);
      return attrs && llvm::any_of(attrs, [&](NamedAttribute attr) {
               return attr.getNameDialect() == &type.getDialect();
             });
    };
    for (auto [index, type] :
         llvm::enumerate(func.getFunctionType().getInputs()))
      if (!isScalarOrPointer(type) && !isTargetParameter(index, type))
        return op->emitError()
               << "kernel argument #" << index
               << " must be a scalar or a !tile.ptr, got " << type;
    return verifyKernelTensors(func);
  }
  return op->emitError() << "unknown tile dialect attribute '"
                         << attr.getName().getValue() << "'";
}

/// The type of argument `argIndex` of `op`'s region `regionIndex`: its block
/// argument's, or for a function without a body (a declaration) its declared
/// input's; null where the op's attributes do not match it (a function in
/// generic form), which the op's own verifier reports after the dialect's.
static Type regionArgumentType(Operation *op, unsigned regionIndex,
                               unsigned argIndex) {
  Region &region = op->getRegion(regionIndex);
  if (!region.empty())
    return argIndex < region.getNumArguments()
               ? region.getArgument(argIndex).getType()
               : Type();
  auto func = dyn_cast<func::FuncOp>(op);
  if (!func || !func.getFunctionTypeAttr())
    return Type();
  ArrayRef<Type> inputs = func.getFunctionType().getInputs();
  return argIndex < inputs.size() ? inputs[argIndex] : Type();
}

LogicalResult TileDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  if (attr.getName() == getDivisibilityAttrName()) {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || value.getInt() <= 0 || !llvm::isPowerOf2_64(value.getInt()))
      return op->emitError()
             << "'" << getDivisibilityAttrName() << "' of argument #"
             << argIndex << " must be a positive power of two, got "
             << attr.getValue();
    Type argType = regionArgumentType(op, regionIndex, argIndex);
    if (argType && !argType.isInteger() && !isa<PointerType>(argType))
      return op->emitError()
             << "'" << getDivisibilityAttrName() << "' on argument #"
             << argIndex << " of type " << argType
             << ": only integers and pointers have a divisibility";
    return success();
  }
  if (attr.getName() == getEqualToOneAttrName()) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << getEqualToOneAttrName()
                             << "' of argument #" << argIndex
                             << " must be a unit attribute";
    Type argType = regionArgumentType(op, regionIndex, argIndex);
    if (argType && !argType.isSignlessInteger())
      return op->emitError()
             << "'" << getEqualToOneAttrName() << "' on argument #" << argIndex
             << " of type " << argType << ": only integers can equal 1";
    return success();
  }
  return op->emitError() << "unknown tile dialect argument attribute '"
                         << attr.getName().getValue() << "'";
}

Type tilec::tile::getElementTypeOrSelf(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.getElementType();
  return type;
}

Type tilec::tile::getPointeeTypeOrTensorOf(Type ptrLike) {
  if (auto tensor = dyn_cast<RankedTensorType>(ptrLike)) {
    auto ptr = dyn_cast<PointerType>(tensor.getElementType());
    if (!ptr)
      return Type();
    return tensor.clone(ptr.getPointeeType());
  }
  if (auto ptr = dyn_cast<PointerType>(ptrLike))
    return ptr.getPointeeType();
  return Type();
}

Type tilec::tile::getI1TypeWithShapeOf(Type type) {
  auto i1 = IntegerType::get(type.getContext(), 1);
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.clone(i1);
  return i1;
}
