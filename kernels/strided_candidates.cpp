//===- strided_candidates.cpp - the output cells a strided convolution reaches
//
// The first step of a strided sparse convolution's maps (spconv's
// SparseConv3d; docs/sparse-conv.md, "Strided and inverse convolutions"):
// an output voxel exists wherever a kernel offset reads an input voxel, and
// output o reads, at offset k of an axis, the input o * S - P + k * D. So
// along an axis, input x is read by the outputs o = floor((x + P) / S) - j,
// j in [0, CA) with CA = (K - 1) * D // S + 1, where 0 <= o < O (the output
// grid) and x + P - o * S = k * D for a k below K. Each input voxel i
// writes its CA_X * CA_Y * CA_Z candidates c (j_x major, j_z minor):
//
//   cand_key[i * C + c] = ((b * OX + ox) * OY + oy) * OZ + oz, the output
//     cell, or CELLS = B * OX * OY * OZ (past every cell) where candidate c
//     is no output;
//   cand_val[i * C + c] = i * V + v with v = (kx * KY + ky) * KZ + kz the
//     offset the output reads i at (the weights' [Co, Kx, Ky, Kz, Ci]
//     order), or -1.
//
// Sorted by key (a stable radix sort carrying the values) and run through
// output_voxels, they give the output voxels in ascending (batch, x, y, z)
// order and both maps. status[0] is raised (atomic max) to 1 when a voxel
// lies outside the input grid [0, IX) x [0, IY) x [0, IZ) or its batch
// outside [0, B): the caller's input is wrong, and its candidates are none.
//
// Grid: (cdiv(N, BLOCK)); each program writes BLOCK voxels x CP candidates.
//
//===----------------------------------------------------------------------===//

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

#include <array>

using namespace tilec;
using namespace tilec::kernel;

