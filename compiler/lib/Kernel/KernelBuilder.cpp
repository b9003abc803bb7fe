//===- KernelBuilder.cpp - Triton-style C++ kernel authoring --------------===//

#include "tilec/Kernel/KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace tilec;
using namespace tilec::kernel;

/// `64x32`, or `scalar` for a rank-0 shape, for diagnostics.
static std::string shapeString(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(shape, os, "x");
  return text;
}

static StringRef binaryOpSpelling(BinaryOpKind kind) {
  switch (kind) {
  case BinaryOpKind::Add:
    return "+";
  case BinaryOpKind::Sub:
    return "-";
  case BinaryOpKind::Mul:
    return "*";
  case BinaryOpKind::Div:
    return "/";
  case BinaryOpKind::Rem:
    return "%";
  case BinaryOpKind::Lt:
    return "<";
  case BinaryOpKind::Le:
    return "<=";
  case BinaryOpKind::Gt:
    return ">";
  case BinaryOpKind::Ge:
    return ">=";
  case BinaryOpKind::Eq:
    return "==";
  case BinaryOpKind::Ne:
    return "!=";
  case BinaryOpKind::And:
    return "&";
  case BinaryOpKind::Or:
    return "|";
  case BinaryOpKind::Xor:
    return "^";
  case BinaryOpKind::Shl:
    return "<<";
  case BinaryOpKind::Shr:
    return ">>";
  case BinaryOpKind::ShrU:
    return "logical >>";
  case BinaryOpKind::Min:
    return "minimum";
  case BinaryOpKind::Max:
    return "maximum";
  }
  llvm_unreachable("unknown binary op kind");
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

Type Tensor::getType() const { return value ? value.getType() : Type(); }

Type Tensor::getElementType() const {
  return value ? tile::getElementTypeOrSelf(value.getType()) : Type();
}

ArrayRef<int64_t> Tensor::getShape() const {
  if (auto tensorType = dyn_cast_if_present<RankedTensorType>(getType()))
    return tensorType.getShape();
  return {};
}

bool Tensor::isScalar() const {
  return value && !isa<RankedTensorType>(value.getType());
}

bool Tensor::isPointer() const {
  return isa_and_present<tile::PointerType>(getElementType());
}

bool Tensor::isFloat() const {
  return isa_and_present<FloatType>(getElementType());
}

bool Tensor::isInteger() const {
  return isa_and_present<IntegerType>(getElementType());
}

//===----------------------------------------------------------------------===//
// KernelBuilder: state, parameters, naming
//===----------------------------------------------------------------------===//

KernelBuilder::KernelBuilder(Block *body, Location kernelLoc)
    : opBuilder(kernelLoc.getContext(), this), kernelLoc(kernelLoc) {
  opBuilder.setInsertionPointToEnd(body);
}

void KernelBuilder::notifyOperationInserted(Operation *op,
                                            OpBuilder::InsertPoint) {
  unnamedOps.push_back(op);
}

InFlightDiagnostic KernelBuilder::emitError() {
  errorReported = true;
  return mlir::emitError(kernelLoc);
}

void KernelBuilder::bindParam(StringRef name, int64_t value) {
  params[name] = value;
}

void KernelBuilder::bindType(StringRef name, Type type) { types[name] = type; }

void KernelBuilder::bindArg(StringRef name, Value value) { args[name] = value; }

int64_t KernelBuilder::param(StringRef name) {
  auto it = params.find(name);
  if (it != params.end())
    return it->second;
  emitError() << "the kernel reads meta-parameter '" << name
              << "', which it does not declare";
  return 1;
}

Type KernelBuilder::dtype(StringRef name) {
  auto it = types.find(name);
  if (it != types.end())
    return it->second;
  emitError() << "the kernel reads type parameter '" << name
              << "', which it does not declare";
  // Any valid type lets the body go on without crashing; the build has
  // already failed.
  return f32Type();
}

Tensor KernelBuilder::arg(StringRef name) {
  auto it = args.find(name);
  if (it != args.end())
    return make(it->second);
  emitError() << "the kernel reads argument '" << name
              << "', which is not in its signature";
  return {};
}

Location KernelBuilder::sourceLineLoc(unsigned line) const {
  if (auto file = kernelLoc->findInstanceOf<FileLineColLoc>())
    return FileLineColLoc::get(file.getFilename(), line, 1);
  return kernelLoc;
}

void KernelBuilder::locateUnnamedOps(Location location, Value namedValue) {
  for (Operation *op : unnamedOps) {
    if (op->getLoc() != kernelLoc)
      continue;
    // Constants are hoisted and shared by canonicalization: naming one after
    // its first user would mislead, unless it is the value being named.
    if (isa<arith::ConstantOp>(op) && op->getResult(0) != namedValue)
      continue;
    op->setLoc(location);
  }
  unnamedOps.clear();
}

Tensor KernelBuilder::let(StringRef name, Tensor value, unsigned line) {
  locateUnnamedOps(
      NameLoc::get(StringAttr::get(getContext(), name), sourceLineLoc(line)),
      value.getValue());
  return value;
}

Tensors KernelBuilder::let(StringRef name, Tensors values, unsigned line) {
  locateUnnamedOps(
      NameLoc::get(StringAttr::get(getContext(), name), sourceLineLoc(line)),
      Value());
  return values;
}

//===----------------------------------------------------------------------===//
// Program instance and creation
//===----------------------------------------------------------------------===//

static bool isValidAxis(int axis) { return axis >= 0 && axis <= 2; }

Tensor KernelBuilder::programId(int axis) {
  if (!isValidAxis(axis)) {
    emitError() << "programId: the grid axis must be 0, 1 or 2, got " << axis;
    return {};
  }
  return make(tile::ProgramIdOp::create(opBuilder, loc(), i32Type(),
                                        static_cast<tile::ProgramAxis>(axis)));
}

Tensor KernelBuilder::numPrograms(int axis) {
  if (!isValidAxis(axis)) {
    emitError() << "numPrograms: the grid axis must be 0, 1 or 2, got " << axis;
    return {};
  }
  return make(tile::NumProgramsOp::create(
      opBuilder, loc(), i32Type(), static_cast<tile::ProgramAxis>(axis)));
}

Tensor KernelBuilder::arange(int64_t start, int64_t end) {
  if (start < 0 || end <= start || end > std::numeric_limits<int32_t>::max()) {
    emitError() << "arange(" << start << ", " << end
                << "): needs 0 <= start < end < 2^31";
    return {};
  }
  // Later stages distribute tensors over threads by powers of two, as
  // Triton does.
  if (!llvm::isPowerOf2_64(end - start)) {
    emitError() << "arange(" << start << ", " << end
                << "): the length must be a power of two, got " << end - start;
    return {};
  }
  auto type = RankedTensorType::get({end - start}, i32Type());
  return make(tile::MakeRangeOp::create(opBuilder, loc(), type, start, end));
}

/// True when `value` is representable in `width` bits, read as signed or as
/// unsigned (so 0xFFFFFFFF is the i32 -1).
static bool fitsInBits(int64_t value, unsigned width) {
  if (width >= 64)
    return true;
  return llvm::isIntN(width, value) || llvm::isUIntN(width, value);
}

FailureOr<TypedAttr> KernelBuilder::numberAttr(const Operand &number,
                                               Type elementType) {
  if (number.getKind() == Operand::Kind::Integer) {
    int64_t value = number.getInt();
    if (auto intType = dyn_cast<IntegerType>(elementType)) {
      unsigned width = intType.getWidth();
      if (!fitsInBits(value, width)) {
        emitError() << "integer " << value << " does not fit in "
                    << elementType;
        return failure();
      }
      APInt bits(width, static_cast<uint64_t>(value), /*isSigned=*/false,
                 /*implicitTrunc=*/true);
      return TypedAttr(IntegerAttr::get(elementType, bits));
    }
    if (auto floatType = dyn_cast<FloatType>(elementType))
      return TypedAttr(FloatAttr::get(floatType, static_cast<double>(value)));
    emitError() << "the number " << value << " cannot be a " << elementType;
    return failure();
  }
  if (auto floatType = dyn_cast<FloatType>(elementType))
    return TypedAttr(FloatAttr::get(floatType, number.getFloat()));
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", number.getFloat());
  emitError() << "the floating-point number " << text
              << " needs an explicit cast() to " << elementType;
  return failure();
}

Tensor KernelBuilder::materialize(const Operand &operand, Type elementType) {
  if (operand.isNone()) {
    emitError() << "missing operand";
    return {};
  }
  if (operand.isTensor())
    return operand.getTensor();
  FailureOr<TypedAttr> attr = numberAttr(operand, elementType);
  if (mlir::failed(attr))
    return {};
  return make(arith::ConstantOp::create(opBuilder, loc(), *attr));
}

Tensor KernelBuilder::constant(Operand number, Type type) {
  if (!type.isIntOrFloat()) {
    emitError() << "constant: " << type << " is not an integer or float type";
    return {};
  }
  return materialize(number, type);
}

Tensor KernelBuilder::full(ArrayRef<int64_t> shape, Operand value, Type type) {
  if (!type.isIntOrFloat() && !isa<tile::PointerType>(type)) {
    emitError() << "full: " << type << " is not a scalar type";
    return {};
  }
  if (llvm::any_of(shape, [](int64_t dim) { return dim <= 0; })) {
    emitError() << "full: every dimension must be positive, got "
                << shapeString(shape);
    return {};
  }
  if (value.isNumber()) {
    FailureOr<TypedAttr> attr = numberAttr(value, type);
    if (mlir::failed(attr))
      return {};
    auto tensorType = RankedTensorType::get(shape, type);
    return make(arith::ConstantOp::create(
        opBuilder, loc(), DenseElementsAttr::get(tensorType, *attr)));
  }
  Tensor scalar = materialize(value, type);
  if (!scalar)
    return {};
  if (!scalar.isScalar() || scalar.getType() != type) {
    emitError() << "full: the fill value must be a " << type << " scalar, got "
                << scalar.getType();
    return {};
  }
  return splatTo(scalar, shape);
}

Tensor KernelBuilder::zeros(ArrayRef<int64_t> shape, Type type) {
  return full(shape, 0, type);
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

Tensor KernelBuilder::splatTo(Tensor scalar, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, scalar.getType());
  return make(tile::SplatOp::create(opBuilder, loc(), type, scalar.getValue()));
}

Tensor KernelBuilder::expandDims(Tensor x, int axis) {
  if (!x)
    return {};
  if (x.isScalar()) {
    emitError() << "expandDims: needs a tensor, got the scalar " << x.getType();
    return {};
  }
  int64_t rank = x.getRank();
  if (axis < 0)
    axis += rank + 1;
  if (axis < 0 || axis > rank) {
    emitError() << "expandDims: axis " << axis << " is out of range for "
                << x.getType();
    return {};
  }
  SmallVector<int64_t> shape(x.getShape());
  shape.insert(shape.begin() + axis, 1);
  auto type = RankedTensorType::get(shape, x.getElementType());
  return make(
      tile::ExpandDimsOp::create(opBuilder, loc(), type, x.getValue(), axis));
}

Tensor KernelBuilder::broadcastTo(Tensor x, ArrayRef<int64_t> shape) {
  if (!x)
    return {};
  if (x.getShape() == shape && !x.isScalar())
    return x;
  if (shape.empty()) {
    emitError() << "broadcastTo: cannot broadcast " << x.getType()
                << " to a scalar";
    return {};
  }
  if (x.isScalar())
    return splatTo(x, shape);
  if (x.getRank() != static_cast<int64_t>(shape.size())) {
    emitError() << "cannot broadcast " << x.getType() << " to "
                << shapeString(shape)
                << ": the ranks differ (add dimensions with expandDims)";
    return {};
  }
  for (auto [from, to] : llvm::zip_equal(x.getShape(), shape)) {
    if (from != to && from != 1) {
      emitError() << "cannot broadcast " << x.getType() << " to "
                  << shapeString(shape);
      return {};
    }
  }
  auto type = RankedTensorType::get(shape, x.getElementType());
  return make(tile::BroadcastOp::create(opBuilder, loc(), type, x.getValue()));
}

LogicalResult KernelBuilder::broadcastTogether(MutableArrayRef<Tensor> operands,
                                               StringRef what) {
  if (llvm::any_of(operands, [](const Tensor &t) { return !t; }))
    return failure();
  SmallVector<int64_t> shape;
  const Tensor *shapeSource = nullptr;
  for (const Tensor &operand : operands) {
    if (operand.isScalar())
      continue;
    if (!shapeSource) {
      shape.assign(operand.getShape().begin(), operand.getShape().end());
      shapeSource = &operand;
      continue;
    }
    if (operand.getRank() != static_cast<int64_t>(shape.size())) {
      emitError() << "operands of '" << what << "' have different ranks ("
                  << shapeSource->getType() << " and " << operand.getType()
                  << "); broadcasting does not add dimensions, use "
                     "expandDims";
      return failure();
    }
    for (auto [dim, other] : llvm::zip_equal(shape, operand.getShape())) {
      if (dim == other || other == 1)
        continue;
      if (dim != 1) {
        emitError() << "operands of '" << what << "' have incompatible shapes "
                    << shapeString(shapeSource->getShape()) << " and "
                    << shapeString(operand.getShape());
        return failure();
      }
      dim = other;
    }
  }
  if (!shapeSource)
    return success();
  for (Tensor &operand : operands) {
    operand = broadcastTo(operand, shape);
    if (!operand)
      return failure();
  }
  return success();
}

Tensor KernelBuilder::reshape(Tensor x, ArrayRef<int64_t> shape) {
  if (!x)
    return {};
  if (x.isScalar()) {
    emitError() << "reshape: needs a tensor, got the scalar " << x.getType();
    return {};
  }
  auto type = RankedTensorType::get(shape, x.getElementType());
  if (llvm::any_of(shape, [](int64_t dim) { return dim <= 0; }) ||
      type.getNumElements() !=
          llvm::cast<RankedTensorType>(x.getType()).getNumElements()) {
    emitError() << "reshape: cannot reshape " << x.getType() << " to "
                << shapeString(shape);
    return {};
  }
  return make(tile::ReshapeOp::create(opBuilder, loc(), type, x.getValue()));
}

Tensor KernelBuilder::trans(Tensor x) {
  if (!x)
    return {};
  if (x.getRank() != 2) {
    emitError() << "trans: needs a 2-D tensor, got " << x.getType();
    return {};
  }
  auto type = RankedTensorType::get({x.getShape()[1], x.getShape()[0]},
                                    x.getElementType());
  return make(tile::TransOp::create(opBuilder, loc(), type, x.getValue(),
                                    ArrayRef<int32_t>{1, 0}));
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// The element type numbers take next to `other`: the tensor's own, or i32
/// offsets next to pointers.
static Type numberTypeNextTo(const Tensor &other) {
  Type elementType = other.getElementType();
  if (isa<tile::PointerType>(elementType))
    return IntegerType::get(elementType.getContext(), 32);
  return elementType;
}

Tensor KernelBuilder::binary(BinaryOpKind kind, const Operand &lhsOperand,
                             const Operand &rhsOperand) {
  StringRef spelling = binaryOpSpelling(kind);
  if (lhsOperand.isNone() || rhsOperand.isNone()) {
    emitError() << "'" << spelling << "' is missing an operand";
    return {};
  }
  if ((lhsOperand.isTensor() && !lhsOperand.getTensor()) ||
      (rhsOperand.isTensor() && !rhsOperand.getTensor()))
    return {};

  // Numbers take their type from the tensor on the other side; two numbers
  // default to i32 or f32 like Python numbers in Triton.
  Tensor lhs, rhs;
  if (lhsOperand.isTensor() && rhsOperand.isTensor()) {
    lhs = lhsOperand.getTensor();
    rhs = rhsOperand.getTensor();
  } else if (lhsOperand.isTensor()) {
    lhs = lhsOperand.getTensor();
    rhs = materialize(rhsOperand, numberTypeNextTo(lhs));
  } else if (rhsOperand.isTensor()) {
    rhs = rhsOperand.getTensor();
    lhs = materialize(lhsOperand, numberTypeNextTo(rhs));
  } else {
    bool anyFloat = lhsOperand.getKind() == Operand::Kind::Float ||
                    rhsOperand.getKind() == Operand::Kind::Float;
    Type type = anyFloat ? f32Type() : i32Type();
    lhs = materialize(lhsOperand, type);
    rhs = materialize(rhsOperand, type);
  }
  if (!lhs || !rhs)
    return {};

  // Pointer arithmetic: pointer + integer, integer + pointer, pointer -
  // integer.
  if (lhs.isPointer() || rhs.isPointer()) {
    bool pointerPlusInt =
        lhs.isPointer() && rhs.isInteger() &&
        (kind == BinaryOpKind::Add || kind == BinaryOpKind::Sub);
    bool intPlusPointer =
        lhs.isInteger() && rhs.isPointer() && kind == BinaryOpKind::Add;
    if (!pointerPlusInt && !intPlusPointer) {
      emitError() << "'" << spelling << "' is not defined on " << lhs.getType()
                  << " and " << rhs.getType()
                  << " (pointers take + and - of integer offsets)";
      return {};
    }
    Tensor pointer = lhs.isPointer() ? lhs : rhs;
    Tensor offset = lhs.isPointer() ? rhs : lhs;
    if (kind == BinaryOpKind::Sub)
      offset = neg(offset);
    Tensor operands[] = {pointer, offset};
    if (mlir::failed(broadcastTogether(operands, spelling)))
      return {};
    return make(tile::AddPtrOp::create(opBuilder, loc(), operands[0].getType(),
                                       operands[0].getValue(),
                                       operands[1].getValue()));
  }

  if (lhs.getElementType() != rhs.getElementType()) {
    emitError() << "operands of '" << spelling
                << "' have different element types, " << lhs.getElementType()
                << " and " << rhs.getElementType() << "; cast() one of them";
    return {};
  }
  Tensor operands[] = {lhs, rhs};
  if (mlir::failed(broadcastTogether(operands, spelling)))
    return {};
  Value a = operands[0].getValue(), b = operands[1].getValue();
  bool isFloat = operands[0].isFloat();

  if (isFloat) {
    auto compare = [&](arith::CmpFPredicate predicate) {
      return make(arith::CmpFOp::create(opBuilder, loc(), predicate, a, b));
    };
    switch (kind) {
    case BinaryOpKind::Add:
      return make(arith::AddFOp::create(opBuilder, loc(), a, b));
    case BinaryOpKind::Sub:
      return make(arith::SubFOp::create(opBuilder, loc(), a, b));
    case BinaryOpKind::Mul:
      return make(arith::MulFOp::create(opBuilder, loc(), a, b));
    case BinaryOpKind::Div:
      return make(arith::DivFOp::create(opBuilder, loc(), a, b));
    case BinaryOpKind::Rem:
      return make(arith::RemFOp::create(opBuilder, loc(), a, b));
    case BinaryOpKind::Lt:
      return compare(arith::CmpFPredicate::OLT);
    case BinaryOpKind::Le:
      return compare(arith::CmpFPredicate::OLE);
    case BinaryOpKind::Gt:
      return compare(arith::CmpFPredicate::OGT);
    case BinaryOpKind::Ge:
      return compare(arith::CmpFPredicate::OGE);
    case BinaryOpKind::Eq:
      return compare(arith::CmpFPredicate::OEQ);
    case BinaryOpKind::Ne:
      return compare(arith::CmpFPredicate::UNE);
    // Like Triton's default (propagate_nan=NONE): a NaN operand loses.
    case BinaryOpKind::Min:
      return make(arith::MinNumFOp::create(opBuilder, loc(), a, b));
    case BinaryOpKind::Max:
      return make(arith::MaxNumFOp::create(opBuilder, loc(), a, b));
    case BinaryOpKind::And:
    case BinaryOpKind::Or:
    case BinaryOpKind::Xor:
    case BinaryOpKind::Shl:
    case BinaryOpKind::Shr:
    case BinaryOpKind::ShrU:
      emitError() << "'" << spelling << "' needs integers or masks, got "
                  << operands[0].getType();
      return {};
    }
    llvm_unreachable("unknown binary op kind");
  }

  auto compare = [&](arith::CmpIPredicate predicate) {
    return make(arith::CmpIOp::create(opBuilder, loc(), predicate, a, b));
  };
  switch (kind) {
  case BinaryOpKind::Add:
    return make(arith::AddIOp::create(opBuilder, loc(), a, b));
  case BinaryOpKind::Sub:
    return make(arith::SubIOp::create(opBuilder, loc(), a, b));
  case BinaryOpKind::Mul:
    return make(arith::MulIOp::create(opBuilder, loc(), a, b));
  case BinaryOpKind::Div:
    return make(arith::DivSIOp::create(opBuilder, loc(), a, b));
  case BinaryOpKind::Rem:
    return make(arith::RemSIOp::create(opBuilder, loc(), a, b));
  case BinaryOpKind::Lt:
    return compare(arith::CmpIPredicate::slt);
  case BinaryOpKind::Le:
    return compare(arith::CmpIPredicate::sle);
  case BinaryOpKind::Gt:
    return compare(arith::CmpIPredicate::sgt);
  case BinaryOpKind::Ge:
    return compare(arith::CmpIPredicate::sge);
  case BinaryOpKind::Eq:
    return compare(arith::CmpIPredicate::eq);
  case BinaryOpKind::Ne:
    return compare(arith::CmpIPredicate::ne);
  case BinaryOpKind::And:
    return make(arith::AndIOp::create(opBuilder, loc(), a, b));
  case BinaryOpKind::Or:
    return make(arith::OrIOp::create(opBuilder, loc(), a, b));
  case BinaryOpKind::Xor:
    return make(arith::XOrIOp::create(opBuilder, loc(), a, b));
  case BinaryOpKind::Shl:
    return make(arith::ShLIOp::create(opBuilder, loc(), a, b));
  case BinaryOpKind::Shr:
    return make(arith::ShRSIOp::create(opBuilder, loc(), a, b));
  case BinaryOpKind::ShrU:
    return make(arith::ShRUIOp::create(opBuilder, loc(), a, b));
  case BinaryOpKind::Min:
    return make(arith::MinSIOp::create(opBuilder, loc(), a, b));
  case BinaryOpKind::Max:
    return make(arith::MaxSIOp::create(opBuilder, loc(), a, b));
  }
  llvm_unreachable("unknown binary op kind");
}

Tensor KernelBuilder::neg(Tensor x) {
  if (!x)
    return {};
  if (x.isFloat())
    return make(arith::NegFOp::create(opBuilder, loc(), x.getValue()));
  if (x.isInteger())
    return binary(BinaryOpKind::Sub, 0, x);
  emitError() << "cannot negate " << x.getType();
  return {};
}

Tensor KernelBuilder::cdiv(const Operand &lhs, const Operand &rhs) {
  auto isFloatOperand = [](const Operand &operand) {
    return operand.getKind() == Operand::Kind::Float ||
           (operand.isTensor() && operand.getTensor().isFloat());
  };
  if (lhs.isNone() || rhs.isNone()) {
    emitError() << "cdiv is missing an operand";
    return {};
  }
  if (isFloatOperand(lhs) || isFloatOperand(rhs)) {
    emitError() << "cdiv needs integers";
    return {};
  }
  if (rhs.getKind() == Operand::Kind::Integer)
    return binary(BinaryOpKind::Div,
                  binary(BinaryOpKind::Add, lhs, rhs.getInt() - 1), rhs);
  Tensor divisor = rhs.getTensor();
  return binary(
      BinaryOpKind::Div,
      binary(BinaryOpKind::Add, lhs, binary(BinaryOpKind::Sub, divisor, 1)),
      divisor);
}

Tensor KernelBuilder::where(const Operand &condOperand, const Operand &a,
                            const Operand &b) {
  if ((condOperand.isTensor() && !condOperand.getTensor()) ||
      (a.isTensor() && !a.getTensor()) || (b.isTensor() && !b.getTensor()))
    return {};
  Tensor cond = materialize(condOperand, i1Type());
  if (!cond)
    return {};
  if (!cond.getElementType().isInteger(1)) {
    emitError() << "where: the condition must be a mask (i1), got "
                << cond.getType();
    return {};
  }
  Type valueType;
  if (a.isTensor())
    valueType = a.getTensor().getElementType();
  else if (b.isTensor())
    valueType = b.getTensor().getElementType();
  else
    valueType = a.getKind() == Operand::Kind::Float ||
                        b.getKind() == Operand::Kind::Float
                    ? f32Type()
                    : i32Type();
  Tensor trueValue = materialize(a, valueType);
  Tensor falseValue = materialize(b, valueType);
  if (!trueValue || !falseValue)
    return {};
  if (trueValue.getElementType() != falseValue.getElementType()) {
    emitError() << "where: the values have different element types, "
                << trueValue.getElementType() << " and "
                << falseValue.getElementType();
    return {};
  }
  Tensor operands[] = {cond, trueValue, falseValue};
  if (mlir::failed(broadcastTogether(operands, "where")))
    return {};
  return make(arith::SelectOp::create(opBuilder, loc(), operands[0].getValue(),
                                      operands[1].getValue(),
                                      operands[2].getValue()));
}

LogicalResult KernelBuilder::requireFloat(Tensor x, StringRef what) {
  if (!x)
    return failure();
  if (x.isFloat())
    return success();
  emitError() << what << ": needs floating-point elements, got " << x.getType();
  return failure();
}

Tensor KernelBuilder::exp(Tensor x) {
  if (mlir::failed(requireFloat(x, "exp")))
    return {};
  return make(math::ExpOp::create(opBuilder, loc(), x.getValue()));
}

Tensor KernelBuilder::log(Tensor x) {
  if (mlir::failed(requireFloat(x, "log")))
    return {};
  return make(math::LogOp::create(opBuilder, loc(), x.getValue()));
}

Tensor KernelBuilder::sqrt(Tensor x) {
  if (mlir::failed(requireFloat(x, "sqrt")))
    return {};
  return make(math::SqrtOp::create(opBuilder, loc(), x.getValue()));
}

Tensor KernelBuilder::cast(Tensor x, Type elementType) {
  if (!x)
    return {};
  Type from = x.getElementType();
  if (from == elementType)
    return x;
  Type resultType = elementType;
  if (auto tensorType = dyn_cast<RankedTensorType>(x.getType()))
    resultType = tensorType.clone(elementType);
  Value value = x.getValue();

  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(elementType);
  auto fromInt = dyn_cast<IntegerType>(from);
  auto toInt = dyn_cast<IntegerType>(elementType);
  if (fromFloat && toFloat) {
    unsigned fromWidth = fromFloat.getWidth(), toWidth = toFloat.getWidth();
    if (fromWidth < toWidth)
      return make(arith::ExtFOp::create(opBuilder, loc(), resultType, value));
    if (fromWidth > toWidth)
      return make(arith::TruncFOp::create(opBuilder, loc(), resultType, value));
    // f16 <-> bf16: through f32, which holds both exactly.
    return cast(cast(x, f32Type()), elementType);
  }
  if (fromInt && toInt) {
    if (fromInt.getWidth() < toInt.getWidth()) {
      // A true mask is 1, not -1.
      if (fromInt.getWidth() == 1)
        return make(
            arith::ExtUIOp::create(opBuilder, loc(), resultType, value));
      return make(arith::ExtSIOp::create(opBuilder, loc(), resultType, value));
    }
    return make(arith::TruncIOp::create(opBuilder, loc(), resultType, value));
  }
  if (fromInt && toFloat) {
    if (fromInt.getWidth() == 1)
      return make(arith::UIToFPOp::create(opBuilder, loc(), resultType, value));
    return make(arith::SIToFPOp::create(opBuilder, loc(), resultType, value));
  }
  if (fromFloat && toInt)
    return make(arith::FPToSIOp::create(opBuilder, loc(), resultType, value));
  if (isa<tile::PointerType>(from) && isa<tile::PointerType>(elementType))
    return make(tile::BitcastOp::create(opBuilder, loc(), resultType, value));
  if (isa<tile::PointerType>(from) && elementType.isInteger(64))
    return make(tile::PtrToIntOp::create(opBuilder, loc(), resultType, value));
  if (from.isInteger(64) && isa<tile::PointerType>(elementType))
    return make(tile::IntToPtrOp::create(opBuilder, loc(), resultType, value));
  emitError() << "cannot cast " << x.getType() << " to " << elementType;
  return {};
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

Tensor KernelBuilder::load(Tensor ptrs, Tensor mask, Operand other,
                           tile::CacheModifier cache,
                           tile::EvictionPolicy evict) {
  if (!ptrs || (other.isTensor() && !other.getTensor()))
    return {};
  if (!ptrs.isPointer()) {
    emitError() << "load: needs pointers, got " << ptrs.getType();
    return {};
  }
  Type pointee =
      llvm::cast<tile::PointerType>(ptrs.getElementType()).getPointeeType();
  if (!mask) {
    if (!other.isNone()) {
      emitError() << "load: a fill value ('other') needs a mask";
      return {};
    }
    return make(tile::LoadOp::create(opBuilder, loc(), ptrs.getValue(), Value(),
                                     Value(), cache, evict));
  }
  if (!mask.getElementType().isInteger(1)) {
    emitError() << "load: the mask must be i1, got " << mask.getType();
    return {};
  }
  Tensor operands[] = {ptrs, mask};
  if (mlir::failed(broadcastTogether(operands, "load")))
    return {};
  Value otherValue;
  if (!other.isNone()) {
    Tensor fill = materialize(other, pointee);
    if (!fill)
      return {};
    if (fill.getElementType() != pointee) {
      emitError() << "load: the fill value " << fill.getType()
                  << " does not match the loaded " << pointee;
      return {};
    }
    if (!operands[0].isScalar())
      fill = broadcastTo(fill, operands[0].getShape());
    if (!fill)
      return {};
    otherValue = fill.getValue();
  }
  return make(tile::LoadOp::create(opBuilder, loc(), operands[0].getValue(),
                                   operands[1].getValue(), otherValue, cache,
                                   evict));
}

Tensor KernelBuilder::loadVolatile(Tensor ptrs, Tensor mask, Operand other) {
  Tensor loaded = load(ptrs, mask, other);
  if (loaded)
    loaded.getValue().getDefiningOp<tile::LoadOp>().setIsVolatile(true);
  return loaded;
}

Tensor KernelBuilder::loadTile(const TileOfArray &array, Tensor row,
                               Tensor col, int64_t blockRows,
                               int64_t blockCols) {
  Tensor indices[] = {row,        col,          array.rows,
                      array.cols, array.rowStride, array.colStride};
  if (!array.base || llvm::any_of(indices, [](const Tensor &t) { return !t; }))
    return {};
  if (!array.base.isScalar() || !array.base.isPointer()) {
    emitError() << "loadTile: the array's base must be a scalar pointer, got "
                << array.base.getType();
    return {};
  }
  for (const Tensor &index : indices)
    if (!index.isScalar() || !index.getElementType().isInteger(32)) {
      emitError() << "loadTile: rows, columns, strides and the block's "
                     "position must be i32 scalars, got "
                  << index.getType();
      return {};
    }
  Type pointee =
      llvm::cast<tile::PointerType>(array.base.getType()).getPointeeType();
  auto type = RankedTensorType::get({blockRows, blockCols}, pointee);
  return make(tile::LoadTileOp::create(
      opBuilder, loc(), type, array.base.getValue(), row.getValue(),
      col.getValue(), array.rows.getValue(), array.cols.getValue(),
      array.rowStride.getValue(), array.colStride.getValue()));
}

void KernelBuilder::store(Tensor ptrs, Operand value, Tensor mask,
                          tile::CacheModifier cache, tile::EvictionPolicy evict,
                          unsigned line) {
  if (!ptrs || (value.isTensor() && !value.getTensor()))
    return;
  if (!ptrs.isPointer()) {
    emitError() << "store: needs pointers, got " << ptrs.getType();
    return;
  }
  Type pointee =
      llvm::cast<tile::PointerType>(ptrs.getElementType()).getPointeeType();
  Tensor stored = materialize(value, pointee);
  if (!stored)
    return;
  if (stored.getElementType() != pointee) {
    emitError() << "store: " << stored.getType()
                << " stored through pointers to " << pointee
                << "; cast() first";
    return;
  }
  SmallVector<Tensor, 3> operands = {ptrs, stored};
  if (mask) {
    if (!mask.getElementType().isInteger(1)) {
      emitError() << "store: the mask must be i1, got " << mask.getType();
      return;
    }
    operands.push_back(mask);
  }
  if (mlir::failed(broadcastTogether(operands, "store")))
    return;
  tile::StoreOp::create(opBuilder, loc(), operands[0].getValue(),
                        operands[1].getValue(),
                        mask ? operands[2].getValue() : Value(), cache, evict);
  // A store is a statement of its own: its ops are located at its line, not
  // named after the next let().
  locateUnnamedOps(sourceLineLoc(line), Value());
}

LogicalResult KernelBuilder::prepareAtomicOperands(
    llvm::StringRef what, Tensor &ptrs, MutableArrayRef<Tensor> values,
    ArrayRef<const Operand *> numbers, Tensor &mask) {
  if (!ptrs.isPointer()) {
    emitError() << what << ": needs pointers, got " << ptrs.getType();
    return failure();
  }
  auto pointer = llvm::cast<tile::PointerType>(ptrs.getElementType());
  if (pointer.getAddressSpace() != 1) {
    emitError() << what << ": needs global pointers, got " << pointer;
    return failure();
  }
  Type pointee = pointer.getPointeeType();
  for (auto [value, number] : llvm::zip(values, numbers)) {
    value = materialize(*number, pointee);
    if (!value)
      return failure();
    if (value.getElementType() != pointee) {
      emitError() << what << ": " << value.getType() << " with pointers to "
                  << pointee << "; cast() first";
      return failure();
    }
  }
  if (mask && !mask.getElementType().isInteger(1)) {
    emitError() << what << ": the mask must be i1, got " << mask.getType();
    return failure();
  }
  SmallVector<Tensor, 4> operands = {ptrs};
  operands.append(values.begin(), values.end());
  if (mask)
    operands.push_back(mask);
  if (failed(broadcastTogether(operands, what)))
    return failure();
  ptrs = operands[0];
  for (auto [index, value] : llvm::enumerate(values))
    value = operands[index + 1];
  if (mask)
    mask = operands.back();
  return success();
}

Tensor KernelBuilder::atomicRmw(tile::AtomicRMWKind kind, Tensor ptrs,
                                Operand vals, Tensor mask,
                                tile::MemSemantic sem,
                                tile::MemSyncScope scope) {
  if (!ptrs || (vals.isTensor() && !vals.getTensor()))
    return {};
  Tensor values[1];
  const Operand *numbers[] = {&vals};
  if (failed(prepareAtomicOperands("atomicRmw", ptrs, values, numbers, mask)))
    return {};
  Type element = values[0].getElementType();
  bool takesFloat =
      kind == tile::AtomicRMWKind::Add || kind == tile::AtomicRMWKind::Xchg;
  if (!element.isInteger(32) && !element.isInteger(64) &&
      !(takesFloat && element.isF32())) {
    emitError() << "atomicRmw: '" << tile::stringifyAtomicRMWKind(kind)
                << "' takes " << (takesFloat ? "i32, i64 or f32" : "i32 or i64")
                << ", got " << element;
    return {};
  }
  return make(tile::AtomicRMWOp::create(
      opBuilder, loc(), values[0].getType(), kind, ptrs.getValue(),
      values[0].getValue(), mask ? mask.getValue() : Value(), sem, scope));
}

Tensor KernelBuilder::atomicCas(Tensor ptrs, Operand cmp, Operand val,
                                Tensor mask, tile::MemSemantic sem,
                                tile::MemSyncScope scope) {
  if (!ptrs || (cmp.isTensor() && !cmp.getTensor()) ||
      (val.isTensor() && !val.getTensor()))
    return {};
  Tensor values[2];
  const Operand *numbers[] = {&cmp, &val};
  if (failed(prepareAtomicOperands("atomicCas", ptrs, values, numbers, mask)))
    return {};
  Type element = values[0].getElementType();
  if (!element.isInteger(32) && !element.isInteger(64)) {
    emitError() << "atomicCas: takes i32 or i64, got " << element;
    return {};
  }
  return make(tile::AtomicCASOp::create(
      opBuilder, loc(), values[0].getType(), ptrs.getValue(),
      values[0].getValue(), values[1].getValue(),
      mask ? mask.getValue() : Value(), sem, scope));
}

void KernelBuilder::barrier(unsigned line) {
  tile::BarrierOp::create(opBuilder, sourceLineLoc(line));
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

Tensor KernelBuilder::dot(Tensor a, Tensor b, Tensor acc,
                          tile::InputPrecision precision) {
  if (!a || !b)
    return {};
  if (a.getRank() != 2 || b.getRank() != 2) {
    emitError() << "dot: needs 2-D operands, got " << a.getType() << " and "
                << b.getType();
    return {};
  }
  int64_t m = a.getShape()[0], k = a.getShape()[1], n = b.getShape()[1];
  if (b.getShape()[0] != k) {
    emitError() << "dot: K of a (" << k << ") differs from K of b ("
                << b.getShape()[0] << "): " << a.getType() << " * "
                << b.getType();
    return {};
  }
  if (a.getElementType() != b.getElementType() || a.isPointer()) {
    emitError() << "dot: needs numbers of one element type, got " << a.getType()
                << " and " << b.getType();
    return {};
  }
  if (precision != tile::InputPrecision::IEEE && !a.getElementType().isF32()) {
    emitError() << "dot: input precision "
                << tile::stringifyInputPrecision(precision)
                << " applies to f32 inputs only, got " << a.getElementType();
    return {};
  }
  if (!acc)
    acc = zeros({m, n}, a.isFloat() ? f32Type() : i32Type());
  if (!acc)
    return {};
  if (acc.getShape() != ArrayRef<int64_t>{m, n} ||
      acc.isFloat() != a.isFloat()) {
    emitError() << "dot: the accumulator " << acc.getType() << " must be " << m
                << "x" << n << " of " << (a.isFloat() ? "floats" : "integers");
    return {};
  }
  return make(tile::DotOp::create(opBuilder, loc(), acc.getType(), a.getValue(),
                                  b.getValue(), acc.getValue(), precision, 0));
}

Tensor KernelBuilder::dotOfRowGroups(Tensor a, Tensor b, Tensor acc,
                                     tile::InputPrecision precision,
                                     Tensor rowGroups, int64_t rowsPerGroup) {
  Tensor product = dot(a, b, acc, precision);
  if (!product || !rowGroups)
    return {};
  if (!rowGroups.isScalar() || !rowGroups.getElementType().isInteger(32)) {
    emitError() << "dot: row groups are an i32 scalar, got "
                << rowGroups.getType();
    return {};
  }
  auto dotOp = product.getValue().getDefiningOp<tile::DotOp>();
  if (std::optional<std::string> error =
          tile::getRowGroupsError(rowsPerGroup, a.getShape()[0])) {
    emitError() << "dot: " << *error;
    dotOp->erase();
    return {};
  }
  dotOp.getRowGroupsMutable().assign(rowGroups.getValue());
  dotOp.setRowsPerGroup(static_cast<uint32_t>(rowsPerGroup));
  return product;
}

Tensor KernelBuilder::reduce(Tensor x, int axis, tile::ReduceKind kind) {
  if (!x)
    return {};
  if (x.isScalar() || x.isPointer()) {
    emitError() << "reduce: needs a tensor of numbers, got " << x.getType();
    return {};
  }
  int64_t rank = x.getRank();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank) {
    emitError() << "reduce: axis " << axis << " is out of range for "
                << x.getType();
    return {};
  }
  bool bitwise =
      kind == tile::ReduceKind::And || kind == tile::ReduceKind::Or ||
      kind == tile::ReduceKind::Xor || kind == tile::ReduceKind::UMax ||
      kind == tile::ReduceKind::UMin;
  if (bitwise && !x.isInteger()) {
    emitError() << "reduce: '" << tile::stringifyReduceKind(kind)
                << "' needs integers, got " << x.getType();
    return {};
  }
  Type resultType = x.getElementType();
  if (rank > 1) {
    SmallVector<int64_t> shape(x.getShape());
    shape.erase(shape.begin() + axis);
    resultType = RankedTensorType::get(shape, x.getElementType());
  }
  return make(tile::ReduceOp::create(opBuilder, loc(), resultType, kind,
                                     x.getValue(), axis));
}

Tensor KernelBuilder::scan(Tensor x, int axis, tile::ReduceKind kind,
                           bool reverse) {
  if (!x)
    return {};
  if (x.isScalar() || x.isPointer()) {
    emitError() << "scan: needs a tensor of numbers, got " << x.getType();
    return {};
  }
  int64_t rank = x.getRank();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank) {
    emitError() << "scan: axis " << axis << " is out of range for "
                << x.getType();
    return {};
  }
  bool integersOnly =
      kind == tile::ReduceKind::And || kind == tile::ReduceKind::Or ||
      kind == tile::ReduceKind::Xor || kind == tile::ReduceKind::UMax ||
      kind == tile::ReduceKind::UMin;
  if (integersOnly && !x.isInteger()) {
    emitError() << "scan: '" << tile::stringifyReduceKind(kind)
                << "' needs integers, got " << x.getType();
    return {};
  }
  return make(tile::ScanOp::create(opBuilder, loc(), x.getType(), kind,
                                   x.getValue(), axis, reverse));
}

/// The checks histogram and binRank share: `x` a 1-D i32 tensor, `bins`
/// positive and at most what an i32 counts, `mask` absent or an i1 tensor of
/// x's shape.
static bool checkBinnedOperands(KernelBuilder &kb, const Tensor &x,
                                int64_t bins, const Tensor &mask,
                                llvm::StringRef what) {
  if (x.isScalar() || x.getRank() != 1 || !x.getElementType().isInteger(32)) {
    kb.emitError() << what << ": needs a 1-D tensor of i32, got "
                   << x.getType();
    return false;
  }
  if (bins < 1 || bins > std::numeric_limits<int32_t>::max()) {
    kb.emitError() << what << ": bins must be in [1, 2^31), got " << bins;
    return false;
  }
  if (mask && (!mask.getElementType().isInteger(1) ||
               mask.getShape() != x.getShape())) {
    kb.emitError() << what << ": the mask must be i1 of the shape of "
                   << x.getType() << ", got " << mask.getType();
    return false;
  }
  return true;
}

Tensor KernelBuilder::histogram(Tensor x, int64_t bins, Tensor mask) {
  if (!x || !checkBinnedOperands(*this, x, bins, mask, "histogram"))
    return {};
  auto type = RankedTensorType::get({bins}, opBuilder.getI32Type());
  return make(tile::HistogramOp::create(opBuilder, loc(), type, x.getValue(),
                                        mask ? mask.getValue() : Value()));
}

Tensor KernelBuilder::binRank(Tensor x, int64_t bins, Tensor mask) {
  if (!x || !checkBinnedOperands(*this, x, bins, mask, "binRank"))
    return {};
  return make(tile::BinRankOp::create(
      opBuilder, loc(), x.getType(), x.getValue(),
      mask ? mask.getValue() : Value(), static_cast<int32_t>(bins)));
}

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

/// What a loop body yields as its next carried values: `yielded`, where each
/// is of its carried value's type, else (after an error naming `loop`) the
/// carried value itself.
SmallVector<Value> KernelBuilder::carriedValuesOf(StringRef loop,
                                                  ArrayRef<Tensor> carried,
                                                  Tensors yielded) {
  if (yielded.size() != carried.size()) {
    emitError() << loop << ": the body yields " << yielded.size()
                << " values for " << carried.size() << " carried values";
    yielded.assign(carried.begin(), carried.end());
  }
  SmallVector<Value> values;
  for (auto [index, next] : llvm::enumerate(yielded)) {
    Value arg = carried[index].getValue();
    if (next && next.getType() != arg.getType()) {
      emitError() << loop << ": carried value #" << index << " enters as "
                  << arg.getType() << " but the body yields " << next.getType();
      next = {};
    }
    values.push_back(next ? next.getValue() : arg);
  }
  return values;
}

Tensors KernelBuilder::forRange(const Operand &lb, const Operand &ub,
                                const Operand &step, ArrayRef<Tensor> carried,
                                LoopBody body) {
  Tensors failedResults(carried.size());
  Tensor bounds[] = {materialize(lb, i32Type()), materialize(ub, i32Type()),
                     materialize(step, i32Type())};
  if (llvm::any_of(bounds, [](const Tensor &t) { return !t; }) ||
      llvm::any_of(carried, [](const Tensor &t) { return !t; }))
    return failedResults;
  for (const Tensor &bound : bounds) {
    if (!bound.isScalar() || !bound.getType().isInteger(32)) {
      emitError() << "forRange: loop bounds and step must be i32 scalars, got "
                  << bound.getType();
      return failedResults;
    }
  }

  SmallVector<Value> initValues;
  for (const Tensor &value : carried)
    initValues.push_back(value.getValue());
  auto forOp = scf::ForOp::create(opBuilder, loc(), bounds[0].getValue(),
                                  bounds[1].getValue(), bounds[2].getValue(),
                                  initValues);

  // Ops of the body are named by lets inside it; a let around the loop names
  // the loop and what its bounds needed.
  SmallVector<Operation *> outerUnnamedOps = std::move(unnamedOps);
  unnamedOps.clear();
  Block *loopBody = forOp.getBody();
  {
    OpBuilder::InsertionGuard guard(opBuilder);
    if (Operation *terminator = loopBody->mightHaveTerminator()
                                    ? loopBody->getTerminator()
                                    : nullptr)
      opBuilder.setInsertionPoint(terminator);
    else
      opBuilder.setInsertionPointToEnd(loopBody);

    Tensors iterArgs;
    for (BlockArgument arg : forOp.getRegionIterArgs())
      iterArgs.push_back(make(arg));
    Tensors yielded = body(make(forOp.getInductionVar()), iterArgs);

    SmallVector<Value> yieldValues =
        carriedValuesOf("forRange", iterArgs, std::move(yielded));
    if (!initValues.empty())
      scf::YieldOp::create(opBuilder, loc(), yieldValues);
  }
  unnamedOps = std::move(outerUnnamedOps);

  Tensors results;
  for (Value result : forOp.getResults())
    results.push_back(make(result));
  return results;
}

Tensors KernelBuilder::whileLoop(ArrayRef<Tensor> carried, WhileCondition cond,
                                 WhileBody body) {
  Tensors failedResults(carried.size());
  if (llvm::any_of(carried, [](const Tensor &t) { return !t; }))
    return failedResults;
  SmallVector<Value> initValues;
  SmallVector<Type> types;
  SmallVector<Location> locs;
  for (const Tensor &value : carried) {
    initValues.push_back(value.getValue());
    types.push_back(value.getType());
    locs.push_back(loc());
  }
  auto whileOp = scf::WhileOp::create(opBuilder, loc(), types, initValues);
  Block *before = opBuilder.createBlock(&whileOp.getBefore(), {}, types, locs);
  Block *after = opBuilder.createBlock(&whileOp.getAfter(), {}, types, locs);
  opBuilder.setInsertionPointAfter(whileOp);

  // As in forRange: lets inside the regions name their ops.
  SmallVector<Operation *> outerUnnamedOps = std::move(unnamedOps);
  unnamedOps.clear();
  auto argsOf = [&](Block *block) {
    Tensors args;
    for (BlockArgument arg : block->getArguments())
      args.push_back(make(arg));
    return args;
  };
  {
    OpBuilder::InsertionGuard guard(opBuilder);
    opBuilder.setInsertionPointToEnd(before);
    Tensors args = argsOf(before);
    Tensor proceed = cond(args);
    if (proceed && (!proceed.isScalar() || !proceed.getType().isInteger(1))) {
      emitError() << "whileLoop: the condition must be an i1 scalar, got "
                  << proceed.getType();
      proceed = {};
    }
    if (!proceed)
      proceed = constant(false, i1Type());
    scf::ConditionOp::create(opBuilder, loc(), proceed.getValue(),
                             before->getArguments());
  }
  {
    OpBuilder::InsertionGuard guard(opBuilder);
    opBuilder.setInsertionPointToEnd(after);
    Tensors args = argsOf(after);
    Tensors yielded = body(args);
    SmallVector<Value> yieldValues =
        carriedValuesOf("whileLoop", args, std::move(yielded));
    scf::YieldOp::create(opBuilder, loc(), yieldValues);
  }
  unnamedOps = std::move(outerUnnamedOps);

  Tensors results;
  for (Value result : whileOp.getResults())
    results.push_back(make(result));
  return results;
}

void KernelBuilder::ifThen(const Operand &condOperand,
                           llvm::function_ref<void()> body) {
  Tensor cond = materialize(condOperand, i1Type());
  if (!cond)
    return;
  if (!cond.isScalar() || !cond.getType().isInteger(1)) {
    emitError() << "ifThen: the condition must be an i1 scalar, got "
                << cond.getType();
    return;
  }
  auto ifOp = scf::IfOp::create(opBuilder, loc(), cond.getValue(),
                                /*withElseRegion=*/false);
  // As in forRange: lets inside the body name its ops.
  SmallVector<Operation *> outerUnnamedOps = std::move(unnamedOps);
  unnamedOps.clear();
  {
    OpBuilder::InsertionGuard guard(opBuilder);
    opBuilder.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    body();
  }
  unnamedOps = std::move(outerUnnamedOps);
}

//===----------------------------------------------------------------------===//
// Operators
//===----------------------------------------------------------------------===//

/// The builder behind whichever operand is a tensor.
static KernelBuilder *builderOf(const Operand &lhs, const Operand &rhs) {
  if (lhs.isTensor() && lhs.getTensor().getBuilder())
    return lhs.getTensor().getBuilder();
  if (rhs.isTensor() && rhs.getTensor().getBuilder())
    return rhs.getTensor().getBuilder();
  return nullptr;
}

static Tensor applyBinary(BinaryOpKind kind, const Operand &lhs,
                          const Operand &rhs) {
  // Null tensors carry no builder; their error was already reported.
  KernelBuilder *builder = builderOf(lhs, rhs);
  if (!builder)
    return {};
  return builder->binary(kind, lhs, rhs);
}

Tensor tilec::kernel::operator+(const Operand &lhs, const Operand &rhs) {
  return applyBinary(BinaryOpKind::Add, lhs, rhs);
}
Tensor tilec::kernel::operator-(const Operand &lhs, const Operand &rhs) {
  return applyBinary(BinaryOpKind::Sub, lhs, rhs);
}
Tensor tilec::kernel::operator*(const Operand &lhs, const Operand &rhs) {
  return applyBinary(BinaryOpKind::Mul, lhs, rhs);
}
Tensor tilec::kernel::operator/(const Operand &lhs, const Operand &rhs) {
  return applyBinary(BinaryOpKind::Div, lhs, rhs);
}
Tensor tilec::kernel::operator%(const Operand &lhs, const Operand &rhs) {
  return applyBinary(BinaryOpKind::Rem, lhs, rhs);
}
Tensor tilec::kernel::operator<(const Operand &lhs, const Operand &rhs) {
  return applyBinary(BinaryOpKind::Lt, lhs, rhs);
}
Tensor tilec::kernel::operator<=(const Operand &lhs, const Operand &rhs) {
  return applyBinary(BinaryOpKind::Le, lhs, rhs);
}
Tensor tilec::kernel::operator>(const Operand &lhs, const Operand &rhs) {
  return applyBinary(BinaryOpKind::Gt, lhs, rhs);
}
Tensor tilec::kernel::operator>=(const Operand &lhs, const Operand &rhs) {
  return applyBinary(BinaryOpKind::Ge, lhs, rhs);
}
Tensor tilec::kernel::operator==(const Operand &lhs, const Operand &rhs) {
  return applyBinary(BinaryOpKind::Eq, lhs, rhs);
}
Tensor tilec::kernel::operator!=(const Operand &lhs, const Operand &rhs) {
  return applyBinary(BinaryOpKind::Ne, lhs, rhs);
}
Tensor tilec::kernel::operator&(const Operand &lhs, const Operand &rhs) {
  return applyBinary(BinaryOpKind::And, lhs, rhs);
}
Tensor tilec::kernel::operator|(const Operand &lhs, const Operand &rhs) {
  return applyBinary(BinaryOpKind::Or, lhs, rhs);
}
Tensor tilec::kernel::operator^(const Operand &lhs, const Operand &rhs) {
  return applyBinary(BinaryOpKind::Xor, lhs, rhs);
}
Tensor tilec::kernel::operator<<(const Operand &lhs, const Operand &rhs) {
  return applyBinary(BinaryOpKind::Shl, lhs, rhs);
}
Tensor tilec::kernel::operator>>(const Operand &lhs, const Operand &rhs) {
  return applyBinary(BinaryOpKind::Shr, lhs, rhs);
}
Tensor tilec::kernel::operator-(const Tensor &x) {
  if (!x.getBuilder())
    return {};
  return x.getBuilder()->neg(x);
}
