//===- TileOps.cpp - the interpreter's tile ops ---------------------------===//
//
// The block-level ops on whole tensors: shapes (splat, broadcast,
// expand_dims, reshape, trans), pointers, memory (load, load_tile, store,
// the atomics, which check every address), dot, reduce and scan.
//
//===----------------------------------------------------------------------===//

#include "Program.h"

#include "tilec/Dialect/Tile/IR/Tile.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

namespace tilec::interp {
namespace {

std::vector<int64_t> shapeOf(mlir::Type type) {
  if (auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type))
    return {tensor.getShape().begin(), tensor.getShape().end()};
  return {};
}

/// Row-major strides of `shape`.
std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

/// Copies element `from` of `source` to element `to` of `target`.
void copyElement(const Tensor &source, size_t from, Tensor &target, size_t to) {
  if (source.type.isFloat())
    target.floats[to] = source.floats[from];
  else
    target.ints[to] = source.ints[from];
}

/// `result` with every element taken from `source` at the index `indexOf`
/// gives for the result's multi-index.
Tensor
gather(const Tensor &source, std::vector<int64_t> shape,
       const std::function<size_t(const std::vector<int64_t> &)> &indexOf) {
  Tensor result(shape, source.type);
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t flat = 0, count = result.size(); flat < count; ++flat) {
    copyElement(source, indexOf(index), result, flat);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return result;
}

/// The combination of two values under a reduce kind (an integer
/// atomic's too, but xchg), wrapped or rounded by the caller.
struct Combiner {
  tile::ReduceKind kind;
  unsigned width;

  int64_t ints(int64_t a, int64_t b) const {
    using K = tile::ReduceKind;
    switch (kind) {
    case K::Add:
      return static_cast<int64_t>(uint64_t(a) + uint64_t(b));
    case K::Mul:
      return static_cast<int64_t>(uint64_t(a) * uint64_t(b));
    case K::Max:
      return std::max(a, b);
    case K::Min:
      return std::min(a, b);
    case K::UMax:
      return unsignedOf(a, width) >= unsignedOf(b, width) ? a : b;
    case K::UMin:
      return unsignedOf(a, width) <= unsignedOf(b, width) ? a : b;
    case K::And:
      return a & b;
    case K::Or:
      return a | b;
    case K::Xor:
      return a ^ b;
    }
    return 0;
  }
  double floats(double a, double b) const {
    using K = tile::ReduceKind;
    switch (kind) {
    case K::Add:
      return a + b;
    case K::Mul:
      return a * b;
    case K::Max:
    case K::UMax:
      return maximumOf(a, b);
    case K::Min:
    case K::UMin:
      return minimumOf(a, b);
    default:
      return NAN;
    }
  }
};

/// The reduce kind an atomic combines with; none for xchg.
std::optional<tile::ReduceKind> combinedKind(tile::AtomicRMWKind kind) {
  using A = tile::AtomicRMWKind;
  using R = tile::ReduceKind;
  switch (kind) {
  case A::Add:
    return R::Add;
  case A::Max:
    return R::Max;
  case A::Min:
    return R::Min;
  case A::UMax:
    return R::UMax;
  case A::UMin:
    return R::UMin;
  case A::And:
    return R::And;
  case A::Or:
    return R::Or;
  case A::Xor:
    return R::Xor;
  case A::Xchg:
    return std::nullopt;
  }
  return std::nullopt;
}

} // namespace

