//===- HistogramOpToLLVM.cpp - histogram and bin_rank ---------------------===//
//
// Both count in the op's shared-memory scratch, i32 counters a bin, and
// aggregate a warp's equal values first: `match.any.sync` gives each lane
// the lanes holding its bin (a lane with nothing to count holds a key of its
// own, bins + lane), the lowest of them is the group's leader, and its count
// is the population of that mask.
//
// histogram: counters zeroed, each leader adds its group's count with a
// shared-memory atomic, then every thread reads the bins it holds. Any
// layout: only the owner of each group of copies counts an element.
//
// bin_rank: stable, so a rank depends on element order, not on which atomic
// comes first. The operand is in rounds of one element a thread, the lanes
// holding consecutive elements, then the warps, then the registers (the
// default blocked layout of a 1-D tensor; others are refused). In a round a
// leader writes its group's count to its warp's row of counters; after a
// barrier an element's rank is the elements of its bin in earlier rounds
// (one more row), in the warps before its own, and in the lanes below it of
// its group. Between rounds each bin's column is summed into the row of
// earlier rounds and the warps' rows are cleared. Lanes that hold copies
// take their owner's rank with a shuffle; warps that hold copies rank alike
// and write nothing.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "tilec/Dialect/TileGPU/Transforms/SharedMemory.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;
using namespace tilec::lowering;

namespace {

/// The scratch as i32 counters: element `index` (an i32 value).
struct Counters {
  Value base;

  Value at(OpBuilder &builder, Location loc, Value index) const {
    return LLVM::GEPOp::create(builder, loc, base.getType(),
                               builder.getI32Type(), base, ValueRange{index});
  }
  Value load(OpBuilder &builder, Location loc, Value index) const {
    return LLVM::LoadOp::create(builder, loc, builder.getI32Type(),
                                at(builder, loc, index));
  }
  void store(OpBuilder &builder, Location loc, Value value, Value index) const {
    LLVM::StoreOp::create(builder, loc, value, at(builder, loc, index));
  }
};

/// `then` under `condition`.
void emitIf(OpBuilder &builder, Location loc, Value condition,
            llvm::function_ref<void()> then) {
  auto ifOp = scf::IfOp::create(builder, loc, condition, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(ifOp.thenBlock());
  then();
}

/// Runs `body(index)` for every index in [0, count) once, the CTA's threads
/// `thread` (0 to threads - 1) taking index thread, thread + threads, ...
void forEachIndexOfThread(OpBuilder &builder, Location loc, Value thread,
                          int64_t threads, int64_t count,
                          llvm::function_ref<void(Value)> body) {
  for (int64_t first = 0; first < count; first += threads) {
    Value index = arith::AddIOp::create(builder, loc, thread,
                                        i32Const(builder, loc, first));
    if (first + threads <= count) {
      body(index);
      continue;
    }
    Value inside =
        arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::slt, index,
                              i32Const(builder, loc, count));
    emitIf(builder, loc, inside, [&] { body(index); });
  }
}

/// A lane's group of equal keys in its warp.
struct WarpGroup {
  /// The group's lanes below this one, and the group's size.
  Value below, size;
  /// Whether this lane counts and is the group's lowest lane.
  Value isLeader;
};

/// The group of `bin` among the warp's lanes where `counts` holds; other
/// lanes are groups of their own.
WarpGroup emitWarpGroup(OpBuilder &builder, Location loc, Value bin,
                        Value counts, Value lane, int64_t bins) {
  Type i32 = builder.getI32Type();
  Value ownKey =
      arith::AddIOp::create(builder, loc, lane, i32Const(builder, loc, bins));
  Value key = arith::SelectOp::create(builder, loc, counts, bin, ownKey);
  Value peers =
      NVVM::MatchSyncOp::create(builder, loc, i32, i32Const(builder, loc, -1),
                                key, NVVM::MatchSyncKind::any);
  Value lanesBelow = arith::SubIOp::create(
      builder, loc,
      arith::ShLIOp::create(builder, loc, i32Const(builder, loc, 1), lane),
      i32Const(builder, loc, 1));
  WarpGroup group;
  group.below = LLVM::CtPopOp::create(
      builder, loc, i32,
      arith::AndIOp::create(builder, loc, peers, lanesBelow));
  group.size = LLVM::CtPopOp::create(builder, loc, i32, peers);
  Value lowest = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                       group.below, i32Const(builder, loc, 0));
  group.isLeader = arith::AndIOp::create(builder, loc, counts, lowest);
  return group;
}

