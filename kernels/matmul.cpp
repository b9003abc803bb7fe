//===- matmul.cpp - C = A * B, tiled, f32 accumulation --------------------===//
//
// C[M, N] = A[M, K] * B[K, N] with f16, bf16 or f32 inputs (DTYPE), accumulated in
// f32 and stored as DTYPE. Every matrix has two strides, as in Triton's matmul
// tutorial, and none is declared divisible: each call's values specialize the
// kernel (a stride of 1 folds away, a multiple of 16 vectorizes), so a dense
// row-major call compiles to the code of a kernel with unit inner strides,
// and a transposed B or an odd row stride runs correctly. M, N and K need not
// divide the blocks: loads and stores are masked at the edges. A and B are
// read a block at a time (loadTile): on sm_90a, where their rows start on
// 16 bytes and their columns are contiguous, TMA copies them.
//
// Grid: cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N) programs along x. Program ids are
// swizzled in groups of GROUP_M block rows (as in Triton's matmul tutorial),
// so that programs running at the same time share columns of B in L2.
//
//===----------------------------------------------------------------------===//

#include "TiledMatmul.h"

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

static void buildMatmul(KernelBuilder &kb) {
  int64_t blockM = kb.param("BLOCK_M"), blockN = kb.param("BLOCK_N");
  int64_t blockK = kb.param("BLOCK_K"), groupM = kb.param("GROUP_M");
  mlir::Type dtype = kb.dtype("DTYPE");
  Tensor a = kb.arg("a_ptr"), b = kb.arg("b_ptr"), c = kb.arg("c_ptr");
  Tensor m = kb.arg("M"), n = kb.arg("N"), k = kb.arg("K");
  Tensor strideAM = kb.arg("stride_am"), strideAK = kb.arg("stride_ak");
  Tensor strideBK = kb.arg("stride_bk"), strideBN = kb.arg("stride_bn");
  Tensor strideCM = kb.arg("stride_cm"), strideCN = kb.arg("stride_cn");

  Tensor pid = kb.let("pid", kb.programId(0));
  Tensor numPidM = kb.let("num_pid_m", kb.cdiv(m, blockM));
  Tensor numPidN = kb.let("num_pid_n", kb.cdiv(n, blockN));
  Tensor numPidInGroup = kb.let("num_pid_in_group", groupM * numPidN);
  Tensor groupId = kb.let("group_id", pid / numPidInGroup);
  Tensor firstPidM = kb.let("first_pid_m", groupId * groupM);
  Tensor groupSizeM =
      kb.let("group_size_m", kb.minimum(numPidM - firstPidM, groupM));
  Tensor pidInGroup = kb.let("pid_in_group", pid % numPidInGroup);
  Tensor pidM = kb.let("pid_m", firstPidM + pidInGroup % groupSizeM);
  Tensor pidN = kb.let("pid_n", pidInGroup / groupSizeM);

  Tensor rowStart = kb.let("row_start", pidM * blockM);
  Tensor colStart = kb.let("col_start", pidN * blockN);
  Tensor acc = accumulateTilesOverK(
      kb, {a, m, k, strideAM, strideAK}, {b, k, n, strideBK, strideBN},
      rowStart, colStart, blockM, blockN, blockK, dotPrecision(kb, dtype));

  Tensor offsM = kb.let("offs_m", rowStart + kb.arange(0, blockM));
  Tensor offsN = kb.let("offs_n", colStart + kb.arange(0, blockN));
  Tensor rows = kb.let("rows", kb.expandDims(offsM, 1)); // [:, None]
  Tensor cols = kb.let("cols", kb.expandDims(offsN, 0)); // [None, :]
  Tensor rowMask = kb.let("row_mask", rows < m);
  Tensor colMask = kb.let("col_mask", cols < n);

  Tensor out = kb.let("out", kb.cast(acc, dtype));
  Tensor cPtrs = kb.let("c_ptrs", c + rows * strideCM + cols * strideCN);
  kb.store(cPtrs, out, rowMask & colMask);
}

