//===- SharedMemory.cpp - what ttgir ops take of shared memory ------------===//

#include "tilec/Dialect/TileGPU/Transforms/SharedMemory.h"

#include "tilec/Dialect/Tile/IR/Tile.h"
#include "tilec/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;

/// Bytes of one element in shared memory, stored as getSharedStorageType
/// says: i1 as i8, pointers as i64.
static int64_t getSharedStorageBytes(Type element) {
  if (isa<tile::PointerType>(element))
    return 8;
  return std::max(8u, element.getIntOrFloatBitWidth()) / 8;
}

/// Bytes a reduction uses to combine the partials of the warps along its
/// axis: one slot per result element and warp group.
static int64_t getReductionSharedBytes(tile::ReduceOp reduce) {
  auto src = cast<RankedTensorType>(reduce.getSrc().getType());
  LinearLayout layout = getLinearLayout(src);
  int64_t groups = 1;
  for (const LinearLayout::Basis &basis : layout.getWarpBases())
    if (basis[reduce.getAxis()] != 0)
      groups *= 2;
  if (groups == 1)
    return 0;
  auto result = dyn_cast<RankedTensorType>(reduce.getType());
  return groups * (result ? result.getNumElements() : 1) *
         getSharedStorageBytes(src.getElementType());
}

/// Bytes an atomic uses to give its old values to the threads that hold
/// copies of an element in other warps: one slot per element, written by the
/// thread that performed the atomic. Copies within a warp are shuffled, and
/// an atomic whose result is unused needs none.
static int64_t getAtomicSharedBytes(Operation *op) {
  Value result = op->getResult(0);
  if (result.use_empty())
    return 0;
  Type element = tile::getElementTypeOrSelf(result.getType());
  if (auto tensor = dyn_cast<RankedTensorType>(result.getType())) {
    if (getLinearLayout(tensor).getRedundantWarpMask() == 0)
      return 0;
    return tensor.getNumElements() * getSharedStorageBytes(element);
  }
  // A scalar is held by every thread and updated by one.
  auto module = op->getParentOfType<ModuleOp>();
  if (!module || TileGPUDialect::getNumWarps(module) <= 1)
    return 0;
  return getSharedStorageBytes(element);
}

/// Bytes a scan uses to combine the totals of the warps along its axis: one
/// slot per warp for every run of elements the CTA's threads cover along the
/// axis at once (the register repeats above the warps make several runs).
static int64_t getScanSharedBytes(tile::ScanOp scan) {
  auto src = cast<RankedTensorType>(scan.getSrc().getType());
  LinearLayout layout = getLinearLayout(src);
  unsigned axis = scan.getAxis();
  int64_t warps = 1, highestWarpBasis = 0;
  for (const LinearLayout::Basis &basis : layout.getWarpBases())
    if (basis[axis] != 0) {
      warps *= 2;
      highestWarpBasis = std::max(highestWarpBasis, basis[axis]);
    }
  if (warps == 1)
    return 0;
  int64_t runs = 1;
  for (const LinearLayout::Basis &basis : layout.getRegisterBases())
    if (basis[axis] > highestWarpBasis)
      runs *= 2;
  return src.getNumElements() / src.getDimSize(axis) * runs * warps *
         getSharedStorageBytes(src.getElementType());
}

int64_t tilec::getSharedMemoryBytes(Operation *op) {
  // Only tensors with distributed layouts are lowered (ttir has none).
  if (!llvm::all_of(op->getOperandTypes(), [](Type type) {
        return !isa<RankedTensorType>(type) || getDistributedLayout(type);
      }))
    return 0;
  if (auto reduce = dyn_cast<tile::ReduceOp>(op))
    return getReductionSharedBytes(reduce);
  if (auto scan = dyn_cast<tile::ScanOp>(op))
    return getScanSharedBytes(scan);
  if (isa<tile::AtomicRMWOp, tile::AtomicCASOp>(op))
    return getAtomicSharedBytes(op);
  if (!isa<ConvertLayoutOp, tile::ReshapeOp, tile::TransOp>(op))
    return 0;
  auto src = cast<RankedTensorType>(op->getOperand(0).getType());
  auto dst = cast<RankedTensorType>(op->getResult(0).getType());
  if (!getDistributedLayout(dst))
    return 0;
  // A conversion whose threads already hold their elements renames
  // registers; reshape and trans always take the round trip.
  if (isa<ConvertLayoutOp>(op) &&
      succeeded(mapRegisters(
          getLinearLayout(src), getLinearLayout(dst),
          [](const LinearLayout::Basis &coords) { return coords; })))
    return 0;
  return dst.getNumElements() * getSharedStorageBytes(dst.getElementType());
}

int64_t tilec::getAllocationBytes(Operation *op) {
  if (auto alloc = dyn_cast<LocalAllocOp>(op))
    return alloc.getType().getSizeInBytes();
  return getSharedMemoryBytes(op);
}

std::optional<int64_t> tilec::getSharedMemoryOffset(Operation *op) {
  if (auto offset =
          op->getAttrOfType<IntegerAttr>(TileGPUDialect::getOffsetAttrName()))
    return offset.getInt();
  return std::nullopt;
}
