//===- Coalesce.cpp - layouts that vectorize global accesses --------------===//
//
// A warp's global access is coalesced when neighbouring lanes touch
// neighbouring addresses, and each thread moves up to 16 bytes per instruction
// when it holds that many consecutive, aligned elements. Both follow from the
// pointers' axis information: the most contiguous dimension becomes the
// layout's fastest, and sizePerThread along it the widest aligned vector.
//
//===----------------------------------------------------------------------===//

#include "tilec/Dialect/TileGPU/Transforms/Passes.h"

#include "tilec/Analysis/AxisInfo.h"
#include "tilec/Dialect/Tile/IR/Tile.h"
#include "tilec/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <algorithm>
#include <numeric>

namespace tilec::tilegpu {
#define GEN_PASS_DEF_TILEGPUCOALESCE
#include "tilec/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace tilec::tilegpu

using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;

namespace {

/// Bits of one element reached through a pointer of `ptrType` (sub-byte types
/// are stored as bytes).
unsigned getPointeeBits(tile::PointerType ptrType) {
  Type pointee = ptrType.getPointeeType();
  if (pointee.isIntOrFloat())
    return std::max(8u, pointee.getIntOrFloatBitWidth());
  return 64;
}

/// The order a layout already has; ties in contiguity keep it.
SmallVector<unsigned> getCurrentOrder(RankedTensorType type) {
  if (auto blocked = dyn_cast_or_null<BlockedEncodingAttr>(type.getEncoding()))
    return SmallVector<unsigned>(blocked.getOrder());
  SmallVector<unsigned> order(type.getRank());
  std::iota(order.rbegin(), order.rend(), 0);
  return order;
}

/// The contiguous dimension of the shared tile a warpgroup dot reads the
/// result of `load` from, or nullopt if none does.
std::optional<unsigned> getWarpGroupTileDim(tile::LoadOp load) {
  SmallVector<Value> worklist = {load.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (auto convert = dyn_cast<ConvertLayoutOp>(user))
        worklist.push_back(convert.getResult());
      else if (auto alloc = dyn_cast<LocalAllocOp>(user))
        if (auto nvmma = dyn_cast<NvmmaSharedEncodingAttr>(
                alloc.getType().getEncoding()))
          return nvmma.getOrder()[0];
    }
  }
  return std::nullopt;
}

/// The layout of a 4-byte load that a warpgroup dot reads transposed (tf32's
/// b: N-contiguous in global memory, K-major in shared memory), or null.
/// Each thread copies single elements, and a warp's 32 lanes cover 8 tile
/// rows by the 4 elements of one 16-byte chunk: every nvmma swizzle puts
/// those in 32 distinct banks, and the global reads are 4 whole 32-byte
/// sectors. (The layout that vectorizes the global reads would write 4
/// elements of one chunk per thread to rows that share banks.)
BlockedEncodingAttr getTransposingCopyLayout(RankedTensorType type,
                                             ArrayRef<unsigned> order,
                                             unsigned tileDim,
                                             unsigned elementBits,
                                             unsigned numWarps,
                                             unsigned threadsPerWarp) {
  if (type.getRank() != 2 || elementBits != 32 || threadsPerWarp != 32 ||
      order[0] == tileDim)
    return {};
  unsigned rowDim = order[0];
  ArrayRef<int64_t> shape = type.getShape();
  if (shape[rowDim] < 8 || shape[tileDim] < 4)
    return {};
  SmallVector<unsigned> sizePerThread(2, 1), threads(2), warps(2, 1);
  threads[rowDim] = 8;
  threads[tileDim] = 4;
  int64_t warpsAlongRows = std::max<int64_t>(1, shape[rowDim] / 8);
  warps[rowDim] = std::min<int64_t>(numWarps, warpsAlongRows);
  warps[tileDim] = numWarps / warps[rowDim];
  return BlockedEncodingAttr::get(type.getContext(), sizePerThread, threads,
                                  warps, order);
}

struct CoalescePass : tilec::tilegpu::impl::TileGPUCoalesceBase<CoalescePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    int numWarps = TileGPUDialect::getNumWarps(module);
    int threadsPerWarp = TileGPUDialect::getThreadsPerWarp(module);
    if (numWarps <= 0 || threadsPerWarp <= 0) {
      module.emitError() << "tilegpu-coalesce needs the module attributes "
                         << TileGPUDialect::getNumWarpsAttrName() << " and "
                         << TileGPUDialect::getThreadsPerWarpAttrName();
      return signalPassFailure();
    }
    ModuleAxisInfoAnalysis axisInfo(module);

