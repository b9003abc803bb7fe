//===- neighbour_keys.cpp - the rows' sort keys from the neighbour map ----===//
//
// Per voxel i, from its row of the neighbour map (nb[i * V + v], -1 where
// offset v has no neighbour; voxel_neighbours): sort_key[i], which orders
// the rows of the masked GEMM: the offsets that have a neighbour as a
// bitmask, offset v at bit rank(v) (V <= 32) or floor(rank(v) * 32 / V),
// read as a Gray code (its rank in the reflected Gray sequence); and
// pairs[0] += the number of (voxel, offset) pairs with a neighbour (the
// convolution's useful work). A kernel of its own because voxel_neighbours
// writes half of each row from other voxels' lookups.
//
// Why this key: a row block of the convolution loops over every offset any
// of its rows has, so rows that sort next to each other should have similar
// masks. Masks that are adjacent in Gray order differ in few bits, and
// rank(v) puts the offsets whose bits split a surface's voxels most evenly
// on the most significant bits: offsets are ranked by the number of axes
// they move along, corners (3) lowest, then faces (1), edges (2) and the
// centre (0), ties by v. On the shells of docs/sparse-conv.md this cuts the
// blocks' computed pairs over the useful ones at res 128 from 1.38 to 1.29
// (128-row blocks) and from 1.26 to 1.20 (64 rows).
//
// Grid: (cdiv(N, BLOCK * TILES)); each program reads TILES tiles of BLOCK
// rows of VP offsets.
// N sizes the grid; the live count, at most N, is read from count_ptr, so
// that one launch sequence serves every count up to N (docs/sparse-conv.md,
// "One launch sequence per size bucket").
// A program past the count returns at once (LiveCount.h).
//
//===----------------------------------------------------------------------===//

#include "LiveCount.h"

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

/// rank(v) of each offset of the padded row: its place among the V offsets
/// ordered by (class, v), where an offset that moves along 3, 1, 2 or 0 axes
/// is of class 0 (corners), 1 (faces), 2 (edges) or 3 (the centre); along
/// an axis of K offsets, offset K / 2 is the one that does not move (the
/// centre of an odd window; of an even one, the first past its middle).
/// Counted by loops over the offsets u = (ux * KY + uy) * KZ + uz, one [VP]
/// compare each, so that the ranks cost the lookups no registers; u's
/// class comes from its loop indices, since the divisions that split an
/// offset into them, per u, were most of the kernel's time.
static Tensor offsetRanks(KernelBuilder &kb, Tensor kx, Tensor ky, Tensor kz) {
  auto moves = [&](Tensor axisOffset, Tensor size) {
    return kb.cast(axisOffset != size / 2, kb.i32Type());
  };
  auto classOfAxes = [&](Tensor axes) {
    return kb.where(axes == 3, 0,
                    kb.where(axes == 1, 1, kb.where(axes == 2, 2, 3)));
  };
  Tensor offset = kb.arange(0, kb.param("VP"));
  Tensor offsetClass =
      kb.let("offset_class",
             classOfAxes(moves(offset / (ky * kz), kx) +
                         moves(offset / kz % ky, ky) + moves(offset % kz, kz)));
  auto alongX = [&](Tensor ux, llvm::ArrayRef<Tensor> ranks) -> Tensors {
    auto alongY = [&](Tensor uy, llvm::ArrayRef<Tensor> ranks) -> Tensors {
      Tensor movesXY = moves(ux, kx) + moves(uy, ky);
      Tensor row = (ux * ky + uy) * kz;
      auto alongZ = [&](Tensor uz, llvm::ArrayRef<Tensor> ranks) -> Tensors {
        Tensor uClass = classOfAxes(movesXY + moves(uz, kz));
        Tensor before = (uClass < offsetClass) |
                        ((uClass == offsetClass) & (row + uz < offset));
        return {ranks[0] + kb.cast(before, kb.i32Type())};
      };
      return kb.forRange(0, kz, 1, {ranks[0]}, alongZ);
    };
    return kb.forRange(0, ky, 1, {ranks[0]}, alongY);
  };
  Tensor zero = kb.full({kb.param("VP")}, 0, kb.i32Type());
  return kb.let("ranks", kb.forRange(0, kx, 1, {zero}, alongX)[0]);
}

/// The rank of Gray code `code` in the reflected Gray sequence: the prefix
/// XOR of its bits from the top (logical shifts: bit 31 may be set).
static Tensor grayRank(KernelBuilder &kb, Tensor code) {
  Tensor rank = code;
  for (int shift : {1, 2, 4, 8, 16})
    rank = rank ^ kb.binary(BinaryOpKind::ShrU, rank, shift);
  return kb.let("gray_rank", rank);
}

