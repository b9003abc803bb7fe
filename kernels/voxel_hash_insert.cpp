//===- voxel_hash_insert.cpp - voxels into an open-addressing table -------===//
//
// The first step of the sparse convolution's maps (docs/sparse-conv.md):
// voxel i claims the first free slot of its key's probe sequence
// (VoxelHash.h) with atomic_cas and writes its index beside the key. Which
// voxel wins a contended slot depends on timing, but the lookups that follow
// (voxel_neighbours) find every key whatever slot it took, so the maps do
// not: they are the same in every process.
//
// status[i]: 0 inserted, 1 its key was already in the table (a duplicate
// voxel), 2 no free slot in MAX_PROBES probes (the caller grows the table),
// 3 a coordinate outside [0, 2^16). probes[0] is raised (atomic max) to the
// longest probe sequence an insertion used: a present key is found within
// that many probes, which bounds the lookups' loop. probes[1] is raised to
// the largest status, so that the caller reads two words to know whether
// every voxel went in.
//
// nb[i * V + v] = -1 for each live voxel i and v < V: the neighbour map
// voxel_neighbours writes next is all -1 first, since its lookups write the
// hits of the window's upper half from the other voxel. Written here, at
// the live rows only, instead of a memset of the capacity's rows before the
// lookups (a recorded build sizes its buffers by its bucket's capacity).
//
// Grid: (cdiv(N, BLOCK)).
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

// The program's live rows of nb, contiguous: FILL elements a step.
static void fillNeighbourRows(KernelBuilder &kb, Tensor first, Tensor n) {
  int64_t fill = kb.param("FILL");
  Tensor nb = kb.arg("nb_ptr"), v = kb.arg("V");
  Tensor start = kb.let("fill_start", first * v);
  Tensor end = kb.let("fill_end", kb.minimum(first + kb.param("BLOCK"), n) * v);
  Tensor element = kb.let("fill_element", kb.arange(0, fill));
  kb.forRange(start, end, fill, {}, [&](Tensor at, llvm::ArrayRef<Tensor>) {
    Tensor index = kb.let("fill_index", at + element);
    kb.store(nb + index, kb.full({fill}, -1, kb.i32Type()), index < end);
    return Tensors{};
  });
}

