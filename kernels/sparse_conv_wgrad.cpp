//===- sparse_conv_wgrad.cpp - the weight gradient, as split partial sums -===//
//
// dW[o, v, c] = sum over the pairs (i, j) of offset v (voxel j is at offset
// v of voxel i) of dY[i, o] * X[j, c]: for each offset a GEMM with M = CO,
// N = CI and K = that offset's pairs, both operands gathered through the
// offset's pair list (offset_pairs.cpp: pair_out[p] = i, pair_in[p] = j for
// p in [pair_start[v], pair_start[v + 1])).
//
// Each offset's list is cut into SPLITS fixed parts of SPLIT_PAIRS pairs
// (part s: pairs [pair_start[v] + s * SPLIT_PAIRS, ... + SPLIT_PAIRS), cut
// at the list's end), one program per part and tile, and part s writes its
// f32 sums to ws[s, o, v, c] (zeros where the part is empty); split_sum adds
// the parts in order s = 0, 1, ... No float atomics and a partition fixed by
// the call, not by the config: the same pairs give the same bits in every
// process. SPLITS and SPLIT_PAIRS come from the call's sizes
// (sparse::weightGradSplits).
//
// A[o, k] = dY[pair_out[k], o] is read column by column (a pair's row of dY
// is contiguous along o), B[k, c] = X[pair_in[k], c] row by row.
//
// Grid: SPLITS * V * cdiv(CO, BLOCK_M) * cdiv(CI, BLOCK_N) programs, the
// tiles of one part adjacent, so that they gather its rows from L2.
//
//===----------------------------------------------------------------------===//

#include "TiledMatmul.h"

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

static void buildSparseConvWgrad(KernelBuilder &kb) {
  int64_t blockM = kb.param("BLOCK_M"), blockN = kb.param("BLOCK_N");
  int64_t blockK = kb.param("BLOCK_K");
  mlir::Type dtype = kb.dtype("DTYPE");
  Tensor x = kb.arg("x_ptr"), dy = kb.arg("dy_ptr"), ws = kb.arg("ws_ptr");
  Tensor pairStart = kb.arg("pair_start_ptr");
  Tensor pairIn = kb.arg("pair_in_ptr"), pairOut = kb.arg("pair_out_ptr");
  Tensor ci = kb.arg("CI"), co = kb.arg("CO"), v = kb.arg("V");
  Tensor splitPairs = kb.arg("SPLIT_PAIRS");
  Tensor strideX = kb.arg("stride_x"), strideDy = kb.arg("stride_dy");

  Tensor pid = kb.let("pid", kb.programId(0));
  Tensor tilesM = kb.let("tiles_m", kb.cdiv(co, blockM));
  Tensor tilesN = kb.let("tiles_n", kb.cdiv(ci, blockN));
  Tensor tiles = kb.let("tiles", tilesM * tilesN);
  // Program pid is tile (pid_m, pid_n) of part `split` of offset `offset`.
  Tensor part = kb.let("part", pid / tiles);
  Tensor tile = kb.let("tile", pid - part * tiles);
  Tensor pidM = kb.let("pid_m", tile / tilesN);
  Tensor pidN = kb.let("pid_n", tile - pidM * tilesN);
  Tensor split = kb.let("split", part / v);
  Tensor offset = kb.let("offset", part - split * v);

  Tensor listStart = kb.let("list_start", kb.load(pairStart + offset));
  Tensor listEnd = kb.let("list_end", kb.load(pairStart + offset + 1));
  Tensor first = kb.let("first", listStart + split * splitPairs);
  Tensor last = kb.let("last", kb.minimum(first + splitPairs, listEnd));
  Tensor steps = kb.let("steps", kb.cdiv(kb.maximum(last - first, 0), blockK));

  Tensor offsM = kb.let("offs_m", pidM * blockM + kb.arange(0, blockM));
  Tensor offsN = kb.let("offs_n", pidN * blockN + kb.arange(0, blockN));
  Tensor outCols = kb.let("out_cols", kb.expandDims(offsM, 1)); // [:, None]
  Tensor inCols = kb.let("in_cols", kb.expandDims(offsN, 0));   // [None, :]
  Tensor outColMask = kb.let("out_col_mask", outCols < co);
  Tensor inColMask = kb.let("in_col_mask", inCols < ci);

  Tensor acc0 = kb.let("acc", kb.zeros({blockM, blockN}, kb.f32Type()));
  auto step = [&](Tensor s, llvm::ArrayRef<Tensor> carried) -> Tensors {
    Tensor pair = kb.let("pair", first + s * blockK + kb.arange(0, blockK));
    Tensor inPart = kb.let("in_part", pair < last);
    Tensor outRow = kb.let("out_row", kb.load(pairOut + pair, inPart, 0));
    Tensor inRow = kb.let("in_row", kb.load(pairIn + pair, inPart, 0));
    // A [BLOCK_M, BLOCK_K]: column k is row pair_out[k] of dY.
    Tensor aTile =
        kb.let("a", kb.load(dy + kb.expandDims(outRow, 0) * strideDy + outCols,
                            kb.expandDims(inPart, 0) & outColMask, 0.0));
    // B [BLOCK_K, BLOCK_N]: row k is row pair_in[k] of X.
    Tensor bTile =
        kb.let("b", kb.load(x + kb.expandDims(inRow, 1) * strideX + inCols,
                            kb.expandDims(inPart, 1) & inColMask, 0.0));
    return {kb.let("acc",
                   kb.dot(aTile, bTile, carried[0], dotPrecision(kb, dtype)))};
  };
  Tensors loop = kb.let("loop", kb.forRange(0, steps, 1, {acc0}, step));
  // ws[split, o, v, c]: dW's layout [CO, V, CI] per part.
  Tensor partSize = kb.let("part_size", co * v * ci);
  Tensor wsPtrs = kb.let("ws_ptrs", ws + split * partSize + outCols * (v * ci) +
                                        offset * ci + inCols);
  kb.store(wsPtrs, loop[0], outColMask & inColMask);
}

