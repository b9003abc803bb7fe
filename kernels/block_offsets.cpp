//===- block_offsets.cpp - the offsets each row block of the GEMM visits --===//
//
// Row block b of the masked GEMM (sorted rows [b * BLOCK_M, (b + 1) *
// BLOCK_M)) visits the offsets v for which some of its rows have a
// neighbour, in ascending order: bit v % 32 of the row's word v / 32 in
// row_masks (W = cdiv(V, 32) words a row, neighbour_transpose's; 4W bytes
// a row read where the map's column would be 4V). This kernel writes their
// count to blk_count[b] and the offsets themselves to blk_off[b * V ..
// b * V + blk_count[b]), each with the 64-row groups of the block that
// have a neighbour there: entry = v | groups << 16, bit g of groups for rows
// [64 g, 64 g + 64) of the block (the convolution's warpgroups skip the
// groups whose bit is clear). A block's list starts at a fixed stride of V
// entries (the most it can hold), so one launch writes the counts and the
// lists, with no scan of the counts between. Program 0 also writes the
// grid's block count to blocks_ptr, the count the block sort reads.
//
// Grid: (cdiv(N, BLOCK_M)).
// N sizes the grid; the live count, at most N, is read from count_ptr, so
// that one launch sequence serves every count up to N (docs/sparse-conv.md,
// "One launch sequence per size bucket").
// A block's loop runs over its live row tiles only, so a block past the
// count stores its count (V + 1, which sorts it last) at once (LiveCount.h).
//
//===----------------------------------------------------------------------===//

#include "LiveCount.h"

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

#include <algorithm>

using namespace tilec;
using namespace tilec::kernel;

static void buildBlockOffsets(KernelBuilder &kb) {
  int64_t blockM = kb.param("BLOCK_M"), paddedOffsets = kb.param("VP");
  int64_t rowTile = kb.param("ROW_TILE");
  Tensor rowMasks = kb.arg("row_masks_ptr");
  Tensor blkCount = kb.arg("blk_count_ptr"), blkOff = kb.arg("blk_off_ptr");
  Tensor v = kb.arg("V");
  Tensor n = kb.let("count", kb.load(kb.arg("count_ptr")));

  Tensor block = kb.let("block", kb.programId(0));
  Tensor offsets = kb.let("offsets", kb.arange(0, paddedOffsets));
  // The masks' words as [W, 32] bits ([1, VP] below 32 offsets): a row's
  // words ORed over a tile of rows, then split into one lane per offset.
  int64_t wordsPadded = std::max<int64_t>(paddedOffsets / 32, 1);
  int64_t bitsPerWord = std::min<int64_t>(paddedOffsets, 32);
  Tensor words = kb.let("words", (v + 31) / 32);
  Tensor word = kb.let("word", kb.expandDims(kb.arange(0, wordsPadded), 0));
  Tensor bitOfWord =
      kb.let("bit_of_word", kb.expandDims(kb.arange(0, bitsPerWord), 0));
  Tensor groups0 = kb.let("groups", kb.zeros({paddedOffsets}, kb.i32Type()));
  // The block's rows in tiles of ROW_TILE (at most 64, a power of two: a
  // tile lies in one 64-row group). A tile loads its rows' words once
  // ([ROW_TILE, W], not a word per row and offset) and ORs them, so a
  // block costs a load per row and word.
  auto rows = [&](Tensor t, llvm::ArrayRef<Tensor> carried) -> Tensors {
    Tensor row = kb.let("row", kb.expandDims(block * blockM + t * rowTile +
                                                 kb.arange(0, rowTile),
                                             1)); // [:, None]
    Tensor loaded = kb.let(
        "loaded", kb.load(rowMasks + row * words + word,
                          (row < n) & (word < words), 0));
    Tensor any = kb.let("any", kb.expandDims(kb.reduce(loaded, 0,
                                                       tile::ReduceKind::Or),
                                             1)); // [W, 1]
    Tensor bits = kb.let(
        "bits", kb.binary(BinaryOpKind::ShrU, any, bitOfWord) & 1); // [W, 32]
    Tensor has = kb.let("has", kb.where(offsets < v,
                                        kb.reshape(bits, {paddedOffsets}), 0));
    Tensor group = kb.let("group", (t * rowTile) / 64);
    return {carried[0] | (has << group)};
  };
  Tensors loop =
      kb.let("loop",
             kb.forRange(
                 0, liveTrips(kb, block * blockM, n, rowTile, blockM / rowTile),
                 1, {groups0}, rows));
  Tensor groups = loop[0];
  Tensor active = kb.let("active", kb.cast(groups != 0, kb.i32Type()));
  // A block past the live count lists no offset; its count reads V + 1,
  // more than any live block's (each has its centre), so that the block
  // sort puts it after them: the live blocks' order is then the start of
  // the capacity's, where a recorded build writes it in place.
  kb.store(blkCount + block,
           kb.where(block * blockM < n, kb.sum(active, 0), v + 1));
  // The block sort's key count: every block of the grid, written here
  // rather than by a launch of its own.
  kb.ifThen(block == 0,
            [&] { kb.store(kb.arg("blocks_ptr"), kb.numPrograms(0)); });
  Tensor position = kb.let("position", block * v + kb.cumsum(active, 0) - 1);
  kb.store(blkOff + position, offsets | (groups << 16), active != 0);
}

