//===- SoftwarePipeline.cpp - cp.async rings for the loads of dots --------===//
//
// Without pipelining every K step of a matmul waits for its loads: the
// global-memory latency is paid once per step and the tensor cores idle
// meanwhile. Here the loads that feed a dot become asynchronous copies into
// a ring of shared buffers issued `num-stages - 1` steps ahead, so that the
// copies of later steps are in flight while step k computes.
//
// The loop transformation itself is MLIR's scf pipeliner, driven by a
// schedule of two kinds of stages: the copies with everything their
// addresses and masks depend on, and `num-stages - 1` stages later the rest
// of the body. Where the copies' addresses come from loads (a gather: the
// sparse convolution reads the offset of a step from a list, then the
// neighbour map's column for it), each level of such loads runs a stage
// before the level it feeds, so that a copy finds its row indices already
// loaded instead of waiting for them in front of its issue; this is
// Triton's indirection levels. It runs with predication instead of a
// peeled epilogue (so code size does not grow with the stage count): in the
// last steps the copies run with their masks off, which zero-fills a free
// buffer and reads nothing.
//
//===----------------------------------------------------------------------===//

#include "tilec/Dialect/TileGPU/Transforms/Passes.h"

#include "tilec/Analysis/AxisInfo.h"
#include "tilec/Dialect/Tile/IR/Tile.h"
#include "tilec/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <algorithm>