    // Decide every layout before rewriting: the analysis is keyed by the
    // values the rewrite replaces.
    SmallVector<std::pair<Operation *, BlockedEncodingAttr>> plan;
    module.walk([&](Operation *op) {
      Value ptr;
      if (auto load = dyn_cast<tile::LoadOp>(op))
        ptr = load.getPtr();
      else if (auto store = dyn_cast<tile::StoreOp>(op))
        ptr = store.getPtr();
      else
        return;
      auto type = dyn_cast<RankedTensorType>(ptr.getType());
      if (!type || !getDistributedLayout(type))
        return;
      std::optional<unsigned> tileDim;
      if (auto load = dyn_cast<tile::LoadOp>(op))
        tileDim = getWarpGroupTileDim(load);
      BlockedEncodingAttr layout =
          getCoalescedLayout(axisInfo, ptr, type, tileDim, unsigned(numWarps),
                             unsigned(threadsPerWarp));
      if (layout != type.getEncoding())
        plan.emplace_back(op, layout);
    });
    for (auto [op, layout] : plan)
      rewriteInLayout(op, layout);
  }

  /// `tileDim`: the contiguous dimension of the warpgroup operand tile the
  /// load is stored to, if any.
  BlockedEncodingAttr getCoalescedLayout(const ModuleAxisInfoAnalysis &axisInfo,
                                         Value ptr, RankedTensorType type,
                                         std::optional<unsigned> tileDim,
                                         unsigned numWarps,
                                         unsigned threadsPerWarp) {
    unsigned rank = type.getRank();
    SmallVector<unsigned> order = getCurrentOrder(type);
    if (const AxisInfo *info = axisInfo.getAxisInfo(ptr))
      std::stable_sort(order.begin(), order.end(),
                       [&](unsigned lhs, unsigned rhs) {
                         return info->contiguity[lhs] > info->contiguity[rhs];
                       });
    unsigned elementBits =
        getPointeeBits(cast<tile::PointerType>(type.getElementType()));
    if (tileDim)
      if (BlockedEncodingAttr transposing = getTransposingCopyLayout(
              type, order, *tileDim, elementBits, numWarps, threadsPerWarp))
        return transposing;
    int64_t threads = int64_t(numWarps) * threadsPerWarp;
    int64_t perThread = std::max<int64_t>(1, type.getNumElements() / threads);
    unsigned vector =
        std::min<int64_t>({axisInfo.getPtrVectorWidth(ptr, order[0]),
                           std::max(1u, 128 / elementBits), perThread});
    SmallVector<unsigned> sizePerThread(rank, 1);
    sizePerThread[order[0]] = vector;
    return getBlockedEncoding(type.getContext(), type.getShape(), sizePerThread,
                              order, numWarps, threadsPerWarp);
  }

  /// Rebuilds `op` with its tensor operands converted to `layout`; a load's
  /// result goes back to its original layout, so users are untouched.
  void rewriteInLayout(Operation *op, BlockedEncodingAttr layout) {
    OpBuilder builder(op);
    Location loc = op->getLoc();
    IRMapping mapping;
    for (Value operand : op->getOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      if (!type || mapping.contains(operand))
        continue;
      mapping.map(operand,
                  ConvertLayoutOp::create(
                      builder, loc, type.cloneWithEncoding(layout), operand));
    }
    Operation *newOp = builder.clone(*op, mapping);
    builder.setInsertionPointAfter(newOp);
    for (auto [oldResult, newResult] :
         llvm::zip(op->getResults(), newOp->getResults())) {
      auto type = cast<RankedTensorType>(oldResult.getType());
      newResult.setType(type.cloneWithEncoding(layout));
      Value back = ConvertLayoutOp::create(builder, loc, type, newResult);
      oldResult.replaceAllUsesWith(back);
    }
    op->erase();
  }
};

} // namespace
