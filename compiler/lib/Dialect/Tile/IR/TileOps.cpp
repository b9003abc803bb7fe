//===- TileOps.cpp - tile dialect operations ------------------------------===//

#include "tilec/Dialect/Tile/IR/Tile.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace tilec::tile;

/// Formats a shape as `AxBxC` for diagnostics.
static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(shape, os, "x");
  return text;
}

/// A splat constant of `type` when `value` is a splat elements attribute or a
/// scalar constant; null otherwise.
static Attribute reshapeSplatConstant(Attribute value, Type type) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType || isa<PointerType>(tensorType.getElementType()))
    return {};
  // Constants never carry a layout encoding: folding must keep the type.
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(value))
    return SplatElementsAttr::get(tensorType, splat.getSplatValue<Attribute>());
  if (isa_and_nonnull<IntegerAttr, FloatAttr>(value))
    return SplatElementsAttr::get(tensorType, value);
  return {};
}

//===----------------------------------------------------------------------===//
// MakeRangeOp
//===----------------------------------------------------------------------===//

LogicalResult MakeRangeOp::verify() {
  int64_t start = getStart(), end = getEnd();
  if (end <= start)
    return emitOpError() << "end (" << end << ") must be greater than start ("
                         << start << ")";
  auto type = getType();
  if (type.getRank() != 1)
    return emitOpError() << "result must be a 1-D tensor, got rank "
                         << type.getRank();
  if (!type.getElementType().isInteger(32))
    return emitOpError() << "result elements must be i32, got "
                         << type.getElementType();
  if (type.getDimSize(0) != end - start)
    return emitOpError() << "result has " << type.getDimSize(0)
                         << " elements but the range [" << start << ", " << end
                         << ") has " << end - start;
  return success();
}

//===----------------------------------------------------------------------===//
// SplatOp
//===----------------------------------------------------------------------===//

OpFoldResult SplatOp::fold(FoldAdaptor adaptor) {
  return reshapeSplatConstant(adaptor.getSrc(), getType());
}

//===----------------------------------------------------------------------===//
// BroadcastOp
//===----------------------------------------------------------------------===//

LogicalResult BroadcastOp::verify() {
  auto srcType = cast<RankedTensorType>(getSrc().getType());
  auto resultType = cast<RankedTensorType>(getType());
  if (srcType.getRank() != resultType.getRank())
    return emitOpError() << "source rank " << srcType.getRank()
                         << " differs from result rank "
                         << resultType.getRank();
  for (auto [dim, sizes] :
       llvm::enumerate(llvm::zip(srcType.getShape(), resultType.getShape()))) {
    auto [srcSize, resultSize] = sizes;
    if (srcSize != resultSize && srcSize != 1)
      return emitOpError() << "dimension " << dim << " of the source ("
                           << srcSize << ") must be 1 or equal the result's ("
                           << resultSize << ")";
  }
  return success();
}

OpFoldResult BroadcastOp::fold(FoldAdaptor adaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  return reshapeSplatConstant(adaptor.getSrc(), getType());
}

namespace {
/// broadcast(broadcast(x)) -> broadcast(x); broadcast(splat(s)) -> splat(s).
struct FoldBroadcastProducer : OpRewritePattern<BroadcastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BroadcastOp op,
                                PatternRewriter &rewriter) const override {
    Operation *producer = op.getSrc().getDefiningOp();
    if (auto inner = dyn_cast_or_null<BroadcastOp>(producer)) {
      rewriter.replaceOpWithNewOp<BroadcastOp>(op, op.getType(),
                                               inner.getSrc());
      return success();
    }
    if (auto splat = dyn_cast_or_null<SplatOp>(producer)) {
      rewriter.replaceOpWithNewOp<SplatOp>(op, op.getType(), splat.getSrc());
      return success();
    }
    return failure();
  }
};

/// A shape-changing op of a splat is a splat of the result's shape.
template <typename OpTy> struct FoldShapeOfSplat : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto splat = op.getSrc().template getDefiningOp<SplatOp>();
    if (!splat)
      return failure();
    rewriter.replaceOpWithNewOp<SplatOp>(op, op.getType(), splat.getSrc());
    return success();
  }
};
} // namespace

void BroadcastOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<FoldBroadcastProducer>(context);
}

//===----------------------------------------------------------------------===//
// ExpandDimsOp
//===----------------------------------------------------------------------===//

