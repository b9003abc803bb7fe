//===- voxel_neighbours.cpp - the neighbour map from the voxel table ------===//
//
// nb[i * V + v] is the voxel at offset v of voxel i's kernel window, or -1:
// offset v = (kx * KY + ky) * KZ + kz (the weights' [Co, Kx, Ky, Kz, Ci]
// order) is the voxel at (x + (kx - KX/2) * DX, y + (ky - KY/2) * DY,
// z + (kz - KZ/2) * DZ) in the same batch; each extent is odd. The lookups
// walk each key's probe sequence (VoxelHash.h) for at most probes[0] slots,
// the longest any insertion used: a key that is not within them is not in
// the table. A program stops probing once all its lookups have settled
// (probeUntilSettled), most after a few slots.
//
// Only the lower half of the window is looked up: j at offset v of i means
// i at offset V - 1 - v of j (a window of odd extents is symmetric), so a
// hit writes both
// nb[i * V + v] and nb[j * V + V - 1 - v], and the centre is i itself. The
// upper half's entries that no hit writes stay as the caller set them: nb's
// live rows are all -1 before the launch (voxel_hash_insert fills them). Half
// the lookups for scattered stores: 114 against 380 us at 500k random voxels on
// the H200, 70 against 174 us at the res-256 shell (docs/bench.md).
// neighbour_keys then reads the rows for the sort keys.
//
// Grid: (cdiv(N * (V + 1) / 2, LOOKUPS)); each program settles LOOKUPS
// entries: voxel i's entries (V + 1) / 2 * i on are its lower half's
// lookups, then its centre.
// N sizes the grid; the live count, at most N, is read from count_ptr, so
// that one launch sequence serves every count up to N (docs/sparse-conv.md,
// "One launch sequence per size bucket").
// A program past the count returns at once (LiveCount.h).
//
//===----------------------------------------------------------------------===//

#include "LiveCount.h"
#include "VoxelHash.h"

#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

static void buildVoxelNeighbours(KernelBuilder &kb) {
  int64_t lookups = kb.param("LOOKUPS");
  constexpr int64_t probeWidth = kVoxelProbeWidth;
  Tensor coords = kb.arg("coords_ptr"), keys = kb.arg("keys_ptr");
  Tensor vals = kb.arg("vals_ptr"), probes = kb.arg("probes_ptr");
  Tensor nb = kb.arg("nb_ptr");
  Tensor log2Slots = kb.arg("LOG2_T");
  Tensor n = kb.let("count", kb.load(kb.arg("count_ptr")));
  Tensor kx = kb.arg("KX"), ky = kb.arg("KY"), kz = kb.arg("KZ");
  Tensor v = kb.arg("V");
  // A voxel's entries: the lower half of the window, the offsets before
  // the centre, (V - 1) / 2 of them, then the centre.
  Tensor centre = kb.let("centre", (v - 1) / 2);
  Tensor perVoxel = kb.let("per_voxel", centre + 1);
  Tensor first = kb.let("first", kb.programId(0) * lookups);

  ifRowLive(kb, first / perVoxel, n, [&] {
    Tensor entry = kb.let("entry", first + kb.arange(0, lookups));
    Tensor voxel = kb.let("voxel", entry / perVoxel);
    Tensor col = kb.let("col", entry % perVoxel);
    Tensor inRange = kb.let("in_range", voxel < n);
    Tensor lookup = kb.let("lookup", inRange & (col < centre));
    auto coordinate = [&](int axis) {
      return kb.load(coords + voxel * 4 + axis, inRange, 0);
    };
    // The window's offset along each axis, in voxels.
    Tensor dx = kb.let("dx", (col / (ky * kz) - kx / 2) * kb.arg("DX"));
    Tensor dy = kb.let("dy", (col / kz % ky - ky / 2) * kb.arg("DY"));
    Tensor dz = kb.let("dz", (col % kz - kz / 2) * kb.arg("DZ"));
    Tensor b = kb.let("b", coordinate(0));
    Tensor x = kb.let("x", coordinate(1) + dx),
           y = kb.let("y", coordinate(2) + dy);
    Tensor z = kb.let("z", coordinate(3) + dz);
    Tensor valid = kb.let("valid", lookup & voxelInRange(kb, b, x, y, z));
    Tensor key = kb.let("key", voxelKey(kb, b, x, y, z));
    Tensor home = kb.let("home", voxelHomeSlot(kb, key, log2Slots));
    Tensor slotMask =
        kb.let("slot_mask", (kb.constant(1, kb.i32Type()) << log2Slots) - 1);
    Tensor longest = kb.let("longest", kb.load(probes));

    // The centre's entry is the voxel itself.
    Tensor found0 =
        kb.let("found", kb.where(col == centre, voxel,
                                 kb.full({lookups}, -1, kb.i32Type())));
    Tensor pending0 = kb.let("pending", kb.cast(valid, kb.i32Type()));
    // A step probes kVoxelProbeWidth consecutive slots, their keys loaded
    // together (8 bytes a slot, two or three sectors). A key lies before
    // the first empty slot of its sequence, so a match anywhere in the step
    // is the key, and an empty slot with no match settles it absent: the
    // slots are taken in any order, and the one match loads its value.
    auto probe = [&](Tensor step, llvm::ArrayRef<Tensor> carried) -> Tensors {
      Tensor pending = kb.let("probing", carried[1] != 0);
      Tensor start = kb.let("start", home + step * probeWidth);
      Tensor at = kb.full({lookups}, -1, kb.i32Type());
      Tensor empty = kb.full({lookups}, 0, kb.i1Type());
      for (int64_t j = 0; j < probeWidth; ++j) {
        Tensor held = kb.let(
            "held", kb.load(keys + ((start + j) & slotMask), pending, -1));
        at = kb.where(held == key, j, at);
        empty = empty | (held == -1);
      }
      Tensor hit = kb.let("hit", pending & (at >= 0));
      Tensor index =
          kb.let("index", kb.load(vals + ((start + at) & slotMask), hit, -1));
      return {kb.where(hit, index, carried[0]),
              kb.where(hit | empty, 0, carried[1])};
    };
    // The longest insertion's probe in steps of kVoxelProbeWidth slots.
    Tensor steps = kb.let("steps", (longest + probeWidth - 1) / probeWidth);
    Tensors loop =
        kb.let("loop", probeUntilSettled(kb, steps, {found0, pending0},
                                         /*pending=*/1, probe));
    Tensor found = loop[0];
    kb.store(nb + voxel * v + col, found, inRange);
    // The mirrored entry of every hit.
    kb.store(nb + found * v + (v - 1 - col), voxel, lookup & (found != -1));
  });
}

