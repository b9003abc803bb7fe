//===- sparse_conv.cpp - submanifold sparse 3-D convolution, forward ------===//
//
// Y[i, co] = bias[co] + sum_v sum_c X[nb(i, v), c] * W[co, v, c] for the N
// active voxels i, where nb(i, v) is the voxel at offset v of the kernel
// window around voxel i (none: the term is skipped). As a GEMM: M = N,
// N = CO, K = V * CI, with the rows of A gathered through the neighbour map;
// the masked implicit GEMM of docs/sparse-conv.md:
//
//   - the rows are processed in an order that groups voxels with the same
//     neighbour bitmask (order_ptr[r] is the voxel of sorted row r);
//   - nbt_ptr is the neighbour map in that order, transposed: nbt[v * N + r]
//     is the voxel at offset v of voxel order[r], or -1;
//   - row block b (rows [b * BLOCK_M, (b + 1) * BLOCK_M)) loops only over the
//     offsets some of its rows have: blk_off[b * V .. b * V + blk_count[b]),
//     ascending, so the sum runs in the same order in every process; each
//     entry also says which 64-row groups of the block have a neighbour at
//     that offset (with SKIP_ROW_GROUPS the dot skips the others);
//   - blk_order lists the row blocks by ascending count of offsets (a
//     stable sort), and programs take them from its end: the blocks with
//     the most work start first, so that the last wave is the short blocks
//     (longest-processing-time-first list scheduling on the SMs).
//
// With SPLIT_K = 2 a row block's offsets are split in two halves that run as
// two programs (launched next to each other): where all of them start at
// once, the launch lasts about its busiest half block rather than its
// busiest block. Each writes its f32 partial sums to ws_ptr, and the second
// to arrive (an atomic count per tile in arrivals_ptr, which it sets back to
// 0) adds the other's partials to its own and stores the tile. Two partials
// added are the same sum whichever arrives last (addition commutes), so the
// result is the same bits in every run.
//
// With TRANSPOSE_W the kernel computes the input gradient of a forward
// convolution: dX = sum over offsets u of dY[nb(i, u)] W_f[:, V - 1 - u, :]
// (voxel j is at offset u of voxel i exactly when i is at the mirrored
// offset V - 1 - u of j), so X is dY, Y is dX, CI and CO are the forward's
// CO and CI, and w_ptr is the forward's weights [CI, V, CO] read as
// B[k, n] = W_f[k, V - 1 - offset, n]: the same maps, row blocks and offset
// lists as the forward's. TRANSPOSE_W = 2 reads B[k, n] = W_f[k, offset, n]
// (no mirror): the input gradient of a strided convolution over the
// inverse map (docs/sparse-conv.md, "Strided and inverse convolutions"),
// whose offsets are not symmetric. X may have a row count NI of its own
// (a strided convolution's input), which only bounds its offsets.
//
// The maps are built for one BLOCK_M (it is fixed by the call and part of the
// autotune key: the maps' blocks are the kernel's blocks). One loop runs over
// (active offset, CI chunk) pairs, so that the pipeliner overlaps the gathers
// of the next offsets with the math of this one.
//
// Grid: SPLIT_K * cdiv(CO, BLOCK_N) * cdiv(N, BLOCK_M) programs, the row
// blocks in blk_order's order, reversed, and the column tiles of a row block
// (of a half, with SPLIT_K) adjacent, so that they run together and the
// second gathers its rows of X from L2 rather than from memory (X does not
// fit in L2 at the sizes that matter; W does).
//
//===----------------------------------------------------------------------===//

#include "TiledMatmul.h"

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