namespace tilec::tilegpu {
#define GEN_PASS_DEF_TILEGPUPIPELINE
#include "tilec/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace tilec::tilegpu

using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;

namespace {

/// cp.async moves 4, 8 or 16 bytes per instruction.
constexpr int64_t kMinCopyBytes = 4;

/// A load whose only use makes a dot operand of it: a layout conversion to
/// a dot_op layout (mma.sync, FMA), or a local_alloc a warpgroup dot reads.
struct OperandLoad {
  tile::LoadOp load;
  Operation *consumer;
  /// Whether the load can become a cp.async copy into a ring; otherwise it
  /// is prefetched in registers one step ahead of its consumer.
  bool viaCopy;
};

bool isZeroConstant(Value value) {
  return matchPattern(value, m_AnyZeroFloat()) || matchPattern(value, m_Zero());
}

/// The shared layout of an operand's ring: the one its reader wants, wgmma's
/// for a warpgroup dot, otherwise the one the register operand's fragments
/// read without bank conflicts; in the order of the loads, unless wgmma
/// cannot read that (tf32 only reads K-major tiles).
Attribute getRingEncoding(const OperandLoad &operand) {
  auto type = cast<RankedTensorType>(operand.load->getResult(0).getType());
  ArrayRef<unsigned> order =
      cast<BlockedEncodingAttr>(type.getEncoding()).getOrder();
  if (isa<LocalAllocOp>(operand.consumer)) {
    // getOperandLoad admits allocs that only warpgroup dots read.
    unsigned opIdx = operand.consumer->use_begin()->getOperandNumber();
    return getNvmmaSharedEncoding(
        type, getWarpGroupOperandOrder(type.getElementType(), opIdx, order));
  }
  // getOperandLoad admits other consumers only as conversions to dot_op.
  auto operandEncoding = cast<DotOperandEncodingAttr>(
      cast<RankedTensorType>(operand.consumer->getResult(0).getType())
          .getEncoding());
  return getOperandSharedEncoding(type, order, operandEncoding);
}

/// Bytes one thread's cp.async would move for `load`: its contiguous run
/// along the fastest dimension, bounded by what the pointers' alignment and
/// the mask's uniformity allow (the lowering vectorizes the same way).
int64_t getCopyBytes(tile::LoadOp load, BlockedEncodingAttr blocked,
                     const ModuleAxisInfoAnalysis &axisInfo) {
  auto type = cast<RankedTensorType>(load.getType());
  unsigned dim = blocked.getOrder()[0];
  int64_t width = blocked.getSizePerThread()[dim];
  width = std::min<int64_t>(width, axisInfo.getPtrVectorWidth(load.getPtr(), dim));
  width = std::min<int64_t>(width,
                            axisInfo.getMaskVectorWidth(load.getMask(), dim));
  return width * type.getElementTypeBitWidth() / 8;
}

/// The load behind a dot operand: through a conversion to a dot_op layout,
/// or a local_alloc whose every user is a warpgroup dot.
tile::LoadOp getOperandLoad(Value operand, Block *body,
                            Operation *&consumer) {
  consumer = operand.getDefiningOp();
  Value loaded;
  if (auto convert = dyn_cast_or_null<ConvertLayoutOp>(consumer)) {
    if (!isa<DotOperandEncodingAttr>(convert.getType().getEncoding()))
      return {};
    loaded = convert.getSrc();
  } else if (auto alloc = dyn_cast_or_null<LocalAllocOp>(consumer)) {
    if (!alloc.getSrc() || !llvm::all_of(alloc->getUsers(), [](Operation *u) {
          return isa<WarpGroupDotOp>(u);
        }))
      return {};
    loaded = alloc.getSrc();
  } else {
    return {};
  }
  auto load = loaded.getDefiningOp<tile::LoadOp>();
  if (!load || consumer->getBlock() != body || load->getBlock() != body ||
      !load->hasOneUse() || load.getIsVolatile())
    return {};
  return load;
}

std::optional<OperandLoad>
matchOperandLoad(Value operand, Block *body,
                 const ModuleAxisInfoAnalysis &axisInfo) {
  Operation *consumer;
  tile::LoadOp load = getOperandLoad(operand, body, consumer);
  if (!load)
    return std::nullopt;
  auto type = cast<RankedTensorType>(load.getType());
  auto blocked = dyn_cast<BlockedEncodingAttr>(type.getEncoding());
  if (!blocked || type.getRank() != 2 || type.getElementTypeBitWidth() < 8)
    return std::nullopt;
  if (load.getOther() && !isZeroConstant(load.getOther()))
    return std::nullopt;
  OperandLoad match{load, consumer, /*viaCopy=*/true};
  match.viaCopy = getCopyBytes(load, blocked, axisInfo) >= kMinCopyBytes &&
                  getRingEncoding(match);
  return match;
}

/// The operand loads of the dots directly in `loop`'s body.
SmallVector<OperandLoad>
collectOperandLoads(scf::ForOp loop, const ModuleAxisInfoAnalysis &axisInfo) {
  SmallVector<OperandLoad> loads;
  DenseSet<Operation *> seen;
  for (Operation &op : *loop.getBody()) {
    if (!isa<tile::DotOp, WarpGroupDotOp>(op))
      continue;
    for (Value operand : op.getOperands().take_front(2))
      if (std::optional<OperandLoad> match =
              matchOperandLoad(operand, loop.getBody(), axisInfo))
        if (seen.insert(match->consumer).second)
          loads.push_back(*match);
  }
  return loads;
}

/// A block that convert-tile-to-tilegpu left for TMA (tile.load_tile; it
/// decided that the loop pipelines) and the local_alloc its warpgroup dot
/// reads it from.
struct TmaOperand {
  tile::LoadTileOp load;
  LocalAllocOp consumer;
};

/// The tile.load_tile blocks of `loop`'s warpgroup dots.
SmallVector<TmaOperand> collectTmaOperands(scf::ForOp loop) {
  SmallVector<TmaOperand> operands;
  for (auto dot : loop.getBody()->getOps<WarpGroupDotOp>())
    for (Value operand : {Value(dot.getA()), Value(dot.getB())}) {
      auto alloc = operand.getDefiningOp<LocalAllocOp>();
      auto load = alloc && alloc.getSrc()
                      ? alloc.getSrc().getDefiningOp<tile::LoadTileOp>()
                      : tile::LoadTileOp();
      if (load && alloc->hasOneUse() && load->hasOneUse() &&
          alloc->getBlock() == loop.getBody() &&
          load->getBlock() == loop.getBody())
        operands.push_back({load, alloc});
    }
  return operands;
}

/// Whether `op` may run for a step that does not exist (the pipeliner's
/// prologue and its predicated last steps): pure ops, and integer divisions
/// by a value defined outside the loop. Such a division is not speculatable
/// in general (its divisor could be zero), but a divisor the loop does not
/// change is the one every real step divides by, and a division in PTX does
/// not trap. The sparse convolution's loop over (offset, chunk) pairs
/// divides its step by the chunk count.
bool canRunAhead(Operation *op) {
  if (isPure(op))
    return true;
  if (!isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
           arith::CeilDivSIOp, arith::FloorDivSIOp>(op) ||
      !isMemoryEffectFree(op))
    return false;
  Operation *divisorScope = op->getOperand(1).getParentBlock()->getParentOp();
  return !op->getParentOp()->isAncestor(divisorScope);
}

/// The op that defines `value` in loop body `body`: for a loop-carried
/// argument, the definition of what the yield passes it from the step
/// before.
Operation *getDefinitionInLoop(Value value, Block *body) {
  if (auto arg = dyn_cast<BlockArgument>(value);
      arg && arg.getOwner() == body && arg.getArgNumber() > 0)
    value = body->getTerminator()->getOperand(arg.getArgNumber() - 1);
  return value.getDefiningOp();
}

/// Ops of `body` that `roots` need, transitively, through operands and
/// through the values loop-carried arguments take from the yield. Fails
/// when one of them cannot run a few steps ahead: it writes memory, holds a
/// region, or is a dot.
FailureOr<DenseSet<Operation *>> getRunAheadSlice(scf::ForOp loop,
                                                  ArrayRef<Operation *> roots) {
  Block *body = loop.getBody();
  DenseSet<Operation *> slice(roots.begin(), roots.end());
  SmallVector<Operation *> worklist(roots.begin(), roots.end());
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Value operand : op->getOperands()) {
      Operation *def = getDefinitionInLoop(operand, body);
      if (!def || def->getBlock() != body || !slice.insert(def).second)
        continue;
      bool readsOnly = canRunAhead(def) || isa<tile::LoadOp>(def);
      if (!readsOnly || def->getNumRegions() > 0 || isa<tile::DotOp>(def))
        return failure();
      worklist.push_back(def);
    }
  }
  return slice;
}

