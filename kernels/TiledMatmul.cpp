//===- TiledMatmul.cpp - the K loop shared by the matmul kernels ----------===//

#include "TiledMatmul.h"

namespace tilec::kernel {

std::vector<ArgumentDecl> matmulSizesAndStrides(int64_t mSpecializedFrom) {
  // Sizes and strides that are even, or multiples of 4 or 8, still let rows
  // copy 4 or 8 bytes at a time (an N of 2222 halves: the mask of B's and
  // C's columns changes every two elements, and so do their rows' starts).
  auto sized = [](const char *name) {
    return scalar(name, "i32").specializeFrom(2);
  };
  return {scalar("M", "i32").specializeFrom(mSpecializedFrom),
          sized("N"),
          sized("K"),
          sized("stride_am").byDefault("K"),
          sized("stride_ak").byDefault("1"),
          sized("stride_bk").byDefault("N"),
          sized("stride_bn").byDefault("1"),
          sized("stride_cm").byDefault("N"),
          sized("stride_cn").byDefault("1")};
}

tile::InputPrecision dotPrecision(KernelBuilder &kb, mlir::Type dtype) {
  return kb.param("ALLOW_TF32") && dtype.isF32() ? tile::InputPrecision::TF32
                                                 : tile::InputPrecision::IEEE;
}

Tensor accumulateOverK(KernelBuilder &kb, const KLoopOperands &operands,
                       int64_t blockM, int64_t blockN, int64_t blockK,
                       tile::InputPrecision precision) {
  Tensor acc0 = kb.let("acc", kb.zeros({blockM, blockN}, kb.f32Type()));
  // One K step: carried are the A and B pointers and the accumulator.
  auto kStep = [&](Tensor kTile, llvm::ArrayRef<Tensor> carried) -> Tensors {
    // Columns of A and rows of B past K read zeros.
    Tensor kLeft = kb.let("k_left", operands.k - kTile * blockK);
    Tensor aTile = kb.let(
        "a", kb.load(carried[0], operands.aRowMask & (operands.kRow < kLeft),
                     0.0));
    Tensor bTile = kb.let(
        "b", kb.load(carried[1], (operands.kCol < kLeft) & operands.colMask,
                     0.0));
    Tensor acc = kb.let("acc", kb.dot(aTile, bTile, carried[2], precision));
    Tensor nextA = kb.let("a_ptrs", carried[0] + operands.strideAK * blockK);
    Tensor nextB = kb.let("b_ptrs", carried[1] + operands.strideBK * blockK);
    return {nextA, nextB, acc};
  };
  Tensor kTiles = kb.let("k_tiles", kb.cdiv(operands.k, blockK));
  Tensors loop = kb.let("loop", kb.forRange(0, kTiles, 1,
                                            {operands.aPtrs, operands.bPtrs,
                                             acc0},
                                            kStep));
  return loop[2];
}

Tensor accumulateTilesOverK(KernelBuilder &kb,
                            const KernelBuilder::TileOfArray &a,
                            const KernelBuilder::TileOfArray &b,
                            Tensor rowStart, Tensor colStart, int64_t blockM,
                            int64_t blockN, int64_t blockK,
                            tile::InputPrecision precision) {
  Tensor acc0 = kb.let("acc", kb.zeros({blockM, blockN}, kb.f32Type()));
  auto kStep = [&](Tensor kTile, llvm::ArrayRef<Tensor> carried) -> Tensors {
    Tensor k0 = kb.let("k0", kTile * blockK);
    Tensor aTile = kb.let("a", kb.loadTile(a, rowStart, k0, blockM, blockK));
    Tensor bTile = kb.let("b", kb.loadTile(b, k0, colStart, blockK, blockN));
    return {kb.let("acc", kb.dot(aTile, bTile, carried[0], precision))};
  };
  Tensor kTiles = kb.let("k_tiles", kb.cdiv(a.cols, blockK));
  Tensors loop = kb.let("loop", kb.forRange(0, kTiles, 1, {acc0}, kStep));
  return loop[0];
}

} // namespace tilec::kernel
