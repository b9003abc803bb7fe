//===- AxisInfo.cpp - contiguity, divisibility, constancy -----------------===//
//
// A forward walk over each function in program order. Straight-line code needs
// one visit; `scf.for` bodies are re-visited with the carried values joined
// with what the body yields until nothing changes. Joins only ever lower the
// facts (every component is a power of two bounded by the shape or by
// kMaxDivisibility), so the iteration terminates, and the fixed point holds
// for the initial values and for every iteration by induction.
//
//===----------------------------------------------------------------------===//

#include "tilec/Analysis/AxisInfo.h"

#include "tilec/Dialect/Tile/IR/Tile.h"
#include "tilec/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace tilec;

static constexpr int64_t kMaxDiv = AxisInfo::kMaxDivisibility;

//===----------------------------------------------------------------------===//
// AxisInfo
//===----------------------------------------------------------------------===//

AxisInfo AxisInfo::getPessimistic(unsigned rank) {
  AxisInfo info;
  info.contiguity.assign(rank, 1);
  info.divisibility.assign(rank, 1);
  info.constancy.assign(rank, 1);
  return info;
}

bool AxisInfo::operator==(const AxisInfo &other) const {
  return contiguity == other.contiguity && divisibility == other.divisibility &&
         constancy == other.constancy && constantValue == other.constantValue;
}

void AxisInfo::print(llvm::raw_ostream &os) const {
  auto printList = [&](StringRef name, ArrayRef<int64_t> values) {
    os << name << " = [";
    llvm::interleaveComma(values, os);
    os << "]";
  };
  printList("contiguity", contiguity);
  os << ", ";
  printList("divisibility", divisibility);
  os << ", ";
  printList("constancy", constancy);
  os << ", constant_value = ";
  if (constantValue)
    os << *constantValue;
  else
    os << "<none>";
}

//===----------------------------------------------------------------------===//
// Arithmetic on powers of two
//===----------------------------------------------------------------------===//

static int64_t highestPowerOf2Divisor(int64_t value) {
  if (value == 0)
    return kMaxDiv;
  unsigned shift = llvm::countr_zero(static_cast<uint64_t>(value));
  return shift >= 30 ? kMaxDiv : int64_t(1) << shift;
}

static int64_t clampDiv(int64_t value) {
  return std::clamp<int64_t>(value, 1, kMaxDiv);
}

static int64_t mulDiv(int64_t lhs, int64_t rhs) {
  if (lhs > kMaxDiv / rhs)
    return kMaxDiv;
  return clampDiv(lhs * rhs);
}

