//===- TiledMatmul.h - the K loop shared by the matmul kernels --*- C++ -*-===//
//
// matmul and gather_matmul differ in how they find their rows of A; the K
// loop (masked tile loads, dot, pointer advance) is the same.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_KERNELS_TILEDMATMUL_H
#define TILEC_KERNELS_TILEDMATMUL_H

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/contract/KernelDescription.h"

#include <vector>

namespace tilec::kernel {

/// The operands of a K loop over BLOCK_M x BLOCK_K tiles of A and
/// BLOCK_K x BLOCK_N tiles of B.
struct KLoopOperands {
  Tensor aPtrs;    // [BLOCK_M, BLOCK_K], advancing by BLOCK_K columns
  Tensor bPtrs;    // [BLOCK_K, BLOCK_N], advancing by BLOCK_K rows
  Tensor aRowMask; // [BLOCK_M, 1]: rows of A that exist
  Tensor colMask;  // [1, BLOCK_N]: columns of B that exist
  Tensor kRow;     // [1, BLOCK_K]: 0..BLOCK_K
  Tensor kCol;     // [BLOCK_K, 1]: 0..BLOCK_K
  Tensor k;        // K
  Tensor strideAK; // elements between columns of A
  Tensor strideBK; // elements between rows of B
};

/// M, N, K and the six strides of A [M, K], B [K, N] and C [M, N], dense
/// row-major unless the call says otherwise; no divisibility is declared, the
/// call's values specialize them, from %2 (M from `mSpecializedFrom`: M only
/// masks rows, and a kernel keyed by a bucket of M tunes once per fact).
std::vector<ArgumentDecl> matmulSizesAndStrides(int64_t mSpecializedFrom = 2);

/// ALLOW_TF32 selects tf32 tensor-core inputs for f32 dots.
tile::InputPrecision dotPrecision(KernelBuilder &kb, mlir::Type dtype);

/// The f32 accumulator of sum over K of A tile x B tile; reads past K, and
/// masked rows and columns, read zeros.
Tensor accumulateOverK(KernelBuilder &kb, const KLoopOperands &operands,
                       int64_t blockM, int64_t blockN, int64_t blockK,
                       tile::InputPrecision precision);

/// The same sum where A [M, K] and B [K, N] are whole arrays: each step
/// loads its blocks with loadTile (so that on sm_90a they are TMA copies),
/// the block of A at (rowStart, k * BLOCK_K), of B at (k * BLOCK_K,
/// colStart).
Tensor accumulateTilesOverK(KernelBuilder &kb,
                            const KernelBuilder::TileOfArray &a,
                            const KernelBuilder::TileOfArray &b,
                            Tensor rowStart, Tensor colStart, int64_t blockM,
                            int64_t blockN, int64_t blockK,
                            tile::InputPrecision precision);

} // namespace tilec::kernel

#endif // TILEC_KERNELS_TILEDMATMUL_H
