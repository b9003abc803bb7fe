//===- SharedMemory.h - what ttgir ops take of shared memory ----*- C++ -*-===//
//
// Shared memory is used in two ways: buffers (`tilegpu.local_alloc`) that
// live between ops, and scratch that the lowering of one op uses to move
// elements between threads (layout conversions that are not register
// renamings, reshape, trans, reductions and scans across warps, atomics whose
// old values go to copies in other warps).
// `tilegpu-allocate-shared-memory` places both in the CTA's one dynamic
// buffer and records each place as `tilegpu.offset`.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_DIALECT_TILEGPU_TRANSFORMS_SHAREDMEMORY_H
#define TILEC_DIALECT_TILEGPU_TRANSFORMS_SHAREDMEMORY_H

#include "tilec/Dialect/TileGPU/IR/LinearLayout.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>

namespace tilec {

/// Bytes of one element of a tile of `element` in shared memory, stored as
/// getSharedStorageType says: i1 as i8, pointers as i64.
int64_t getSharedStorageBytes(mlir::Type element);

/// Element strides of a row-major tensor of `shape` whose innermost rows are
/// `rowPad` elements longer than the shape's (scratch rows padded against
/// bank conflicts; 0: dense).
llvm::SmallVector<int64_t, 4> getRowMajorStrides(llvm::ArrayRef<int64_t> shape,
                                                 int64_t rowPad = 0);

/// How many consecutive registers of `layout` sit at consecutive, aligned
/// shared-memory elements (at most 16 bytes) when element `coords` sits at
/// sum(coords[d] * strides[d]): every group of that many registers is then
/// one vector access. 1 when nothing lines up.
unsigned getSharedVectorWidth(const tilegpu::LinearLayout &layout,
                              llvm::ArrayRef<int64_t> strides,
                              unsigned elementBytes);

/// The scratch a layout conversion moves its elements through: `src` writes
/// it in vectors of `storeVector` elements, `dst` reads it in vectors of
/// `loadVector`, element `coords` at sum(coords[d] * strides[d]).
struct ConversionScratch {
  llvm::SmallVector<int64_t, 4> strides;
  int64_t elements = 0;
  unsigned storeVector = 1, loadVector = 1;
};

/// The scratch of a conversion from `src` to `dst` (layouts of one shape):
/// row-major, each innermost row padded by the number of elements (up to 128
/// bytes) that leaves the warps' stores and loads the fewest shared-memory
/// wavefronts (bank conflicts, and vectors a misaligned row would narrow).
/// An accumulator fragment writes two elements per lane into eight rows at
/// once: unpadded rows of 128 bytes or more put all eight in the same banks.
ConversionScratch getConversionScratch(const tilegpu::LinearLayout &src,
                                       const tilegpu::LinearLayout &dst,
                                       unsigned elementBytes);

/// How tile.bin_rank's lowering walks a 1-D layout: in rounds, one a
/// register, each round's elements consecutive over the lanes (the lowest
/// `laneBits` lane bits; lanes above hold copies), then over the warps (the
/// lowest `warpBits` warp bits; warps above hold copies).
struct RankRounds {
  unsigned laneBits = 0, warpBits = 0;
};
/// The rounds of `layout`, or why its elements are not in that order.
mlir::FailureOr<RankRounds> getRankRounds(const tilegpu::LinearLayout &layout,
                                          std::string &reason);

/// Bytes of scratch shared memory the lowering of `op` uses: a layout
/// conversion that moves elements between threads, reshape, trans, a
/// reduction or scan across warps, an atomic whose used result has copies in
/// several warps; 0 for every other op.
int64_t getSharedMemoryBytes(mlir::Operation *op);

/// Bytes `op` takes of shared memory: a local_alloc's whole buffer, the
/// scratch of any other op (getSharedMemoryBytes). The ops with a nonzero
/// size are the ones tilegpu-allocate-shared-memory gives a place.
int64_t getAllocationBytes(mlir::Operation *op);

/// The `tilegpu.offset` of a local_alloc or scratch op (bytes from the start
/// of the dynamic buffer); std::nullopt before allocation.
std::optional<int64_t> getSharedMemoryOffset(mlir::Operation *op);

} // namespace tilec

#endif // TILEC_DIALECT_TILEGPU_TRANSFORMS_SHAREDMEMORY_H
