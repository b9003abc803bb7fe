//===- mask_unions.cpp - the offsets each group of sorted rows has --------===//
//
// unions[g] is the union of the neighbour bitmasks of sorted rows [g * ROWS,
// (g + 1) * ROWS) (row r is voxel order[r], its bitmask from its sort key:
// RowMask.h), and scores[g] = popcount(unions[g]) << 25 | g, what
// mask_cover minimizes over the groups whose union holds a row's bitmask
// (g is below 2^25 while N < 2^31 and ROWS >= 64).
//
// Grid: (cdiv(N, ROWS)).
// N sizes the grid; the live count, at most N, is read from count_ptr, so
// that one launch sequence serves every count up to N (docs/sparse-conv.md,
// "One launch sequence per size bucket").
// A program past the count returns at once (LiveCount.h).
//
//===----------------------------------------------------------------------===//

#include "LiveCount.h"
#include "RowMask.h"

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

/// The number of bits set in each element of the i32 tensor `x`.
static Tensor popcount(KernelBuilder &kb, Tensor x) {
  auto shrU = [&](Tensor value, int64_t bits) {
    return kb.binary(BinaryOpKind::ShrU, value, bits);
  };
  Tensor pairs = x - (shrU(x, 1) & 0x55555555);
  Tensor nibbles = (pairs & 0x33333333) + (shrU(pairs, 2) & 0x33333333);
  Tensor bytes = (nibbles + shrU(nibbles, 4)) & 0x0F0F0F0F;
  return shrU(bytes * 0x01010101, 24);
}

static void buildMaskUnions(KernelBuilder &kb) {
  int64_t rows = kb.param("ROWS");
  Tensor order = kb.arg("order_ptr"), sortKey = kb.arg("sort_key_ptr");
  Tensor unions = kb.arg("unions_ptr"), scores = kb.arg("scores_ptr");
  Tensor n = kb.let("count", kb.load(kb.arg("count_ptr")));

  ifRowLive(kb, kb.programId(0) * rows, n, [&] {
    SortedGroup rowsOf = loadSortedGroup(kb, order, sortKey, rows, n);
    Tensor group = rowsOf.group;
    Tensor union_ =
        kb.let("union", kb.reduce(rowsOf.sorted.mask, 0, tile::ReduceKind::Or));
    kb.store(unions + group, union_);
    kb.store(scores + group, (popcount(kb, union_) << kScoreIndexBits) | group);
  });
}

TILEC_KERNEL(mask_unions) {
  static const KernelDefinition kernel(
      KernelDescription("mask_unions", "kernels/mask_unions.cpp", __LINE__)
          .param(MetaParameter("ROWS")
                     .powerOfTwo()
                     .atLeast(64, "a group's index fits the score's 25 bits")
                     .byDefault(64))
          .arg(pointer("order_ptr", "i32").divisibility(16))
          .arg(pointer("sort_key_ptr", "i32").divisibility(16))
          .arg(pointer("unions_ptr", "i32").divisibility(16))
          .arg(pointer("scores_ptr", "i32").divisibility(16))
          .arg(pointer("count_ptr", "i32"))
          .arg(scalar("N", "i32").doNotSpecialize())
          .candidate("num_warps=2")
          .key("LOG2_N", "ceil(log2(N))")
          // N sizes the grid, the live count comes from count_ptr:
          // winners and cubins cached for N as the count do not match.
          .key("COUNT", "1")
          .grid({"cdiv(N, ROWS)"})
          .testSizes({{"N", 3000}}, {{"N", 777}}),
      buildMaskUnions);
  return kernel;
}
