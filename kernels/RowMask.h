//===- RowMask.h - A sorted row's neighbour bitmask -----------*- C++ -*-===//
//
// One owner for how mask_unions and mask_cover read a sorted row: row r is
// voxel order[r], and voxel_neighbours stored as its sort key the rank of
// its ranked neighbour bitmask in the reflected Gray sequence, so the
// bitmask is that Gray code, key ^ (key >> 1) (bit rank(v), or its 32nd of
// the ranks past 32 offsets). Unions and counts of bits do not depend on
// the bits' order.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_KERNELS_ROWMASK_H
#define TILEC_KERNELS_ROWMASK_H

#include "tilec/Kernel/KernelBuilder.h"

namespace tilec::kernel {

/// mask_unions scores a group popcount(union) << kScoreIndexBits | group;
/// mask_cover keeps the smallest score of the groups that hold a row's
/// bitmask and reads the group from its low bits (groups below 2^25 while
/// N < 2^31 and groups have at least 64 rows).
constexpr int kScoreIndexBits = 25;

struct SortedRowMask {
  /// The row's voxel (order[row]) and its neighbour bitmask; 0 for both
  /// where `inRange` is false.
  Tensor voxel, mask;
};

/// The voxels and bitmasks of the sorted rows `row` (an i32 tensor).
SortedRowMask loadSortedRowMask(KernelBuilder &kb, Tensor order, Tensor sortKey,
                                Tensor row, Tensor inRange);

/// A program's group of sorted rows, as mask_unions and mask_cover take
/// them: group g = the program's, rows [g * rows, (g + 1) * rows), those
/// below `count`, and their voxels and bitmasks.
struct SortedGroup {
  Tensor group, row, inRange;
  SortedRowMask sorted;
};
SortedGroup loadSortedGroup(KernelBuilder &kb, Tensor order, Tensor sortKey,
                            int64_t rows, Tensor count);

} // namespace tilec::kernel

#endif // TILEC_KERNELS_ROWMASK_H
