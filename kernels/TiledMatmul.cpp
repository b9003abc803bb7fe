//===- TiledMatmul.cpp - the K loop shared by the matmul kernels ----------===//

#include "TiledMatmul.h"

namespace tilec::kernel {

std::vector<ArgumentDecl> matmulSizesAndStrides() {
  return {scalar("M", "i32"),
          scalar("N", "i32"),
          scalar("K", "i32"),
          scalar("stride_am", "i32").byDefault("K"),
          scalar("stride_ak", "i32").byDefault("1"),
          scalar("stride_bk", "i32").byDefault("N"),
          scalar("stride_bn", "i32").byDefault("1"),
          scalar("stride_cm", "i32").byDefault("N"),
          scalar("stride_cn", "i32").byDefault("1")};
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

} // namespace tilec::kernel