mlir::LogicalResult Program::runTile(mlir::Operation &op, bool &handled) {
  handled = true;
  if (!llvm::isa<tile::TileDialect>(op.getDialect())) {
    handled = false;
    return mlir::success();
  }
  if (llvm::isa<tile::LoadOp>(op))
    return runLoad(op);
  if (llvm::isa<tile::LoadTileOp>(op))
    return runLoadTile(op);
  if (llvm::isa<tile::StoreOp>(op))
    return runStore(op);
  if (llvm::isa<tile::AtomicRMWOp, tile::AtomicCASOp>(op))
    return runAtomic(op);
  if (llvm::isa<tile::DotOp>(op))
    return runDot(op);
  if (llvm::isa<tile::ReduceOp, tile::ScanOp>(op))
    return runReduceOrScan(op);
  if (llvm::isa<tile::HistogramOp, tile::BinRankOp>(op))
    return runHistogramOrBinRank(op);
  // The barrier orders a program's threads; a program here is one thread.
  if (llvm::isa<tile::BarrierOp>(op))
    return mlir::success();

  mlir::Value result = op.getResult(0);
  mlir::FailureOr<ElementType> type = typeOf(op, result);
  if (mlir::failed(type))
    return mlir::failure();
  std::vector<int64_t> shape = shapeOf(result.getType());
  auto axisValue = [&](tile::ProgramAxis axis,
                       const std::array<int64_t, 3> &values) {
    return values[static_cast<unsigned>(axis)];
  };
  Tensor out(shape, *type);
  bool done = true;
  llvm::TypeSwitch<mlir::Operation *>(&op)
      .Case([&](tile::ProgramIdOp id) {
        out.ints[0] = axisValue(id.getAxis(), id_);
      })
      .Case([&](tile::NumProgramsOp count) {
        out.ints[0] = axisValue(count.getAxis(), grid_);
      })
      .Case([&](tile::MakeRangeOp range) {
        for (size_t i = 0; i < out.size(); ++i)
          out.ints[i] =
              static_cast<int32_t>(range.getStart()) + static_cast<int64_t>(i);
      })
      .Case([&](tile::SplatOp) {
        const Tensor &scalar = operand(op, 0);
        for (size_t i = 0; i < out.size(); ++i)
          copyElement(scalar, 0, out, i);
      })
      .Case([&](tile::BroadcastOp) {
        const Tensor &source = operand(op, 0);
        std::vector<int64_t> strides = stridesOf(source.shape);
        out = gather(source, shape, [&](const std::vector<int64_t> &index) {
          size_t flat = 0;
          for (size_t d = 0; d < index.size(); ++d)
            flat += (source.shape[d] == 1 ? 0 : index[d]) * strides[d];
          return flat;
        });
      })
      .Case<tile::ExpandDimsOp, tile::ReshapeOp>([&](auto) {
        // Row-major order is kept: the elements as they are.
        out = operand(op, 0);
        out.shape = shape;
      })
      .Case([&](tile::TransOp trans) {
        const Tensor &source = operand(op, 0);
        std::vector<int64_t> strides = stridesOf(source.shape);
        llvm::ArrayRef<int32_t> order = trans.getOrder();
        out = gather(source, shape, [&](const std::vector<int64_t> &index) {
          size_t flat = 0;
          for (size_t d = 0; d < index.size(); ++d)
            flat += index[d] * strides[order[d]];
          return flat;
        });
      })
      .Case([&](tile::AddPtrOp) {
        const Tensor &pointers = operand(op, 0), &offsets = operand(op, 1);
        for (size_t i = 0; i < out.size(); ++i)
          out.ints[i] = static_cast<int64_t>(uint64_t(pointers.ints[i]) +
                                             uint64_t(offsets.ints[i]) *
                                                 type->pointeeBytes);
      })
      .Case<tile::IntToPtrOp, tile::PtrToIntOp>(
          [&](auto) { out.ints = operand(op, 0).ints; })
      .Case([&](tile::BitcastOp) {
        const Tensor &source = operand(op, 0);
        for (size_t i = 0; i < out.size(); ++i) {
          uint64_t bits = source.type.isFloat()
                              ? floatBits(source.floats[i], source.type.format)
                              : unsignedOf(source.ints[i], source.type.width);
          if (type->isFloat())
            out.floats[i] = floatFromBits(bits, type->format);
          else
            out.ints[i] = wrapToWidth(static_cast<int64_t>(bits), type->width);
        }
      })
      .Default([&](mlir::Operation *) { done = false; });
  if (!done)
    return error(op) << "the interpreter does not run '" << op.getName() << "'";
  bind(result, std::move(out));
  return mlir::success();
}