static void buildStridedCandidates(KernelBuilder &kb) {
  int64_t block = kb.param("BLOCK"), paddedCandidates = kb.param("CP");
  Tensor coords = kb.arg("coords_ptr"), candKey = kb.arg("cand_key_ptr");
  Tensor candVal = kb.arg("cand_val_ptr"), status = kb.arg("status_ptr");
  Tensor n = kb.arg("N"), batches = kb.arg("B"), c = kb.arg("C");
  Tensor v = kb.arg("V");
  const char *axes = "XYZ";
  auto axisArg = [&](const char *prefix, int axis) {
    return kb.arg(std::string(prefix) + axes[axis]);
  };

  Tensor voxel = kb.let("voxel", kb.programId(0) * block + kb.arange(0, block));
  Tensor inRange = kb.let("in_range", voxel < n);
  Tensor rows = kb.let("rows", kb.expandDims(voxel, 1)); // [:, None]
  Tensor cols = kb.let("cols", kb.expandDims(kb.arange(0, paddedCandidates),
                                             0)); // [None, :]
  Tensor write = kb.let("write", kb.expandDims(inRange, 1) & (cols < c));
  Tensor b = kb.let("b", kb.load(coords + voxel * 4, inRange, 0));
  Tensor inside = kb.let("inside", inRange & (b >= 0) & (b < batches));
  std::array<Tensor, 3> xs, counts;
  for (int axis = 0; axis < 3; ++axis) {
    xs[axis] =
        kb.let("x", kb.load(coords + voxel * 4 + (axis + 1), inRange, 0));
    inside = kb.let("inside",
                    inside & (xs[axis] >= 0) & (xs[axis] < axisArg("I", axis)));
    counts[axis] = kb.let(
        "ca",
        (axisArg("K", axis) - 1) * axisArg("D", axis) / axisArg("S", axis) + 1);
  }

  // Candidate c is (j_x, j_y, j_z), j_z fastest; along each axis, output o
  // reads the voxel at kernel offset k = (x + P - o * S) / D.
  std::array<Tensor, 3> js = {cols / (counts[1] * counts[2]),
                              cols / counts[2] % counts[1], cols % counts[2]};
  std::array<Tensor, 3> outs, offsets;
  Tensor exists = kb.let("exists", kb.expandDims(inside, 1) & (cols < c));
  for (int axis = 0; axis < 3; ++axis) {
    Tensor s = axisArg("S", axis), d = axisArg("D", axis);
    // Non-negative for a voxel inside the grid, so the divisions truncate
    // as floor does; outside it the candidates are none.
    Tensor shifted =
        kb.let("shifted", kb.expandDims(xs[axis], 1) + axisArg("P", axis));
    Tensor o = kb.let("o", shifted / s - js[axis]);
    Tensor reach = kb.let("reach", shifted - o * s);
    outs[axis] = o;
    offsets[axis] = kb.let("k", reach / d);
    exists = kb.let("exists", exists & (o >= 0) & (o < axisArg("O", axis)) &
                                  (reach % d == 0) &
                                  (reach < axisArg("K", axis) * d));
  }
  Tensor cell =
      kb.let("cell", ((kb.expandDims(b, 1) * axisArg("O", 0) + outs[0]) *
                          axisArg("O", 1) +
                      outs[1]) *
                             axisArg("O", 2) +
                         outs[2]);
  Tensor cells = kb.let("cells", batches * axisArg("O", 0) * axisArg("O", 1) *
                                     axisArg("O", 2));
  Tensor offset = kb.let("offset", (offsets[0] * axisArg("K", 1) + offsets[1]) *
                                           axisArg("K", 2) +
                                       offsets[2]);
  Tensor slot = kb.let("slot", rows * c + cols);
  kb.store(candKey + slot, kb.where(exists, cell, cells), write);
  kb.store(candVal + slot, kb.where(exists, rows * v + offset, -1), write);
  // inside implies in_range: 1 for a voxel of the call outside the grid.
  Tensor outside = kb.let("outside", kb.cast(inRange, kb.i32Type()) -
                                         kb.cast(inside, kb.i32Type()));
  kb.atomicRmw(tile::AtomicRMWKind::Max, status, kb.max(outside, 0));
}

// The expressions of a call's per-axis candidate counts (CA in the file
// comment) and their product C.
#define TILEC_CANDIDATES_ALONG(A) "((K" A " - 1) * D" A " // S" A " + 1)"
#define TILEC_CANDIDATES                                                       \
  TILEC_CANDIDATES_ALONG("X")                                                  \
  " * " TILEC_CANDIDATES_ALONG("Y") " * " TILEC_CANDIDATES_ALONG("Z")