/// The slot step `iv` uses: ((iv - lb) / step) mod numStages, as i32.
Value emitSlotIndex(OpBuilder &builder, Location loc, scf::ForOp loop,
                    unsigned numStages) {
  Value iv = loop.getInductionVar();
  Value step = arith::DivSIOp::create(
      builder, loc,
      arith::SubIOp::create(builder, loc, iv, loop.getLowerBound()),
      loop.getStep());
  Value stages = arith::ConstantOp::create(
      builder, loc, builder.getIntegerAttr(iv.getType(), numStages));
  Value slot = arith::RemSIOp::create(builder, loc, step, stages);
  if (!slot.getType().isInteger(32))
    slot = arith::IndexCastOp::create(builder, loc, builder.getI32Type(), slot);
  return slot;
}

/// The parity of the round of the ring that step `iv` is in:
/// (((iv - lb) / step) / numStages) & 1, as i32: the phase of its slot's
/// mbarrier that its copies complete.
Value emitPhase(OpBuilder &builder, Location loc, scf::ForOp loop,
                unsigned numStages) {
  Value iv = loop.getInductionVar();
  Value step = arith::DivSIOp::create(
      builder, loc,
      arith::SubIOp::create(builder, loc, iv, loop.getLowerBound()),
      loop.getStep());
  auto constant = [&](int64_t value) {
    return arith::ConstantOp::create(
        builder, loc, builder.getIntegerAttr(iv.getType(), value));
  };
  Value round = arith::DivSIOp::create(builder, loc, step, constant(numStages));
  Value phase = arith::AndIOp::create(builder, loc, round, constant(1));
  if (!phase.getType().isInteger(32))
    phase = arith::IndexCastOp::create(builder, loc, builder.getI32Type(), phase);
  return phase;
}

Value getSlot(OpBuilder &builder, Location loc, Value ring, Value index) {
  auto ringType = cast<MemDescType>(ring.getType());
  auto slotType = MemDescType::get(
      ring.getContext(), ringType.getShape().drop_front(),
      ringType.getElementType(), ringType.getEncoding(), /*isMutable=*/true);
  return MemDescIndexOp::create(builder, loc, slotType, ring, index);
}

/// `mask and pred` with the scalar `pred` splat to the shape of `ptr`.
Value andPredicate(OpBuilder &builder, Location loc, Value mask, Value ptr,
                   Value pred) {
  Type maskType = tile::getI1TypeWithShapeOf(ptr.getType());
  Value splat = pred;
  if (isa<RankedTensorType>(maskType))
    splat = tile::SplatOp::create(builder, loc, maskType, pred);
  return mask ? arith::AndIOp::create(builder, loc, mask, splat).getResult()
              : splat;
}

/// The scf pipeliner's predication: the copies and loads of a step past the
/// end run with their masks off; commits and ops free of memory effects
/// need nothing (the schedule only runs ahead what canRunAhead accepted; a
/// copy of it in the prologue no longer sees the loop, so it is not asked
/// again here).
Operation *predicateOp(RewriterBase &rewriter, Operation *op, Value pred) {
  rewriter.setInsertionPoint(op);
  if (auto copy = dyn_cast<AsyncCopyGlobalToLocalOp>(op)) {
    Value mask = andPredicate(rewriter, op->getLoc(), copy.getMask(),
                              copy.getSrc(), pred);
    copy.getMaskMutable().assign(mask);
    return op;
  }
  if (auto load = dyn_cast<tile::LoadOp>(op)) {
    Value mask = andPredicate(rewriter, op->getLoc(), load.getMask(),
                              load.getPtr(), pred);
    load.getMaskMutable().assign(mask);
    return op;
  }
  if (isa<AsyncTmaCopyOp, BarrierExpectOp>(op)) {
    OpOperand &opPred = op->getOpOperands().back();
    opPred.set(arith::AndIOp::create(rewriter, op->getLoc(), opPred.get(), pred));
    return op;
  }
  if (isMemoryEffectFree(op) || isa<AsyncCommitGroupOp>(op))
    return op;
  return nullptr;
}

class LoopPipeliner {
public:
  LoopPipeliner(scf::ForOp loop, unsigned numStages)
      : loop(loop), numStages(numStages) {}