static bool isPowerOf2(int64_t value) {
  return value > 0 && llvm::isPowerOf2_64(value);
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

static Type getElementType(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.getElementType();
  return type;
}

static SmallVector<int64_t> getShape(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return SmallVector<int64_t>(tensor.getShape());
  return {1};
}

static bool isTracked(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    if (!tensor.hasStaticShape() || tensor.getRank() == 0)
      return false;
  Type element = getElementType(type);
  return isa<IntegerType, IndexType, FloatType, tile::PointerType>(element);
}

/// Bytes of one pointee element (sub-byte types occupy a byte).
static int64_t getPointeeBytes(tile::PointerType type) {
  Type pointee = type.getPointeeType();
  if (isa<tile::PointerType>(pointee))
    return 8;
  if (pointee.isIntOrFloat())
    return std::max(8u, pointee.getIntOrFloatBitWidth()) / 8;
  return 1;
}

/// The step, in divisibility units, between consecutive elements of a
/// contiguous run: pointee bytes for pointers, 1 for integers.
static int64_t getUnit(Type type) {
  if (auto ptr = dyn_cast<tile::PointerType>(getElementType(type)))
    return getPointeeBytes(ptr);
  return 1;
}

static unsigned getIntegerWidth(Type type) {
  Type element = getElementType(type);
  if (element.isIndex())
    return 64;
  if (auto integer = dyn_cast<IntegerType>(element))
    return integer.getWidth();
  return 0;
}

/// Wraps `value` to the integer type of `type` (i1 as 0/1, others
/// sign-extended); nullopt for non-integers.
static std::optional<int64_t> normalizeConstant(int64_t value, Type type) {
  unsigned width = getIntegerWidth(type);
  if (width == 0)
    return std::nullopt;
  if (width == 1)
    return value & 1;
  if (width >= 64)
    return value;
  return llvm::APInt(width, static_cast<uint64_t>(value), /*isSigned=*/false,
                     /*implicitTrunc=*/true)
      .getSExtValue();
}

static llvm::APInt toAPInt(int64_t value, Type type) {
  return llvm::APInt(getIntegerWidth(type), static_cast<uint64_t>(value),
                     /*isSigned=*/false, /*implicitTrunc=*/true);
}

//===----------------------------------------------------------------------===//
// Facts derived from an AxisInfo
//===----------------------------------------------------------------------===//

/// Divisibility of the first element of every aligned group of `group`
/// elements along `dim`: groups that split a contiguous run start `unit`
/// bytes (or 1) times a multiple of `group` after the run's start.
static int64_t divisibilityAt(const AxisInfo &info, unsigned dim, int64_t group,
                              int64_t unit) {
  if (group >= info.contiguity[dim])
    return info.divisibility[dim];
  return std::min(info.divisibility[dim], mulDiv(group, unit));
}

/// Divisibility that holds for every element.
static int64_t elementDivisibility(const AxisInfo &info, int64_t unit) {
  int64_t result = 1;
  for (unsigned dim = 0; dim < info.getRank(); ++dim)
    result = std::max(result, divisibilityAt(info, dim, 1, unit));
  return result;
}

static AxisInfo join(const AxisInfo &lhs, const AxisInfo &rhs, int64_t unit) {
  if (lhs.getRank() != rhs.getRank())
    return AxisInfo::getPessimistic(lhs.getRank());
  AxisInfo result = AxisInfo::getPessimistic(lhs.getRank());
  for (unsigned dim = 0; dim < lhs.getRank(); ++dim) {
    int64_t contiguity = std::min(lhs.contiguity[dim], rhs.contiguity[dim]);
    result.contiguity[dim] = contiguity;
    result.divisibility[dim] =
        std::min(divisibilityAt(lhs, dim, contiguity, unit),
                 divisibilityAt(rhs, dim, contiguity, unit));
    result.constancy[dim] = std::min(lhs.constancy[dim], rhs.constancy[dim]);
  }
  if (lhs.constantValue == rhs.constantValue)
    result.constantValue = lhs.constantValue;
  return result;
}

/// The facts of a tensor whose every element equals `value`.
static AxisInfo getConstantInfo(int64_t value, ArrayRef<int64_t> shape) {
  AxisInfo info = AxisInfo::getPessimistic(shape.size());
  for (unsigned dim = 0; dim < shape.size(); ++dim) {
    info.constancy[dim] = shape[dim];
    info.divisibility[dim] = highestPowerOf2Divisor(value);
  }
  info.constantValue = value;
  return info;
}

/// Exact facts of a dense constant, by inspecting its elements.
static AxisInfo getConcreteInfo(ArrayRef<int64_t> values,
                                ArrayRef<int64_t> shape) {
  unsigned rank = shape.size();
  AxisInfo info = AxisInfo::getPessimistic(rank);
  SmallVector<int64_t> strides(rank, 1);
  for (int dim = int(rank) - 2; dim >= 0; --dim)
    strides[dim] = strides[dim + 1] * shape[dim + 1];
  auto coordinate = [&](int64_t index, unsigned dim) {
    return (index / strides[dim]) % shape[dim];
  };
  // The largest aligned run length along `dim` for which `step(j)` relates
  // element j of every run to its first element.
  auto largestRun = [&](unsigned dim, auto sameRun) {
    int64_t size = shape[dim];
    for (int64_t run = int64_t(1) << llvm::countr_zero(uint64_t(size)); run > 1;
         run /= 2) {
      bool holds = true;
      for (int64_t index = 0; holds && index < int64_t(values.size());
           ++index) {
        int64_t j = coordinate(index, dim) % run;
        holds = sameRun(values[index - j * strides[dim]], values[index], j);
      }
      if (holds)
        return run;
    }
    return int64_t(1);
  };
  for (unsigned dim = 0; dim < rank; ++dim) {
    info.contiguity[dim] =
        largestRun(dim, [](int64_t first, int64_t value, int64_t j) {
          return value == first + j;
        });
    info.constancy[dim] =
        largestRun(dim, [](int64_t first, int64_t value, int64_t) {
          return value == first;
        });
    int64_t divisibility = kMaxDiv;
    for (int64_t index = 0; index < int64_t(values.size()); ++index)
      if (coordinate(index, dim) % info.contiguity[dim] == 0)
        divisibility =
            std::min(divisibility, highestPowerOf2Divisor(values[index]));
    info.divisibility[dim] = divisibility;
  }
  return info;
}

//===----------------------------------------------------------------------===//
// The walk
//===----------------------------------------------------------------------===//

namespace {
class AxisInfoWalker {
public:
  explicit AxisInfoWalker(DenseMap<Value, AxisInfo> &infos) : infos(infos) {}

  void visitFunction(FunctionOpInterface func);

private:
  AxisInfo get(Value value) const;
  void set(Value value, AxisInfo info);
  void visitBlock(Block &block);
  void visitOp(Operation *op);
  void visitFor(scf::ForOp forOp);
  void visitIf(scf::IfOp ifOp);
  AxisInfo transfer(Operation *op);

  AxisInfo visitConstant(arith::ConstantOp op);
  AxisInfo visitAddSub(Value lhs, Value rhs, bool isSub, Type resultType);
  AxisInfo visitMul(arith::MulIOp op);
  AxisInfo visitDivRem(Operation *op, bool isRem, bool isSigned);
  AxisInfo visitAnd(arith::AndIOp op);
  AxisInfo visitShift(Operation *op);
  AxisInfo visitCmp(arith::CmpIOp op);
  AxisInfo visitSelect(arith::SelectOp op);
  AxisInfo visitCast(Operation *op);

  DenseMap<Value, AxisInfo> &infos;
};
} // namespace

AxisInfo AxisInfoWalker::get(Value value) const {
  auto it = infos.find(value);
  if (it != infos.end())
    return it->second;
  return AxisInfo::getPessimistic(getShape(value.getType()).size());
}

void AxisInfoWalker::set(Value value, AxisInfo info) {
  Type type = value.getType();
  if (!isTracked(type))
    return;
  SmallVector<int64_t> shape = getShape(type);
  if (info.getRank() != shape.size())
    info = AxisInfo::getPessimistic(shape.size());
  if (info.constantValue) {
    info.constantValue = normalizeConstant(*info.constantValue, type);
    if (info.constantValue)
      info = getConstantInfo(*info.constantValue, shape);
  }
  // Runs are aligned, so they cannot be longer than the largest power of two
  // dividing the dimension.
  for (unsigned dim = 0; dim < shape.size(); ++dim) {
    int64_t limit = int64_t(1) << llvm::countr_zero(uint64_t(shape[dim]));
    info.contiguity[dim] = std::clamp<int64_t>(info.contiguity[dim], 1, limit);
    info.constancy[dim] = std::clamp<int64_t>(info.constancy[dim], 1, limit);
    info.divisibility[dim] = clampDiv(info.divisibility[dim]);
  }
  infos[value] = std::move(info);
}

void AxisInfoWalker::visitFunction(FunctionOpInterface func) {
  if (func.isExternal())
    return;
  Block &entry = func.getFunctionBody().front();
  for (BlockArgument arg : entry.getArguments()) {
    AxisInfo info = AxisInfo::getPessimistic(getShape(arg.getType()).size());
    if (auto divisibility = func.getArgAttrOfType<IntegerAttr>(
            arg.getArgNumber(), "tile.divisibility");
        divisibility && !isa<RankedTensorType>(arg.getType())) {
      int64_t value = divisibility.getInt();
      if (value > 0)
        info.divisibility[0] = highestPowerOf2Divisor(value);
    }
    set(arg, info);
  }
  for (Block &block : func.getFunctionBody())
    visitBlock(block);
}

void AxisInfoWalker::visitBlock(Block &block) {
  for (Operation &op : block)
    visitOp(&op);
}

void AxisInfoWalker::visitOp(Operation *op) {
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return visitFor(forOp);
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    return visitIf(ifOp);
  if (op->getNumRegions() != 0) {
    // Unknown control flow: nothing is known about what enters or leaves it.
    for (Region &region : op->getRegions())
      for (Block &block : region) {
        for (BlockArgument arg : block.getArguments())
          set(arg, get(arg));
        visitBlock(block);
      }
    for (Value result : op->getResults())
      set(result, get(result));
    return;
  }
  if (op->getNumResults() == 1) {
    set(op->getResult(0), transfer(op));
    return;
  }
  for (Value result : op->getResults())
    set(result, AxisInfo::getPessimistic(getShape(result.getType()).size()));
}

void AxisInfoWalker::visitFor(scf::ForOp forOp) {
  AxisInfo iv = AxisInfo::getPessimistic(1);
  iv.divisibility[0] =
      std::min(elementDivisibility(get(forOp.getLowerBound()), 1),
               elementDivisibility(get(forOp.getStep()), 1));
  set(forOp.getInductionVar(), iv);

  SmallVector<AxisInfo> carried;
  for (Value init : forOp.getInitArgs())
    carried.push_back(get(init));
  auto yield = cast<scf::YieldOp>(forOp.getBody()->getTerminator());
  // Termination is guaranteed (facts only decrease); the bound is a guard
  // against a bug turning into a hang.
  constexpr unsigned kMaxIterations = 256;
  for (unsigned iteration = 0;; ++iteration) {
    for (auto [arg, info] : llvm::zip(forOp.getRegionIterArgs(), carried))
      set(arg, info);
    visitBlock(*forOp.getBody());
    bool changed = false;
    for (auto [index, yielded] : llvm::enumerate(yield.getOperands())) {
      AxisInfo joined =
          join(carried[index], get(yielded), getUnit(yielded.getType()));
      if (joined != carried[index]) {
        carried[index] = std::move(joined);
        changed = true;
      }
    }
    if (!changed)
      break;
    if (iteration == kMaxIterations) {
      for (auto [arg, info] : llvm::zip(forOp.getRegionIterArgs(), carried)) {
        info = AxisInfo::getPessimistic(info.getRank());
        set(arg, info);
      }
      visitBlock(*forOp.getBody());
      break;
    }
  }
  for (auto [result, info] : llvm::zip(forOp.getResults(), carried))
    set(result, info);
}

void AxisInfoWalker::visitIf(scf::IfOp ifOp) {
  for (Region &region : ifOp->getRegions())
    for (Block &block : region)
      visitBlock(block);
  if (ifOp.getNumResults() == 0)
    return;
  auto thenYield = ifOp.thenYield();
  auto elseYield = ifOp.elseYield();
  for (auto [index, result] : llvm::enumerate(ifOp.getResults()))
    set(result,
        join(get(thenYield.getOperand(index)), get(elseYield.getOperand(index)),
             getUnit(result.getType())));
}

//===----------------------------------------------------------------------===//
// Transfer functions
//===----------------------------------------------------------------------===//

AxisInfo AxisInfoWalker::visitConstant(arith::ConstantOp op) {
  Type type = op.getType();
  SmallVector<int64_t> shape = getShape(type);
  auto toInt = [](const APInt &value) {
    return value.getBitWidth() == 1 ? int64_t(value.getZExtValue())
                                    : value.getSExtValue();
  };
  if (auto integer = dyn_cast<IntegerAttr>(op.getValue()))
    return getConstantInfo(toInt(integer.getValue()), shape);
  if (auto dense = dyn_cast<DenseIntElementsAttr>(op.getValue())) {
    if (dense.isSplat())
      return getConstantInfo(toInt(dense.getSplatValue<APInt>()), shape);
    constexpr int64_t kMaxInspected = 1 << 16;
    if (dense.getNumElements() <= kMaxInspected) {
      SmallVector<int64_t> values;
      for (const APInt &value : dense.getValues<APInt>())
        values.push_back(toInt(value));
      return getConcreteInfo(values, shape);
    }
  }
  AxisInfo info = AxisInfo::getPessimistic(shape.size());
  if (auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
      dense && dense.isSplat())
    info.constancy.assign(shape.begin(), shape.end());
  return info;
}

/// lhs +/- rhs (tile.addptr when the result is a pointer): a run of the sum is
/// contiguous where one side is contiguous and the other constant.
AxisInfo AxisInfoWalker::visitAddSub(Value lhsValue, Value rhsValue, bool isSub,
                                     Type resultType) {
  AxisInfo lhs = get(lhsValue), rhs = get(rhsValue);
  int64_t lhsUnit = getUnit(lhsValue.getType());
  // Offsets of tile.addptr count elements; their divisibility scales to bytes.
  int64_t rhsScale = getUnit(resultType) / getUnit(rhsValue.getType());
  AxisInfo result = AxisInfo::getPessimistic(lhs.getRank());
  for (unsigned dim = 0; dim < lhs.getRank(); ++dim) {
    int64_t contiguity = std::min(lhs.contiguity[dim], rhs.constancy[dim]);
    if (!isSub)
      contiguity = std::max(contiguity,
                            std::min(lhs.constancy[dim], rhs.contiguity[dim]));
    result.contiguity[dim] = contiguity;
    result.constancy[dim] = std::min(lhs.constancy[dim], rhs.constancy[dim]);
    result.divisibility[dim] =
        std::min(divisibilityAt(lhs, dim, contiguity, lhsUnit),
                 mulDiv(divisibilityAt(rhs, dim, contiguity, 1), rhsScale));
  }
  if (lhs.constantValue && rhs.constantValue && rhsScale == 1) {
    uint64_t l = *lhs.constantValue, r = *rhs.constantValue;
    result.constantValue = int64_t(isSub ? l - r : l + r);
  }
  return result;
}

AxisInfo AxisInfoWalker::visitMul(arith::MulIOp op) {
  AxisInfo lhs = get(op.getLhs()), rhs = get(op.getRhs());
  if (rhs.constantValue == 1)
    return lhs;
  if (lhs.constantValue == 1)
    return rhs;
  AxisInfo result = AxisInfo::getPessimistic(lhs.getRank());
  // Products are not contiguous; every element is a multiple of both
  // factors' divisors.
  int64_t divisibility =
      mulDiv(elementDivisibility(lhs, 1), elementDivisibility(rhs, 1));
  for (unsigned dim = 0; dim < lhs.getRank(); ++dim) {
    result.constancy[dim] = std::min(lhs.constancy[dim], rhs.constancy[dim]);
    result.divisibility[dim] = divisibility;
  }
  if (lhs.constantValue && rhs.constantValue)
    result.constantValue =
        int64_t(uint64_t(*lhs.constantValue) * uint64_t(*rhs.constantValue));
  else if (lhs.constantValue == 0 || rhs.constantValue == 0)
    result.constantValue = 0;
  return result;
}

/// Length of the aligned runs along `dim` in which a contiguous `lhs` stays
/// between two consecutive multiples of a `rhs` that is constant on the run:
/// both the run's start and `rhs` are multiples of the run length.
static int64_t getUnbrokenRun(const AxisInfo &lhs, const AxisInfo &rhs,
                              unsigned dim) {
  if (lhs.contiguity[dim] == 1)
    return 1;
  return std::min({lhs.contiguity[dim], rhs.constancy[dim],
                   lhs.divisibility[dim], elementDivisibility(rhs, 1)});
}

AxisInfo AxisInfoWalker::visitDivRem(Operation *op, bool isRem, bool isSigned) {
  AxisInfo lhs = get(op->getOperand(0)), rhs = get(op->getOperand(1));
  if (!isRem && rhs.constantValue == 1)
    return lhs;
  AxisInfo result = AxisInfo::getPessimistic(lhs.getRank());
  int64_t lhsDiv = elementDivisibility(lhs, 1);
  int64_t rhsDiv = elementDivisibility(rhs, 1);
  for (unsigned dim = 0; dim < lhs.getRank(); ++dim) {
    int64_t run = getUnbrokenRun(lhs, rhs, dim);
    int64_t constancy = std::min(lhs.constancy[dim], rhs.constancy[dim]);
    if (isRem) {
      // x % q is x - q*k with k fixed on the run: still contiguous.
      result.contiguity[dim] = run;
      result.constancy[dim] = constancy;
      result.divisibility[dim] =
          std::min(divisibilityAt(lhs, dim, run, 1), rhsDiv);
    } else {
      // x / q is fixed on the run.
      result.constancy[dim] = std::max(constancy, run);
      // Exact only for a power-of-two divisor that divides every element.
      if (rhs.constantValue && isPowerOf2(*rhs.constantValue) &&
          lhsDiv >= *rhs.constantValue)
        result.divisibility[dim] = lhsDiv / *rhs.constantValue;
    }
  }
  if (lhs.constantValue && rhs.constantValue && *rhs.constantValue != 0) {
    Type type = op->getOperand(0).getType();
    APInt l = toAPInt(*lhs.constantValue, type);
    APInt r = toAPInt(*rhs.constantValue, type);
    if (!(isSigned && r.isAllOnes() && l.isMinSignedValue())) {
      APInt value = isSigned ? (isRem ? l.srem(r) : l.sdiv(r))
                             : (isRem ? l.urem(r) : l.udiv(r));
      result.constantValue = value.getSExtValue();
    }
  }
  return result;
}

AxisInfo AxisInfoWalker::visitAnd(arith::AndIOp op) {
  AxisInfo lhs = get(op.getLhs()), rhs = get(op.getRhs());
  if (lhs.constantValue && !rhs.constantValue)
    std::swap(lhs, rhs);
  AxisInfo result = AxisInfo::getPessimistic(lhs.getRank());
  int64_t lhsDiv = elementDivisibility(lhs, 1);
  int64_t rhsDiv = elementDivisibility(rhs, 1);
  std::optional<int64_t> mask = rhs.constantValue;
  if (mask == -1)
    return lhs;
  bool isI1 = getIntegerWidth(op.getType()) == 1;
  for (unsigned dim = 0; dim < lhs.getRank(); ++dim) {
    result.constancy[dim] = std::min(lhs.constancy[dim], rhs.constancy[dim]);
    // Clearing low bits keeps (and raises) their divisibility.
    result.divisibility[dim] = std::max(lhsDiv, rhsDiv);
    if (!mask || isI1)
      continue;
    if (*mask >= 0 && isPowerOf2(*mask + 1)) {
      // x & (2^n - 1) == x mod 2^n, for negative x too.
      int64_t modulus = *mask + 1;
      AxisInfo modulusInfo = getConstantInfo(modulus, getShape(op.getType()));
      int64_t run = getUnbrokenRun(lhs, modulusInfo, dim);
      result.contiguity[dim] = run;
      result.constancy[dim] = lhs.constancy[dim];
      result.divisibility[dim] =
          std::min(divisibilityAt(lhs, dim, run, 1), modulus);
    } else if (*mask < 0 && isPowerOf2(-*mask)) {
      // x & -2^n rounds down to a multiple of 2^n.
      int64_t alignment = -*mask;
      AxisInfo alignmentInfo =
          getConstantInfo(alignment, getShape(op.getType()));
      result.constancy[dim] =
          std::max(lhs.constancy[dim], getUnbrokenRun(lhs, alignmentInfo, dim));
      result.divisibility[dim] = std::max(lhsDiv, alignment);
    }
  }
  if (lhs.constantValue && rhs.constantValue)
    result.constantValue = *lhs.constantValue & *rhs.constantValue;
  return result;
}

AxisInfo AxisInfoWalker::visitShift(Operation *op) {
  AxisInfo lhs = get(op->getOperand(0)), rhs = get(op->getOperand(1));
  AxisInfo result = AxisInfo::getPessimistic(lhs.getRank());
  for (unsigned dim = 0; dim < lhs.getRank(); ++dim)
    result.constancy[dim] = std::min(lhs.constancy[dim], rhs.constancy[dim]);
  unsigned width = getIntegerWidth(op->getResult(0).getType());
  if (!rhs.constantValue || *rhs.constantValue < 0 ||
      *rhs.constantValue >= int64_t(width) || *rhs.constantValue >= 30)
    return result;
  int64_t shift = *rhs.constantValue;
  if (shift == 0)
    return lhs;
  int64_t factor = int64_t(1) << shift;
  int64_t lhsDiv = elementDivisibility(lhs, 1);
  AxisInfo factorInfo =
      getConstantInfo(factor, getShape(op->getResult(0).getType()));
  for (unsigned dim = 0; dim < lhs.getRank(); ++dim) {
    if (isa<arith::ShLIOp>(op)) {
      result.divisibility[dim] = mulDiv(lhsDiv, factor);
    } else {
      // Shifting right rounds down (to minus infinity for shrsi): fixed on
      // runs that do not cross a multiple of 2^shift.
      result.constancy[dim] =
          std::max(result.constancy[dim], getUnbrokenRun(lhs, factorInfo, dim));
      result.divisibility[dim] = std::max<int64_t>(1, lhsDiv / factor);
    }
  }
  if (lhs.constantValue) {
    Type type = op->getOperand(0).getType();
    APInt value = toAPInt(*lhs.constantValue, type);
    if (isa<arith::ShLIOp>(op))
      value = value.shl(shift);
    else if (isa<arith::ShRSIOp>(op))
      value = value.ashr(shift);
    else
      value = value.lshr(shift);
    result.constantValue = value.getSExtValue();
  }
  return result;
}

AxisInfo AxisInfoWalker::visitCmp(arith::CmpIOp op) {
  AxisInfo lhs = get(op.getLhs()), rhs = get(op.getRhs());
  AxisInfo result = AxisInfo::getPessimistic(lhs.getRank());
  using Predicate = arith::CmpIPredicate;
  Predicate predicate = op.getPredicate();
  // x < n and x >= n with x contiguous and n constant flip only at n: never
  // inside a run whose start and n are multiples of its length. n > x and
  // n <= x are the same comparisons mirrored. (x <= n flips after n, which
  // can be inside such a run.)
  bool lhsRuns = predicate == Predicate::slt || predicate == Predicate::sge ||
                 predicate == Predicate::ult || predicate == Predicate::uge;
  bool rhsRuns = predicate == Predicate::sgt || predicate == Predicate::sle ||
                 predicate == Predicate::ugt || predicate == Predicate::ule;
  for (unsigned dim = 0; dim < lhs.getRank(); ++dim) {
    int64_t constancy = std::min(lhs.constancy[dim], rhs.constancy[dim]);
    if (lhsRuns)
      constancy = std::max(constancy, getUnbrokenRun(lhs, rhs, dim));
    if (rhsRuns)
      constancy = std::max(constancy, getUnbrokenRun(rhs, lhs, dim));
    result.constancy[dim] = constancy;
  }
  if (lhs.constantValue && rhs.constantValue) {
    Type type = op.getLhs().getType();
    result.constantValue =
        arith::applyCmpPredicate(predicate, toAPInt(*lhs.constantValue, type),
                                 toAPInt(*rhs.constantValue, type));
  }
  return result;
}

AxisInfo AxisInfoWalker::visitSelect(arith::SelectOp op) {
  AxisInfo condition = get(op.getCondition());
  AxisInfo lhs = get(op.getTrueValue()), rhs = get(op.getFalseValue());
  if (op.getTrueValue() == op.getFalseValue())
    return lhs;
  if (condition.constantValue)
    return *condition.constantValue ? lhs : rhs;
  SmallVector<int64_t> shape = getShape(op.getType());
  // A scalar condition picks one side for the whole tensor.
  if (!isa<RankedTensorType>(op.getCondition().getType()))
    condition.constancy.assign(shape.begin(), shape.end());
  int64_t unit = getUnit(op.getType());
  AxisInfo result = AxisInfo::getPessimistic(lhs.getRank());
  for (unsigned dim = 0; dim < lhs.getRank(); ++dim) {
    int64_t contiguity = std::min(
        {condition.constancy[dim], lhs.contiguity[dim], rhs.contiguity[dim]});
    result.contiguity[dim] = contiguity;
    result.constancy[dim] = std::min(
        {condition.constancy[dim], lhs.constancy[dim], rhs.constancy[dim]});
    result.divisibility[dim] =
        std::min(divisibilityAt(lhs, dim, contiguity, unit),
                 divisibilityAt(rhs, dim, contiguity, unit));
  }
  if (lhs.constantValue && lhs.constantValue == rhs.constantValue)
    result.constantValue = lhs.constantValue;
  return result;
}

/// Integer extensions, truncations and pointer/integer reinterpretations.
AxisInfo AxisInfoWalker::visitCast(Operation *op) {
  Value source = op->getOperand(0);
  Type sourceType = source.getType(), resultType = op->getResult(0).getType();
  AxisInfo info = get(source);
  Type sourceElement = getElementType(sourceType);
  Type resultElement = getElementType(resultType);
  bool sourceIsPtr = isa<tile::PointerType>(sourceElement);
  bool resultIsPtr = isa<tile::PointerType>(resultElement);
  bool sourceIsInt = getIntegerWidth(sourceType) != 0;
  bool resultIsInt = getIntegerWidth(resultType) != 0;
  if (!(sourceIsPtr || sourceIsInt) || !(resultIsPtr || resultIsInt)) {
    // Floats: only uniformity survives.
    AxisInfo result = AxisInfo::getPessimistic(info.getRank());
    result.constancy = info.constancy;
    return result;
  }
  int64_t sourceUnit = getUnit(sourceType), resultUnit = getUnit(resultType);
  AxisInfo result = info;
  for (unsigned dim = 0; dim < info.getRank(); ++dim) {
    int64_t contiguity = info.contiguity[dim];
    // A run steps by sourceUnit bytes; it is a run of the result only if that
    // is also the result's step.
    if (sourceUnit != resultUnit)
      contiguity = 1;
    // Truncation wraps at multiples of 2^width, which aligned runs starting
    // at multiples of their length do not straddle when shorter.
    unsigned width = getIntegerWidth(resultType);
    if (width == 1)
      contiguity = 1;
    else if (resultIsInt && width < 62)
      contiguity = std::min(contiguity, int64_t(1) << width);
    result.contiguity[dim] = contiguity;
    result.divisibility[dim] =
        divisibilityAt(info, dim, contiguity, sourceUnit);
  }
  // Zero extension of a negative constant changes its value; a pointer's value
  // is not tracked.
  result.constantValue.reset();
  if (info.constantValue && sourceIsInt && resultIsInt) {
    APInt value = toAPInt(*info.constantValue, sourceType);
    unsigned width = getIntegerWidth(resultType);
    if (isa<arith::ExtUIOp, arith::IndexCastUIOp>(op))
      result.constantValue = value.zextOrTrunc(width).getSExtValue();
    else
      result.constantValue = value.sextOrTrunc(width).getSExtValue();
  }
  return result;
}

AxisInfo AxisInfoWalker::transfer(Operation *op) {
  Type resultType = op->getResult(0).getType();
  SmallVector<int64_t> shape = getShape(resultType);
  unsigned rank = shape.size();
  return llvm::TypeSwitch<Operation *, AxisInfo>(op)
      .Case([&](arith::ConstantOp constant) { return visitConstant(constant); })
      .Case([&](tile::MakeRangeOp range) {
        AxisInfo info = AxisInfo::getPessimistic(1);
        int64_t size = shape[0];
        int64_t run = int64_t(1) << llvm::countr_zero(uint64_t(size));
        int64_t start = static_cast<int32_t>(range.getStart());
        info.contiguity[0] = run;
        info.divisibility[0] = highestPowerOf2Divisor(start);
        if (run < size)
          info.divisibility[0] = std::min(info.divisibility[0], run);
        if (size == 1)
          info.constantValue = start;
        return info;
      })
      .Case([&](tile::SplatOp splat) {
        AxisInfo source = get(splat.getSrc());
        AxisInfo info = AxisInfo::getPessimistic(rank);
        int64_t divisibility =
            elementDivisibility(source, getUnit(splat.getSrc().getType()));
        for (unsigned dim = 0; dim < rank; ++dim) {
          info.constancy[dim] = shape[dim];
          info.divisibility[dim] = divisibility;
        }
        info.constantValue = source.constantValue;
        return info;
      })
      .Case([&](tile::BroadcastOp broadcast) {
        AxisInfo info = get(broadcast.getSrc());
        ArrayRef<int64_t> sourceShape =
            cast<RankedTensorType>(broadcast.getSrc().getType()).getShape();
        for (unsigned dim = 0; dim < rank; ++dim)
          if (sourceShape[dim] == 1 && shape[dim] != 1) {
            // A size-1 dimension has runs of 1, so its divisibility holds for
            // every element: the copies too.
            info.contiguity[dim] = 1;
            info.constancy[dim] = shape[dim];
          }
        return info;
      })
      .Case([&](tile::ExpandDimsOp expand) {
        AxisInfo info = get(expand.getSrc());
        int64_t divisibility =
            elementDivisibility(info, getUnit(expand.getSrc().getType()));
        unsigned axis = expand.getAxis();
        info.contiguity.insert(info.contiguity.begin() + axis, 1);
        info.constancy.insert(info.constancy.begin() + axis, 1);
        info.divisibility.insert(info.divisibility.begin() + axis,
                                 divisibility);
        return info;
      })
      .Case([&](tile::TransOp trans) {
        AxisInfo source = get(trans.getSrc());
        AxisInfo info = AxisInfo::getPessimistic(rank);
        for (auto [dim, from] : llvm::enumerate(trans.getOrder())) {
          info.contiguity[dim] = source.contiguity[from];
          info.divisibility[dim] = source.divisibility[from];
          info.constancy[dim] = source.constancy[from];
        }
        info.constantValue = source.constantValue;
        return info;
      })
      .Case([&](tile::ReshapeOp reshape) {
        // Same elements, new positions: only what holds for all of them.
        AxisInfo source = get(reshape.getSrc());
        AxisInfo info = AxisInfo::getPessimistic(rank);
        info.divisibility.assign(
            rank,
            elementDivisibility(source, getUnit(reshape.getSrc().getType())));
        info.constantValue = source.constantValue;
        return info;
      })
      .Case([&](tilegpu::ConvertLayoutOp convert) {
        return get(convert.getSrc());
      })
      .Case([&](tile::AddPtrOp addPtr) {
        return visitAddSub(addPtr.getPtr(), addPtr.getOffset(),
                           /*isSub=*/false, resultType);
      })
      .Case([&](arith::AddIOp add) {
        return visitAddSub(add.getLhs(), add.getRhs(), /*isSub=*/false,
                           resultType);
      })
      .Case([&](arith::SubIOp sub) {
        return visitAddSub(sub.getLhs(), sub.getRhs(), /*isSub=*/true,
                           resultType);
      })
      .Case([&](arith::MulIOp mul) { return visitMul(mul); })
      .Case([&](arith::DivSIOp div) {
        return visitDivRem(div, /*isRem=*/false, /*isSigned=*/true);
      })
      .Case([&](arith::DivUIOp div) {
        return visitDivRem(div, /*isRem=*/false, /*isSigned=*/false);
      })
      .Case([&](arith::RemSIOp rem) {
        return visitDivRem(rem, /*isRem=*/true, /*isSigned=*/true);
      })
      .Case([&](arith::RemUIOp rem) {
        return visitDivRem(rem, /*isRem=*/true, /*isSigned=*/false);
      })
      .Case([&](arith::AndIOp andOp) { return visitAnd(andOp); })
      .Case<arith::OrIOp, arith::XOrIOp, arith::MaxSIOp, arith::MinSIOp,
            arith::MaxUIOp, arith::MinUIOp>([&](Operation *bitwise) {
        // Each result bit comes from the operands' bits (or is one of them),
        // so low zero bits common to both survive.
        AxisInfo lhs = get(bitwise->getOperand(0));
        AxisInfo rhs = get(bitwise->getOperand(1));
        AxisInfo info = AxisInfo::getPessimistic(rank);
        int64_t divisibility =
            std::min(elementDivisibility(lhs, 1), elementDivisibility(rhs, 1));
        for (unsigned dim = 0; dim < rank; ++dim) {
          info.constancy[dim] =
              std::min(lhs.constancy[dim], rhs.constancy[dim]);
          info.divisibility[dim] = divisibility;
        }
        if (lhs.constantValue && rhs.constantValue) {
          Type type = bitwise->getOperand(0).getType();
          APInt l = toAPInt(*lhs.constantValue, type);
          APInt r = toAPInt(*rhs.constantValue, type);
          APInt value =
              llvm::TypeSwitch<Operation *, APInt>(bitwise)
                  .Case([&](arith::OrIOp) { return l | r; })
                  .Case([&](arith::XOrIOp) { return l ^ r; })
                  .Case([&](arith::MaxSIOp) { return l.sge(r) ? l : r; })
                  .Case([&](arith::MinSIOp) { return l.sle(r) ? l : r; })
                  .Case([&](arith::MaxUIOp) { return l.uge(r) ? l : r; })
                  .Default([&](Operation *) { return l.ule(r) ? l : r; });
          info.constantValue = value.getSExtValue();
        }
        return info;
      })
      .Case<arith::ShLIOp, arith::ShRSIOp, arith::ShRUIOp>(
          [&](Operation *shift) { return visitShift(shift); })
      .Case([&](arith::CmpIOp cmp) { return visitCmp(cmp); })
      .Case([&](arith::SelectOp select) { return visitSelect(select); })
      .Case<arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp, arith::IndexCastOp,
            arith::IndexCastUIOp, tile::IntToPtrOp, tile::PtrToIntOp,
            tile::BitcastOp>([&](Operation *cast) { return visitCast(cast); })
      .Default([&](Operation *other) {
        // Elementwise ops map equal inputs to equal outputs.
        AxisInfo info = AxisInfo::getPessimistic(rank);
        if (!other->hasTrait<OpTrait::Elementwise>() ||
            !isMemoryEffectFree(other) || !isa<RankedTensorType>(resultType))
          return info;
        SmallVector<int64_t> constancy(shape);
        for (Value operand : other->getOperands()) {
          if (!isa<RankedTensorType>(operand.getType()))
            continue;
          AxisInfo operandInfo = get(operand);
          if (operandInfo.getRank() != rank)
            return info;
          for (unsigned dim = 0; dim < rank; ++dim)
            constancy[dim] =
                std::min(constancy[dim], operandInfo.constancy[dim]);
        }
        info.constancy = constancy;
        return info;
      });
}

//===----------------------------------------------------------------------===//
// ModuleAxisInfoAnalysis
//===----------------------------------------------------------------------===//

ModuleAxisInfoAnalysis::ModuleAxisInfoAnalysis(ModuleOp module) {
  AxisInfoWalker walker(infos);
  module.walk([&](FunctionOpInterface func) { walker.visitFunction(func); });
}

const AxisInfo *ModuleAxisInfoAnalysis::getAxisInfo(Value value) const {
  auto it = infos.find(value);
  return it == infos.end() ? nullptr : &it->second;
}

unsigned ModuleAxisInfoAnalysis::getPtrVectorWidth(Value ptr,
                                                   unsigned dim) const {
  auto type = dyn_cast<RankedTensorType>(ptr.getType());
  if (!type)
    return 1;
  auto ptrType = dyn_cast<tile::PointerType>(type.getElementType());
  const AxisInfo *info = getAxisInfo(ptr);
  if (!ptrType || !info || dim >= info->getRank())
    return 1;
  int64_t bytes = getPointeeBytes(ptrType);
  int64_t alignment = std::max<int64_t>(1, info->divisibility[dim] / bytes);
  int64_t width = std::min(
      {info->contiguity[dim], alignment, std::max<int64_t>(1, 16 / bytes)});
  return std::max<int64_t>(1, width);
}

unsigned ModuleAxisInfoAnalysis::getMaskVectorWidth(Value mask,
                                                    unsigned dim) const {
  if (!mask || !isa<RankedTensorType>(mask.getType()))
    return kUnmasked;
  const AxisInfo *info = getAxisInfo(mask);
  if (!info || dim >= info->getRank())
    return 1;
  return info->constancy[dim];
}