/// Whether element `value` counts: in [0, bins) and, where given, `mask`
/// and `owner` hold.
Value emitCounts(OpBuilder &builder, Location loc, Value value, int64_t bins,
                 Value mask, Value owner) {
  Value counts = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ult,
                                       value, i32Const(builder, loc, bins));
  for (Value also : {mask, owner})
    if (also)
      counts = arith::AndIOp::create(builder, loc, counts, also);
  return counts;
}

/// The CTA's threads, and the op's scratch as `words` i32 counters that
/// they zero (a barrier follows).
struct CtaCounters {
  ThreadId thread;
  /// The thread's index in the CTA (tid.x), of `threads` in all.
  Value threadIndex;
  int64_t threads;
  Counters counters;
};

CtaCounters emitZeroedCounters(OpBuilder &builder, Operation *op,
                               int64_t words) {
  Location loc = op->getLoc();
  auto module = op->getParentOfType<ModuleOp>();
  unsigned threadsPerWarp = TileGPUDialect::getThreadsPerWarp(module);
  CtaCounters cta;
  cta.threads = threadsPerWarp * TileGPUDialect::getNumWarps(module);
  cta.thread = getThreadId(builder, loc, threadsPerWarp);
  cta.threadIndex =
      NVVM::ThreadIdXOp::create(builder, loc, builder.getI32Type());
  cta.counters = Counters{getScratchBase(builder, loc, op)};
  Value zero = i32Const(builder, loc, 0);
  forEachIndexOfThread(
      builder, loc, cta.threadIndex, cta.threads, words,
      [&](Value index) { cta.counters.store(builder, loc, zero, index); });
  emitBarrier(builder, loc);
  return cta;
}

struct HistogramOpConversion : OpConversionPattern<tile::HistogramOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(tile::HistogramOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getType());
    int64_t bins = resultType.getDimSize(0);
    if (4 * bins > getSharedMemoryBytes(op))
      return op.emitError() << "histogram needs " << bins
                            << " counters of shared memory, more than its "
                               "scratch holds";
    CtaCounters cta = emitZeroedCounters(rewriter, op, bins);
    const Counters &counters = cta.counters;
    Value owner = emitOwnerPredicate(rewriter, loc, op.getSrc().getType(),
                                     op->getParentOfType<ModuleOp>());
    ValueRange masks = op.getMask() ? adaptor.getMask() : ValueRange();
    for (auto [reg, element] : llvm::enumerate(adaptor.getSrc())) {
      // A structured binding cannot be captured by the lambdas (C++17).
      Value value = element;
      Value counts = emitCounts(rewriter, loc, value, bins,
                                masks.empty() ? Value() : masks[reg], owner);
      WarpGroup group =
          emitWarpGroup(rewriter, loc, value, counts, cta.thread.lane, bins);
      emitIf(rewriter, loc, group.isLeader, [&] {
        LLVM::AtomicRMWOp::create(rewriter, loc, LLVM::AtomicBinOp::add,
                                  counters.at(rewriter, loc, value), group.size,
                                  LLVM::AtomicOrdering::monotonic);
      });
    }
    emitBarrier(rewriter, loc);

    Registers result;
    for (const SmallVector<Value> &coords : emitRegisterCoords(
             rewriter, loc, getLinearLayout(resultType), cta.thread))
      result.push_back(counters.load(rewriter, loc, coords[0]));
    rewriter.replaceOpWithMultiple(op, {result});
    return success();
  }
};

