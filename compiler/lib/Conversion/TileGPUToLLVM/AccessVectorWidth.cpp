//===- AccessVectorWidth.cpp - vector widths of global accesses -----------===//

#include "tilec/Conversion/TileGPUToLLVM/AccessVectorWidth.h"

#include "tilec/Analysis/AxisInfo.h"
#include "tilec/Dialect/TileGPU/IR/TileGPU.h"

#include <algorithm>

using namespace mlir;
using namespace tilec;

/// The dimension along which a thread's consecutive registers advance: the
/// one a vector access would span.
static std::optional<unsigned> fastestDim(RankedTensorType type) {
  tilegpu::LinearLayout layout = tilegpu::getLinearLayout(type);
  if (layout.getRegisterBases().empty())
    return std::nullopt;
  for (auto [dim, value] : llvm::enumerate(layout.getRegisterBases()[0]))
    if (value == 1)
      return dim;
  return std::nullopt;
}

llvm::DenseMap<Operation *, unsigned>
tilec::computeAccessVectorWidths(ModuleOp module) {
  ModuleAxisInfoAnalysis axisInfo(module);
  llvm::DenseMap<Operation *, unsigned> widths;
  auto record = [&](Operation *op, Value ptr, Value mask) {
    auto type = dyn_cast<RankedTensorType>(ptr.getType());
    if (!type || !tilegpu::getDistributedLayout(type))
      return;
    std::optional<unsigned> dim = fastestDim(type);
    if (!dim)
      return;
    // A predicate covers the whole vector, so the mask must be uniform over
    // it; the pointers must be contiguous and aligned to its size.
    widths[op] = std::max(1u, std::min(axisInfo.getPtrVectorWidth(ptr, *dim),
                                       axisInfo.getMaskVectorWidth(mask, *dim)));
  };
  module.walk([&](Operation *op) {
    if (auto load = dyn_cast<tile::LoadOp>(op))
      record(op, load.getPtr(), load.getMask());
    else if (auto store = dyn_cast<tile::StoreOp>(op))
      record(op, store.getPtr(), store.getMask());
    else if (auto copy = dyn_cast<tilegpu::AsyncCopyGlobalToLocalOp>(op))
      record(op, copy.getSrc(), copy.getMask());
  });
  return widths;
}
