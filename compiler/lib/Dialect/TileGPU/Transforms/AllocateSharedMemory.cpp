//===- AllocateSharedMemory.cpp - places in the dynamic shared memory ----===//
//
// A CTA has one dynamic shared-memory buffer. Every local_alloc and every op
// whose lowering needs scratch gets a place in it; two of them may share
// bytes when they are never live at the same time. Liveness is computed on
// each function's ops numbered in program order, which for structured
// control flow is exact enough: a buffer used inside a loop that does not
// hold its alloc is live over the whole loop.
//
//===----------------------------------------------------------------------===//

#include "tilec/Dialect/TileGPU/Transforms/Passes.h"

#include "tilec/Dialect/TileGPU/Transforms/SharedMemory.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MathExtras.h"

namespace tilec::tilegpu {
#define GEN_PASS_DEF_TILEGPUALLOCATESHAREDMEMORY
#include "tilec/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace tilec::tilegpu

using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;

namespace {

/// Alignment of a place. 128 bytes keeps vector accesses and ldmatrix rows
/// aligned whatever the offset; a tile wgmma reads is swizzled by address
/// bits, whose pattern repeats every 8 rows of 128 bytes, so it starts on a
/// 1024-byte boundary.
constexpr int64_t kAlignment = 128;
constexpr int64_t kWarpGroupTileAlignment = 1024;

int64_t getAlignment(Operation *op) {
  auto alloc = dyn_cast<LocalAllocOp>(op);
  if (alloc && isa<NvmmaSharedEncodingAttr>(alloc.getType().getEncoding()))
    return kWarpGroupTileAlignment;
  return kAlignment;
}

/// The first and last program-order number of an op and everything nested.
struct Span {
  int64_t first, last;
};

/// One buffer or scratch: its bytes and its live range in program order.
struct Allocation {
  Operation *op;
  int64_t size;
  Span live;
  int64_t offset = 0;
};

void numberOps(Operation *op, int64_t &next,
               llvm::DenseMap<Operation *, Span> &spans) {
  int64_t first = next++;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Operation &nested : block)
        numberOps(&nested, next, spans);
  spans[op] = {first, next - 1};
}

/// Every value that names the buffer of `alloc` or a part of it: its
/// memdesc_index views and the memdescs loops and branches carry.
SmallVector<Value> getAliases(LocalAllocOp alloc) {
  SmallVector<Value> aliases{alloc.getResult()};
  llvm::DenseSet<Value> seen{alloc.getResult()};
  auto add = [&](Value value) {
    if (seen.insert(value).second)
      aliases.push_back(value);
  };
  for (size_t i = 0; i < aliases.size(); ++i) {
    for (OpOperand &use : aliases[i].getUses()) {
      Operation *user = use.getOwner();
      if (auto index = dyn_cast<MemDescIndexOp>(user)) {
        add(index.getResult());
      } else if (auto loop = dyn_cast<scf::ForOp>(user)) {
        if (BlockArgument arg = loop.getTiedLoopRegionIterArg(&use))
          add(arg);
        if (OpResult result = loop.getTiedLoopResult(&use))
          add(result);
      } else if (isa<scf::YieldOp>(user)) {
        Operation *parent = user->getParentOp();
        unsigned number = use.getOperandNumber();
        add(parent->getResult(number));
        if (auto loop = dyn_cast<scf::ForOp>(parent))
          add(loop.getRegionIterArg(number));
      }
    }
  }
  return aliases;
}

/// The live range of a buffer: from its alloc to its last use, where an
/// alloc and a use in different regions count as the ops holding them in
/// the innermost region holding both.
Span getBufferLiveRange(LocalAllocOp alloc,
                        const llvm::DenseMap<Operation *, Span> &spans) {
  Span live = {spans.lookup(alloc).first, spans.lookup(alloc).first};
  for (Value alias : getAliases(alloc)) {
    for (Operation *user : alias.getUsers()) {
      Region *region = alloc->getParentRegion();
      while (!region->findAncestorOpInRegion(*user))
        region = region->getParentRegion();
      Operation *userAnchor = region->findAncestorOpInRegion(*user);
      Operation *allocAnchor = region->findAncestorOpInRegion(*alloc);
      live.first = std::min(live.first, spans.lookup(allocAnchor).first);
      live.last = std::max(live.last, spans.lookup(userAnchor).last);
    }
  }
  return live;
}

bool overlap(int64_t aBegin, int64_t aEnd, int64_t bBegin, int64_t bEnd) {
  return aBegin <= bEnd && bBegin <= aEnd;
}

/// First fit: the lowest aligned offset that overlaps the bytes of no placed
/// allocation live at the same time. Candidates are 0 and the aligned end of
/// every such allocation.
int64_t findOffset(const Allocation &next, ArrayRef<Allocation *> placed) {
  SmallVector<Allocation *> live;
  for (Allocation *other : placed)
    if (overlap(next.live.first, next.live.last, other->live.first,
                other->live.last))
      live.push_back(other);
  SmallVector<int64_t> candidates{0};
  for (Allocation *other : live)
    candidates.push_back(
        llvm::alignTo(other->offset + other->size, getAlignment(next.op)));
  llvm::sort(candidates);
  for (int64_t candidate : candidates)
    if (llvm::none_of(live, [&](Allocation *other) {
          return overlap(candidate, candidate + next.size - 1, other->offset,
                         other->offset + other->size - 1);
        }))
      return candidate;
  llvm_unreachable("the last candidate is past every live allocation");
}

/// Places the allocations of one function; returns its high-water mark.
int64_t allocateFunction(func::FuncOp func) {
  llvm::DenseMap<Operation *, Span> spans;
  int64_t next = 0;
  numberOps(func, next, spans);

  SmallVector<Allocation> allocations;
  func.walk([&](Operation *op) {
    int64_t size = getAllocationBytes(op);
    if (size == 0)
      return;
    auto alloc = dyn_cast<LocalAllocOp>(op);
    Span live = alloc ? getBufferLiveRange(alloc, spans) : spans.lookup(op);
    allocations.push_back({op, size, live});
  });

  // Largest first, then program order: deterministic, and the big buffers
  // of a pipeline get the low offsets.
  SmallVector<Allocation *> order;
  for (Allocation &allocation : allocations)
    order.push_back(&allocation);
  llvm::stable_sort(order, [&](Allocation *a, Allocation *b) {
    return std::make_tuple(-a->size, a->live.first, spans.lookup(a->op).first) <
           std::make_tuple(-b->size, b->live.first, spans.lookup(b->op).first);
  });
  int64_t total = 0;
  SmallVector<Allocation *> placed;
  for (Allocation *allocation : order) {
    allocation->offset = findOffset(*allocation, placed);
    placed.push_back(allocation);
    total = std::max(total, allocation->offset + allocation->size);
  }

  Builder builder(func.getContext());
  for (const Allocation &allocation : allocations)
    allocation.op->setAttr(TileGPUDialect::getOffsetAttrName(),
                           builder.getI32IntegerAttr(allocation.offset));
  return total;
}

struct TileGPUAllocateSharedMemoryPass
    : tilec::tilegpu::impl::TileGPUAllocateSharedMemoryBase<
          TileGPUAllocateSharedMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Each kernel launches alone, so functions share the bytes.
    int64_t total = 0;
    for (auto func : module.getOps<func::FuncOp>())
      total = std::max(total, allocateFunction(func));
    if (total > std::numeric_limits<int32_t>::max()) {
      module.emitError() << "needs " << total
                         << " B of shared memory, more than an i32 holds";
      return signalPassFailure();
    }
    module->setAttr(TileGPUDialect::getSharedAttrName(),
                    Builder(module.getContext()).getI32IntegerAttr(total));
  }
};

} // namespace