  /// Whether `loads` and `tma` can become copies that run numStages - 1
  /// steps ahead.
  bool canPipeline(ArrayRef<OperandLoad> loads, ArrayRef<TmaOperand> tma);
  /// Rewrites `loads` and `tma` into ring copies and pipelines the loop.
  LogicalResult run(ArrayRef<OperandLoad> loads, ArrayRef<TmaOperand> tma);

private:
  void rewriteLoads(ArrayRef<OperandLoad> loads);
  LogicalResult rewriteTmaLoads(ArrayRef<TmaOperand> tma);
  void makeWarpGroupDotsAsync();
  void waitForWarpGroupDots(RewriterBase &rewriter, scf::ForOp pipelined,
                            ArrayRef<bool> yieldsDotResult);
  void getSchedule(std::vector<std::pair<Operation *, unsigned>> &schedule);
  unsigned assignRunAheadStages();

  scf::ForOp loop;
  unsigned numStages;
  SmallVector<Value> rings;
  SmallVector<Operation *> copies;
  /// The waits that keep one group of asynchronous wgmma in flight.
  SmallVector<WarpGroupDotWaitOp> dotWaits;
  AsyncCommitGroupOp commit;
  AsyncWaitOp wait;
  /// The TMA copies' mbarriers, one per slot (null without TMA copies).
  Value barriers;
  /// The last stage (the math) and what runs in stage 0 and, for register
  /// prefetches when stage 0 is further ahead, in stage lastStage - 1.
  unsigned lastStage = 1;
  DenseSet<Operation *> runAhead;
  /// The stage of each op of runAhead: the copies' stage, less one per level
  /// of loads between the op and the copies (absent: stage 0).
  DenseMap<Operation *, unsigned> runAheadStage;
  DenseSet<Operation *> prefetchedAhead;
};

