//===- ArithOps.cpp - the interpreter's arith and math ops ----------------===//
//
// Element by element on operands of one shape (the tile dialect broadcasts
// explicitly; arith.select's condition may be a scalar), each result
// wrapped to its integer width or rounded to its float format.
//
//===----------------------------------------------------------------------===//

#include "Program.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/bit.h"

#include <cmath>
#include <functional>
#include <limits>

namespace tilec::interp {
namespace {

using IntBinary = std::function<int64_t(int64_t, int64_t, unsigned)>;
using FloatBinary = double (*)(double, double);
using FloatUnary = double (*)(double);

int64_t divideSigned(int64_t a, int64_t b, unsigned width) {
  if (b == 0)
    return 0;
  if (b == -1) // INT_MIN / -1 wraps, as the GPU's does
    return wrapToWidth(-static_cast<uint64_t>(a), width);
  return a / b;
}

int64_t remainderSigned(int64_t a, int64_t b, unsigned) {
  return b == 0 || b == -1 ? 0 : a % b;
}

int64_t shift(int64_t a, int64_t amount, unsigned width, char kind) {
  uint64_t bits = unsignedOf(amount, width);
  if (bits >= width) // PTX clamps the amount: all bits shifted out
    return kind == 'a' ? (a < 0 ? -1 : 0) : 0;
  if (kind == 'l')
    return static_cast<int64_t>(static_cast<uint64_t>(a) << bits);
  if (kind == 'r')
    return static_cast<int64_t>(unsignedOf(a, width) >> bits);
  return a >> bits;
}

const llvm::StringMap<IntBinary> &intBinaries() {
  static const llvm::StringMap<IntBinary> table = {
      {"arith.addi",
       [](int64_t a, int64_t b, unsigned) {
         return static_cast<int64_t>(uint64_t(a) + uint64_t(b));
       }},
      {"arith.subi",
       [](int64_t a, int64_t b, unsigned) {
         return static_cast<int64_t>(uint64_t(a) - uint64_t(b));
       }},
      {"arith.muli",
       [](int64_t a, int64_t b, unsigned) {
         return static_cast<int64_t>(uint64_t(a) * uint64_t(b));
       }},
      {"arith.divsi", divideSigned},
      {"arith.remsi", remainderSigned},
      {"arith.divui",
       [](int64_t a, int64_t b, unsigned w) -> int64_t {
         uint64_t d = unsignedOf(b, w);
         return d == 0 ? 0 : static_cast<int64_t>(unsignedOf(a, w) / d);
       }},
      {"arith.remui",
       [](int64_t a, int64_t b, unsigned w) -> int64_t {
         uint64_t d = unsignedOf(b, w);
         return d == 0 ? 0 : static_cast<int64_t>(unsignedOf(a, w) % d);
       }},
      {"arith.andi", [](int64_t a, int64_t b, unsigned) { return a & b; }},
      {"arith.ori", [](int64_t a, int64_t b, unsigned) { return a | b; }},
      {"arith.xori", [](int64_t a, int64_t b, unsigned) { return a ^ b; }},
      {"arith.shli",
       [](int64_t a, int64_t b, unsigned w) { return shift(a, b, w, 'l'); }},
      {"arith.shrui",
       [](int64_t a, int64_t b, unsigned w) { return shift(a, b, w, 'r'); }},
      {"arith.shrsi",
       [](int64_t a, int64_t b, unsigned w) { return shift(a, b, w, 'a'); }},
      {"arith.maxsi",
       [](int64_t a, int64_t b, unsigned) { return std::max(a, b); }},
      {"arith.minsi",
       [](int64_t a, int64_t b, unsigned) { return std::min(a, b); }},
      {"arith.maxui",
       [](int64_t a, int64_t b, unsigned w) {
         return unsignedOf(a, w) >= unsignedOf(b, w) ? a : b;
       }},
      {"arith.minui",
       [](int64_t a, int64_t b, unsigned w) {
         return unsignedOf(a, w) <= unsignedOf(b, w) ? a : b;
       }},
  };
  return table;
}

const llvm::StringMap<FloatBinary> &floatBinaries() {
  static const llvm::StringMap<FloatBinary> table = {
      {"arith.addf", [](double a, double b) { return a + b; }},
      {"arith.subf", [](double a, double b) { return a - b; }},
      {"arith.mulf", [](double a, double b) { return a * b; }},
      {"arith.divf", [](double a, double b) { return a / b; }},
      {"arith.remf", [](double a, double b) { return std::fmod(a, b); }},
      {"arith.maximumf", maximumOf},
      {"arith.minimumf", minimumOf},
      {"arith.maxnumf", [](double a, double b) { return std::fmax(a, b); }},
      {"arith.minnumf", [](double a, double b) { return std::fmin(a, b); }},
      {"math.powf", [](double a, double b) { return std::pow(a, b); }},
      {"math.atan2", [](double a, double b) { return std::atan2(a, b); }},
  };
  return table;
}

const llvm::StringMap<FloatUnary> &floatUnaries() {
  static const llvm::StringMap<FloatUnary> table = {
      {"arith.negf", [](double a) { return -a; }},
      {"math.absf", [](double a) { return std::fabs(a); }},
      {"math.exp", [](double a) { return std::exp(a); }},
      {"math.exp2", [](double a) { return std::exp2(a); }},
      {"math.log", [](double a) { return std::log(a); }},
      {"math.log2", [](double a) { return std::log2(a); }},
      {"math.sqrt", [](double a) { return std::sqrt(a); }},
      {"math.rsqrt", [](double a) { return 1 / std::sqrt(a); }},
      {"math.tanh", [](double a) { return std::tanh(a); }},
      {"math.sin", [](double a) { return std::sin(a); }},
      {"math.cos", [](double a) { return std::cos(a); }},
      {"math.erf", [](double a) { return std::erf(a); }},
      {"math.floor", [](double a) { return std::floor(a); }},
      {"math.ceil", [](double a) { return std::ceil(a); }},
      {"math.round", [](double a) { return std::round(a); }},
      {"math.roundeven", [](double a) { return std::nearbyint(a); }},
      {"math.trunc", [](double a) { return std::trunc(a); }},
  };
  return table;
}

bool compareInts(mlir::arith::CmpIPredicate predicate, int64_t a, int64_t b,
                 unsigned width) {
  using P = mlir::arith::CmpIPredicate;
  uint64_t ua = unsignedOf(a, width), ub = unsignedOf(b, width);
  switch (predicate) {
  case P::eq:
    return a == b;
  case P::ne:
    return a != b;
  case P::slt:
    return a < b;
  case P::sle:
    return a <= b;
  case P::sgt:
    return a > b;
  case P::sge:
    return a >= b;
  case P::ult:
    return ua < ub;
  case P::ule:
    return ua <= ub;
  case P::ugt:
    return ua > ub;
  case P::uge:
    return ua >= ub;
  }
  return false;
}

bool compareFloats(mlir::arith::CmpFPredicate predicate, double a, double b) {
  using P = mlir::arith::CmpFPredicate;
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (predicate) {
  case P::AlwaysFalse:
    return false;
  case P::OEQ:
    return !unordered && a == b;
  case P::OGT:
    return !unordered && a > b;
  case P::OGE:
    return !unordered && a >= b;
  case P::OLT:
    return !unordered && a < b;
  case P::OLE:
    return !unordered && a <= b;
  case P::ONE:
    return !unordered && a != b;
  case P::ORD:
    return !unordered;
  case P::UEQ:
    return unordered || a == b;
  case P::UGT:
    return unordered || a > b;
  case P::UGE:
    return unordered || a >= b;
  case P::ULT:
    return unordered || a < b;
  case P::ULE:
    return unordered || a <= b;
  case P::UNE:
    return unordered || a != b;
  case P::UNO:
    return unordered;
  case P::AlwaysTrue:
    return true;
  }
  return false;
}

// A float converted to an integer of `width` bits as the lowering's cvt.rzi
// does: toward zero, saturated at the bounds of max(width, 16) bits (PTX has
// no 8-bit conversion: an i8 is a 16-bit result's low byte), NaN as 0.
int64_t floatToInt(double value, unsigned width, bool isSigned) {
  if (std::isnan(value))
    return 0;
  value = std::trunc(value);
  unsigned bits = std::max(width, 16u);
  if (isSigned) {
    double bound = std::ldexp(1.0, bits - 1); // exact, unlike bound - 1
    if (value >= bound)
      return wrapToWidth(static_cast<int64_t>((uint64_t(1) << (bits - 1)) - 1),
                         width);
    if (value < -bound)
      return wrapToWidth(static_cast<int64_t>(uint64_t(1) << (bits - 1)),
                         width);
    return wrapToWidth(static_cast<int64_t>(value), width);
  }
  double bound = std::ldexp(1.0, bits);
  if (value <= 0)
    return 0;
  uint64_t saturated = value >= bound ? ~uint64_t(0) >> (64 - bits)
                                      : static_cast<uint64_t>(value);
  return wrapToWidth(static_cast<int64_t>(saturated), width);
}

Tensor constantOf(mlir::Attribute attribute, std::vector<int64_t> shape,
                  ElementType type) {
  Tensor tensor(std::move(shape), type);
  auto element = [&](mlir::Attribute value, size_t index) {
    if (auto integer = llvm::dyn_cast<mlir::IntegerAttr>(value))
      tensor.ints[index] =
          wrapToWidth(integer.getValue().getSExtValue(), type.width);
    else if (auto real = llvm::dyn_cast<mlir::FloatAttr>(value))
      tensor.floats[index] = real.getValueAsDouble();
    else if (auto boolean = llvm::dyn_cast<mlir::BoolAttr>(value))
      tensor.ints[index] = boolean.getValue() ? -1 : 0;
  };
  if (auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(attribute)) {
    if (dense.isSplat()) {
      mlir::Attribute splat = dense.getSplatValue<mlir::Attribute>();
      for (size_t i = 0; i < tensor.size(); ++i)
        element(splat, i);
    } else {
      size_t i = 0;
      for (mlir::Attribute value : dense.getValues<mlir::Attribute>())
        element(value, i++);
    }
  } else {
    element(attribute, 0);
  }
  return tensor;
}

} // namespace

mlir::LogicalResult Program::runArith(mlir::Operation &op, bool &handled) {
  llvm::StringRef name = op.getName().getStringRef();
  handled = name.starts_with("arith.") || name.starts_with("math.");
  if (!handled)
    return mlir::success();
  if (op.getNumResults() != 1)
    return error(op) << "the interpreter does not run '" << name << "'";
  mlir::Value result = op.getResult(0);
  mlir::FailureOr<ElementType> type = typeOf(op, result);
  if (mlir::failed(type))
    return mlir::failure();
  std::vector<int64_t> shape;
  if (auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(result.getType()))
    shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  Tensor out(shape, *type);
  size_t count = out.size();
  auto rounded = [&](double value) {
    return roundToFormat(value, type->format);
  };

  if (auto constant = llvm::dyn_cast<mlir::arith::ConstantOp>(op)) {
    bind(result, constantOf(constant.getValue(), shape, *type));
    return mlir::success();
  }
  if (auto found = intBinaries().find(name); found != intBinaries().end()) {
    const Tensor &a = operand(op, 0), &b = operand(op, 1);
    for (size_t i = 0; i < count; ++i)
      out.ints[i] = wrapToWidth(
          found->second(a.ints[i], b.ints[i], type->width), type->width);
  } else if (auto found = floatBinaries().find(name);
             found != floatBinaries().end()) {
    const Tensor &a = operand(op, 0), &b = operand(op, 1);
    for (size_t i = 0; i < count; ++i)
      out.floats[i] = rounded(found->second(a.floats[i], b.floats[i]));
  } else if (auto found = floatUnaries().find(name);
             found != floatUnaries().end()) {
    const Tensor &a = operand(op, 0);
    for (size_t i = 0; i < count; ++i)
      out.floats[i] = rounded(found->second(a.floats[i]));
  } else if (name == "math.fma") {
    const Tensor &a = operand(op, 0), &b = operand(op, 1), &c = operand(op, 2);
    for (size_t i = 0; i < count; ++i)
      out.floats[i] = rounded(std::fma(a.floats[i], b.floats[i], c.floats[i]));
  } else if (name == "math.absi") {
    const Tensor &a = operand(op, 0);
    for (size_t i = 0; i < count; ++i)
      out.ints[i] = wrapToWidth(a.ints[i] < 0 ? -uint64_t(a.ints[i])
                                              : uint64_t(a.ints[i]),
                                type->width);
  } else if (auto compare = llvm::dyn_cast<mlir::arith::CmpIOp>(op)) {
    const Tensor &a = operand(op, 0), &b = operand(op, 1);
    unsigned width = a.type.width;
    for (size_t i = 0; i < count; ++i)
      out.ints[i] =
          compareInts(compare.getPredicate(), a.ints[i], b.ints[i], width) ? -1
                                                                           : 0;
  } else if (auto compare = llvm::dyn_cast<mlir::arith::CmpFOp>(op)) {
    const Tensor &a = operand(op, 0), &b = operand(op, 1);
    for (size_t i = 0; i < count; ++i)
      out.ints[i] =
          compareFloats(compare.getPredicate(), a.floats[i], b.floats[i]) ? -1
                                                                          : 0;
  } else if (llvm::isa<mlir::arith::SelectOp>(op)) {
    const Tensor &condition = operand(op, 0), &a = operand(op, 1),
                 &b = operand(op, 2);
    for (size_t i = 0; i < count; ++i) {
      bool pick = condition.ints[condition.isScalar() ? 0 : i] != 0;
      if (type->isFloat())
        out.floats[i] = pick ? a.floats[i] : b.floats[i];
      else
        out.ints[i] = pick ? a.ints[i] : b.ints[i];
    }
  } else {
    return runCast(op, out);
  }
  bind(result, std::move(out));
  return mlir::success();
}

mlir::LogicalResult Program::runCast(mlir::Operation &op, Tensor &out) {
  enum class Cast {
    None,
    SignExtend,
    ZeroExtend,
    SignedToFloat,
    UnsignedToFloat,
    FloatToSigned,
    FloatToUnsigned,
    Float,
    Bits
  };
  llvm::StringRef name = op.getName().getStringRef();
  Cast cast =
      llvm::StringSwitch<Cast>(name)
          .Cases({"arith.extsi", "arith.trunci", "arith.index_cast"},
                 Cast::SignExtend)
          .Cases({"arith.extui", "arith.index_castui"}, Cast::ZeroExtend)
          .Case("arith.sitofp", Cast::SignedToFloat)
          .Case("arith.uitofp", Cast::UnsignedToFloat)
          .Case("arith.fptosi", Cast::FloatToSigned)
          .Case("arith.fptoui", Cast::FloatToUnsigned)
          .Cases({"arith.extf", "arith.truncf"}, Cast::Float)
          .Case("arith.bitcast", Cast::Bits)
          .Default(Cast::None);
  if (cast == Cast::None || op.getNumOperands() != 1)
    return error(op) << "the interpreter does not run '" << name << "'";
  const Tensor &a = operand(op, 0);
  const ElementType &from = a.type, &to = out.type;
  for (size_t i = 0, count = out.size(); i < count; ++i) {
    switch (cast) {
    case Cast::SignExtend:
      out.ints[i] = wrapToWidth(a.ints[i], to.width);
      break;
    case Cast::ZeroExtend:
      out.ints[i] = wrapToWidth(
          static_cast<int64_t>(unsignedOf(a.ints[i], from.width)), to.width);
      break;
    case Cast::SignedToFloat:
      out.floats[i] = roundToFormat(static_cast<double>(a.ints[i]), to.format);
      break;
    case Cast::UnsignedToFloat:
      out.floats[i] = roundToFormat(
          static_cast<double>(unsignedOf(a.ints[i], from.width)), to.format);
      break;
    case Cast::FloatToSigned:
    case Cast::FloatToUnsigned:
      out.ints[i] =
          floatToInt(a.floats[i], to.width, cast == Cast::FloatToSigned);
      break;
    case Cast::Float:
      out.floats[i] = roundToFormat(a.floats[i], to.format);
      break;
    case Cast::Bits: {
      // Through the bits of `from`, read back as `to`.
      uint64_t bits = from.isFloat() ? floatBits(a.floats[i], from.format)
                                     : unsignedOf(a.ints[i], from.width);
      if (to.isFloat())
        out.floats[i] = floatFromBits(bits, to.format);
      else
        out.ints[i] = wrapToWidth(static_cast<int64_t>(bits), to.width);
      break;
    }
    case Cast::None:
      break;
    }
  }
  bind(op.getResult(0), std::move(out));
  return mlir::success();
}

} // namespace tilec::interp