mlir::LogicalResult Program::runLoad(mlir::Operation &op) {
  auto load = llvm::cast<tile::LoadOp>(op);
  mlir::FailureOr<ElementType> type = typeOf(op, load.getResult());
  if (mlir::failed(type))
    return mlir::failure();
  const Tensor &pointers = valueOf(load.getPtr());
  const Tensor *mask = load.getMask() ? &valueOf(load.getMask()) : nullptr;
  const Tensor *other = load.getOther() ? &valueOf(load.getOther()) : nullptr;
  Tensor out(pointers.shape, *type);
  for (size_t i = 0; i < out.size(); ++i) {
    if (mask && mask->ints[i] == 0) {
      if (other)
        copyElement(*other, i, out, i);
      continue;
    }
    if (mlir::failed(readElement(op, pointers.ints[i], out, i)))
      return mlir::failure();
  }
  bind(load.getResult(), std::move(out));
  return mlir::success();
}

mlir::LogicalResult Program::runLoadTile(mlir::Operation &op) {
  auto load = llvm::cast<tile::LoadTileOp>(op);
  mlir::FailureOr<ElementType> type = typeOf(op, load.getResult());
  if (mlir::failed(type))
    return mlir::failure();
  auto scalar = [&](mlir::Value value) { return valueOf(value).ints[0]; };
  uint64_t base = scalar(load.getBase());
  int64_t row = scalar(load.getRow()), col = scalar(load.getCol());
  int64_t rows = scalar(load.getRows()), cols = scalar(load.getCols());
  int64_t rowStride = scalar(load.getRowStride());
  int64_t colStride = scalar(load.getColStride());
  if (row < 0 || col < 0)
    return error(op) << "load_tile at a negative row or column (" << row << ", "
                     << col << ")";
  std::vector<int64_t> shape = shapeOf(load.getResult().getType());
  Tensor out(shape, *type);
  for (int64_t i = 0; i < shape[0]; ++i)
    for (int64_t j = 0; j < shape[1]; ++j) {
      if (row + i >= rows || col + j >= cols)
        continue; // zeros outside the array
      size_t lane = static_cast<size_t>(i * shape[1] + j);
      // The lowering computes the offset in i32 (the op requires that it
      // fits): one that does not is an error, not a right answer.
      int64_t offset = (row + i) * rowStride + (col + j) * colStride;
      if (offset != static_cast<int32_t>(offset))
        return error(op) << "lane " << lane << ": load_tile's element offset "
                         << offset << " does not fit an i32";
      if (mlir::failed(readElement(op, base + offset * int64_t(type->bytes()),
                                   out, lane)))
        return mlir::failure();
    }
  bind(load.getResult(), std::move(out));
  return mlir::success();
}

mlir::LogicalResult Program::runStore(mlir::Operation &op) {
  auto store = llvm::cast<tile::StoreOp>(op);
  const Tensor &pointers = valueOf(store.getPtr());
  const Tensor &values = valueOf(store.getValue());
  const Tensor *mask = store.getMask() ? &valueOf(store.getMask()) : nullptr;
  for (size_t i = 0; i < values.size(); ++i) {
    if (mask && mask->ints[i] == 0)
      continue;
    if (mlir::failed(
            writeElement(op, pointers.ints[i], values.type, i,
                         values.type.isFloat() ? 0 : values.ints[i],
                         values.type.isFloat() ? values.floats[i] : 0)))
      return mlir::failure();
  }
  return mlir::success();
}

