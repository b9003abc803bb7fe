//===- VoxelHash.cpp - The voxel hash table's key and probe sequence ------===//

#include "VoxelHash.h"

namespace tilec::kernel {

Tensor voxelInRange(KernelBuilder &kb, Tensor b, Tensor x, Tensor y, Tensor z) {
  Tensor ok = (b >= 0) & (b < kVoxelCoordinateLimit);
  for (Tensor c : {x, y, z})
    ok = ok & (c >= 0) & (c < kVoxelCoordinateLimit);
  return ok;
}

Tensor voxelKey(KernelBuilder &kb, Tensor b, Tensor x, Tensor y, Tensor z) {
  auto wide = [&](Tensor c) { return kb.cast(c, kb.i64Type()); };
  return (wide(b) << 48) | (wide(x) << 32) | (wide(y) << 16) | wide(z);
}

Tensor voxelHomeSlot(KernelBuilder &kb, Tensor key, Tensor log2Slots) {
  // 0x9E3779B97F4A7C15 as a signed 64-bit constant.
  constexpr int64_t kGolden = static_cast<int64_t>(0x9E3779B97F4A7C15ull);
  Tensor shift = 64 - kb.cast(log2Slots, kb.i64Type());
  Tensor slot = kb.binary(BinaryOpKind::ShrU, key * kGolden, shift);
  return kb.cast(slot, kb.i32Type());
}

Tensors probeUntilSettled(KernelBuilder &kb, Tensor limit,
                          llvm::ArrayRef<Tensor> carried, unsigned pending,
                          KernelBuilder::LoopBody probe) {
  // Chunk k covers the positions [2^(k+1) - 2, 2^(k+2) - 2); the chunks
  // that start below the bound are counted over k in [0, 30) (2 << 29 is
  // 2^30) with one reduction, not with a float log2 that could round down.
  Tensor k = kb.arange(0, 32);
  Tensor starts = (kb.constant(2, kb.i32Type()) << kb.minimum(k, 29)) - 2;
  Tensor chunks = kb.let(
      "chunks", kb.sum(kb.cast((k < 30) & (starts < limit), kb.i32Type()), 0));
  auto anyPending = [&](Tensor lanes) {
    Tensor any = kb.cast(lanes != 0, kb.i32Type());
    while (!any.isScalar())
      any = kb.max(any, any.getRank() - 1);
    return any;
  };
  llvm::SmallVector<Tensor> outerCarried(carried.begin(), carried.end());
  outerCarried.push_back(anyPending(carried[pending]));
  auto chunk = [&](Tensor index, llvm::ArrayRef<Tensor> state) -> Tensors {
    Tensor size = kb.constant(2, kb.i32Type()) << index;
    Tensor start = kb.let("chunk_start", size - 2);
    // An empty range once every lane settled.
    Tensor end =
        kb.let("chunk_end", kb.where(state.back() != 0,
                                     kb.minimum(start + size, limit), start));
    Tensors inner = kb.forRange(start, end, 1, state.drop_back(), probe);
    inner.push_back(anyPending(inner[pending]));
    return inner;
  };
  Tensors outer = kb.forRange(0, chunks, 1, outerCarried, chunk);
  outer.pop_back();
  return outer;
}

} // namespace tilec::kernel
