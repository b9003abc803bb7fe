//===- InsertBarriers.cpp - bar.sync where threads share shared bytes ----===//
//
// A membar analysis: walking each function in program order, it keeps the
// byte intervals of shared memory read and written since the last barrier
// and puts a barrier before an op that would race with them (read after
// write, write after read, write after write; reads after reads are free).
// Places come from tilegpu-allocate-shared-memory, so two buffers that share
// bytes at different times are fenced, and two that never share bytes are
// not.
//
//===----------------------------------------------------------------------===//

#include "tilec/Dialect/TileGPU/Transforms/Passes.h"

#include "tilec/Dialect/TileGPU/Transforms/SharedMemory.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

#include <set>

namespace tilec::tilegpu {
#define GEN_PASS_DEF_TILEGPUINSERTBARRIERS
#include "tilec/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace tilec::tilegpu

using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;

namespace {

/// Bytes [first, second) of the dynamic shared memory.
using Interval = std::pair<int64_t, int64_t>;
/// Ordered, so that states compare and iterate deterministically.
using IntervalSet = std::set<Interval>;

bool overlapsAny(ArrayRef<Interval> intervals, const IntervalSet &set) {
  return llvm::any_of(intervals, [&](const Interval &a) {
    return llvm::any_of(set, [&](const Interval &b) {
      return a.first < b.second && b.first < a.second;
    });
  });
}

/// What threads may still be reading and writing since the last barrier.
struct State {
  IntervalSet reads, writes;

  void join(const State &other) {
    reads.insert(other.reads.begin(), other.reads.end());
    writes.insert(other.writes.begin(), other.writes.end());
  }
  bool operator==(const State &other) const {
    return reads == other.reads && writes == other.writes;
  }
  void clear() {
    reads.clear();
    writes.clear();
  }
};

/// The shared bytes one op reads and writes.
struct Access {
  SmallVector<Interval> reads, writes;
};

class BarrierAnalysis {
public:
  LogicalResult analyzeBlock(Block &block, State &state);
  void insertBarriers();

private:
  LogicalResult visit(Operation *op, State &state);
  LogicalResult visitLoop(Operation *op, State &state);
  LogicalResult visitIf(scf::IfOp op, State &state);
  LogicalResult getAccess(Operation *op, Access &access);
  LogicalResult getIntervals(Value buffer, Operation *user,
                             SmallVectorImpl<Interval> &intervals);

