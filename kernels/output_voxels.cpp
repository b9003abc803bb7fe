//===- output_voxels.cpp - a strided convolution's outputs and maps -------===//
//
// The second step of a strided convolution's maps (docs/sparse-conv.md,
// "Strided and inverse convolutions"), over the candidates of
// strided_candidates sorted by key with a stable sort that carried their
// values: equal keys are one output voxel, and the outputs are the distinct
// keys in ascending order (CELLS, no output, sorts last), which is
// ascending (batch, x, y, z). Sorted candidate s starts a run when its key
// is not CELLS and differs from key s - 1.
//
// FILL = 0: counts[p] = the runs that start among program p's BLOCK
// candidates, and pairs[0] += its candidates that are outputs (the maps'
// pairs: what the convolution computes). An exclusive scan of the counts
// gives each program's first output (scan[p]) and the outputs' count
// (scan[programs]).
//
// FILL = 1: candidate s belongs to output o = scan[p] + (the runs started
// in program p up to s) - 1. A run's start writes the output's coordinates
// (its key decoded), and every candidate, of value i * V + v, writes both
// maps' entries: nb[o * V + v] = i (output o reads input i at offset v: the
// strided convolution's map) and nbi[i * V + v] = o (the inverse
// convolution's). An output reads at most one input at an offset and an
// input is read by at most one output at an offset, so no entry is written
// twice, and the maps are the same in every process; the entries no
// candidate writes keep what the caller set them to (-1). Unless two input
// voxels are the same: then both write each of their nb entries, which
// their atomic_cas from -1 finds, and status[0] is raised (atomic max) to
// 2, so that the caller reports the duplicate instead of racy maps.
//
// Grid: (cdiv(N, BLOCK)).
//
//===----------------------------------------------------------------------===//

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

static void buildOutputVoxels(KernelBuilder &kb) {
  int64_t block = kb.param("BLOCK");
  bool fill = kb.param("FILL");
  Tensor keys = kb.arg("keys_ptr"), vals = kb.arg("vals_ptr");
  Tensor counts = kb.arg("counts_ptr"), scan = kb.arg("scan_ptr");
  Tensor outCoords = kb.arg("out_coords_ptr");
  Tensor nb = kb.arg("nb_ptr"), nbi = kb.arg("nbi_ptr");
  Tensor pairs = kb.arg("pairs_ptr"), status = kb.arg("status_ptr");
  Tensor n = kb.arg("N"), v = kb.arg("V");
  Tensor ox = kb.arg("OX"), oy = kb.arg("OY"), oz = kb.arg("OZ");
  Tensor cells = kb.let("cells", kb.arg("B") * ox * oy * oz);

  Tensor program = kb.let("program", kb.programId(0));
  Tensor index = kb.let("index", program * block + kb.arange(0, block));
  Tensor inRange = kb.let("in_range", index < n);
  Tensor key = kb.let("key", kb.load(keys + index, inRange, cells));
  Tensor previous = kb.let(
      "previous", kb.load(keys + (index - 1), inRange & (index > 0), -1));
  Tensor valid = kb.let("valid", inRange & (key != cells));
  Tensor start = kb.let("start", valid & (key != previous));
  Tensor starts = kb.let("starts", kb.cast(start, kb.i32Type()));
  if (!fill) {
    kb.store(counts + program, kb.sum(starts, 0));
    kb.atomicRmw(tile::AtomicRMWKind::Add, pairs,
                 kb.sum(kb.cast(valid, kb.i64Type()), 0));
    return;
  }
  Tensor output =
      kb.let("output", kb.load(scan + program) + kb.cumsum(starts, 0) - 1);
  // key = ((b * OX + x) * OY + y) * OZ + z.
  Tensor z = kb.let("z", key % oz);
  Tensor xy = kb.let("xy", key / oz);
  Tensor y = kb.let("y", xy % oy);
  Tensor bx = kb.let("bx", xy / oy);
  Tensor x = kb.let("x", bx % ox);
  Tensor b = kb.let("b", bx / ox);
  Tensor row = kb.let("row", outCoords + output * 4);
  kb.store(row, b, start);
  kb.store(row + 1, x, start);
  kb.store(row + 2, y, start);
  kb.store(row + 3, z, start);
  // value = i * V + v: nbi's own entry.
  Tensor value = kb.let("value", kb.load(vals + index, valid, 0));
  Tensor input = kb.let("input", value / v);
  Tensor held =
      kb.let("held", kb.atomicCas(nb + output * v + (value - input * v), -1,
                                  input, valid));
  kb.store(nbi + value, output, valid);
  Tensor twice =
      kb.let("twice", kb.cast(valid & (held != -1), kb.i32Type()) * 2);
  kb.atomicRmw(tile::AtomicRMWKind::Max, status, kb.max(twice, 0));
}