/// Whether `op`, or an op nested in it, writes memory other than shared
/// memory (a store or an atomic): loads running ahead could pass it.
bool writesGlobalMemory(Operation *op) {
  WalkResult result = op->walk([](Operation *nested) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
    if (!effects)
      return nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
                     nested->getNumRegions() == 0
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &instance : instances)
      if (isa<MemoryEffects::Write>(instance.getEffect()) &&
          !isa<SharedMemory>(instance.getResource()))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

bool LoopPipeliner::canPipeline(ArrayRef<OperandLoad> loads,
                                ArrayRef<TmaOperand> tma) {
  Block *body = loop.getBody();
  // Loads move up to numStages - 1 steps earlier, past any store of the
  // steps between; a volatile load must not move at all.
  for (Operation &op : body->without_terminator())
    if (writesGlobalMemory(&op) ||
        (isa<tile::LoadOp>(op) && cast<tile::LoadOp>(op).getIsVolatile()))
      return false;
  // The scf pipeliner carries values a distance of one step: every yielded
  // value must come from the body.
  for (Value yielded : body->getTerminator()->getOperands())
    if (!yielded.getDefiningOp() ||
        yielded.getDefiningOp()->getBlock() != body)
      return false;
  SmallVector<Operation *> roots;
  for (OperandLoad operand : loads)
    roots.push_back(operand.load);
  for (TmaOperand operand : tma)
    roots.push_back(operand.load);
  return succeeded(getRunAheadSlice(loop, roots));
}

LogicalResult LoopPipeliner::run(ArrayRef<OperandLoad> loads,
                                 ArrayRef<TmaOperand> tma) {
  SmallVector<OperandLoad> copied;
  SmallVector<Operation *> prefetched;
  for (const OperandLoad &operand : loads) {
    if (operand.viaCopy)
      copied.push_back(operand);
    else
      prefetched.push_back(operand.load);
  }
  // Without copies, one step ahead is all registers can afford.
  lastStage = 1;
  if (!copied.empty() || !tma.empty()) {
    if (!copied.empty())
      rewriteLoads(copied);
    if (!tma.empty() && failed(rewriteTmaLoads(tma)))
      return failure();
    makeWarpGroupDotsAsync();
    // The copies take the loads' operands, which canPipeline checked; the
    // slot indices they add are pure.
    SmallVector<Operation *> roots(copies);
    if (commit)
      roots.push_back(commit);
    runAhead = *getRunAheadSlice(loop, roots);
    lastStage = assignRunAheadStages() + numStages - 1;
  }
  // Register prefetches run one step ahead of the math: in the copies' stage
  // when that is the step before (then in the body's order with the copies'
  // ops, some of which they read: the step's offsets), else a stage of their
  // own.
  unsigned prefetchStage = lastStage - 1;
  unsigned copyStage = copies.empty() ? 0 : lastStage - (numStages - 1);
  FailureOr<DenseSet<Operation *>> prefetchSlice =
      getRunAheadSlice(loop, prefetched);
  for (Operation *op : *prefetchSlice) {
    if (runAhead.contains(op))
      continue;
    if (prefetchStage == copyStage) {
      runAhead.insert(op);
      runAheadStage[op] = copyStage;
    } else {
      prefetchedAhead.insert(op);
    }
  }

  scf::PipeliningOption options;
  options.getScheduleFn = [this](scf::ForOp,
                                 std::vector<std::pair<Operation *, unsigned>>
                                     &schedule) { getSchedule(schedule); };
  options.peelEpilogue = false;
  options.supportDynamicLoops = true;
  options.predicateFn = predicateOp;
  IRRewriter rewriter(loop.getContext());
  rewriter.setInsertionPoint(loop);
  Location loc = loop.getLoc();
  // The pipeliner erases the loop; the drain needs its yield.
  SmallVector<bool> yieldsDotResult;
  for (Value yielded : loop.getBody()->getTerminator()->getOperands())
    yieldsDotResult.push_back(
        isa_and_nonnull<WarpGroupDotWaitOp>(yielded.getDefiningOp()));
  FailureOr<scf::ForOp> pipelined =
      scf::pipelineForLoop(rewriter, loop, options);
  if (failed(pipelined))
    return emitError(loc, "software pipelining failed after the loads "
                          "became copies");
  if (copies.empty())
    return success();
  // The last wgmma group still reads the rings and outstanding copies (the
  // predicated tail's) still write them: both finish before the barrier
  // that follows the copies' wait, after which the rings' bytes are free.
  rewriter.setInsertionPointAfter(*pipelined);
  waitForWarpGroupDots(rewriter, *pipelined, yieldsDotResult);
  if (wait)
    AsyncWaitOp::create(rewriter, loc, 0);
  // Every TMA copy of a real step was waited for in the loop (those past
  // the end never started): the mbarriers are idle, and are invalidated
  // before their bytes serve anything else.
  if (barriers) {
    for (unsigned slot = 0; slot < numStages; ++slot)
      InvalBarrierOp::create(
          rewriter, loc,
          getSlot(rewriter, loc, barriers,
                  arith::ConstantIntOp::create(rewriter, loc, slot, 32)));
    LocalDeallocOp::create(rewriter, loc, barriers);
  }
  for (Value ring : rings)
    LocalDeallocOp::create(rewriter, loc, ring);
  return success();
}

/// A warpgroup dot of step k runs on while step k + 1 starts: its result
/// is read after a wait that leaves one group in flight, and the copies of
/// the step move after that wait (getSchedule), since the buffer they fill
/// is the one the dot of step k - 1 read.
///
/// Only dots whose operands both come from rings (an operand stored to
/// shared memory in the loop, by a load the pipeliner prefetches in
/// registers, is overwritten by the next step's store while the dot would
/// still read it; a register operand is loaded from a ring, and the dot's
/// lowering keeps the registers its instructions read until they finish),
/// and whose result only accumulates: its one use is the
/// yield that feeds it back as the next step's accumulator. Any other
/// reader would see registers the wgmma is still writing.
void LoopPipeliner::makeWarpGroupDotsAsync() {
  auto readsRing = [&](Value operand) {
    if (auto load = operand.getDefiningOp<LocalLoadOp>())
      operand = load.getSrc();
    auto slot = operand.getDefiningOp<MemDescIndexOp>();
    return slot && llvm::is_contained(rings, slot.getSrc());
  };
  Operation *yield = loop.getBody()->getTerminator();
  auto onlyAccumulates = [&](WarpGroupDotOp dot) {
    if (!dot.getD().hasOneUse())
      return false;
    OpOperand &use = *dot.getD().use_begin();
    return use.getOwner() == yield &&
           loop.getRegionIterArgs()[use.getOperandNumber()] == dot.getC();
  };
  for (auto dot : llvm::make_early_inc_range(
           loop.getBody()->getOps<WarpGroupDotOp>())) {
    if (!readsRing(dot.getA()) || !readsRing(dot.getB()) ||
        !onlyAccumulates(dot))
      continue;
    dot.setIsAsync(true);
    OpBuilder builder(dot->getContext());
    builder.setInsertionPointAfter(dot);
    auto wait = WarpGroupDotWaitOp::create(builder, dot.getLoc(),
                                           dot.getD().getType(), dot.getD(),
                                           /*pendings=*/1);
    dot.getD().replaceAllUsesExcept(wait.getOutputs()[0], wait);
    dotWaits.push_back(wait);
  }
}

/// After the loop, the last group of warpgroup dots is waited for before
/// anything reads their results.
void LoopPipeliner::waitForWarpGroupDots(RewriterBase &rewriter,
                                         scf::ForOp pipelined,
                                         ArrayRef<bool> yieldsDotResult) {
  // The pipelined loop's first results are the original loop's.
  SmallVector<Value> results;
  for (auto [index, fromDot] : llvm::enumerate(yieldsDotResult))
    if (fromDot && !pipelined->getResult(index).use_empty())
      results.push_back(pipelined->getResult(index));
  if (dotWaits.empty())
    return;
  // Also when no result is read: the group still reads the rings.
  auto drain = WarpGroupDotWaitOp::create(rewriter, pipelined.getLoc(),
                                          ValueRange(results).getTypes(),
                                          results, /*pendings=*/0);
  for (auto [result, waited] : llvm::zip(results, drain.getOutputs()))
    result.replaceAllUsesExcept(waited, drain);
}

void LoopPipeliner::rewriteLoads(ArrayRef<OperandLoad> loads) {
  OpBuilder builder(loop);
  Block *body = loop.getBody();
  for (const OperandLoad &operand : loads) {
    auto type = cast<RankedTensorType>(operand.load->getResult(0).getType());
    SmallVector<int64_t> ringShape = {numStages};
    llvm::append_range(ringShape, type.getShape());
    auto ringType =
        MemDescType::get(loop.getContext(), ringShape, type.getElementType(),
                         getRingEncoding(operand), /*isMutable=*/true);
    builder.setInsertionPoint(loop);
    rings.push_back(
        LocalAllocOp::create(builder, loop.getLoc(), ringType, Value()));
  }

  builder.setInsertionPointToStart(body);
  wait = AsyncWaitOp::create(builder, loop.getLoc(), numStages - 2);
  for (auto [loaded, ring] : llvm::zip(loads, rings)) {
    OperandLoad operand = loaded;
    Location loc = operand.load.getLoc();
    builder.setInsertionPoint(operand.load);
    Value slot = getSlot(builder, loc, ring,
                         emitSlotIndex(builder, loc, loop, numStages));
    copies.push_back(AsyncCopyGlobalToLocalOp::create(
        builder, loc, operand.load.getPtr(), slot, operand.load.getMask()));
    // The read gets its own index: it runs numStages - 1 steps later.
    builder.setInsertionPoint(operand.consumer);
    Value readSlot = getSlot(builder, loc, ring,
                             emitSlotIndex(builder, loc, loop, numStages));
    Value value = readSlot;
    if (auto convert = dyn_cast<ConvertLayoutOp>(operand.consumer))
      value = LocalLoadOp::create(builder, convert.getLoc(), convert.getType(),
                                  readSlot);
    operand.consumer->getResult(0).replaceAllUsesWith(value);
    operand.consumer->erase();
    operand.load.erase();
  }
  Operation *lastCopy = *llvm::max_element(
      copies, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  builder.setInsertionPointAfter(lastCopy);
  commit = AsyncCommitGroupOp::create(builder, loop.getLoc());
}

/// The tensor map of `load`'s array as copied into `slot`-shaped tiles of
/// `encoding`: a kernel argument appended to the function (one per distinct
/// array and box), which the runtime encodes from the arguments that
/// `tilegpu.tensor_map` names.
FailureOr<Value> getTensorMap(tile::LoadTileOp load, NvmmaSharedEncodingAttr encoding) {
  auto func = load->getParentOfType<func::FuncOp>();
  auto argIndex = [](Value value) -> int64_t {
    auto arg = dyn_cast<BlockArgument>(value);
    return arg && arg.getOwner()->isEntryBlock() ? arg.getArgNumber() : -1;
  };
  auto type = cast<RankedTensorType>(load.getType());
  unsigned elementBytes = type.getElementTypeBitWidth() / 8;
  unsigned swizzle = encoding.getSwizzlingByteWidth();
  int64_t indices[] = {argIndex(load.getBase()), argIndex(load.getRows()),
                       argIndex(load.getCols()), argIndex(load.getRowStride())};
  if (llvm::is_contained(indices, -1))
    return load.emitOpError()
           << "was left for a TMA copy but its array is not described by "
              "kernel arguments";
  Builder b(load.getContext());
  NamedAttribute fields[] = {
      b.getNamedAttr("base", b.getI32IntegerAttr(indices[0])),
      b.getNamedAttr("rows", b.getI32IntegerAttr(indices[1])),
      b.getNamedAttr("cols", b.getI32IntegerAttr(indices[2])),
      b.getNamedAttr("row_stride", b.getI32IntegerAttr(indices[3])),
      b.getNamedAttr("box_rows",
                     b.getI32IntegerAttr(type.getDimSize(0))),
      b.getNamedAttr("box_cols", b.getI32IntegerAttr(swizzle / elementBytes)),
      b.getNamedAttr("swizzle", b.getI32IntegerAttr(swizzle))};
  DictionaryAttr map = b.getDictionaryAttr(fields);
  StringRef attrName = TileGPUDialect::getTensorMapAttrName();
  for (BlockArgument arg : func.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), attrName) == map)
      return Value(arg);
  unsigned index = func.getNumArguments();
  if (failed(func.insertArgument(
          index, TensorMapType::get(load.getContext()),
          b.getDictionaryAttr(b.getNamedAttr(attrName, map)), load.getLoc())))
    return load.emitOpError() << "could not append a tensor-map argument";
  return Value(func.getArgument(index));
}