  /// Ops that get a barrier before them: a set, since a loop body is
  /// visited until nothing changes and the decisions only grow.
  llvm::SetVector<Operation *> barrierBefore;
  /// async_waits that get a barrier after them.
  llvm::SetVector<Operation *> barrierAfter;
  /// Loop-carried memdescs being traced (a loop carries its own iter_arg).
  llvm::DenseSet<Value> tracing;
};

LogicalResult BarrierAnalysis::analyzeBlock(Block &block, State &state) {
  for (Operation &op : block)
    if (failed(visit(&op, state)))
      return failure();
  return success();
}

LogicalResult BarrierAnalysis::visit(Operation *op, State &state) {
  if (isa<BarrierOp>(op)) {
    state.clear();
    return success();
  }
  // cp.async completes per thread: other threads see its data only after
  // a barrier, so every wait gets one.
  if (isa<AsyncWaitOp>(op)) {
    if (!isa_and_nonnull<BarrierOp>(op->getNextNode()))
      barrierAfter.insert(op);
    state.clear();
    return success();
  }
  if (auto branch = dyn_cast<scf::IfOp>(op))
    return visitIf(branch, state);
  if (op->getNumRegions() != 0)
    return visitLoop(op, state);

  Access access;
  if (failed(getAccess(op, access)))
    return failure();
  bool conflict = overlapsAny(access.reads, state.writes) ||
                  overlapsAny(access.writes, state.reads) ||
                  overlapsAny(access.writes, state.writes);
  if (conflict || barrierBefore.contains(op)) {
    barrierBefore.insert(op);
    state.clear();
  }
  // An async copy's bytes are read only after an async_wait, whose barrier
  // clears them, or (TMA) after every reader waited on the copy's mbarrier:
  // they need not be pending.
  if (isa<AsyncCopyGlobalToLocalOp, AsyncTmaCopyOp>(op))
    return success();
  state.reads.insert(access.reads.begin(), access.reads.end());
  state.writes.insert(access.writes.begin(), access.writes.end());
  return success();
}

/// scf.for, and conservatively any other op with regions: the state at the
/// end of a body flows back to its start until nothing changes; after the
/// op, the state is that of the entry (no iteration) joined with the end.
LogicalResult BarrierAnalysis::visitLoop(Operation *op, State &state) {
  State entry = state;
  State start = entry;
  while (true) {
    State end;
    for (Region &region : op->getRegions()) {
      if (region.empty())
        continue;
      if (!region.hasOneBlock())
        return op->emitOpError()
               << "has a region of several blocks; tilegpu-insert-barriers "
                  "handles structured control flow only";
      State body = start;
      if (failed(analyzeBlock(region.front(), body)))
        return failure();
      end.join(body);
    }
    end.join(entry);
    if (end == start) {
      state = end;
      return success();
    }
    start = end;
  }
}

LogicalResult BarrierAnalysis::visitIf(scf::IfOp op, State &state) {
  State thenState = state;
  if (failed(analyzeBlock(op.getThenRegion().front(), thenState)))
    return failure();
  if (!op.getElseRegion().empty() &&
      failed(analyzeBlock(op.getElseRegion().front(), state)))
    return failure();
  state.join(thenState);
  return success();
}

LogicalResult BarrierAnalysis::getAccess(Operation *op, Access &access) {
  if (auto load = dyn_cast<LocalLoadOp>(op))
    return getIntervals(load.getSrc(), op, access.reads);
  if (auto store = dyn_cast<LocalStoreOp>(op))
    return getIntervals(store.getDst(), op, access.writes);
  if (auto copy = dyn_cast<AsyncCopyGlobalToLocalOp>(op))
    return getIntervals(copy.getDst(), op, access.writes);
  // An mbarrier is written by its initialization and invalidation (one
  // thread, then every thread uses it); arrivals and waits on it are
  // atomic and need no barrier between them.
  if (isa<InitBarrierOp, InvalBarrierOp>(op))
    return getIntervals(op->getOperand(0), op, access.writes);
  if (auto expect = dyn_cast<BarrierExpectOp>(op))
    return getIntervals(expect.getBarrier(), op, access.reads);
  if (auto wait = dyn_cast<WaitBarrierOp>(op))
    return getIntervals(wait.getBarrier(), op, access.reads);
  if (auto copy = dyn_cast<AsyncTmaCopyOp>(op))
    return success(succeeded(getIntervals(copy.getDst(), op, access.writes)) &&
                   succeeded(getIntervals(copy.getBarrier(), op, access.reads)));
  if (auto alloc = dyn_cast<LocalAllocOp>(op))
    return alloc.getSrc() ? getIntervals(alloc.getResult(), op, access.writes)
                          : success();
  // An asynchronous wgmma reads until its warpgroup_dot_wait; a write after
  // that wait gets its barrier before it, after the wait. A b in registers
  // (a transposed dot) reads no shared memory.
  if (auto dot = dyn_cast<WarpGroupDotOp>(op)) {
    if (failed(getIntervals(dot.getA(), op, access.reads)))
      return failure();
    if (!isa<MemDescType>(dot.getB().getType()))
      return success();
    return getIntervals(dot.getB(), op, access.reads);
  }
  int64_t bytes = getSharedMemoryBytes(op);
  if (bytes == 0)
    return success();
  // A scratch op writes its bytes, then (past its own barrier) reads them.
  std::optional<int64_t> offset = getSharedMemoryOffset(op);
  if (!offset)
    return op->emitOpError() << "uses shared memory but has no '"
                             << TileGPUDialect::getOffsetAttrName()
                             << "': run tilegpu-allocate-shared-memory first";
  access.reads.push_back({*offset, *offset + bytes});
  access.writes.push_back({*offset, *offset + bytes});
  return success();
}

/// The bytes `buffer` may name: its alloc's place, one copy of it for a
/// memdesc_index with a constant index, every memdesc a loop or branch may
/// carry into it.
LogicalResult
BarrierAnalysis::getIntervals(Value buffer, Operation *user,
                              SmallVectorImpl<Interval> &intervals) {
  if (auto alloc = buffer.getDefiningOp<LocalAllocOp>()) {
    std::optional<int64_t> offset = getSharedMemoryOffset(alloc);
    if (!offset)
      return alloc.emitOpError()
             << "has no '" << TileGPUDialect::getOffsetAttrName()
             << "': run tilegpu-allocate-shared-memory first";
    intervals.push_back({*offset, *offset + alloc.getType().getSizeInBytes()});
    return success();
  }
  if (auto index = buffer.getDefiningOp<MemDescIndexOp>()) {
    SmallVector<Interval> whole;
    if (failed(getIntervals(index.getSrc(), user, whole)))
      return failure();
    APInt copy;
    if (!matchPattern(index.getIndex(), m_ConstantInt(&copy))) {
      intervals.append(whole);
      return success();
    }
    int64_t bytes = index.getType().getSizeInBytes();
    for (Interval interval : whole) {
      int64_t begin = interval.first + copy.getSExtValue() * bytes;
      intervals.push_back({begin, begin + bytes});
    }
    return success();
  }
  auto carried = [&](scf::ForOp loop, unsigned number) -> LogicalResult {
    Value init = loop.getInitArgs()[number];
    Value next = loop.getYieldedValues()[number];
    return success(succeeded(getIntervals(init, user, intervals)) &&
                   succeeded(getIntervals(next, user, intervals)));
  };
  if (auto arg = dyn_cast<BlockArgument>(buffer)) {
    auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (loop && arg.getArgNumber() > 0) {
      if (!tracing.insert(arg).second)
        return success();
      LogicalResult result = carried(loop, arg.getArgNumber() - 1);
      tracing.erase(arg);
      return result;
    }
  }
  if (auto result = dyn_cast<OpResult>(buffer)) {
    if (auto loop = dyn_cast<scf::ForOp>(result.getOwner()))
      return carried(loop, result.getResultNumber());
    if (auto branch = dyn_cast<scf::IfOp>(result.getOwner()))
      return success(succeeded(getIntervals(branch.thenYield().getOperand(
                                                result.getResultNumber()),
                                            user, intervals)) &&
                     succeeded(getIntervals(branch.elseYield().getOperand(
                                                result.getResultNumber()),
                                            user, intervals)));
  }
  return user->emitOpError()
         << "accesses a shared buffer that does not come from a local_alloc "
            "through memdesc_index, scf.for or scf.if";
}

void BarrierAnalysis::insertBarriers() {
  for (Operation *op : barrierBefore) {
    OpBuilder builder(op);
    BarrierOp::create(builder, op->getLoc());
  }
  for (Operation *wait : barrierAfter) {
    OpBuilder builder(wait->getContext());
    builder.setInsertionPointAfter(wait);
    BarrierOp::create(builder, wait->getLoc());
  }
}

struct TileGPUInsertBarriersPass
    : tilec::tilegpu::impl::TileGPUInsertBarriersBase<
          TileGPUInsertBarriersPass> {
  void runOnOperation() override {
    BarrierAnalysis analysis;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      State state;
      if (failed(analysis.analyzeBlock(func.getBody().front(), state)))
        return signalPassFailure();
    }
    analysis.insertBarriers();
  }
};

} // namespace