struct BinRankOpConversion : OpConversionPattern<tile::BinRankOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(tile::BinRankOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    std::string reason;
    FailureOr<RankRounds> rounds = getRankRounds(getLinearLayout(type), reason);
    if (failed(rounds))
      return op.emitError()
             << "cannot rank the elements of " << type << ": " << reason;
    int64_t bins = op.getBins();
    int64_t warps = int64_t(1) << rounds->warpBits;
    if (4 * (warps + 1) * bins > getSharedMemoryBytes(op))
      return op.emitError() << "bin_rank needs " << (warps + 1) * bins
                            << " counters of shared memory, more than its "
                               "scratch holds";
    // Row 0: the bins' counts of earlier rounds; row 1 + w: warp w's.
    CtaCounters cta = emitZeroedCounters(rewriter, op, (warps + 1) * bins);
    const Counters &counters = cta.counters;
    const ThreadId &thread = cta.thread;
    auto rowEntry = [&](int64_t row, Value bin) -> Value {
      return arith::AddIOp::create(rewriter, loc, bin,
                                   i32Const(rewriter, loc, row * bins));
    };
    Value zero = i32Const(rewriter, loc, 0);
    auto module = op->getParentOfType<ModuleOp>();
    CopyBits copies = getCopyBits(type, module);
    Value ownLane =
        emitBitsAreZero(rewriter, loc, thread.lane, copies.laneMask);
    Value ownWarp =
        emitBitsAreZero(rewriter, loc, thread.warp, copies.warpMask);
    Value warp = arith::AndIOp::create(rewriter, loc, thread.warp,
                                       i32Const(rewriter, loc, warps - 1));
    Value warpRow = arith::MulIOp::create(
        rewriter, loc,
        arith::AddIOp::create(rewriter, loc, warp, i32Const(rewriter, loc, 1)),
        i32Const(rewriter, loc, bins));
    Value ownerLane = arith::AndIOp::create(
        rewriter, loc, thread.lane,
        i32Const(rewriter, loc, ~static_cast<int32_t>(copies.laneMask)));
    ValueRange masks = op.getMask() ? adaptor.getMask() : ValueRange();
    Registers ranks;
    int64_t roundCount = adaptor.getSrc().size();
    for (auto [round, element] : llvm::enumerate(adaptor.getSrc())) {
      Value value = element;
      Value counts =
          emitCounts(rewriter, loc, value, bins,
                     masks.empty() ? Value() : masks[round], ownLane);
      WarpGroup group =
          emitWarpGroup(rewriter, loc, value, counts, thread.lane, bins);
      Value writes = ownWarp ? arith::AndIOp::create(rewriter, loc,
                                                     group.isLeader, ownWarp)
                                   .getResult()
                             : group.isLeader;
      emitIf(rewriter, loc, writes, [&] {
        counters.store(rewriter, loc, group.size,
                       arith::AddIOp::create(rewriter, loc, warpRow, value));
      });
      emitBarrier(rewriter, loc);
      Value bin = arith::SelectOp::create(rewriter, loc, counts, value, zero);
      Value rank = group.below;
      if (round > 0)
        rank = arith::AddIOp::create(rewriter, loc, rank,
                                     counters.load(rewriter, loc, bin));
      for (int64_t w = 0; w + 1 < warps; ++w) {
        Value before =
            arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ugt,
                                  warp, i32Const(rewriter, loc, w));
        Value count = counters.load(rewriter, loc, rowEntry(1 + w, bin));
        rank = arith::AddIOp::create(
            rewriter, loc, rank,
            arith::SelectOp::create(rewriter, loc, before, count, zero));
      }
      rank = arith::SelectOp::create(rewriter, loc, counts, rank, zero);
      if (copies.laneMask)
        rank = emitShuffle(rewriter, loc, rank, NVVM::ShflKind::idx, ownerLane);
      ranks.push_back(rank);
      if (int64_t(round) + 1 == roundCount)
        break;
      // The round's counts join the earlier rounds'; the warps' rows clear.
      emitBarrier(rewriter, loc);
      forEachIndexOfThread(
          rewriter, loc, cta.threadIndex, cta.threads, bins, [&](Value b) {
            Value total = counters.load(rewriter, loc, b);
            for (int64_t w = 0; w < warps; ++w) {
              Value entry = rowEntry(1 + w, b);
              total = arith::AddIOp::create(
                  rewriter, loc, total, counters.load(rewriter, loc, entry));
              counters.store(rewriter, loc, zero, entry);
            }
            counters.store(rewriter, loc, total, b);
          });
      emitBarrier(rewriter, loc);
    }
    rewriter.replaceOpWithMultiple(op, {ranks});
    return success();
  }
};

} // namespace

void tilec::lowering::populateHistogramOpToLLVMPatterns(
    const LLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<HistogramOpConversion, BinRankOpConversion>(
      converter, patterns.getContext());
}