LogicalResult ExpandDimsOp::verify() {
  auto srcType = cast<RankedTensorType>(getSrc().getType());
  auto resultType = cast<RankedTensorType>(getType());
  int64_t axis = getAxis();
  if (axis < 0 || axis > srcType.getRank())
    return emitOpError() << "axis " << axis << " is out of range [0, "
                         << srcType.getRank() << "]";
  SmallVector<int64_t> expected(srcType.getShape());
  expected.insert(expected.begin() + axis, 1);
  if (resultType.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result shape "
                         << shapeString(resultType.getShape()) << " must be "
                         << shapeString(expected);
  return success();
}

OpFoldResult ExpandDimsOp::fold(FoldAdaptor adaptor) {
  return reshapeSplatConstant(adaptor.getSrc(), getType());
}

void ExpandDimsOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                               MLIRContext *context) {
  results.add<FoldShapeOfSplat<ExpandDimsOp>>(context);
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto srcType = cast<RankedTensorType>(getSrc().getType());
  auto resultType = cast<RankedTensorType>(getType());
  if (srcType.getNumElements() != resultType.getNumElements())
    return emitOpError() << "source has " << srcType.getNumElements()
                         << " elements but the result has "
                         << resultType.getNumElements();
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  if (auto producer = getSrc().getDefiningOp<ReshapeOp>()) {
    getSrcMutable().assign(producer.getSrc());
    return getResult();
  }
  return reshapeSplatConstant(adaptor.getSrc(), getType());
}

//===----------------------------------------------------------------------===//
// TransOp
//===----------------------------------------------------------------------===//