TILEC_KERNEL(matmul) {
  static const KernelDefinition kernel(
      KernelDescription("matmul", "kernels/matmul.cpp", __LINE__)
          .param(MetaParameter("BLOCK_M").powerOfTwo().atLeast(
              16, "tile.dot operands are at least 16x16"))
          .param(MetaParameter("BLOCK_N").powerOfTwo().atLeast(
              16, "tile.dot operands are at least 16x16"))
          .param(MetaParameter("BLOCK_K").powerOfTwo().atLeast(
              16, "tile.dot operands are at least 16x16"))
          .param(MetaParameter("GROUP_M").atLeast(1).byDefault(8))
          .param(MetaParameter("ALLOW_TF32").atLeast(0).atMost(1).byDefault(0))
          .typeParam(TypeParameter("DTYPE", {"f16", "bf16", "f32"}).byDefault("f16"))
          .arg(pointer("a_ptr", "DTYPE").divisibility(16))
          .arg(pointer("b_ptr", "DTYPE").divisibility(16))
          .arg(pointer("c_ptr", "DTYPE").divisibility(16))
          .args(matmulSizesAndStrides())
          // Triton's matmul tutorial set for CUDA (f16).
          .candidate("BLOCK_M=128,BLOCK_N=256,BLOCK_K=64,GROUP_M=8,"
                     "num_warps=8,num_stages=3")
          .candidate("BLOCK_M=64,BLOCK_N=256,BLOCK_K=32,GROUP_M=8,"
                     "num_warps=4,num_stages=4")
          .candidate("BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,GROUP_M=8,"
                     "num_warps=4,num_stages=4")
          .candidate("BLOCK_M=128,BLOCK_N=64,BLOCK_K=32,GROUP_M=8,"
                     "num_warps=4,num_stages=4")
          .candidate("BLOCK_M=64,BLOCK_N=128,BLOCK_K=32,GROUP_M=8,"
                     "num_warps=4,num_stages=4")
          .candidate("BLOCK_M=128,BLOCK_N=32,BLOCK_K=32,GROUP_M=8,"
                     "num_warps=4,num_stages=4")
          .candidate("BLOCK_M=64,BLOCK_N=32,BLOCK_K=32,GROUP_M=8,"
                     "num_warps=2,num_stages=5")
          .candidate("BLOCK_M=32,BLOCK_N=64,BLOCK_K=32,GROUP_M=8,"
                     "num_warps=2,num_stages=5")
          // What Triton users tune for Hopper: 64-wide K steps feeding
          // wgmma from 3-4 stage rings, one or two warpgroups.
          .candidate("BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,GROUP_M=8,"
                     "num_warps=4,num_stages=4")
          .candidate("BLOCK_M=128,BLOCK_N=256,BLOCK_K=64,GROUP_M=8,"
                     "num_warps=8,num_stages=4")
          // Taller groups share more of B in L2 when A and B are far larger
          // than it (a sweep on the H200 put GROUP_M 16 or 32 first at
          // 4096^3 and 8192^3 as often as 8; which one wins moves with the
          // run).
          .candidate("BLOCK_M=128,BLOCK_N=256,BLOCK_K=64,GROUP_M=16,"
                     "num_warps=8,num_stages=4")
          .candidate("BLOCK_M=128,BLOCK_N=256,BLOCK_K=64,GROUP_M=32,"
                     "num_warps=8,num_stages=4")
          .candidate("BLOCK_M=256,BLOCK_N=128,BLOCK_K=64,GROUP_M=8,"
                     "num_warps=8,num_stages=3")
          .candidate("BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,GROUP_M=8,"
                     "num_warps=8,num_stages=4")
          // tf32 tiles are twice the bytes: 32-wide K steps keep two
          // warpgroups' 3-stage rings under the shared-memory limit.
          .candidate("BLOCK_M=128,BLOCK_N=256,BLOCK_K=32,GROUP_M=8,"
                     "num_warps=8,num_stages=3")
          .candidate("BLOCK_M=256,BLOCK_N=128,BLOCK_K=32,GROUP_M=8,"
                     "num_warps=8,num_stages=3")
          // Four stages of them just fit (196,608 B): one more step of
          // copies in flight for tf32, whose B^T comes through registers.
          .candidate("BLOCK_M=128,BLOCK_N=256,BLOCK_K=32,GROUP_M=8,"
                     "num_warps=8,num_stages=4")
          .candidate("BLOCK_M=256,BLOCK_N=128,BLOCK_K=32,GROUP_M=8,"
                     "num_warps=8,num_stages=4")
          .key("M")
          .key("N")
          .key("K")
          .key("DTYPE")
          .key("ALLOW_TF32")
          .grid({"cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)"})
          // Offsets into a matrix are i32 (as in Triton's kernel).
          .require("(M - 1) * stride_am + (K - 1) * stride_ak < 2147483648",
                   "A's element offsets are 32-bit")
          .require("(K - 1) * stride_bk + (N - 1) * stride_bn < 2147483648",
                   "B's element offsets are 32-bit")
          .require("(M - 1) * stride_cm + (N - 1) * stride_cn < 2147483648",
                   "C's element offsets are 32-bit")
          .flops("2 * M * N * K")
          .testSizes({{"M", 512}, {"N", 512}, {"K", 512}},
                     {{"M", 203}, {"N", 176}, {"K", 208}}),
      buildMatmul);
  return kernel;
}