static void buildSparseConv(KernelBuilder &kb) {
  int64_t blockM = kb.param("BLOCK_M"), blockN = kb.param("BLOCK_N");
  int64_t blockK = kb.param("BLOCK_K");
  bool hasBias = kb.param("HAS_BIAS");
  bool skipRowGroups = kb.param("SKIP_ROW_GROUPS");
  int64_t weightForm = kb.param("TRANSPOSE_W");
  bool transposeW = weightForm != 0, mirrorW = weightForm == 1;
  int64_t splitK = kb.param("SPLIT_K");
  mlir::Type dtype = kb.dtype("DTYPE");
  Tensor x = kb.arg("x_ptr"), w = kb.arg("w_ptr"), bias = kb.arg("bias_ptr");
  Tensor y = kb.arg("y_ptr"), nbt = kb.arg("nbt_ptr");
  Tensor order = kb.arg("order_ptr"), blkCount = kb.arg("blk_count_ptr");
  Tensor blkOff = kb.arg("blk_off_ptr"), blkOrder = kb.arg("blk_order_ptr");
  Tensor n = kb.arg("N"), ci = kb.arg("CI"), co = kb.arg("CO");
  Tensor ws = kb.arg("ws_ptr"), arrivals = kb.arg("arrivals_ptr");
  Tensor v = kb.arg("V");
  Tensor strideX = kb.arg("stride_x"), strideY = kb.arg("stride_y");

  Tensor pid = kb.let("pid", kb.programId(0));
  Tensor tilesN = kb.let("tiles_n", kb.cdiv(co, blockN));
  // Program pid is column tile pid_n of half `split` of the launched-th row
  // block to start.
  Tensor launched = kb.let("launched", pid / (tilesN * splitK));
  Tensor pidN = kb.let("pid_n", pid - launched * (tilesN * splitK));
  Tensor split;
  if (splitK > 1) {
    split = kb.let("split", pidN / tilesN);
    pidN = kb.let("pid_n", pidN - split * tilesN);
  }
  Tensor blocks = kb.let("blocks", kb.cdiv(n, blockM));
  Tensor pidM =
      kb.let("pid_m", kb.load(blkOrder + (blocks - 1 - launched)));
  Tensor rows = kb.let("rows", pidM * blockM + kb.arange(0, blockM));
  Tensor offsN = kb.let("offs_n", pidN * blockN + kb.arange(0, blockN));
  Tensor offsK = kb.let("offs_k", kb.arange(0, blockK));
  Tensor inRange = kb.let("in_range", rows < n);
  Tensor cols = kb.let("cols", kb.expandDims(offsN, 0)); // [None, :]
  Tensor colMask = kb.let("col_mask", cols < co);
  Tensor kRow = kb.let("k_row", kb.expandDims(offsK, 0)); // [None, :]
  Tensor kCol = kb.let("k_col", kb.expandDims(offsK, 1)); // [:, None]

  // This block's active offsets, and the steps over (offset, CI chunk).
  Tensor first = kb.let("first", pidM * v);
  Tensor last = kb.let("last", first + kb.load(blkCount + pidM));
  if (splitK > 1) {
    // The first half takes the odd offset out.
    Tensor half = kb.let("half", (last - first + 1) / 2);
    first = kb.let("first", first + split * half);
    last = kb.let("last", kb.minimum(first + half, last));
  }
  Tensor chunks = kb.let("chunks", kb.cdiv(ci, blockK));
  Tensor steps = kb.let("steps", (last - first) * chunks);
  // W[co, v, c] read as B[k, co] = W[co, v, c0 + k]: K-major; with
  // TRANSPOSE_W, W[c, v, co] read as B[k, co] = W[c0 + k, V - 1 - v, co]:
  // N-major; with TRANSPOSE_W = 2, B[k, co] = W[c0 + k, v, co] (no mirror).
  Tensor wCols = transposeW ? Tensor() : kb.let("w_cols", w + cols * (v * ci));

  Tensor acc0 = kb.let("acc", kb.zeros({blockM, blockN}, kb.f32Type()));
  auto step = [&](Tensor s, llvm::ArrayRef<Tensor> carried) -> Tensors {
    Tensor slot = kb.let("slot", s / chunks);
    Tensor c0 = kb.let("c0", (s - slot * chunks) * blockK);
    // An entry is the offset and the block's 64-row groups that have a
    // neighbour there (block_offsets.cpp).
    Tensor entry = kb.let("entry", kb.load(blkOff + first + slot));
    Tensor offset = kb.let("offset", entry & 0xFFFF);
    Tensor groups =
        kb.let("groups", kb.binary(BinaryOpKind::ShrU, entry, 16));
    // Rows with no voxel at this offset (and rows past N) read zeros.
    Tensor nb = kb.let("nb", kb.load(nbt + offset * n + rows, inRange, -1));
    Tensor hasRow = kb.let("has_row", kb.expandDims(nb != -1, 1));
    Tensor aRows =
        kb.let("a_rows", kb.expandDims(kb.where(nb != -1, nb, 0), 1));
    Tensor kLeft = kb.let("k_left", ci - c0);
    Tensor aTile = kb.let("a", kb.load(x + aRows * strideX + (c0 + kRow),
                                       hasRow & (kRow < kLeft), 0.0));
    Tensor wOffset = mirrorW ? kb.let("w_offset", v - 1 - offset) : offset;
    Tensor bPtrs = transposeW
                       ? kb.let("b_ptrs", w + (c0 + kCol) * (v * co) +
                                              wOffset * co + cols)
                       : kb.let("b_ptrs", wCols + offset * ci + (c0 + kCol));
    Tensor bTile = kb.let("b", kb.load(bPtrs, (kCol < kLeft) & colMask, 0.0));
    // With SKIP_ROW_GROUPS, a warpgroup whose 64 rows have no neighbour
    // here skips its MMA. Both forms measured slower on the H200 (the two
    // warpgroups share each K step, so one that skips waits for the other;
    // docs/engine.md, "Row groups"), so no candidate sets it.
    if (skipRowGroups)
      return {kb.let("acc", kb.dotOfRowGroups(aTile, bTile, carried[0],
                                              dotPrecision(kb, dtype), groups,
                                              64))};
    return {kb.let("acc",
                   kb.dot(aTile, bTile, carried[0], dotPrecision(kb, dtype)))};
  };
  Tensors loop = kb.let("loop", kb.forRange(0, steps, 1, {acc0}, step));
  Tensor acc = loop[0];
  Tensor storeMask = kb.let("store_mask", kb.expandDims(inRange, 1) & colMask);
  if (splitK > 1) {
    // ws[split][row][co]: this half's partial sums, published by the
    // atomic after every thread's stores (the barrier).
    Tensor wsRows = kb.let("ws_rows", blocks * blockM);
    Tensor rowCol = kb.let("row_col", kb.expandDims(rows, 1) * co + cols);
    kb.store(ws + split * wsRows * co + rowCol, acc, colMask);
    kb.barrier();
    Tensor tile = kb.let("tile", pidM * tilesN + pidN);
    Tensor arrived = kb.let(
        "arrived", kb.atomicRmw(tile::AtomicRMWKind::Add, arrivals + tile, 1));
    Tensor isLast = kb.let("is_last", arrived == splitK - 1);
    // The other half's partials: the acquire (its result comes to every
    // thread through shared memory after a barrier) orders these loads
    // after the other half's stores; .cg keeps lines read once out of L1.
    Tensor other = kb.let(
        "other", kb.load(ws + (1 - split) * wsRows * co + rowCol,
                         colMask & isLast, 0.0, tile::CacheModifier::CG));
    acc = kb.let("acc", acc + other);
    kb.store(arrivals + tile, 0, isLast);
    storeMask = kb.let("store_mask", storeMask & isLast);
  }
  if (hasBias)
    acc = kb.let(
        "acc", acc + kb.cast(kb.load(bias + cols, colMask, 0.0), kb.f32Type()));

  // Sorted row r is voxel order[r]: scatter back to the voxels' order.
  Tensor out = kb.let("out", kb.cast(acc, dtype));
  Tensor voxel = kb.let("voxel", kb.load(order + rows, inRange, 0));
  Tensor yPtrs = kb.let("y_ptrs", y + kb.expandDims(voxel, 1) * strideY + cols);
  kb.store(yPtrs, out, storeMask);
}