LogicalResult TransOp::verify() {
  auto srcType = cast<RankedTensorType>(getSrc().getType());
  auto resultType = cast<RankedTensorType>(getType());
  ArrayRef<int32_t> order = getOrder();
  if (static_cast<int64_t>(order.size()) != srcType.getRank())
    return emitOpError() << "order has " << order.size()
                         << " entries but the source has rank "
                         << srcType.getRank();
  SmallVector<bool> seen(order.size(), false);
  for (int32_t dim : order) {
    if (dim < 0 || dim >= srcType.getRank() || seen[dim])
      return emitOpError() << "order must be a permutation of [0, "
                           << srcType.getRank() << "), got dimension " << dim;
    seen[dim] = true;
  }
  SmallVector<int64_t> expected;
  for (int32_t dim : order)
    expected.push_back(srcType.getDimSize(dim));
  if (resultType.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result shape "
                         << shapeString(resultType.getShape()) << " must be "
                         << shapeString(expected);
  return success();
}

OpFoldResult TransOp::fold(FoldAdaptor adaptor) {
  if (llvm::equal(getOrder(), llvm::seq<int32_t>(0, getOrder().size())) &&
      getSrc().getType() == getType())
    return getSrc();
  // trans(trans(x)) with inverse orders is x.
  if (auto inner = getSrc().getDefiningOp<TransOp>()) {
    ArrayRef<int32_t> outer = getOrder(), first = inner.getOrder();
    bool identity = true;
    for (auto [i, dim] : llvm::enumerate(outer))
      identity &= first[dim] == static_cast<int32_t>(i);
    if (identity && inner.getSrc().getType() == getType())
      return inner.getSrc();
  }
  return reshapeSplatConstant(adaptor.getSrc(), getType());
}

//===----------------------------------------------------------------------===//
// Pointer ops
//===----------------------------------------------------------------------===//

OpFoldResult AddPtrOp::fold(FoldAdaptor adaptor) {
  if (matchPattern(adaptor.getOffset(), m_Zero()))
    return getPtr();
  return {};
}

LogicalResult IntToPtrOp::verify() {
  if (!getElementTypeOrSelf(getSrc().getType()).isInteger(64))
    return emitOpError() << "source must hold i64, got "
                         << getElementTypeOrSelf(getSrc().getType());
  return success();
}

LogicalResult PtrToIntOp::verify() {
  if (!getElementTypeOrSelf(getType()).isInteger(64))
    return emitOpError() << "result must hold i64, got "
                         << getElementTypeOrSelf(getType());
  return success();
}

LogicalResult BitcastOp::verify() {
  Type srcElem = getElementTypeOrSelf(getSrc().getType());
  Type dstElem = getElementTypeOrSelf(getType());
  bool srcPtr = isa<PointerType>(srcElem), dstPtr = isa<PointerType>(dstElem);
  if (srcPtr != dstPtr)
    return emitOpError() << "cannot bitcast between a pointer and a number ("
                         << srcElem << " to " << dstElem
                         << "); use int_to_ptr / ptr_to_int";
  if (!srcPtr &&
      srcElem.getIntOrFloatBitWidth() != dstElem.getIntOrFloatBitWidth())
    return emitOpError() << "bit widths differ: " << srcElem << " has "
                         << srcElem.getIntOrFloatBitWidth() << " bits, "
                         << dstElem << " has "
                         << dstElem.getIntOrFloatBitWidth();
  return success();
}

//===----------------------------------------------------------------------===//
// LoadOp
//===----------------------------------------------------------------------===//

LogicalResult LoadOp::verify() {
  if (getOther() && !getMask())
    return emitOpError() << "'other' requires a mask";
  return success();
}

//===----------------------------------------------------------------------===//
// LoadTileOp
//===----------------------------------------------------------------------===//

LogicalResult LoadTileOp::verify() {
  auto type = cast<RankedTensorType>(getType());
  if (type.getRank() != 2)
    return emitOpError() << "loads a 2-D block, got " << type;
  Type pointee = cast<PointerType>(getBase().getType()).getPointeeType();
  if (type.getElementType() != pointee)
    return emitOpError() << "result elements " << type.getElementType()
                         << " differ from the array's " << pointee;
  return success();
}

//===----------------------------------------------------------------------===//
// DotOp
//===----------------------------------------------------------------------===//

std::optional<std::string> tilec::tile::getRowGroupsError(int64_t rowsPerGroup,
                                                          int64_t rows) {
  if (rowsPerGroup <= 0 || (rowsPerGroup & (rowsPerGroup - 1)) != 0)
    return "rowsPerGroup must be a power of two, got " +
           std::to_string(rowsPerGroup);
  if ((rows + rowsPerGroup - 1) / rowsPerGroup > 32)
    return std::to_string(rows) + " rows in groups of " +
           std::to_string(rowsPerGroup) +
           " make more than the 32 groups of an i32";
  return std::nullopt;
}

LogicalResult tilec::tile::verifyRowGroups(Operation *op, Value rowGroups,
                                            std::optional<uint32_t> rowsPerGroup,
                                            int64_t rows) {
  if (static_cast<bool>(rowGroups) != rowsPerGroup.has_value())
    return op->emitOpError()
           << "row_groups and rowsPerGroup go together, got "
           << (rowGroups ? "row_groups only" : "rowsPerGroup only");
  if (!rowGroups)
    return success();
  if (std::optional<std::string> error =
          getRowGroupsError(*rowsPerGroup, rows))
    return op->emitOpError() << *error;
  return success();
}

LogicalResult DotOp::verify() {
  auto aType = cast<RankedTensorType>(getA().getType());
  auto bType = cast<RankedTensorType>(getB().getType());
  auto cType = cast<RankedTensorType>(getC().getType());
  if (aType.getRank() != 2 || bType.getRank() != 2 || cType.getRank() != 2)
    return emitOpError() << "operands must be 2-D, got ranks "
                         << aType.getRank() << ", " << bType.getRank()
                         << " and " << cType.getRank();
  int64_t m = aType.getDimSize(0), k = aType.getDimSize(1);
  if (bType.getDimSize(0) != k)
    return emitOpError() << "K of a (" << k << ") differs from K of b ("
                         << bType.getDimSize(0) << ")";
  int64_t n = bType.getDimSize(1);
  if (cType.getDimSize(0) != m || cType.getDimSize(1) != n)
    return emitOpError() << "accumulator shape "
                         << shapeString(cType.getShape()) << " must be " << m
                         << "x" << n;
  Type aElem = aType.getElementType(), bElem = bType.getElementType();
  if (aElem != bElem)
    return emitOpError() << "a and b element types differ: " << aElem << " vs "
                         << bElem;
  Type cElem = cType.getElementType();
  if (isa<FloatType>(aElem) != isa<FloatType>(cElem))
    return emitOpError() << "accumulator " << cElem
                         << " must be float for float inputs and integer for "
                            "integer inputs ("
                         << aElem << ")";
  if (getInputPrecision() != InputPrecision::IEEE && !aElem.isF32())
    return emitOpError() << "inputPrecision "
                         << stringifyInputPrecision(getInputPrecision())
                         << " applies to f32 inputs only, got " << aElem;
  return tilec::tile::verifyRowGroups(*this, getRowGroups(),
                                      getRowsPerGroup(), m);
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

/// Kinds that are defined on integers only: bitwise and unsigned ones.
static bool needsIntegers(ReduceKind kind) {
  return kind == ReduceKind::And || kind == ReduceKind::Or ||
         kind == ReduceKind::Xor || kind == ReduceKind::UMax ||
         kind == ReduceKind::UMin;
}

/// What reduce and scan check alike: the axis is one of the source's, and
/// an integer-only kind (`what` names the op in the message) gets integers.
static LogicalResult verifyAxisAndKind(Operation *op, RankedTensorType srcType,
                                       int64_t axis, ReduceKind kind,
                                       StringRef what) {
  if (axis < 0 || axis >= srcType.getRank())
    return op->emitOpError() << "axis " << axis << " is out of range [0, "
                             << srcType.getRank() << ")";
  Type elem = srcType.getElementType();
  if (needsIntegers(kind) && !elem.isInteger())
    return op->emitOpError() << what << " '" << stringifyReduceKind(kind)
                             << "' needs integer elements, got " << elem;
  return success();
}

LogicalResult ReduceOp::verify() {
  auto srcType = cast<RankedTensorType>(getSrc().getType());
  int64_t axis = getAxis();
  if (failed(verifyAxisAndKind(*this, srcType, axis, getKind(), "reduction")))
    return failure();
  Type elem = srcType.getElementType();
  Type resultType = getType();
  if (srcType.getRank() == 1) {
    if (resultType != elem)
      return emitOpError() << "reducing a 1-D tensor yields " << elem
                           << ", got " << resultType;
    return success();
  }
  auto resultTensor = dyn_cast<RankedTensorType>(resultType);
  SmallVector<int64_t> expected(srcType.getShape());
  expected.erase(expected.begin() + axis);
  if (!resultTensor || resultTensor.getElementType() != elem ||
      resultTensor.getShape() != ArrayRef<int64_t>(expected)) {
    std::string expectedType;
    llvm::raw_string_ostream os(expectedType);
    os << "tensor<" << shapeString(expected) << "x";
    elem.print(os);
    os << ">";
    return emitOpError() << "result must be a " << expectedType << ", got "
                         << resultType;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ScanOp
//===----------------------------------------------------------------------===//

LogicalResult ScanOp::verify() {
  return verifyAxisAndKind(*this, cast<RankedTensorType>(getSrc().getType()),
                           getAxis(), getKind(), "scan");
}

//===----------------------------------------------------------------------===//
// HistogramOp, BinRankOp
//===----------------------------------------------------------------------===//

LogicalResult HistogramOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  auto result = cast<RankedTensorType>(getType());
  if (src.getRank() != 1 || result.getRank() != 1)
    return emitOpError() << "counts a 1-D tensor into a 1-D tensor of bins, "
                            "got "
                         << src << " -> " << result;
  return success();
}

LogicalResult BinRankOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  if (src.getRank() != 1)
    return emitOpError() << "ranks the elements of a 1-D tensor, got " << src;
  return success();
}

//===----------------------------------------------------------------------===//
// Atomics
//===----------------------------------------------------------------------===//

/// Atomics go to global memory: the pointee of `ptrLike` in address space 1.
static LogicalResult verifyAtomicPointer(Operation *op, Type ptrLike) {
  auto ptr = cast<PointerType>(getElementTypeOrSelf(ptrLike));
  if (ptr.getAddressSpace() != 1)
    return op->emitOpError()
           << "atomics need global pointers (address space 1), got " << ptr;
  return success();
}

LogicalResult AtomicRMWOp::verify() {
  if (failed(verifyAtomicPointer(*this, getPtr().getType())))
    return failure();
  Type elem = getElementTypeOrSelf(getVal().getType());
  bool takesF32 =
      getKind() == AtomicRMWKind::Add || getKind() == AtomicRMWKind::Xchg;
  if (!elem.isInteger(32) && !elem.isInteger(64) && !(takesF32 && elem.isF32()))
    return emitOpError() << "atomic '" << stringifyAtomicRMWKind(getKind())
                         << "' takes "
                         << (takesF32 ? "i32, i64 or f32" : "i32 or i64")
                         << ", got " << elem;
  return success();
}

LogicalResult AtomicCASOp::verify() {
  if (failed(verifyAtomicPointer(*this, getPtr().getType())))
    return failure();
  Type elem = getElementTypeOrSelf(getVal().getType());
  if (!elem.isInteger(32) && !elem.isInteger(64))
    return emitOpError() << "atomic_cas takes i32 or i64, got " << elem;
  return success();
}

#define GET_OP_CLASSES
#include "tilec/Dialect/Tile/IR/TileOps.cpp.inc"
