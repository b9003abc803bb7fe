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

#include "mlir/IR/Operation.h"

#include <optional>

namespace tilec {

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
