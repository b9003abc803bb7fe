//===- mask_cover.cpp - each sorted row's covering group of rows ----------===//
//
// For sorted row r (voxel order[r], its neighbour bitmask from its sort key:
// RowMask.h), cover[r] is the group g of ROWS sorted rows, within WINDOW
// groups of r's own (r / ROWS), whose union unions[g] holds the bitmask and
// has the fewest bits; ties go to the lowest g
// (the smallest score, mask_unions' popcount << 25 | g). r's own group
// always holds it. values[r] = order[r], the payload of the stable sort by
// cover that follows.
//
// Why: a row block of the convolution runs every offset any of its rows has,
// so its work is its rows times the bits of its union. Moving each row to
// the leanest group that already runs its offsets, then sorting the rows by
// that group (stably: rows of a group keep their order), gathers the rows a
// lean union covers and leaves the wide unions fewer rows
// (docs/sparse-conv.md, "Rows moved to lean groups").
//
// Grid: (cdiv(N, ROWS)): program g compares its group's rows with the
// groups of its window, TILE groups a step, keeping the smallest score of
// each (row, lane) and reducing the lanes once at the end.
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

static void buildMaskCover(KernelBuilder &kb) {
  int64_t rows = kb.param("ROWS"), tile = kb.param("TILE");
  int64_t window = kb.param("WINDOW");
  Tensor order = kb.arg("order_ptr"), sortKey = kb.arg("sort_key_ptr");
  Tensor unions = kb.arg("unions_ptr"), scores = kb.arg("scores_ptr");
  Tensor cover = kb.arg("cover_ptr"), values = kb.arg("values_ptr");
  Tensor n = kb.let("count", kb.load(kb.arg("count_ptr")));

  ifRowLive(kb, kb.programId(0) * rows, n, [&] {
    auto [group, row, inRange, sorted] =
        loadSortedGroup(kb, order, sortKey, rows, n);
    // No bit of the mask outside a union is (union | ~mask) == -1. Broadcast to
    // the loop's tile here, so that its layout is settled outside the loop.
    Tensor notMask =
        kb.let("not_mask", kb.broadcastTo(kb.expandDims(sorted.mask ^ -1, 1),
                                          {rows, tile}));

    Tensor lo = kb.let("lo", kb.maximum(group - window, 0));
    Tensor hi = kb.let("hi", kb.minimum(group + window + 1, kb.cdiv(n, rows)));
    constexpr int64_t kNone = 0x7FFFFFFF;
    Tensor best0 = kb.let("best", kb.full({rows, tile}, kNone, kb.i32Type()));
    auto candidates = [&](Tensor t, llvm::ArrayRef<Tensor> carried) -> Tensors {
      // [None, :]: TILE groups, read once for every row.
      Tensor candidate = kb.let(
          "candidate", kb.expandDims(lo + t * tile + kb.arange(0, tile), 0));
      Tensor valid = kb.let("valid", candidate < hi);
      Tensor union_ = kb.let("union", kb.load(unions + candidate, valid, 0));
      Tensor score = kb.let("score", kb.load(scores + candidate, valid, kNone));
      Tensor holds = kb.let("holds", (union_ | notMask) == -1);
      return {kb.minimum(carried[0], kb.where(holds, score, kNone))};
    };
    Tensors loop = kb.let(
        "loop", kb.forRange(0, kb.cdiv(hi - lo, tile), 1, {best0}, candidates));
    Tensor best = kb.let("best", kb.min(loop[0], 1));
    kb.store(cover + row, best & ((1 << kScoreIndexBits) - 1), inRange);
    kb.store(values + row, sorted.voxel, inRange);
  });
}

TILEC_KERNEL(mask_cover) {
  static const KernelDefinition kernel(
      KernelDescription("mask_cover", "kernels/mask_cover.cpp", __LINE__)
          .param(MetaParameter("ROWS")
                     .powerOfTwo()
                     .atLeast(64, "a group's index fits the score's 25 bits")
                     .byDefault(64))
          .param(MetaParameter("TILE").powerOfTwo().byDefault(64))
          .param(MetaParameter("WINDOW").atLeast(0).byDefault(256))
          .arg(pointer("order_ptr", "i32").divisibility(16))
          .arg(pointer("sort_key_ptr", "i32").divisibility(16))
          .arg(pointer("unions_ptr", "i32").divisibility(16))
          .arg(pointer("scores_ptr", "i32").divisibility(16))
          .arg(pointer("cover_ptr", "i32").divisibility(16))
          .arg(pointer("values_ptr", "i32").divisibility(16))
          .arg(pointer("count_ptr", "i32"))
          .arg(scalar("N", "i32").doNotSpecialize())
          .candidate("num_warps=4")
          .key("LOG2_N", "ceil(log2(N))")
          // N sizes the grid, the live count comes from count_ptr:
          // winners and cubins cached for N as the count do not match.
          .key("COUNT", "1")
          .grid({"cdiv(N, ROWS)"})
          .require("N + ROWS * (WINDOW + 1) < 2147483648",
                   "row and group indices are 32-bit")
          // 40001 rows: 626 groups, so that windows end inside them.
          .testSizes({{"N", 3000}}, {{"N", 40001}}),
      buildMaskCover);
  return kernel;
}