TILEC_KERNEL(sparse_conv_wgrad) {
  static const KernelDefinition kernel(
      KernelDescription("sparse_conv_wgrad", "kernels/sparse_conv_wgrad.cpp",
                        __LINE__)
          .param(MetaParameter("BLOCK_M").powerOfTwo().atLeast(
              16, "tile.dot operands are at least 16x16"))
          .param(MetaParameter("BLOCK_N").powerOfTwo().atLeast(
              16, "tile.dot operands are at least 16x16"))
          .param(MetaParameter("BLOCK_K").powerOfTwo().atLeast(
              16, "tile.dot operands are at least 16x16"))
          .param(MetaParameter("ALLOW_TF32").atLeast(0).atMost(1).byDefault(0))
          .typeParam(
              TypeParameter("DTYPE", {"f16", "bf16", "f32"}).byDefault("f16"))
          .arg(pointer("x_ptr", "DTYPE").divisibility(16))
          .arg(pointer("dy_ptr", "DTYPE").divisibility(16))
          // The offsets' pair lists (offset_pairs.cpp): V + 1 starts, then
          // each pair's voxel at the offset and the voxel it is around.
          .arg(pointer("pair_start_ptr", "i32").divisibility(16))
          .arg(pointer("pair_in_ptr", "i32").divisibility(16))
          .arg(pointer("pair_out_ptr", "i32").divisibility(16))
          // SPLITS * CO * V * CI f32 partial sums.
          .arg(pointer("ws_ptr", "f32").divisibility(16))
          .arg(scalar("N", "i32").doNotSpecialize())
          .arg(scalar("CI", "i32"))
          .arg(scalar("CO", "i32"))
          .arg(scalar("V", "i32"))
          .arg(scalar("SPLITS", "i32").doNotSpecialize())
          .arg(scalar("SPLIT_PAIRS", "i32").doNotSpecialize())
          .arg(scalar("stride_x", "i32").byDefault("CI"))
          .arg(scalar("stride_dy", "i32").byDefault("CO"))
          .candidate("BLOCK_M=32,BLOCK_N=32,BLOCK_K=32,num_warps=4,"
                     "num_stages=3")
          .candidate("BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_warps=4,"
                     "num_stages=3")
          .candidate("BLOCK_M=64,BLOCK_N=64,BLOCK_K=64,num_warps=4,"
                     "num_stages=3")
          .candidate("BLOCK_M=128,BLOCK_N=64,BLOCK_K=32,num_warps=4,"
                     "num_stages=3")
          .candidate("BLOCK_M=64,BLOCK_N=128,BLOCK_K=32,num_warps=4,"
                     "num_stages=3")
          .candidate("BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,num_warps=8,"
                     "num_stages=3")
          .candidate("BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,num_warps=8,"
                     "num_stages=3")
          .pruneUnless("BLOCK_M <= max(32, 2 * CO)",
                       "a taller tile is mostly masked output channels")
          .pruneUnless("BLOCK_N <= max(32, 2 * CI)",
                       "a wider tile is mostly masked input channels")
          // A first use without tuning (TILEC_FIRST_USE=predict): the
          // 128-square tiles on 8 warps where there are 2^16 rows or more
          // and both channel counts fill them, else 64-square ones. Over the
          // 26 weight gradients of a SpUNet (H100, f16, 11 first-call
          // tunings of 2026-12-07): 1.01x the tuned winners' summed time, at
          // worst 1.14x.
          .predictWhen({"next_power_of_2(N) >= 65536", "CO >= 64", "CI >= 64"},
                       "BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,num_warps=8,"
                       "num_stages=3")
          .predictWhen({}, "BLOCK_M=64,BLOCK_N=64,BLOCK_K=64,num_warps=4,"
                           "num_stages=3")
          .key("LOG2_N", "ceil(log2(N))")
          .key("CI")
          .key("CO")
          .key("V")
          .key("DTYPE")
          .key("ALLOW_TF32")
          .grid({"SPLITS * V * cdiv(CO, BLOCK_M) * cdiv(CI, BLOCK_N)"})
          .require("(N - 1) * stride_x + CI < 2147483648",
                   "X's element offsets are 32-bit")
          .require("(N - 1) * stride_dy + CO < 2147483648",
                   "dY's element offsets are 32-bit")
          .require("SPLITS * CO * V * CI < 2147483648",
                   "the partial sums' offsets are 32-bit")
          .require("V * N < 2147483648", "the pair lists' offsets are 32-bit")
          .require("SPLITS >= 1", "at least one part")
          .require("SPLIT_PAIRS >= 1", "a part holds pairs")
          .require("stride_x >= CI", "rows of X do not overlap")
          .require("stride_dy >= CO", "rows of dY do not overlap")
          .flops("2 * N * CO * CI * V")
          // A voxel cloud of N voxels (test/reference/sparse_conv_wgrad.cpp).
          .testSizes({{"N", 3000},
                      {"CI", 64},
                      {"CO", 64},
                      {"V", 27},
                      {"SPLITS", 3},
                      {"SPLIT_PAIRS", 1024}},
                     {{"N", 777},
                      {"CI", 3},
                      {"CO", 17},
                      {"V", 27},
                      {"SPLITS", 2},
                      {"SPLIT_PAIRS", 400}}),
      buildSparseConvWgrad);
  return kernel;
}