static void buildNeighbourKeys(KernelBuilder &kb) {
  int64_t block = kb.param("BLOCK"), paddedOffsets = kb.param("VP");
  int64_t tiles = kb.param("TILES");
  Tensor nb = kb.arg("nb_ptr"), sortKey = kb.arg("sort_key_ptr");
  Tensor pairs = kb.arg("pairs_ptr");
  Tensor v = kb.arg("V");
  Tensor n = kb.let("count", kb.load(kb.arg("count_ptr")));
  Tensor kx = kb.arg("KX"), ky = kb.arg("KY"), kz = kb.arg("KZ");

  Tensor first = kb.let("first", kb.programId(0) * (block * tiles));
  ifRowLive(kb, first, n, [&] {
    // The ranks once a program, for its TILES tiles of BLOCK rows: their
    // loops over the window's offsets, not the rows' loads, were most of
    // the kernel's time when every program of 64 rows counted them.
    Tensor rank = kb.let("rank", kb.expandDims(offsetRanks(kb, kx, ky, kz), 0));
    Tensor bit = kb.let("bit", kb.where(v <= 32, rank, rank * 32 / v));
    Tensor cols = kb.let("cols", kb.expandDims(kb.arange(0, paddedOffsets), 0));
    auto rowTile = [&](Tensor t, llvm::ArrayRef<Tensor> carried) -> Tensors {
      Tensor voxel =
          kb.let("voxel", first + t * block + kb.arange(0, block));
      Tensor inRange = kb.let("in_range", voxel < n);
      Tensor rows = kb.let("rows", kb.expandDims(voxel, 1));
      Tensor read = kb.let("read", kb.expandDims(inRange, 1) & (cols < v));
      Tensor has =
          kb.let("has", kb.load(nb + rows * v + cols, read, -1) != -1);
      Tensor bits = kb.let(
          "bits", kb.where(has, kb.constant(1, kb.i32Type()) << bit, 0));
      Tensor mask = kb.let("mask", kb.reduce(bits, 1, tile::ReduceKind::Or));
      kb.store(sortKey + voxel, grayRank(kb, mask), inRange);
      return {carried[0] + kb.sum(kb.sum(kb.cast(has, kb.i32Type()), 1), 0)};
    };
    Tensors loop = kb.let(
        "loop", kb.forRange(0, liveTrips(kb, first, n, block, tiles), 1,
                            {kb.constant(0, kb.i32Type())}, rowTile));
    kb.atomicRmw(tile::AtomicRMWKind::Add, pairs,
                 kb.cast(loop[0], kb.i64Type()));
  });
}

TILEC_KERNEL(neighbour_keys) {
  static const KernelDefinition kernel(
      KernelDescription("neighbour_keys", "kernels/neighbour_keys.cpp",
                        __LINE__)
          // The offsets padded to a power of two, one tile column each, and
          // rows per program so that a tile holds 2048 entries.
          .param(MetaParameter("VP").powerOfTwo().byDefault(32).derivedAs(
              "next_power_of_2(KX * KY * KZ)"))
          .param(MetaParameter("BLOCK").powerOfTwo().byDefault(64).derivedAs(
              "max(16, cdiv(2048, next_power_of_2(KX * KY * KZ)))"))
          // Tiles of BLOCK rows a program, which counts the offsets' ranks
          // once for all of them.
          .param(MetaParameter("TILES").powerOfTwo().byDefault(8))
          .arg(pointer("nb_ptr", "i32").divisibility(16))
          .arg(pointer("sort_key_ptr", "i32").divisibility(16))
          .arg(pointer("pairs_ptr", "i64").divisibility(16))
          .arg(pointer("count_ptr", "i32"))
          .arg(scalar("N", "i32").doNotSpecialize())
          .arg(scalar("KX", "i32"))
          .arg(scalar("KY", "i32"))
          .arg(scalar("KZ", "i32"))
          .arg(scalar("V", "i32").byDefault("KX * KY * KZ"))
          .candidate("num_warps=4")
          .key("LOG2_N", "ceil(log2(N))")
          .key("KX")
          .key("KY")
          .key("KZ")
          // N sizes the grid, the live count comes from count_ptr:
          // winners and cubins cached for N as the count do not match.
          .key("COUNT", "1")
          .grid({"cdiv(N, BLOCK * TILES)"})
          .require("VP >= KX * KY * KZ", "a tile row holds every offset")
          .require("V == KX * KY * KZ", "V is the window's offsets")
          .require("N * V < 2147483648", "the map's offsets are 32-bit")
          // The host oracle's map of a cloud of N voxels
          // (test/reference/neighbour_keys.cpp).
          .testSizes({{"N", 3000}, {"KX", 3}, {"KY", 3}, {"KZ", 3}},
                     {{"N", 777}, {"KX", 5}, {"KY", 5}, {"KZ", 5}}),
      buildNeighbourKeys);
  return kernel;
}