/// Each block becomes a TMA copy into a ring slot, issued in the copies'
/// stage: thread 0 arms the slot's mbarrier with the bytes of the step's
/// blocks, then starts the copies; the step that reads the slot waits for
/// the mbarrier's phase of that round, ((step / numStages) & 1), in place
/// of its local_alloc.
LogicalResult LoopPipeliner::rewriteTmaLoads(ArrayRef<TmaOperand> tma) {
  MLIRContext *context = loop.getContext();
  Location loc = loop.getLoc();
  OpBuilder builder(loop);
  auto barrierEncoding =
      SwizzledSharedEncodingAttr::get(context, 1, 1, 1, {1, 0});
  auto i64 = builder.getI64Type();
  barriers = LocalAllocOp::create(
      builder, loc,
      MemDescType::get(context, {numStages, 1, 1}, i64, barrierEncoding,
                       /*isMutable=*/true),
      Value());
  for (unsigned slot = 0; slot < numStages; ++slot)
    InitBarrierOp::create(
        builder, loc,
        getSlot(builder, loc, barriers,
                arith::ConstantIntOp::create(builder, loc, slot, 32)),
        /*count=*/1);

  SmallVector<std::pair<TmaOperand, Value>> maps;
  int64_t stepBytes = 0;
  for (TmaOperand operand : tma) {
    auto encoding =
        dyn_cast<NvmmaSharedEncodingAttr>(operand.consumer.getType().getEncoding());
    if (!encoding || encoding.getOrder()[0] != 1)
      return operand.load.emitOpError()
             << "was left for a TMA copy but its warpgroup dot reads it "
                "column-major";
    FailureOr<Value> map = getTensorMap(operand.load, encoding);
    if (failed(map))
      return failure();
    maps.push_back({operand, *map});
    stepBytes += operand.consumer.getType().getSizeInBytes();
    SmallVector<int64_t> ringShape = {numStages};
    llvm::append_range(ringShape, operand.consumer.getType().getShape());
    builder.setInsertionPoint(loop);
    rings.push_back(LocalAllocOp::create(
        builder, loc,
        MemDescType::get(context, ringShape,
                         operand.consumer.getType().getElementType(), encoding,
                         /*isMutable=*/true),
        Value()));
  }

  // The copies, where the first block was loaded.
  Operation *first = tma.front().load;
  for (TmaOperand operand : tma)
    if (operand.load->isBeforeInBlock(first))
      first = operand.load;
  builder.setInsertionPoint(first);
  Value slotIndex = emitSlotIndex(builder, loc, loop, numStages);
  Value slotBarrier = getSlot(builder, loc, barriers, slotIndex);
  Value always = arith::ConstantIntOp::create(builder, loc, 1, 1);
  copies.push_back(BarrierExpectOp::create(builder, loc, slotBarrier,
                                           static_cast<int32_t>(stepBytes),
                                           always));
  for (auto [index, entry] : llvm::enumerate(maps)) {
    auto [operand, map] = entry;
    Value ring = rings[rings.size() - tma.size() + index];
    builder.setInsertionPoint(operand.load);
    copies.push_back(AsyncTmaCopyOp::create(
        builder, operand.load.getLoc(), map, operand.load.getRow(),
        operand.load.getCol(), getSlot(builder, loc, ring, slotIndex),
        slotBarrier, always));
  }

  // The reads: one wait before the first reader of the step's slots.
  Operation *firstRead = tma.front().consumer;
  for (TmaOperand operand : tma)
    if (operand.consumer->isBeforeInBlock(firstRead))
      firstRead = operand.consumer;
  builder.setInsertionPoint(firstRead);
  Value readIndex = emitSlotIndex(builder, loc, loop, numStages);
  WaitBarrierOp::create(builder, loc, getSlot(builder, loc, barriers, readIndex),
                        emitPhase(builder, loc, loop, numStages));
  for (auto [index, entry] : llvm::enumerate(maps)) {
    TmaOperand operand = entry.first;
    Value ring = rings[rings.size() - tma.size() + index];
    builder.setInsertionPoint(operand.consumer);
    operand.consumer.getResult().replaceAllUsesWith(
        getSlot(builder, loc, ring, readIndex));
    operand.consumer->erase();
    operand.load->erase();
  }
  return success();
}