TILEC_KERNEL(strided_candidates) {
  static const KernelDefinition kernel(
      KernelDescription("strided_candidates", "kernels/strided_candidates.cpp",
                        __LINE__)
          // The candidates padded to a power of two, one tile column each,
          // and voxels per program so that a tile holds 2048 candidates.
          .param(MetaParameter("CP").powerOfTwo().byDefault(8).derivedAs(
              "next_power_of_2(" TILEC_CANDIDATES ")"))
          .param(MetaParameter("BLOCK").powerOfTwo().byDefault(256).derivedAs(
              "max(16, cdiv(2048, next_power_of_2(" TILEC_CANDIDATES ")))"))
          .arg(pointer("coords_ptr", "i32").divisibility(16))
          .arg(pointer("cand_key_ptr", "i32").divisibility(16))
          .arg(pointer("cand_val_ptr", "i32").divisibility(16))
          .arg(pointer("status_ptr", "i32").divisibility(16))
          .arg(scalar("N", "i32").doNotSpecialize())
          .args({scalar("KX", "i32"), scalar("KY", "i32"), scalar("KZ", "i32"),
                 scalar("SX", "i32"), scalar("SY", "i32"), scalar("SZ", "i32"),
                 scalar("PX", "i32"), scalar("PY", "i32"), scalar("PZ", "i32"),
                 scalar("DX", "i32"), scalar("DY", "i32"), scalar("DZ", "i32")})
          // The grids and the batch count vary with the cloud: no value
          // specializes the kernel.
          .args({scalar("IX", "i32").doNotSpecialize(),
                 scalar("IY", "i32").doNotSpecialize(),
                 scalar("IZ", "i32").doNotSpecialize(),
                 scalar("OX", "i32")
                     .doNotSpecialize()
                     .byDefault("(IX + 2 * PX - DX * (KX - 1) - 1) // SX + 1"),
                 scalar("OY", "i32")
                     .doNotSpecialize()
                     .byDefault("(IY + 2 * PY - DY * (KY - 1) - 1) // SY + 1"),
                 scalar("OZ", "i32")
                     .doNotSpecialize()
                     .byDefault("(IZ + 2 * PZ - DZ * (KZ - 1) - 1) // SZ + 1"),
                 scalar("B", "i32").doNotSpecialize().byDefault("1")})
          .arg(scalar("C", "i32").byDefault(TILEC_CANDIDATES))
          .arg(scalar("V", "i32").byDefault("KX * KY * KZ"))
          .candidate("num_warps=4")
          .key("LOG2_N", "ceil(log2(N))")
          .key("C", TILEC_CANDIDATES)
          .grid({"cdiv(N, BLOCK)"})
          .require("CP >= " TILEC_CANDIDATES,
                   "a tile row holds a voxel's candidates")
          .require("C == " TILEC_CANDIDATES, "C is the candidates' count")
          .require("V == KX * KY * KZ", "V is the kernel's offsets")
          .require("min(min(KX, KY), KZ) >= 1", "the kernel has a voxel")
          .require("min(min(IX, IY), IZ) >= 1", "the input grid has a cell")
          .require("min(min(OX, OY), OZ) >= 1", "the output grid has a cell")
          .require("B >= 1", "there is a batch")
          .require("min(min(SX, SY), SZ) >= 1", "the strides are positive")
          .require("min(min(DX, DY), DZ) >= 1", "the dilations are positive")
          .require("min(min(PX, PY), PZ) >= 0", "the paddings are not negative")
          .require("B * OX * OY * OZ < 2147483647",
                   "output cells are 32-bit, with one past them")
          .require("N * C < 2147483648", "the candidates' offsets are 32-bit")
          .require("N * V < 2147483648", "the maps' entries are 32-bit")
          // A shell's voxels (testCloud: res 32 for 3000 voxels, 16 for
          // 777) through a 3^3 kernel of stride 2 and padding 1 on a 32^3
          // grid, and through a 2 x 3 x 1 kernel of strides (2, 1, 3),
          // padding 2 and dilation 2 along y on a 35 x 33 x 37 grid of
          // three batches (check/reference/strided_candidates.cpp).
          .testSizes({{"N", 3000},
                      {"KX", 3},
                      {"KY", 3},
                      {"KZ", 3},
                      {"SX", 2},
                      {"SY", 2},
                      {"SZ", 2},
                      {"PX", 1},
                      {"PY", 1},
                      {"PZ", 1},
                      {"DX", 1},
                      {"DY", 1},
                      {"DZ", 1},
                      {"IX", 32},
                      {"IY", 32},
                      {"IZ", 32}},
                     {{"N", 777},
                      {"KX", 2},
                      {"KY", 3},
                      {"KZ", 1},
                      {"SX", 2},
                      {"SY", 1},
                      {"SZ", 3},
                      {"PX", 0},
                      {"PY", 2},
                      {"PZ", 0},
                      {"DX", 1},
                      {"DY", 2},
                      {"DZ", 1},
                      {"IX", 35},
                      {"IY", 33},
                      {"IZ", 37},
                      {"B", 3}}),
      buildStridedCandidates);
  return kernel;
}
