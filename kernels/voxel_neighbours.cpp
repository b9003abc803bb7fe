//===- voxel_neighbours.cpp - the neighbour map from the voxel table ------===//
//
// nb[i * V + v] is the voxel at offset v of voxel i's kernel window, or -1:
// offset v = (kx * KS + ky) * KS + kz (the weights' [Co, Kx, Ky, Kz, Ci]
// order) is the voxel at (x + (kx - KS/2) * DIL, y + ..., z + ...) in the
// same batch. The lookups walk each key's probe sequence (VoxelHash.h) for
// at most probes[0] slots, the longest any insertion used: a key that is
// not within them is not in the table.
//
// Also per voxel, sort_key[i], which orders the rows of the masked GEMM:
// the offsets that have a neighbour as a bitmask, offset v at bit rank(v)
// (V <= 32) or floor(rank(v) * 32 / V), read as a Gray code (its rank in
// the reflected Gray sequence); and pairs[0] += the number of (voxel,
// offset) pairs with a neighbour (the convolution's useful work).
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
// Grid: (cdiv(N, BLOCK)); each program looks up BLOCK voxels x VP offsets.
//
//===----------------------------------------------------------------------===//

#include "VoxelHash.h"

#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

/// rank(v) of each offset of the padded row: its place among the V offsets
/// ordered by (class, v), where an offset that moves along 3, 1, 2 or 0 axes
/// is of class 0 (corners), 1 (faces), 2 (edges) or 3 (the centre). Counted
/// by a loop over the V offsets u, one [VP] compare each, so that the
/// ranks cost the lookups no registers.
static Tensor offsetRanks(KernelBuilder &kb, Tensor kernelSize, Tensor v) {
  Tensor radius = kernelSize / 2;
  auto classOf = [&](Tensor offset) {
    auto moves = [&](Tensor axisOffset) {
      return kb.cast(axisOffset != radius, kb.i32Type());
    };
    Tensor axes = moves(offset / (kernelSize * kernelSize)) +
                  moves(offset / kernelSize % kernelSize) +
                  moves(offset % kernelSize);
    return kb.where(axes == 3, 0,
                    kb.where(axes == 1, 1, kb.where(axes == 2, 2, 3)));
  };
  Tensor offset = kb.arange(0, kb.param("VP"));
  Tensor offsetClass = kb.let("offset_class", classOf(offset));
  auto count = [&](Tensor u, llvm::ArrayRef<Tensor> carried) -> Tensors {
    Tensor uClass = classOf(u);
    Tensor before =
        (uClass < offsetClass) | ((uClass == offsetClass) & (u < offset));
    return {carried[0] + kb.cast(before, kb.i32Type())};
  };
  Tensor zero = kb.full({kb.param("VP")}, 0, kb.i32Type());
  return kb.let("ranks", kb.forRange(0, v, 1, {zero}, count)[0]);
}

/// The rank of Gray code `code` in the reflected Gray sequence: the prefix
/// XOR of its bits from the top (logical shifts: bit 31 may be set).
static Tensor grayRank(KernelBuilder &kb, Tensor code) {
  Tensor rank = code;
  for (int shift : {1, 2, 4, 8, 16})
    rank = rank ^ kb.binary(BinaryOpKind::ShrU, rank, shift);
  return kb.let("gray_rank", rank);
}

