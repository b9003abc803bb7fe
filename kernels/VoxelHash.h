//===- VoxelHash.h - The voxel hash table's key and probe sequence --*- C++
//-*-===//
//
// One owner for what voxel_hash_insert and voxel_neighbours must agree on:
// a voxel (batch, x, y, z), each in [0, 2^16), is the i64 key
// b << 48 | x << 32 | y << 16 | z; its probe sequence in a table of 2^LOG2_T
// slots starts at the top LOG2_T bits of key * 0x9E3779B97F4A7C15
// (Fibonacci hashing) and walks linearly. An empty slot holds -1, which no
// voxel's key is.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_KERNELS_VOXELHASH_H
#define TILEC_KERNELS_VOXELHASH_H

#include "tilec/Kernel/KernelBuilder.h"

namespace tilec::kernel {

/// Coordinates at or above this are refused (they do not fit the key).
constexpr int64_t kVoxelCoordinateLimit = 1 << 16;

/// Slots a lookup step of voxel_neighbours reads: four i64 keys are 32
/// bytes (one or two sectors, as the home slot falls), so the three after
/// the first cost little traffic, and a program's lookups settle in about a
/// quarter of the steps.
constexpr int64_t kVoxelProbeWidth = 4;

/// Whether every coordinate is in [0, kVoxelCoordinateLimit).
Tensor voxelInRange(KernelBuilder &kb, Tensor b, Tensor x, Tensor y, Tensor z);

/// The i64 key of (b, x, y, z) (i32 tensors of one shape).
Tensor voxelKey(KernelBuilder &kb, Tensor b, Tensor x, Tensor y, Tensor z);

/// The first slot (i32) of `key`'s probe sequence in 2^log2Slots slots.
Tensor voxelHomeSlot(KernelBuilder &kb, Tensor key, Tensor log2Slots);

/// forRange(0, bound, 1, carried, probe) for a probe loop whose lanes stop
/// one by one: carried[pending] is an i32 tile, non-zero while a lane still
/// probes. The positions run in chunks of 2, 4, 8, ... and the chunks after
/// the first at whose end no lane of the program is pending are empty, so
/// a program walks about twice its own longest probe sequence instead of
/// `bound` (the longest any lane of any program may need). `bound` is an
/// i32 scalar of at most 2^30; the results are forRange's.
Tensors probeUntilSettled(KernelBuilder &kb, Tensor bound,
                          llvm::ArrayRef<Tensor> carried, unsigned pending,
                          KernelBuilder::LoopBody probe);

} // namespace tilec::kernel

#endif // TILEC_KERNELS_VOXELHASH_H
