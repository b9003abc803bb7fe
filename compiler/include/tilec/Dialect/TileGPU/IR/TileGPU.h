//===- TileGPU.h - the tilegpu dialect (ttgir) ------------------*- C++ -*-===//

#ifndef TILEC_DIALECT_TILEGPU_IR_TILEGPU_H
#define TILEC_DIALECT_TILEGPU_IR_TILEGPU_H

#include "tilec/Dialect/Tile/IR/Tile.h"
#include "tilec/Dialect/TileGPU/IR/LinearLayout.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tilec/Dialect/TileGPU/IR/TileGPUDialect.h.inc"

namespace tilec::tilegpu {
mlir::FailureOr<llvm::SmallVector<unsigned>>
parseUnsignedList(mlir::AsmParser &parser);
void printUnsignedList(mlir::AsmPrinter &printer,
                       llvm::ArrayRef<unsigned> values);
} // namespace tilec::tilegpu

#include "tilec/Dialect/TileGPU/IR/TileGPUAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tilec/Dialect/TileGPU/IR/TileGPUAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tilec/Dialect/TileGPU/IR/TileGPUTypes.h.inc"

namespace tilec::tilegpu {
/// The CTA's shared memory as a side-effect resource.
struct SharedMemory : mlir::SideEffects::Resource::Base<SharedMemory> {
  llvm::StringRef getName() final { return "<SharedMemory>"; }
};
} // namespace tilec::tilegpu

#define GET_OP_CLASSES
#include "tilec/Dialect/TileGPU/IR/TileGPUOps.h.inc"

namespace tilec::tilegpu {
/// The distributed layout of a tensor type, or null when it has none.
DistributedLayoutInterface getDistributedLayout(mlir::Type type);
/// The linear layout of a tensor type with a distributed encoding.
LinearLayout getLinearLayout(mlir::RankedTensorType type);
/// Triton's default: one element per thread, lanes then warps along the
/// fastest (last) dimension first.
BlockedEncodingAttr getDefaultBlockedEncoding(mlir::MLIRContext *context,
                                              llvm::ArrayRef<int64_t> shape,
                                              unsigned numWarps,
                                              unsigned threadsPerWarp);
/// A blocked layout with the given per-thread vector and order, lanes and
/// warps filled along `order` up to the shape.
BlockedEncodingAttr
getBlockedEncoding(mlir::MLIRContext *context, llvm::ArrayRef<int64_t> shape,
                   llvm::ArrayRef<unsigned> sizePerThread,
                   llvm::ArrayRef<unsigned> order, unsigned numWarps,
                   unsigned threadsPerWarp);
/// The shared layout of a 2-D tile of `type` stored with `order` and read
/// into the registers of `operand`, such that the reads of a warp fall in
/// different banks. By default ldmatrix's (16-byte vectors): 16-byte chunks,
/// one phase per 128 bytes of row, as many phases as fit both 8 and the
/// row's chunks, so that the eight rows an ldmatrix reads fall in different
/// banks (the choice Triton's builder makes for mma operands). A 32-bit mma
/// operand (tf32) whose contiguous dimension is M or N, in rows of 32 words
/// or more, is read a word at a time, 4 rows by 8 words per warp: it takes
/// 32-byte chunks over 4 phases, one per row, which put the 4 rows in 4
/// different quarters of the banks (ldmatrix's swizzle puts rows r and
/// r xor 1 on the same ones).
SwizzledSharedEncodingAttr
getOperandSharedEncoding(mlir::RankedTensorType type,
                         llvm::ArrayRef<unsigned> order,
                         DotOperandEncodingAttr operand);
/// The layout wgmma reads a 2-D tile of `type` stored with `order` in: the
/// swizzle of as many bytes of the contiguous dimension as fit 128; null
/// below its 32-byte minimum.
NvmmaSharedEncodingAttr getNvmmaSharedEncoding(mlir::RankedTensorType type,
                                               llvm::ArrayRef<unsigned> order);

/// Elements of K one wgmma instruction spans for operands of `element`:
/// 32 bytes (k16 for f16/bf16, k8 for f32 read as tf32).
int64_t getWarpGroupInstrK(mlir::Type element);
/// Whether wgmma can read an operand of `element` whose tile is contiguous
/// along K. Only 16-bit operands may be transposed (MN-major): tf32 reads
/// both operands K-major.
bool warpGroupReadsMNMajor(mlir::Type element);
/// The order of a warpgroup operand's shared tile (operand `opIdx`, 0 for
/// a, 1 for b): `preferred` (the order its loads have) where wgmma reads
/// it, otherwise K-major.
llvm::SmallVector<unsigned> getWarpGroupOperandOrder(
    mlir::Type element, unsigned opIdx, llvm::ArrayRef<unsigned> preferred);
/// Whether a warpgroup dot of `element` whose operands arrive contiguous
/// along `aContiguousDim` of a (M x K) and `bContiguousDim` of b (K x N) is
/// computed transposed, D^T = B^T A^T: where wgmma cannot read b MN-major
/// (tf32) but a is K-major. B^T is then wgmma's A, from registers (which
/// read any shared layout, so b's tile keeps its loads' order and 16-byte
/// copies), and A^T wgmma's B, K-major as a's tile already is. Otherwise
/// b would be transposed into a K-major tile element by element. It pays
/// only where b's rows copy in 16-byte pieces (`bCopyBytes`, what its loads
/// allow along N): with narrower copies the transposing copy costs the same
/// and the register fragments are extra work (1000^3 on the H200: 45.8
/// TFLOP/s transposed against 60 untransposed).
bool warpGroupComputesTransposed(mlir::Type element, unsigned bCopyBytes,
                                 unsigned aContiguousDim,
                                 unsigned bContiguousDim);
} // namespace tilec::tilegpu

#endif // TILEC_DIALECT_TILEGPU_IR_TILEGPU_H
