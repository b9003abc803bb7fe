//===- RowMask.cpp - A sorted row's neighbour bitmask ---------------------===//

#include "RowMask.h"

namespace tilec::kernel {

SortedRowMask loadSortedRowMask(KernelBuilder &kb, Tensor order, Tensor sortKey,
                                Tensor row, Tensor inRange) {
  Tensor voxel = kb.let("voxel", kb.load(order + row, inRange, 0));
  Tensor key = kb.let("key", kb.load(sortKey + voxel, inRange, 0));
  Tensor mask = kb.let("mask", key ^ kb.binary(BinaryOpKind::ShrU, key, 1));
  return {voxel, mask};
}

SortedGroup loadSortedGroup(KernelBuilder &kb, Tensor order, Tensor sortKey,
                            int64_t rows, Tensor count) {
  Tensor group = kb.let("group", kb.programId(0));
  Tensor row = kb.let("row", group * rows + kb.arange(0, rows));
  Tensor inRange = kb.let("in_range", row < count);
  return {group, row, inRange,
          loadSortedRowMask(kb, order, sortKey, row, inRange)};
}

} // namespace tilec::kernel
