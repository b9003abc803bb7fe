//===- mask_unions.cpp - the offsets each group of sorted rows has --------===//
//
// unions[g] is the union of the neighbour bitmasks of sorted rows [g * ROWS,
// (g + 1) * ROWS): row r is voxel order[r], and its bitmask is the Gray code
// whose rank voxel_neighbours stored as its sort key (key ^ (key >> 1): bit
// rank(v), or its 32nd of the ranks past 32 offsets). mask_cover moves each
// row to a group whose union holds its bitmask; the bits' order is the
// key's, which does not matter to a union or a count of bits.
//
// Grid: (cdiv(N, ROWS)).
//
//===----------------------------------------------------------------------===//

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

static void buildMaskUnions(KernelBuilder &kb) {
  int64_t rows = kb.param("ROWS");
  Tensor order = kb.arg("order_ptr"), sortKey = kb.arg("sort_key_ptr");
  Tensor unions = kb.arg("unions_ptr");
  Tensor n = kb.arg("N");

  Tensor group = kb.let("group", kb.programId(0));
  Tensor row = kb.let("row", group * rows + kb.arange(0, rows));
  Tensor inRange = kb.let("in_range", row < n);
  Tensor voxel = kb.let("voxel", kb.load(order + row, inRange, 0));
  Tensor key = kb.let("key", kb.load(sortKey + voxel, inRange, 0));
  Tensor code = kb.let("code", key ^ kb.binary(BinaryOpKind::ShrU, key, 1));
  kb.store(unions + group, kb.reduce(code, 0, tile::ReduceKind::Or));
}

TILEC_KERNEL(mask_unions) {
  static const KernelDefinition kernel(
      KernelDescription("mask_unions", "kernels/mask_unions.cpp", __LINE__)
          .param(MetaParameter("ROWS").powerOfTwo().atLeast(16).byDefault(64))
          .arg(pointer("order_ptr", "i32").divisibility(16))
          .arg(pointer("sort_key_ptr", "i32").divisibility(16))
          .arg(pointer("unions_ptr", "i32").divisibility(16))
          .arg(scalar("N", "i32"))
          .candidate("num_warps=2")
          .key("LOG2_N", "ceil(log2(N))")
          .grid({"cdiv(N, ROWS)"})
          .testSizes({{"N", 3000}}, {{"N", 777}}),
      buildMaskUnions);
  return kernel;
}
