//===- neighbour_transpose.cpp - the map in row order, offset-major -------===//
//
// nbt[v * n + r] = nb[order[r] * V + v] for the n = *count_ptr live rows
// (their count is nbt's stride, whatever N is): the neighbour map read in the
// sorted row order of the masked GEMM and stored offset-major, so that
// sparse_conv_fwd reads one offset's column for a block of rows with
// coalesced loads. Each sorted row's offsets with a neighbour also go to
// row_masks as W = cdiv(V, 32) words (bit v % 32 of word r * W + v / 32):
// block_offsets reads those 4W bytes a row instead of the row's 4V bytes of
// the map, twice for each row block size.
//
// Grid: (cdiv(N, BLOCK)).
// N sizes the grid; the live count, at most N, is read from count_ptr, so
// that one launch sequence serves every count up to N (docs/sparse-conv.md,
// "One launch sequence per size bucket").
// A program past the count returns at once (LiveCount.h).
//
//===----------------------------------------------------------------------===//

#include "LiveCount.h"

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

#include <algorithm>

using namespace tilec;
using namespace tilec::kernel;

static void buildNeighbourTranspose(KernelBuilder &kb) {
  int64_t block = kb.param("BLOCK"), paddedOffsets = kb.param("VP");
  Tensor nb = kb.arg("nb_ptr"), order = kb.arg("order_ptr");
  Tensor nbt = kb.arg("nbt_ptr"), rowMasks = kb.arg("row_masks_ptr");
  Tensor v = kb.arg("V");
  Tensor n = kb.let("count", kb.load(kb.arg("count_ptr")));

  ifRowLive(kb, kb.programId(0) * block, n, [&] {
    Tensor row = kb.let("row", kb.programId(0) * block + kb.arange(0, block));
    Tensor inRange = kb.let("in_range", row < n);
    Tensor voxel = kb.let("voxel", kb.load(order + row, inRange, 0));
    Tensor offsets =
        kb.let("offsets", kb.expandDims(kb.arange(0, paddedOffsets), 0));
    Tensor mask = kb.let("mask", kb.expandDims(inRange, 1) & (offsets < v));
    Tensor column =
        kb.let("column",
               kb.load(nb + kb.expandDims(voxel, 1) * v + offsets, mask, -1));
    kb.store(nbt + offsets * n + kb.expandDims(row, 1), column, mask);
    // The masks' words: bit v % 32 of the row's word v / 32, each word an OR
    // over its 32 offsets ([BLOCK, VP] as [BLOCK, VP / 32, 32], one reduction
    // for every word of a row).
    Tensor bit = kb.let(
        "bit", kb.where((column != -1) & mask,
                        kb.constant(1, kb.i32Type()) << (offsets % 32), 0));
    int64_t wordsPadded = std::max<int64_t>(paddedOffsets / 32, 1);
    int64_t bitsPerWord = std::min<int64_t>(paddedOffsets, 32);
    Tensor bits = kb.let(
        "bits", kb.reduce(kb.reshape(bit, {block, wordsPadded, bitsPerWord}), 2,
                          tile::ReduceKind::Or));
    Tensor word = kb.let("word", kb.expandDims(kb.arange(0, wordsPadded), 0));
    Tensor words = kb.let("words", (v + 31) / 32);
    kb.store(rowMasks + kb.expandDims(row, 1) * words + word, bits,
             kb.expandDims(inRange, 1) & (word < words));
  });
}

TILEC_KERNEL(neighbour_transpose) {
  static const KernelDefinition kernel(
      KernelDescription("neighbour_transpose",
                        "kernels/neighbour_transpose.cpp", __LINE__)
          .param(MetaParameter("VP").powerOfTwo().byDefault(32).derivedAs(
              "next_power_of_2(V)"))
          // A tile of 2048 entries (16 a thread): with the masks' bits beside
          // the map's entries, tiles of 4096 took 96 to 168 registers.
          .param(MetaParameter("BLOCK").powerOfTwo().byDefault(64).derivedAs(
              "max(8, cdiv(2048, next_power_of_2(V)))"))
          .arg(pointer("nb_ptr", "i32").divisibility(16))
          .arg(pointer("order_ptr", "i32").divisibility(16))
          .arg(pointer("nbt_ptr", "i32").divisibility(16))
          .arg(pointer("row_masks_ptr", "i32").divisibility(16))
          .arg(pointer("count_ptr", "i32"))
          .arg(scalar("N", "i32").doNotSpecialize())
          .arg(scalar("V", "i32"))
          .candidate("num_warps=4")
          .key("LOG2_N", "ceil(log2(N))")
          .key("V")
          // With the rows' masks: winners and cubins cached for the kernel
          // without them do not match.
          .key("OUTPUTS", "2")
          // N sizes the grid, the live count comes from count_ptr:
          // winners and cubins cached for N as the count do not match.
          .key("COUNT", "1")
          .grid({"cdiv(N, BLOCK)"})
          .require("VP >= V", "a tile row holds every offset")
          .require("N * V < 2147483648", "the map's offsets are 32-bit")
          .testSizes({{"N", 3000}, {"V", 27}}, {{"N", 777}, {"V", 125}}),
      buildNeighbourTranspose);
  return kernel;
}