mlir::LogicalResult Program::runAtomic(mlir::Operation &op) {
  auto rmw = llvm::dyn_cast<tile::AtomicRMWOp>(op);
  auto cas = llvm::dyn_cast<tile::AtomicCASOp>(op);
  mlir::Value result = op.getResult(0);
  mlir::FailureOr<ElementType> type = typeOf(op, result);
  if (mlir::failed(type))
    return mlir::failure();
  const Tensor &pointers = operand(op, 0);
  const Tensor &values = valueOf(rmw ? rmw.getVal() : cas.getVal());
  const Tensor *compare = cas ? &valueOf(cas.getCmp()) : nullptr;
  mlir::Value maskValue = rmw ? rmw.getMask() : cas.getMask();
  const Tensor *mask = maskValue ? &valueOf(maskValue) : nullptr;
  Tensor out(pointers.shape, *type);
  std::optional<tile::ReduceKind> combined =
      rmw ? combinedKind(rmw.getKind()) : std::nullopt;
  for (size_t i = 0; i < out.size(); ++i) {
    if (mask && mask->ints[i] == 0)
      continue; // yields 0
    // The old value is the lane's result.
    if (mlir::failed(readElement(op, pointers.ints[i], out, i)))
      return mlir::failure();
    int64_t newInt = 0;
    double newFloat = 0;
    if (type->isFloat()) {
      double old = out.floats[i], value = values.floats[i];
      if (cas)
        newFloat = old == compare->floats[i] ? value : old;
      else if (combined == tile::ReduceKind::Add)
        newFloat = roundToFormat(old + value, type->format);
      else if (!combined)
        newFloat = value;
      else // the verifier allows add and xchg of floats only
        return error(op) << "an atomic "
                         << tile::stringifyAtomicRMWKind(rmw.getKind())
                         << " of floats";
    } else {
      int64_t old = out.ints[i], value = values.ints[i];
      if (cas)
        newInt = old == compare->ints[i] ? value : old;
      else if (!combined) // xchg
        newInt = value;
      else
        newInt = wrapToWidth(Combiner{*combined, type->width}.ints(old, value),
                             type->width);
    }
    if (mlir::failed(
            writeElement(op, pointers.ints[i], *type, i, newInt, newFloat)))
      return mlir::failure();
  }
  bind(result, std::move(out));
  return mlir::success();
}

mlir::LogicalResult Program::runDot(mlir::Operation &op) {
  auto dot = llvm::cast<tile::DotOp>(op);
  const Tensor &a = valueOf(dot.getA()), &b = valueOf(dot.getB());
  const Tensor &c = valueOf(dot.getC());
  int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  if (m * n * k > options_.maxDotMultiplyAdds)
    return error(op) << "a dot of " << m << " x " << n << " x " << k
                     << " is more than the interpreter runs ("
                     << options_.maxDotMultiplyAdds << " multiply-adds)";
  work_ += m * n * k;
  Tensor out = c;
  uint64_t groups = ~uint64_t(0);
  int64_t rowsPerGroup = m;
  if (dot.getRowGroups()) {
    groups = unsignedOf(valueOf(dot.getRowGroups()).ints[0], 32);
    rowsPerGroup = dot.getRowsPerGroup().value_or(m);
  }
  // A row of a group that holds nothing is c's, the product not added.
  auto rowRuns = [&](int64_t row) {
    return (groups >> (row / rowsPerGroup)) & 1;
  };
  if (!out.type.isFloat()) { // integers: wrapping products and sums
    unsigned width = out.type.width;
    for (int64_t row = 0; row < m; ++row)
      for (int64_t col = 0; rowRuns(row) && col < n; ++col) {
        uint64_t sum = static_cast<uint64_t>(c.ints[row * n + col]);
        for (int64_t kk = 0; kk < k; ++kk)
          sum += static_cast<uint64_t>(a.ints[row * k + kk]) *
                 static_cast<uint64_t>(b.ints[kk * n + col]);
        out.ints[row * n + col] = wrapToWidth(static_cast<int64_t>(sum), width);
      }
    bind(dot.getResult(), std::move(out));
    return mlir::success();
  }
  // An f32 operand on tensor cores is tf32: sm_90a's wgmma drops its low
  // 13 bits (the larger of the GPU's errors; mma.sync rounds).
  bool tf32 = dot.getInputPrecision() == tile::InputPrecision::TF32 &&
              a.type.format == FloatFormat::F32;
  auto input = [&](const Tensor &t, size_t i) {
    return tf32 ? truncateToTF32(t.floats[i]) : t.floats[i];
  };
  // Products of f16, bf16, tf32 and f32 values are exact in double; each
  // step adds one into the accumulator and rounds to its format, as the
  // MMA's fused multiply-adds do along K.
  FloatFormat format = out.type.format;
  for (int64_t row = 0; row < m; ++row) {
    if (!rowRuns(row))
      continue;
    for (int64_t col = 0; col < n; ++col) {
      double acc = c.floats[row * n + col];
      for (int64_t kk = 0; kk < k; ++kk)
        acc = roundToFormat(
            acc + input(a, row * k + kk) * input(b, kk * n + col), format);
      out.floats[row * n + col] = acc;
    }
  }
  bind(dot.getResult(), std::move(out));
  return mlir::success();
}

