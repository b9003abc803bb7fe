//===- gather_matmul.cpp - C = A[idx] * B, rows of A gathered -------------===//
//
// C[m, :] = A[idx[m], :] * B for m < M, with f16, bf16 or f32 inputs (DTYPE),
// accumulated in f32 and stored as DTYPE. idx is an i32 vector; the value -1
// (0xFFFFFFFF read as unsigned) means "no row": that row of A reads zeros and
// its row of C is zero. This is the access pattern of the implicit GEMM of
// sparse submanifold convolution, where idx is one column of the neighbour
// map (see docs/kernels.md). Six strides, as in matmul.
//
// Grid: (cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)). N (the output channels) spans
// few blocks, so the programs along x for one column block run together and
// share its B tile in L2; the gathered rows of A have no order to exploit.
//
//===----------------------------------------------------------------------===//

#include "TiledMatmul.h"

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

static void buildGatherMatmul(KernelBuilder &kb) {
  int64_t blockM = kb.param("BLOCK_M"), blockN = kb.param("BLOCK_N");
  int64_t blockK = kb.param("BLOCK_K");
  mlir::Type dtype = kb.dtype("DTYPE");
  Tensor a = kb.arg("a_ptr"), b = kb.arg("b_ptr"), c = kb.arg("c_ptr");
  Tensor idx = kb.arg("idx_ptr");
  Tensor m = kb.arg("M"), n = kb.arg("N"), k = kb.arg("K");
  Tensor strideAM = kb.arg("stride_am"), strideAK = kb.arg("stride_ak");
  Tensor strideBK = kb.arg("stride_bk"), strideBN = kb.arg("stride_bn");
  Tensor strideCM = kb.arg("stride_cm"), strideCN = kb.arg("stride_cn");

  Tensor pidM = kb.let("pid_m", kb.programId(0));
  Tensor pidN = kb.let("pid_n", kb.programId(1));
  Tensor offsM = kb.let("offs_m", pidM * blockM + kb.arange(0, blockM));
  Tensor offsN = kb.let("offs_n", pidN * blockN + kb.arange(0, blockN));
  Tensor offsK = kb.let("offs_k", kb.arange(0, blockK));
  Tensor inRange = kb.let("in_range", offsM < m);

  // Rows of A to read; rows past M and missing rows (-1) read nothing, and
  // point at row 0 so that no address leaves A.
  Tensor gathered = kb.let("gathered", kb.load(idx + offsM, inRange, -1));
  Tensor hasRow = kb.let("has_row", inRange & (gathered != -1));
  Tensor aRows =
      kb.let("a_rows", kb.expandDims(kb.where(hasRow, gathered, 0), 1));
  Tensor aRowMask = kb.let("a_row_mask", kb.expandDims(hasRow, 1));

  Tensor kRow = kb.let("k_row", kb.expandDims(offsK, 0)); // [None, :]
  Tensor kCol = kb.let("k_col", kb.expandDims(offsK, 1)); // [:, None]
  Tensor cols = kb.let("cols", kb.expandDims(offsN, 0));  // [None, :]
  Tensor aPtrs = kb.let("a_ptrs", a + aRows * strideAM + kRow * strideAK);
  Tensor bPtrs = kb.let("b_ptrs", b + kCol * strideBK + cols * strideBN);
  Tensor colMask = kb.let("col_mask", cols < n);

  Tensor acc = accumulateOverK(
      kb, {aPtrs, bPtrs, aRowMask, colMask, kRow, kCol, k, strideAK, strideBK},
      blockM, blockN, blockK, dotPrecision(kb, dtype));

  // C keeps the order of idx: row m of C is output row m.
  Tensor out = kb.let("out", kb.cast(acc, dtype));
  Tensor rows = kb.let("rows", kb.expandDims(offsM, 1));
  Tensor cPtrs = kb.let("c_ptrs", c + rows * strideCM + cols * strideCN);
  kb.store(cPtrs, out, kb.expandDims(inRange, 1) & colMask);
}

TILEC_KERNEL(gather_matmul) {
  static const KernelDefinition kernel(
      KernelDescription("gather_matmul", "kernels/gather_matmul.cpp", __LINE__)
          .param(MetaParameter("BLOCK_M").powerOfTwo().atLeast(
              16, "tile.dot operands are at least 16x16"))
          .param(MetaParameter("BLOCK_N").powerOfTwo().atLeast(
              16, "tile.dot operands are at least 16x16"))
          .param(MetaParameter("BLOCK_K").powerOfTwo().atLeast(
              16, "tile.dot operands are at least 16x16"))
          .param(MetaParameter("ALLOW_TF32").atLeast(0).atMost(1).byDefault(0))
          .typeParam(TypeParameter("DTYPE", {"f16", "bf16", "f32"}).byDefault("f16"))
          .arg(pointer("a_ptr", "DTYPE").divisibility(16))
          .arg(pointer("b_ptr", "DTYPE").divisibility(16))
          .arg(pointer("c_ptr", "DTYPE").divisibility(16))
          .arg(pointer("idx_ptr", "i32").divisibility(16))
          // Keyed by ceil(log2(M)): M's facts stay Triton's (%16), so that a
          // bucket of voxel counts tunes at most twice.
          .args(matmulSizesAndStrides(/*mSpecializedFrom=*/16))
          .candidate("BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_warps=4,"
                     "num_stages=3")
          .candidate("BLOCK_M=128,BLOCK_N=64,BLOCK_K=32,num_warps=4,"
                     "num_stages=3")
          .candidate("BLOCK_M=64,BLOCK_N=128,BLOCK_K=32,num_warps=4,"
                     "num_stages=3")
          .candidate("BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,num_warps=8,"
                     "num_stages=3")
          .candidate("BLOCK_M=64,BLOCK_N=64,BLOCK_K=64,num_warps=4,"
                     "num_stages=2")
          .candidate("BLOCK_M=128,BLOCK_N=64,BLOCK_K=64,num_warps=8,"
                     "num_stages=2")
          .candidate("BLOCK_M=64,BLOCK_N=32,BLOCK_K=32,num_warps=2,"
                     "num_stages=4")
          .candidate("BLOCK_M=32,BLOCK_N=64,BLOCK_K=32,num_warps=2,"
                     "num_stages=4")
          .key("LOG2_M", "ceil(log2(M))")
          .key("N")
          .key("K")
          .key("DTYPE")
          .key("ALLOW_TF32")
          .grid({"cdiv(M, BLOCK_M)", "cdiv(N, BLOCK_N)"})
          // Offsets are i32. A's rows come from idx_ptr, whose values the
          // launch cannot see: the caller keeps them below 2^31 / stride_am.
          .require("(K - 1) * stride_bk + (N - 1) * stride_bn < 2147483648",
                   "B's element offsets are 32-bit")
          .require("(M - 1) * stride_cm + (N - 1) * stride_cn < 2147483648",
                   "C's element offsets are 32-bit")
          .flops("2 * M * N * K")
          // R: the rows of A that idx_ptr picks from.
          .testSizes({{"M", 512}, {"N", 256}, {"K", 256}, {"R", 1024}},
                     {{"M", 203}, {"N", 176}, {"K", 208}, {"R", 301}}),
      buildGatherMatmul);
  return kernel;
}