static void buildVoxelNeighbours(KernelBuilder &kb) {
  int64_t block = kb.param("BLOCK"), paddedOffsets = kb.param("VP");
  Tensor coords = kb.arg("coords_ptr"), keys = kb.arg("keys_ptr");
  Tensor vals = kb.arg("vals_ptr"), probes = kb.arg("probes_ptr");
  Tensor nb = kb.arg("nb_ptr"), sortKey = kb.arg("sort_key_ptr");
  Tensor pairs = kb.arg("pairs_ptr");
  Tensor n = kb.arg("N"), log2Slots = kb.arg("LOG2_T");
  Tensor kernelSize = kb.arg("KS"), dilation = kb.arg("DIL");
  Tensor v = kb.arg("V");

  Tensor voxel = kb.let("voxel", kb.programId(0) * block + kb.arange(0, block));
  Tensor inRange = kb.let("in_range", voxel < n);
  Tensor offset = kb.let("offset", kb.arange(0, paddedOffsets));
  Tensor rows = kb.let("rows", kb.expandDims(voxel, 1));  // [:, None]
  Tensor cols = kb.let("cols", kb.expandDims(offset, 0)); // [None, :]
  Tensor lookup = kb.let("lookup", kb.expandDims(inRange, 1) & (cols < v));
  auto coordinate = [&](int axis) {
    return kb.expandDims(kb.load(coords + voxel * 4 + axis, inRange, 0), 1);
  };
  // The window's offset along each axis, in voxels.
  Tensor radius = kb.let("radius", kernelSize / 2);
  Tensor dx =
      kb.let("dx", (cols / (kernelSize * kernelSize) - radius) * dilation);
  Tensor dy =
      kb.let("dy", (cols / kernelSize % kernelSize - radius) * dilation);
  Tensor dz = kb.let("dz", (cols % kernelSize - radius) * dilation);
  Tensor b = kb.let("b", kb.broadcastTo(coordinate(0), {block, paddedOffsets}));
  Tensor x = kb.let("x", coordinate(1) + dx),
         y = kb.let("y", coordinate(2) + dy);
  Tensor z = kb.let("z", coordinate(3) + dz);
  Tensor valid = kb.let("valid", lookup & voxelInRange(kb, b, x, y, z));
  Tensor key = kb.let("key", voxelKey(kb, b, x, y, z));
  Tensor home = kb.let("home", voxelHomeSlot(kb, key, log2Slots));
  Tensor slotMask =
      kb.let("slot_mask", (kb.constant(1, kb.i32Type()) << log2Slots) - 1);
  Tensor longest = kb.let("longest", kb.load(probes));

  Tensor found0 =
      kb.let("found", kb.full({block, paddedOffsets}, -1, kb.i32Type()));
  Tensor pending0 = kb.let("pending", kb.cast(valid, kb.i32Type()));
  auto probe = [&](Tensor p, llvm::ArrayRef<Tensor> carried) -> Tensors {
    Tensor pending = kb.let("probing", carried[1] != 0);
    Tensor slot = kb.let("slot", (home + p) & slotMask);
    Tensor held = kb.let("held", kb.load(keys + slot, pending, -1));
    Tensor hit = kb.let("hit", pending & (held == key));
    Tensor empty = kb.let("empty", pending & (held == -1));
    Tensor index = kb.let("index", kb.load(vals + slot, hit, -1));
    return {kb.where(hit, index, carried[0]),
            kb.where(hit | empty, 0, carried[1])};
  };
  Tensors loop =
      kb.let("loop", kb.forRange(0, longest, 1, {found0, pending0}, probe));
  Tensor found = loop[0];
  kb.store(nb + rows * v + cols, found, lookup);

  Tensor has = kb.let("has", found != -1);
  Tensor rank =
      kb.let("rank", kb.expandDims(offsetRanks(kb, kernelSize, v), 0));
  Tensor bit = kb.let("bit", kb.where(v <= 32, rank, rank * 32 / v));
  Tensor bits =
      kb.let("bits", kb.where(has, kb.constant(1, kb.i32Type()) << bit, 0));
  Tensor mask = kb.let("mask", kb.reduce(bits, 1, tile::ReduceKind::Or));
  kb.store(sortKey + voxel, grayRank(kb, mask), inRange);
  Tensor count =
      kb.let("count", kb.sum(kb.sum(kb.cast(has, kb.i64Type()), 1), 0));
  kb.atomicRmw(tile::AtomicRMWKind::Add, pairs, count);
}

TILEC_KERNEL(voxel_neighbours) {
  static const KernelDefinition kernel(
      KernelDescription("voxel_neighbours", "kernels/voxel_neighbours.cpp",
                        __LINE__)
          // The offsets padded to a power of two, one tile column each, and
          // voxels per program so that a tile holds 2048 lookups.
          .param(MetaParameter("VP").powerOfTwo().byDefault(32).derivedAs(
              "next_power_of_2(KS * KS * KS)"))
          .param(MetaParameter("BLOCK").powerOfTwo().byDefault(64).derivedAs(
              "max(16, cdiv(2048, next_power_of_2(KS * KS * KS)))"))
          .arg(pointer("coords_ptr", "i32").divisibility(16))
          .arg(pointer("keys_ptr", "i64").divisibility(16))
          .arg(pointer("vals_ptr", "i32").divisibility(16))
          .arg(pointer("probes_ptr", "i32").divisibility(16))
          .arg(pointer("nb_ptr", "i32").divisibility(16))
          .arg(pointer("sort_key_ptr", "i32").divisibility(16))
          .arg(pointer("pairs_ptr", "i64").divisibility(16))
          .arg(scalar("N", "i32").doNotSpecialize())
          .arg(scalar("LOG2_T", "i32").doNotSpecialize())
          .arg(scalar("KS", "i32"))
          .arg(scalar("DIL", "i32"))
          .arg(scalar("V", "i32").byDefault("KS * KS * KS"))
          .candidate("num_warps=4")
          .key("LOG2_N", "ceil(log2(N))")
          .key("KS")
          .grid({"cdiv(N, BLOCK)"})
          .require("VP >= KS * KS * KS", "a tile row holds every offset")
          .require("N * V < 2147483648", "the map's offsets are 32-bit")
          .require("LOG2_T >= 1", "the table has at least two slots")
          .require("LOG2_T <= 30", "slot indices are 32-bit")
          .require("KS % 2 == 1", "the kernel size is odd")
          .require("DIL >= 1", "the dilation is positive")
          // A table built on the host for a cloud of N voxels
          // (test/reference/voxel_neighbours.cpp).
          .testSizes({{"N", 3000}, {"LOG2_T", 13}, {"KS", 3}, {"DIL", 1}},
                     {{"N", 777}, {"LOG2_T", 11}, {"KS", 5}, {"DIL", 2}}),
      buildVoxelNeighbours);
  return kernel;
}
