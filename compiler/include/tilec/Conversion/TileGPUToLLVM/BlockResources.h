//===- BlockResources.h - what a block needs of the target ----*- C++ -*-===//
//
// The lowering gives every thread the registers of its tensors' layouts,
// writing each op once per register, and places its shared buffers and
// scratch in one dynamic shared-memory buffer (tilegpu-allocate-shared-memory).
// A tensor of too many registers per thread, or more shared memory than a
// block of the target can have, is an error at ttgir, before the lowering
// writes any code.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_CONVERSION_TILEGPUTOLLVM_BLOCKRESOURCES_H
#define TILEC_CONVERSION_TILEGPUTOLLVM_BLOCKRESOURCES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>

namespace tilec {

/// The most 32-bit registers one tensor may take in one thread. A thread
/// has 255 and an SM 65536, but a tensor past those still runs: what does not
/// fit spills, and a streamed tensor is never all live (vector_add with
/// BLOCK=65536 on 4 warps has pointer tensors of 1024 registers per thread
/// and needs 255 and a few spills). What grows with a tensor's registers is
/// the lowering's code, an op per register: 4096 (16 x 256) admits that
/// vector_add on one warp, which ptxas takes minutes for, and refuses more
/// (docs/pipeline.md#block-limits).
constexpr int64_t kMaxTensorRegistersPerThread = 4096;

/// The dynamic shared memory one block of `target` ("sm_90", "sm_90a", ...)
/// can opt in to: known for the GPUs CUDA 13's ptxas assembles for, sm_75 on;
/// std::nullopt for any other.
std::optional<int64_t> getMaxSharedBytesPerBlock(llvm::StringRef target);

/// 32-bit registers one thread takes for `type`, a tensor with a distributed
/// layout: one value per register of the layout, 64-bit elements (pointers,
/// i64, f64) in two.
int64_t getRegistersPerThread(mlir::RankedTensorType type);

/// What checkBlockResources found.
enum class BlockResourcesVerdict {
  Fits,
  /// A tensor or the shared memory needs more than the target has: the
  /// config's sizes are at fault, and a tuner prunes it.
  ExceedsTarget,
  /// The module cannot be checked: no target, one without a known limit, or
  /// shared memory not allocated yet.
  Unchecked,
};

/// Emits an error at the first op of `module` (ttgir) with a tensor of more
/// than kMaxTensorRegistersPerThread registers per thread, or at the module
/// when its `tilegpu.shared` is more than a block of its `tilegpu.target` can
/// opt in to, or where the module cannot be checked; says which.
BlockResourcesVerdict checkBlockResources(mlir::ModuleOp module);
/// checkBlockResources(module) == Fits, as a LogicalResult.
mlir::LogicalResult verifyBlockResources(mlir::ModuleOp module);

} // namespace tilec

#endif // TILEC_CONVERSION_TILEGPUTOLLVM_BLOCKRESOURCES_H