/// Stages for runAhead, returning the copies' stage. An op's level is the
/// number of loads on the longest path from it to a copy (itself included):
/// the copies and what only they read are level 0, the neighbour rows they
/// gather level 1, the offset that locates those rows level 2. Level l runs
/// at stage (deepest level - l). Then no op may run in a later stage than
/// an op that reads it, in the same step or, through the yield, in the
/// next (a pointer advanced each step): such a definition moves to its
/// reader's stage, and what it reads with it.
unsigned LoopPipeliner::assignRunAheadStages() {
  Block *body = loop.getBody();
  DenseMap<Operation *, unsigned> level;
  unsigned deepest = 0;
  for (Operation &op : llvm::reverse(body->without_terminator())) {
    if (!runAhead.contains(&op))
      continue;
    unsigned below = 0;
    for (Operation *user : op.getUsers())
      if (runAhead.contains(user))
        below = std::max(below, level.lookup(user));
    level[&op] = below + (isa<tile::LoadOp>(op) ? 1 : 0);
    deepest = std::max(deepest, level[&op]);
  }
  for (auto [op, opLevel] : level)
    runAheadStage[op] = deepest - opLevel;
  SmallVector<Operation *> worklist(runAhead.begin(), runAhead.end());
  while (!worklist.empty()) {
    Operation *reader = worklist.pop_back_val();
    for (Value operand : reader->getOperands()) {
      Operation *def = getDefinitionInLoop(operand, body);
      if (!def || !runAhead.contains(def) ||
          runAheadStage[def] <= runAheadStage[reader])
        continue;
      runAheadStage[def] = runAheadStage[reader];
      worklist.push_back(def);
    }
  }
  return deepest;
}