TILEC_KERNEL(voxel_neighbours) {
  static const KernelDefinition kernel(
      KernelDescription("voxel_neighbours", "kernels/voxel_neighbours.cpp",
                        __LINE__)
          // Entries a program settles: each voxel's lower half of the
          // window and its centre, (V + 1) / 2 of them, laid end to end, so
          // that no lane idles on a power-of-two row's padding (13 of 16
          // entries did work at 3x3x3). The lookups wait on memory, so the
          // programs an SM holds decide: 2048 lookups a program took 168
          // registers a thread (12 of an SM's 64 warps), 512 took 83 (20
          // warps), 256 take 56 (36 warps; 0.006 to 0.031 ms off builds of
          // the res-64 to res-256 shells and 500k voxels against 512,
          // paired on an H100, docs/bench.md).
          .param(MetaParameter("LOOKUPS").powerOfTwo().byDefault(256))
          .arg(pointer("coords_ptr", "i32").divisibility(16))
          .arg(pointer("keys_ptr", "i64").divisibility(16))
          .arg(pointer("vals_ptr", "i32").divisibility(16))
          .arg(pointer("probes_ptr", "i32").divisibility(16))
          .arg(pointer("nb_ptr", "i32").divisibility(16))
          .arg(pointer("count_ptr", "i32"))
          .arg(scalar("N", "i32").doNotSpecialize())
          .arg(scalar("LOG2_T", "i32").doNotSpecialize())
          .args({scalar("KX", "i32"), scalar("KY", "i32"), scalar("KZ", "i32"),
                 scalar("DX", "i32"), scalar("DY", "i32"), scalar("DZ", "i32")})
          .arg(scalar("V", "i32").byDefault("KX * KY * KZ"))
          .candidate("num_warps=4")
          .key("LOG2_N", "ceil(log2(N))")
          .key("KX")
          .key("KY")
          .key("KZ")
          // N sizes the grid, the live count comes from count_ptr:
          // winners and cubins cached for N as the count do not match.
          .key("COUNT", "1")
          .grid({"cdiv(N * ((KX * KY * KZ + 1) // 2), LOOKUPS)"})
          .require("V == KX * KY * KZ", "V is the window's offsets")
          .require("N * V < 2147483648", "the map's offsets are 32-bit")
          .require("N * ((V + 1) // 2) + LOOKUPS <= 2147483648",
                   "the entries' indices are 32-bit")
          .require("LOG2_T >= 1", "the table has at least two slots")
          .require("LOG2_T <= 30", "slot indices are 32-bit")
          .require("KX % 2 + KY % 2 + KZ % 2 == 3",
                   "the window's extents are odd")
          .require("min(min(DX, DY), DZ) >= 1", "the dilations are positive")
          // A table built on the host for a cloud of N voxels
          // (test/reference/voxel_neighbours.cpp).
          .testSizes({{"N", 3000},
                      {"LOG2_T", 13},
                      {"KX", 3},
                      {"KY", 3},
                      {"KZ", 3},
                      {"DX", 1},
                      {"DY", 1},
                      {"DZ", 1}},
                     {{"N", 777},
                      {"LOG2_T", 11},
                      {"KX", 5},
                      {"KY", 1},
                      {"KZ", 3},
                      {"DX", 2},
                      {"DY", 1},
                      {"DZ", 1}}),
      buildVoxelNeighbours);
  return kernel;
}