static void buildVoxelHashInsert(KernelBuilder &kb) {
  int64_t block = kb.param("BLOCK"), maxProbes = kb.param("MAX_PROBES");
  Tensor coords = kb.arg("coords_ptr"), keys = kb.arg("keys_ptr");
  Tensor vals = kb.arg("vals_ptr"), status = kb.arg("status_ptr");
  Tensor probes = kb.arg("probes_ptr");
  Tensor log2Slots = kb.arg("LOG2_T");
  Tensor n = kb.let("count", kb.load(kb.arg("count_ptr")));

  ifRowLive(kb, kb.programId(0) * block, n, [&] {
    fillNeighbourRows(kb, kb.programId(0) * block, n);
    Tensor voxel =
        kb.let("voxel", kb.programId(0) * block + kb.arange(0, block));
    Tensor inRange = kb.let("in_range", voxel < n);
    auto coordinate = [&](int axis) {
      return kb.load(coords + voxel * 4 + axis, inRange, 0);
    };
    Tensor b = kb.let("b", coordinate(0)), x = kb.let("x", coordinate(1));
    Tensor y = kb.let("y", coordinate(2)), z = kb.let("z", coordinate(3));
    Tensor valid = kb.let("valid", inRange & voxelInRange(kb, b, x, y, z));
    Tensor key = kb.let("key", voxelKey(kb, b, x, y, z));
    Tensor home = kb.let("home", voxelHomeSlot(kb, key, log2Slots));
    Tensor slotMask =
        kb.let("slot_mask", (kb.constant(1, kb.i32Type()) << log2Slots) - 1);

    // Carried: still probing (0/1), the status so far, probes used.
    Tensor pending0 = kb.let("pending", kb.cast(valid, kb.i32Type()));
    Tensor status0 = kb.let("status", kb.zeros({block}, kb.i32Type()));
    Tensor used0 = kb.let("used", kb.zeros({block}, kb.i32Type()));
    auto probe = [&](Tensor p, llvm::ArrayRef<Tensor> carried) -> Tensors {
      Tensor pending = kb.let("probing", carried[0] != 0);
      Tensor slot = kb.let("slot", (home + p) & slotMask);
      Tensor old = kb.let("old", kb.atomicCas(keys + slot, -1, key, pending));
      Tensor won = kb.let("won", pending & (old == -1));
      Tensor duplicate = kb.let("duplicate", pending & (old == key));
      kb.store(vals + slot, voxel, won);
      Tensor stillPending =
          kb.let("still", kb.where(won | duplicate, 0, carried[0]));
      return {stillPending, kb.where(duplicate, 1, carried[1]),
              kb.where(won, p + 1, carried[2])};
    };
    // Most voxels settle in a few probes: the program stops once all have.
    Tensors loop = kb.let(
        "loop", probeUntilSettled(kb, kb.constant(maxProbes, kb.i32Type()),
                                  {pending0, status0, used0},
                                  /*pending=*/0, probe));
    Tensor full = kb.let("full", kb.where(loop[0] != 0, 2, loop[1]));
    Tensor final = kb.let("final", kb.where(valid, full, 3));
    kb.store(status + voxel, final, inRange);
    kb.atomicRmw(tile::AtomicRMWKind::Max, probes, kb.max(loop[2], 0));
    kb.atomicRmw(tile::AtomicRMWKind::Max, probes + 1,
                 kb.max(kb.where(inRange, final, 0), 0));
  });
}

TILEC_KERNEL(voxel_hash_insert) {
  static const KernelDefinition kernel(
      KernelDescription("voxel_hash_insert", "kernels/voxel_hash_insert.cpp",
                        __LINE__)
          .param(MetaParameter("BLOCK").powerOfTwo().byDefault(256))
          .param(MetaParameter("MAX_PROBES").atLeast(1).byDefault(64))
          // nb's elements a fill step stores: 8 a thread of 4 warps.
          .param(MetaParameter("FILL").powerOfTwo().byDefault(1024))
          .arg(pointer("coords_ptr", "i32").divisibility(16))
          .arg(pointer("keys_ptr", "i64").divisibility(16))
          .arg(pointer("vals_ptr", "i32").divisibility(16))
          .arg(pointer("status_ptr", "i32").divisibility(16))
          .arg(pointer("probes_ptr", "i32").divisibility(16))
          .arg(pointer("nb_ptr", "i32").divisibility(16))
          .arg(pointer("count_ptr", "i32"))
          .arg(scalar("N", "i32").doNotSpecialize())
          .arg(scalar("LOG2_T", "i32").doNotSpecialize())
          .arg(scalar("V", "i32"))
          .candidate("BLOCK=256,num_warps=4")
          .key("LOG2_N", "ceil(log2(N))")
          // N sizes the grid, the live count comes from count_ptr:
          // winners and cubins cached for N as the count do not match.
          .key("COUNT", "1")
          .grid({"cdiv(N, BLOCK)"})
          .require("N * 4 < 2147483648", "coordinate offsets are 32-bit")
          .require("N * V + FILL <= 2147483648",
                   "neighbour map offsets are 32-bit")
          .require("V >= 1", "the window has an offset")
          .require("LOG2_T >= 1", "the table has at least two slots")
          .require("LOG2_T <= 30", "slot indices are 32-bit")
          // A cloud of N voxels into a table of 2^LOG2_T slots
          // (test/reference/voxel_hash_insert.cpp).
          .testSizes({{"N", 3000}, {"LOG2_T", 13}, {"V", 27}},
                     {{"N", 777}, {"LOG2_T", 11}, {"V", 27}}),
      buildVoxelHashInsert);
  return kernel;
}