TILEC_KERNEL(output_voxels) {
  static const KernelDefinition kernel(
      KernelDescription("output_voxels", "kernels/output_voxels.cpp", __LINE__)
          .param(MetaParameter("BLOCK").powerOfTwo().byDefault(1024))
          .param(MetaParameter("FILL").atLeast(0).atMost(1).byDefault(0))
          .arg(pointer("keys_ptr", "i32").divisibility(16))
          .arg(pointer("vals_ptr", "i32").divisibility(16))
          .arg(pointer("counts_ptr", "i32").divisibility(16))
          .arg(pointer("scan_ptr", "i32").divisibility(16))
          .arg(pointer("out_coords_ptr", "i32").divisibility(16))
          .arg(pointer("nb_ptr", "i32").divisibility(16))
          .arg(pointer("nbi_ptr", "i32").divisibility(16))
          .arg(pointer("pairs_ptr", "i64").divisibility(16))
          .arg(pointer("status_ptr", "i32").divisibility(16))
          .arg(scalar("N", "i32").doNotSpecialize())
          .arg(scalar("V", "i32"))
          .args({scalar("OX", "i32").doNotSpecialize(),
                 scalar("OY", "i32").doNotSpecialize(),
                 scalar("OZ", "i32").doNotSpecialize(),
                 scalar("B", "i32").doNotSpecialize().byDefault("1")})
          .candidate("num_warps=8")
          .key("LOG2_N", "ceil(log2(N))")
          .key("V")
          .key("FILL")
          // The host sizes the counts by it: a winner of another BLOCK
          // must not serve.
          .key("BLOCK")
          .grid({"cdiv(N, BLOCK)"})
          .require("B * OX * OY * OZ < 2147483647",
                   "output cells are 32-bit, with one past them")
          .require("min(min(OX, OY), OZ) >= 1", "the output grid has a cell")
          .require("B >= 1", "there is a batch")
          .require("N * 4 < 2147483648", "the coordinates' offsets are 32-bit")
          // The sorted candidates of strided_candidates' test clouds and
          // geometries, which these sizes name as well (the kernel reads
          // N, V and the output grid; check/reference/output_voxels.cpp):
          // 3000 voxels x 8 candidates, and 777 x 5 and three candidates
          // that are none.
          .testSizes(
              {{"N", 24000}, {"V", 27}, {"OX", 16}, {"OY", 16}, {"OZ", 16},
               {"KX", 3},    {"KY", 3}, {"KZ", 3},  {"SX", 2},  {"SY", 2},
               {"SZ", 2},    {"PX", 1}, {"PY", 1},  {"PZ", 1},  {"DX", 1},
               {"DY", 1},    {"DZ", 1}, {"IX", 32}, {"IY", 32}, {"IZ", 32}},
              {{"N", 3888}, {"V", 6},  {"OX", 17}, {"OY", 33}, {"OZ", 13},
               {"B", 3},    {"KX", 2}, {"KY", 3},  {"KZ", 1},  {"SX", 2},
               {"SY", 1},   {"SZ", 3}, {"PX", 0},  {"PY", 2},  {"PZ", 0},
               {"DX", 1},   {"DY", 2}, {"DZ", 1},  {"IX", 35}, {"IY", 33},
               {"IZ", 37}}),
      buildOutputVoxels);
  return kernel;
}