TILEC_KERNEL(block_offsets) {
  static const KernelDefinition kernel(
      KernelDescription("block_offsets", "kernels/block_offsets.cpp", __LINE__)
          .param(MetaParameter("BLOCK_M").powerOfTwo().byDefault(64))
          .param(MetaParameter("VP").powerOfTwo().byDefault(32).derivedAs(
              "next_power_of_2(V)"))
          .param(MetaParameter("ROW_TILE")
                     .powerOfTwo()
                     .byDefault(64)
                     .derivedAs("min(64, BLOCK_M)"))
          .arg(pointer("row_masks_ptr", "i32").divisibility(16))
          .arg(pointer("blk_count_ptr", "i32").divisibility(16))
          .arg(pointer("blk_off_ptr", "i32").divisibility(16))
          .arg(pointer("blocks_ptr", "i32"))
          .arg(pointer("count_ptr", "i32"))
          .arg(scalar("N", "i32").doNotSpecialize())
          .arg(scalar("V", "i32"))
          .candidate("num_warps=4")
          .key("LOG2_N", "ceil(log2(N))")
          .key("V")
          .key("BLOCK_M")
          // The entries' format (offset | 64-row groups << 16): winners and
          // cubins cached for plain offsets do not match these keys.
          .key("ENTRY_FORMAT", "2")
          // Block b's list at b * V, its count beside it, in one launch:
          // winners and cubins cached for the lists at scanned starts (a
          // launch for the counts, another for the lists) do not match.
          .key("LIST_STRIDE", "1")
          // A block past the live count reads V + 1, not 0: winners and
          // cubins cached when it sorted first do not match these keys.
          .key("PAST_COUNT", "1")
          // Reads the rows' masks, not the map: winners and cubins cached
          // for the map's input do not match these keys.
          .key("INPUT_FORMAT", "2")
          // N sizes the grid, the live count comes from count_ptr:
          // winners and cubins cached for N as the count do not match.
          .key("COUNT", "1")
          .grid({"cdiv(N, BLOCK_M)"})
          .require("VP >= V", "a tile column holds every offset")
          .require("ROW_TILE <= BLOCK_M", "a row tile lies inside its block")
          .require("ROW_TILE <= 64", "a row tile lies inside a 64-row group")
          .require("BLOCK_M <= 1024", "an entry holds 16 row groups")
          .require("V <= 65536", "an entry keeps its offset in 16 bits")
          .require("N * V < 2147483648", "the map's offsets are 32-bit")
          .testSizes({{"N", 3000}, {"V", 27}}, {{"N", 777}, {"V", 125}}),
      buildBlockOffsets);
  return kernel;
}