TILEC_KERNEL(sparse_conv_fwd) {
  static const KernelDefinition kernel(
      KernelDescription("sparse_conv_fwd", "kernels/sparse_conv.cpp", __LINE__)
          // The maps' row blocks: fixed by the call (the maps are built for
          // it), so candidates differ in the other parameters.
          .param(MetaParameter("BLOCK_M")
                     .powerOfTwo()
                     .atLeast(16, "tile.dot operands are at least 16x16")
                     .byDefault(64))
          .param(MetaParameter("BLOCK_N").powerOfTwo().atLeast(
              16, "tile.dot operands are at least 16x16"))
          .param(MetaParameter("BLOCK_K").powerOfTwo().atLeast(
              16, "tile.dot operands are at least 16x16"))
          .param(MetaParameter("HAS_BIAS").atLeast(0).atMost(1).byDefault(0))
          .param(MetaParameter("SKIP_ROW_GROUPS")
                     .atLeast(0)
                     .atMost(1)
                     .byDefault(0))
          .param(MetaParameter("SPLIT_K").atLeast(1).atMost(2).byDefault(1))
          // Set by the call: the input gradient (see the file comment).
          .param(MetaParameter("TRANSPOSE_W").atLeast(0).atMost(2).byDefault(0))
          .param(MetaParameter("ALLOW_TF32").atLeast(0).atMost(1).byDefault(0))
          .typeParam(
              TypeParameter("DTYPE", {"f16", "bf16", "f32"}).byDefault("f16"))
          .arg(pointer("x_ptr", "DTYPE").divisibility(16))
          .arg(pointer("w_ptr", "DTYPE").divisibility(16))
          .arg(pointer("bias_ptr", "DTYPE").divisibility(16))
          .arg(pointer("y_ptr", "DTYPE").divisibility(16))
          .arg(pointer("nbt_ptr", "i32").divisibility(16))
          .arg(pointer("order_ptr", "i32").divisibility(16))
          .arg(pointer("blk_count_ptr", "i32").divisibility(16))
          .arg(pointer("blk_off_ptr", "i32").divisibility(16))
          .arg(pointer("blk_order_ptr", "i32").divisibility(16))
          // SPLIT_K = 2: the halves' partial sums, 2 * cdiv(N, BLOCK_M) *
          // BLOCK_M * CO f32, and an arrival count per tile,
          // cdiv(N, BLOCK_M) * cdiv(CO, BLOCK_N) i32, zero before the call
          // and after it (sparse::splitWorkspaceSize allocates for the
          // narrowest tiles). Unread with SPLIT_K = 1.
          .arg(pointer("ws_ptr", "f32").divisibility(16))
          .arg(pointer("arrivals_ptr", "i32").divisibility(16))
          .arg(scalar("N", "i32").doNotSpecialize())
          .arg(scalar("CI", "i32"))
          .arg(scalar("CO", "i32"))
          .arg(scalar("V", "i32"))
          .arg(scalar("stride_x", "i32").byDefault("CI"))
          .arg(scalar("stride_y", "i32").byDefault("CO"))
          // The rows of X: a submanifold convolution's are its N voxels.
          .arg(scalar("NI", "i32").doNotSpecialize().byDefault("N"))
          .candidate("BLOCK_N=32,BLOCK_K=32,num_warps=4,num_stages=3")
          .candidate("BLOCK_N=64,BLOCK_K=32,num_warps=4,num_stages=3")
          .candidate("BLOCK_N=64,BLOCK_K=64,num_warps=4,num_stages=3")
          .candidate("BLOCK_N=128,BLOCK_K=32,num_warps=4,num_stages=3")
          .candidate("BLOCK_N=128,BLOCK_K=64,num_warps=4,num_stages=4")
          .candidate("BLOCK_N=128,BLOCK_K=64,num_warps=8,num_stages=3")
          .candidate("BLOCK_N=256,BLOCK_K=64,num_warps=8,num_stages=3")
          // Wide channels: half the K steps (and waits) per offset, or a
          // 4-stage ring for 256-wide Co tiles (it won shell256/256 on the
          // H200). A 4-stage ring of 128 x 128 x 64 tiles on 8 warps lost
          // to 3 stages at BLOCK_M = 128, f16 (150 against 114 us at
          // shell128/128): 128 KB of shared memory a block against 96 KB,
          // one block per SM against two.
          .candidate("BLOCK_N=128,BLOCK_K=128,num_warps=8,num_stages=3")
          .candidate("BLOCK_N=256,BLOCK_K=64,num_warps=8,num_stages=4")
          // Two blocks an SM: 128 x 128 x 64 tiles on 8 warps take 96 KB of
          // shared memory, so two fit an SM, but at 136 registers a thread
          // two blocks of 256 threads do not (65536 registers an SM); capped
          // at 128 (122 used, no spills), one block's gathers and epilogue
          // overlap the other's MMAs. At the res-256 shell, C = 128 (H100,
          // ncu): the winner before it, 128 x 128 x 128 (196 KB, one block
          // an SM, no warp eligible 68% of the time), took 322.7 us; this
          // one won, 283.0 us (no warp eligible 56%).
          .candidate("BLOCK_N=128,BLOCK_K=64,num_warps=8,num_stages=3,"
                     "min_blocks_per_sm=2")
          .candidate("BLOCK_N=32,BLOCK_K=16,num_warps=4,num_stages=4")
          // Row blocks in halves, for launches under one wave (below): on
          // the H200, 3000 voxels, C = 256, 128-row blocks: 44.2 against
          // 67.4 us (the first); C = 128: 28.2 against 37.8; C = 64 with
          // 64-row blocks: 15.0 against 19.4 (the third).
          .candidate("BLOCK_N=128,BLOCK_K=128,num_warps=8,num_stages=3,"
                     "SPLIT_K=2")
          .candidate("BLOCK_N=128,BLOCK_K=64,num_warps=4,num_stages=4,"
                     "SPLIT_K=2")
          .candidate("BLOCK_N=64,BLOCK_K=64,num_warps=4,num_stages=3,"
                     "SPLIT_K=2")
          // Tiles past twice the channels compute mostly masked columns or
          // K steps: not worth compiling (CO = 32 keeps BLOCK_N 32 and 64;
          // a few channels keep K steps of 16 and 32, so that wide column
          // tiles stay candidates).
          .pruneUnless("BLOCK_N <= max(32, 2 * CO)",
                       "a wider column tile is mostly masked columns")
          .pruneUnless("BLOCK_K <= max(32, 2 * CI)",
                       "a deeper K step is mostly masked channels")
          // Tiles of an eighth of the channels or less: eight or more
          // column tiles gathering the same rows again, or eight or more K
          // steps a neighbour. In the H200's tunings of 2026-12-05 (320
          // keys of the forward and the input gradient, N from 1 to 2^18,
          // 3 to 384 channels) such a candidate never won: 72 timings of
          // BLOCK_N <= CO / 8 at 1.09x the key's best or slower in 9 of
          // 10, 210 of BLOCK_K <= CI / 8 at 1.16x; pruned, the 320 keys'
          // winners are the same and 9% fewer candidates compile.
          .pruneUnless("8 * BLOCK_N > CO",
                       "a column tile of an eighth of the channels or less "
                       "never won")
          .pruneUnless("8 * BLOCK_K > CI",
                       "a K step of an eighth of the channels or less never "
                       "won")
          // Halves pay where twice the tiles still start at once on the
          // H200's 132 SMs: the launch then lasts about its busiest half
          // block instead of its busiest block. Where there are more, the
          // busiest-first order already keeps the SMs even and the halves'
          // second epilogue and partials only cost (the res-64 shell, C =
          // 256, 119 blocks: 110.7 us at best in halves against 101.3
          // whole; 6000 voxels: 70.4 against 67.9).
          // Counted at the largest N of the call's ceil(log2 N) bucket, so
          // that the key decides it: every size of a tuned bucket reuses its
          // winner (and a bundle packed from a few sizes serves them all).
          .pruneUnless("(SPLIT_K - 1) * cdiv(next_power_of_2(N), BLOCK_M) * "
                       "cdiv(CO, BLOCK_N) <= 66",
                       "halves pay only where twice the tiles start at once")
          // A first use without tuning (TILEC_FIRST_USE=predict): column
          // tiles covering the output channels up to 128, K steps as deep as
          // the input channels allow, halves where the tiles fill under half
          // the SMs, 32-deep K steps where there are many tiles. Over the 51
          // layers of a SpUNet's forward and input gradient (H100, f16, 11
          // first-call tunings of 2026-12-07), with the row block a
          // convolution predicts (convRowBlocks), these run the layers in
          // 1.04x the time of each layer's tuned winner (at worst 1.36x),
          // against 1.34x for each key's most common winner.
          .predictWhen({"CO <= 32", "CI >= 32"},
                       "BLOCK_N=32,BLOCK_K=32,num_warps=4,num_stages=3")
          .predictWhen({"CO <= 32"},
                       "BLOCK_N=32,BLOCK_K=16,num_warps=4,num_stages=4")
          .predictWhen({"CO <= 64", "CI >= 64",
                        "cdiv(next_power_of_2(N), BLOCK_M) * cdiv(CO, 64) "
                        "<= 66"},
                       "BLOCK_N=64,BLOCK_K=64,num_warps=4,num_stages=3,"
                       "SPLIT_K=2")
          .predictWhen({"CO <= 64", "CI >= 64"},
                       "BLOCK_N=64,BLOCK_K=64,num_warps=4,num_stages=3")
          .predictWhen({"CO <= 64"},
                       "BLOCK_N=64,BLOCK_K=32,num_warps=4,num_stages=3")
          .predictWhen(
              {"cdiv(next_power_of_2(N), BLOCK_M) * cdiv(CO, 128) >= 400"},
              "BLOCK_N=128,BLOCK_K=32,num_warps=4,num_stages=3")
          .predictWhen({"CI >= 128",
                        "cdiv(next_power_of_2(N), BLOCK_M) * cdiv(CO, 128) "
                        "<= 66"},
                       "BLOCK_N=128,BLOCK_K=128,num_warps=8,num_stages=3,"
                       "SPLIT_K=2")
          .predictWhen({"CI >= 128"},
                       "BLOCK_N=128,BLOCK_K=128,num_warps=8,num_stages=3")
          .predictWhen({"cdiv(next_power_of_2(N), BLOCK_M) * cdiv(CO, 128) "
                        "<= 66"},
                       "BLOCK_N=128,BLOCK_K=64,num_warps=4,num_stages=4,"
                       "SPLIT_K=2")
          .predictWhen({}, "BLOCK_N=128,BLOCK_K=64,num_warps=4,num_stages=4")
          .key("LOG2_N", "ceil(log2(N))")
          .key("CI")
          .key("CO")
          .key("V")
          .key("BLOCK_M")
          .key("HAS_BIAS")
          .key("TRANSPOSE_W")
          .key("DTYPE")
          .key("ALLOW_TF32")
          // The entries' format (offset | 64-row groups << 16): winners and
          // cubins cached for plain offsets do not match these keys.
          .key("ENTRY_FORMAT", "2")
          // Block b's list at b * V, blk_count[b] entries: winners and cubins
          // cached for the lists at scanned starts do not match these keys.
          .key("LIST_STRIDE", "1")
          // Blocks run in blk_order's order: winners timed in plain order
          // do not match these keys.
          .key("BLOCK_ORDER", "1")
          // Winners tuned before rows moved to lean groups do not match; both
          // RowOrders share the key (a winner of one runs on the other).
          .key("ROW_ORDER", "2")
          // Winners tuned before the split candidates existed, or pruned by
          // the exact count of row blocks (version 1), do not match these
          // keys.
          .key("SPLIT_CANDIDATES", "2")
          // Winners tuned before the two-blocks-an-SM candidate existed do
          // not match these keys.
          .key("BLOCKS_PER_SM_CANDIDATES", "1")
          .grid({"SPLIT_K * cdiv(CO, BLOCK_N) * cdiv(N, BLOCK_M)"})
          // Offsets are i32. The voxels the maps name are rows of X, so X's
          // offsets stay below (NI - 1) * stride_x + CI.
          .require("(NI - 1) * stride_x + CI < 2147483648",
                   "X's element offsets are 32-bit")
          .require("(N - 1) * stride_y + CO < 2147483648",
                   "Y's element offsets are 32-bit")
          .require("CO * V * CI < 2147483648", "W's element offsets are 32-bit")
          .require("V * N < 2147483648", "the map's offsets are 32-bit")
          .require("(SPLIT_K - 1) * 2 * cdiv(N, BLOCK_M) * BLOCK_M * CO < "
                   "2147483648",
                   "the partial sums' offsets are 32-bit")
          .require("SKIP_ROW_GROUPS * BLOCK_M <= 1024",
                   "an offset list entry holds 16 row groups")
          // The pipelined loop divides its step by cdiv(CI, BLOCK_K) ahead
          // of the first step, also when there is none.
          .require("CI >= 1", "there is an input channel")
          .require("CO >= 1", "there is an output channel")
          .require("stride_x >= CI", "rows of X do not overlap")
          .require("stride_y >= CO", "rows of Y do not overlap")
          // The dense bound (every offset of every voxel); the useful count
          // depends on the map (docs/sparse-conv.md).
          .flops("2 * N * CO * CI * V")
          // A voxel cloud of N voxels (test/reference/sparse_conv_fwd.cpp).
          .testSizes({{"N", 3000}, {"CI", 64}, {"CO", 64}, {"V", 27}},
                     {{"N", 777}, {"CI", 3}, {"CO", 17}, {"V", 27}}),
      buildSparseConv);
  return kernel;
}
