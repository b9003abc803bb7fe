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

} // namespace tilec::kernel