void LoopPipeliner::getSchedule(
    std::vector<std::pair<Operation *, unsigned>> &schedule) {
  // The wait first, so that the copies of step k + lastStage go to the
  // buffer step k - 1 read only after the barrier that follows the wait;
  // with asynchronous warpgroup dots, the copies also follow the wait for
  // the dot of step k - 1, the last reader of that buffer. Register
  // prefetches start before the math, whose latency they overlap.
  if (wait)
    schedule.emplace_back(wait, lastStage);
  Block *body = loop.getBody();
  for (Operation &op : body->without_terminator())
    if (prefetchedAhead.contains(&op))
      schedule.emplace_back(&op, lastStage - 1);
  Operation *copiesAfter = nullptr;
  for (WarpGroupDotWaitOp dotWait : dotWaits)
    if (!copiesAfter || copiesAfter->isBeforeInBlock(dotWait))
      copiesAfter = dotWait;
  auto isLate = [&](Operation &op) {
    return !runAhead.contains(&op) && !prefetchedAhead.contains(&op) &&
           (!wait || &op != wait.getOperation());
  };
  auto beforeCopies = [&](Operation &op) {
    return copiesAfter && !copiesAfter->isBeforeInBlock(&op);
  };
  for (Operation &op : body->without_terminator())
    if (isLate(op) && beforeCopies(op))
      schedule.emplace_back(&op, lastStage);
  for (Operation &op : body->without_terminator())
    if (runAhead.contains(&op))
      schedule.emplace_back(&op, runAheadStage.lookup(&op));
  for (Operation &op : body->without_terminator())
    if (isLate(op) && !beforeCopies(op))
      schedule.emplace_back(&op, lastStage);
}

struct TileGPUPipelinePass
    : tilec::tilegpu::impl::TileGPUPipelineBase<TileGPUPipelinePass> {
  using TileGPUPipelineBase::TileGPUPipelineBase;

  void runOnOperation() override {
    if (numStages < 2)
      return;
    ModuleOp module = getOperation();
    ModuleAxisInfoAnalysis axisInfo(module);
    // Innermost loops only, collected first: pipelining replaces them.
    struct Work {
      scf::ForOp loop;
      SmallVector<OperandLoad> loads;
      SmallVector<TmaOperand> tma;
    };
    SmallVector<Work> work;
    module.walk([&](scf::ForOp loop) {
      if (!loop.getBody()->getOps<scf::ForOp>().empty())
        return;
      SmallVector<OperandLoad> loads = collectOperandLoads(loop, axisInfo);
      SmallVector<TmaOperand> tma = collectTmaOperands(loop);
      if (!loads.empty() || !tma.empty())
        work.push_back({loop, std::move(loads), std::move(tma)});
    });
    for (auto &[loop, loads, tma] : work) {
      LoopPipeliner pipeliner(loop, numStages);
      // A loop whose copies cannot run ahead is left as it was; but a block
      // left for TMA has no other lowering.
      if (!pipeliner.canPipeline(loads, tma)) {
        if (tma.empty())
          continue;
        tma.front().load.emitOpError()
            << "was left for a TMA copy but its loop cannot be pipelined";
        return signalPassFailure();
      }
      if (failed(pipeliner.run(loads, tma)))
        return signalPassFailure();
    }
    // A tile.load_tile outside such a loop has no lowering either.
    WalkResult stray = module.walk([](tile::LoadTileOp load) {
      load.emitOpError() << "was left for a TMA copy outside a pipelined loop";
      return WalkResult::interrupt();
    });
    if (stray.wasInterrupted())
      return signalPassFailure();
  }
};

} // namespace
