//===- mask_cover.cpp - each sorted row's covering group of rows ----------===//
//
// For sorted row r (voxel order[r], neighbour bitmask code = key ^ (key >>
// 1) of its sort key, as in mask_unions), cover[r] is the group g of ROWS
// sorted rows, within WINDOW groups of r's own (r / ROWS), whose union
// unions[g] holds code and has the fewest bits; ties go to the lowest g.
// r's own group always holds it. values[r] = order[r], the payload of the
// stable sort by cover that follows.
//
// Why: a row block of the convolution runs every offset any of its rows has,
// so its work is its rows times the bits of its union. Moving each row to
// the leanest group that already runs its offsets, then sorting the rows by
// that group (stably: rows of a group keep their order), gathers the rows a
// lean union covers and leaves the wide unions fewer rows. Two rounds cut
// the computed pairs over the useful ones on the res-64 shell from 1.60 to
// 1.50 (128-row blocks) and 1.45 to 1.38 (64 rows); RowOrderTest measures
// it on the benchmark's scenes.
//
// Grid: (cdiv(N, BLOCK)); each program compares its BLOCK rows with the
// groups of its window, TILE groups a step.
//
//===----------------------------------------------------------------------===//

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

static void buildMaskCover(KernelBuilder &kb) {
  int64_t block = kb.param("BLOCK"), tile = kb.param("TILE");
  int64_t rows = kb.param("ROWS"), window = kb.param("WINDOW");
  Tensor order = kb.arg("order_ptr"), sortKey = kb.arg("sort_key_ptr");
  Tensor unions = kb.arg("unions_ptr");
  Tensor cover = kb.arg("cover_ptr"), values = kb.arg("values_ptr");
  Tensor n = kb.arg("N");

  Tensor first = kb.let("first", kb.programId(0) * block);
  Tensor row = kb.let("row", first + kb.arange(0, block));
  Tensor inRange = kb.let("in_range", row < n);
  Tensor voxel = kb.let("voxel", kb.load(order + row, inRange, 0));
  Tensor key = kb.let("key", kb.load(sortKey + voxel, inRange, 0));
  Tensor code = kb.let("code", key ^ kb.binary(BinaryOpKind::ShrU, key, 1));
  Tensor own = kb.let("own", kb.expandDims(row / rows, 1)); // [:, None]
  Tensor notCode = kb.let("not_code", kb.expandDims(code ^ -1, 1));

  // The groups any row of the program may move to.
  Tensor groups = kb.let("groups", kb.cdiv(n, rows));
  Tensor lo = kb.let("lo", kb.maximum(first / rows - window, 0));
  Tensor hi = kb.let(
      "hi", kb.minimum((kb.minimum(first + block, n) - 1) / rows + window + 1,
                       groups));
  // A candidate's score: its bits, then its index (below 2^25 since N is
  // below 2^31), so that the smallest score is the choice.
  Tensor best0 = kb.let("best", kb.full({block}, 0x7FFFFFFF, kb.i32Type()));
  auto candidates = [&](Tensor t, llvm::ArrayRef<Tensor> carried) -> Tensors {
    Tensor group = kb.let("group", lo + t * tile + kb.arange(0, tile));
    Tensor union_ =
        kb.let("union", kb.load(unions + group, group < hi, -1));
    Tensor score = kb.let(
        "score", kb.expandDims((popcount(kb, union_) << 25) | group, 0));
    Tensor candidate = kb.let("candidate", kb.expandDims(group, 0));
    Tensor near = kb.let("near", (candidate < hi) &
                                     (candidate - own <= window) &
                                     (own - candidate <= window));
    // union holds code: no bit of code outside it.
    Tensor holds = kb.let(
        "holds", (kb.expandDims(union_, 0) | notCode) == -1);
    Tensor scores =
        kb.let("scores", kb.where(near & holds, score, 0x7FFFFFFF));
    return {kb.minimum(carried[0], kb.min(scores, 1))};
  };
  Tensors loop = kb.let(
      "loop", kb.forRange(0, kb.cdiv(hi - lo, tile), 1, {best0}, candidates));
  kb.store(cover + row, loop[0] & ((1 << 25) - 1), inRange);
  kb.store(values + row, voxel, inRange);
}

TILEC_KERNEL(mask_cover) {
  static const KernelDefinition kernel(
      KernelDescription("mask_cover", "kernels/mask_cover.cpp", __LINE__)
          .param(MetaParameter("BLOCK").powerOfTwo().byDefault(64))
          .param(MetaParameter("TILE").powerOfTwo().byDefault(64))
          .param(MetaParameter("ROWS").powerOfTwo().atLeast(16).byDefault(64))
          .param(MetaParameter("WINDOW").atLeast(0).byDefault(256))
          .arg(pointer("order_ptr", "i32").divisibility(16))
          .arg(pointer("sort_key_ptr", "i32").divisibility(16))
          .arg(pointer("unions_ptr", "i32").divisibility(16))
          .arg(pointer("cover_ptr", "i32").divisibility(16))
          .arg(pointer("values_ptr", "i32").divisibility(16))
          .arg(scalar("N", "i32"))
          .candidate("num_warps=4")
          .key("LOG2_N", "ceil(log2(N))")
          .grid({"cdiv(N, BLOCK)"})
          // 40001 rows: 626 groups, so that windows end inside them.
          .testSizes({{"N", 3000}}, {{"N", 40001}}),
      buildMaskCover);
  return kernel;
}
