//===- LiveCount.h - Programs past a map kernel's live count ----*- C++ -*-===//
//
// One owner for how a map kernel skips the work of its programs past the
// live count. The map kernels size their grids by a capacity and read the
// count from a device word, so that one recorded launch sequence serves
// every count of a bucket (docs/sparse-conv.md, "One launch sequence per
// size bucket"). Masked lanes alone left those programs computing their
// tiles (a replay of the 512k bucket took 605 us of GPU time where the
// same count launched at its own size took 503, on an H100); a program
// past the count now returns at once: its work sits in an scf.if
// (KernelBuilder::ifThen). A loop of one trip or none did the same, but
// LLVM hoisted the work's address arithmetic out of it: neighbour_transpose
// took 116 registers instead of 55, and on an H100 it ran 92 us instead of
// 34 at 500k voxels, voxel_neighbours 195 instead of 132.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_KERNELS_LIVECOUNT_H
#define TILEC_KERNELS_LIVECOUNT_H

#include "tilec/Kernel/KernelBuilder.h"

namespace tilec::kernel {

/// How many of `trips` steps of `perTrip` rows, from row `first` on, hold
/// a row below `count`: at most `trips`, 0 for a program past the count
/// (i32 scalars).
Tensor liveTrips(KernelBuilder &kb, Tensor first, Tensor count, int64_t perTrip,
                 int64_t trips);

/// Builds `body` so that it runs only where row `first` (the program's
/// first) is below `count`.
void ifRowLive(KernelBuilder &kb, Tensor first, Tensor count,
               llvm::function_ref<void()> body);

} // namespace tilec::kernel

#endif // TILEC_KERNELS_LIVECOUNT_H