/// Both count the elements of each bin in element order: the histogram the
/// totals, the rank each element's count of the bin before it.
mlir::LogicalResult Program::runHistogramOrBinRank(mlir::Operation &op) {
  auto histogram = llvm::dyn_cast<tile::HistogramOp>(op);
  auto rank = llvm::dyn_cast<tile::BinRankOp>(op);
  const Tensor &source = operand(op, 0);
  mlir::Value maskValue = histogram ? histogram.getMask() : rank.getMask();
  const Tensor *mask = maskValue ? &valueOf(maskValue) : nullptr;
  int64_t bins = histogram
                     ? llvm::cast<mlir::RankedTensorType>(histogram.getType())
                           .getDimSize(0)
                     : rank.getBins();
  mlir::FailureOr<ElementType> type = typeOf(op, op.getResult(0));
  if (mlir::failed(type))
    return mlir::failure();
  std::vector<int64_t> counts(bins, 0);
  Tensor out(shapeOf(op.getResult(0).getType()), *type);
  for (size_t i = 0; i < source.ints.size(); ++i) {
    int64_t value = source.ints[i];
    if ((mask && mask->ints[i] == 0) || value < 0 || value >= bins)
      continue; // ranks 0, counts nowhere
    if (rank)
      out.ints[i] = counts[value];
    ++counts[value];
  }
  if (histogram)
    out.ints = std::move(counts);
  bind(op.getResult(0), std::move(out));
  return mlir::success();
}

mlir::LogicalResult Program::runReduceOrScan(mlir::Operation &op) {
  auto reduce = llvm::dyn_cast<tile::ReduceOp>(op);
  auto scan = llvm::dyn_cast<tile::ScanOp>(op);
  const Tensor &source = operand(op, 0);
  unsigned axis = reduce ? reduce.getAxis() : scan.getAxis();
  Combiner combine{reduce ? reduce.getKind() : scan.getKind(),
                   source.type.width};
  bool reverse = scan && scan.getReverse();
  // The source as [outer, extent, inner] around the axis.
  int64_t extent = source.shape[axis], outer = 1, inner = 1;
  for (unsigned d = 0; d < axis; ++d)
    outer *= source.shape[d];
  for (size_t d = axis + 1; d < source.shape.size(); ++d)
    inner *= source.shape[d];
  std::vector<int64_t> shape = shapeOf(op.getResult(0).getType());
  Tensor out(shape, source.type);
  bool isFloat = source.type.isFloat();
  FloatFormat format = source.type.format;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      // One element after another, each combination rounded to the
      // element's format as the GPU's combining steps are (their tree
      // order differs; an f16 sum that overflows on the way does here too).
      double floatAcc = 0;
      int64_t intAcc = 0;
      for (int64_t step = 0; step < extent; ++step) {
        int64_t e = reverse ? extent - 1 - step : step;
        size_t at = (o * extent + e) * inner + in;
        if (step == 0) {
          floatAcc = isFloat ? source.floats[at] : 0;
          intAcc = isFloat ? 0 : source.ints[at];
        } else if (isFloat) {
          floatAcc = roundToFormat(combine.floats(floatAcc, source.floats[at]),
                                   format);
        } else {
          intAcc = wrapToWidth(combine.ints(intAcc, source.ints[at]),
                               source.type.width);
        }
        if (scan) {
          if (isFloat)
            out.floats[at] = floatAcc;
          else
            out.ints[at] = intAcc;
        }
      }
      if (reduce) {
        size_t at = o * inner + in;
        if (isFloat)
          out.floats[at] = floatAcc;
        else
          out.ints[at] = intAcc;
      }
    }
  bind(op.getResult(0), std::move(out));
  return mlir::success();
}

} // namespace tilec::interp
