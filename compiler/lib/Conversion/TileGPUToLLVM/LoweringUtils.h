//===- LoweringUtils.h - shared pieces of the ttgir -> LLVM lowering ------===//
//
// Private to lib/Conversion/TileGPUToLLVM. A tensor with a distributed layout
// lowers to the registers one thread holds (a 1:N type conversion); these
// helpers compute where those registers sit in the tensor and move them
// through shared memory.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_LIB_CONVERSION_TILEGPUTOLLVM_LOWERINGUTILS_H
#define TILEC_LIB_CONVERSION_TILEGPUTOLLVM_LOWERINGUTILS_H

#include "tilec/Dialect/Tile/IR/Tile.h"
#include "tilec/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace tilec::lowering {

/// Vector width (elements) of each load/store, decided before conversion
/// from the axis analysis.
using VectorWidthQuery = std::function<unsigned(mlir::Operation *)>;

/// The registers of a tensor: N values, one per register of its layout.
using Registers = llvm::SmallVector<mlir::Value>;

/// Lane id and warp id of the executing thread (i32).
struct ThreadId {
  mlir::Value lane, warp;
};
ThreadId getThreadId(mlir::OpBuilder &builder, mlir::Location loc,
                     unsigned threadsPerWarp);

/// The per-thread part of the coordinates of layout `layout` (one i32 per
/// dimension): the contribution of the lane and warp bits.
llvm::SmallVector<mlir::Value>
emitThreadCoords(mlir::OpBuilder &builder, mlir::Location loc,
                 const tilegpu::LinearLayout &layout, ThreadId thread);

/// Full coordinates (i32 values) of every register of `layout`.
llvm::SmallVector<llvm::SmallVector<mlir::Value>>
emitRegisterCoords(mlir::OpBuilder &builder, mlir::Location loc,
                   const tilegpu::LinearLayout &layout, ThreadId thread);

/// i32 constant.
mlir::Value i32Const(mlir::OpBuilder &builder, mlir::Location loc,
                     int64_t value);

/// Row-major linear index of `coords` in `shape`.
mlir::Value linearize(mlir::OpBuilder &builder, mlir::Location loc,
                      llvm::ArrayRef<mlir::Value> coords,
                      llvm::ArrayRef<int64_t> shape);

/// Base address of the dynamic shared memory buffer (!llvm.ptr<3>).
mlir::Value getSharedMemoryBase(mlir::OpBuilder &builder, mlir::Location loc,
                                mlir::Operation *anchor);
/// Address of the scratch of `op`: the dynamic buffer at the op's
/// `tilegpu.offset`, which the lowering checks for before converting.
mlir::Value getScratchBase(mlir::OpBuilder &builder, mlir::Location loc,
                           mlir::Operation *op);
/// The type a value takes in shared memory (i1 -> i8, pointers -> i64).
mlir::Type getSharedStorageType(mlir::Type type);
mlir::Value toSharedStorage(mlir::OpBuilder &builder, mlir::Location loc,
                            mlir::Value value);
mlir::Value fromSharedStorage(mlir::OpBuilder &builder, mlir::Location loc,
                              mlir::Value stored, mlir::Type type);
void emitBarrier(mlir::OpBuilder &builder, mlir::Location loc);

/// The lane and warp id bits that select copies of the same elements of a
/// value of `type` in `module`: a tensor's zero lane and warp bases; every
/// bit for a scalar, which every thread holds.
struct CopyBits {
  unsigned laneMask, warpMask;
};
CopyBits getCopyBits(mlir::Type type, mlir::ModuleOp module);
/// Whether `id`'s bits in `mask` are all zero (i1); null when `mask` is 0.
mlir::Value emitBitsAreZero(mlir::OpBuilder &builder, mlir::Location loc,
                            mlir::Value id, unsigned mask);
/// True in the one thread of each group of copies (its copy bits are zero),
/// so that an element is written once; null when nothing is copied.
mlir::Value emitOwnerPredicate(mlir::OpBuilder &builder, mlir::Location loc,
                               mlir::Type type, mlir::ModuleOp module);

/// `a <kind> b` as tile.reduce and tile.scan combine elements (NaN-propagating
/// max/min on floats).
mlir::Value emitCombine(mlir::OpBuilder &builder, mlir::Location loc,
                        tile::ReduceKind kind, mlir::Value a, mlir::Value b);

/// shfl.sync of any value up to 64 bits (moved as 32-bit words) over the full
/// warp: `laneOrDelta` is the source lane (idx), the lane offset (up, down)
/// or the lane mask (bfly).
mlir::Value emitShuffle(mlir::OpBuilder &builder, mlir::Location loc,
                        mlir::Value value, mlir::NVVM::ShflKind kind,
                        mlir::Value laneOrDelta);

/// A 2-D tile in shared memory laid out as a shared encoding says:
/// `rowDim` strided, `colDim` contiguous (dimension numbers of the tensor),
/// the `vec`-element chunks of a row XOR-swizzled by the row's phase. The
/// columns are cut into blocks of `blockCols`, each holding every row, one
/// block after the other: #tilegpu.swizzled_shared has one block,
/// #tilegpu.nvmma_shared one per swizzle width.
struct SwizzledTile {
  unsigned rowDim, colDim;
  int64_t rows, cols, blockCols;
  unsigned vec, perPhase, maxPhase;

  /// The tile `encoding` makes of the trailing two dimensions of `shape`.
  static SwizzledTile get(tilegpu::SharedEncodingInterface encoding,
                          llvm::ArrayRef<int64_t> shape,
                          unsigned elementBytes);
  /// Element offset of (row, col) from the start of the tile.
  mlir::Value offset(mlir::OpBuilder &builder, mlir::Location loc,
                     mlir::Value row, mlir::Value col) const;
  /// The same offset of constant coordinates. Every step of it moves whole
  /// bit fields (the sizes are powers of two) or XORs them, so it is linear
  /// over XOR: offset(a ^ b) = offset(a) ^ offset(b) within the tile.
  int64_t offset(int64_t row, int64_t col) const;
  /// Elements of a row that stay contiguous and in order when stored: a
  /// chunk, or the largest power of two dividing a block's row when
  /// unswizzled.
  int64_t contiguousElements() const;
};

/// The register bits of `layout` (a mask over its register bases, from bit
/// log2(`vec`): the registers of a vector share an address) whose part of an
/// element's offset `offsetOf` depends on the thread. `offsetOf` must be
/// linear over XOR in the coordinates' bits, as a swizzled buffer's offsets
/// are (SwizzledTile::offset). A register basis whose offset shares no bit
/// with any offset the lane and warp bases and the thread-dependent register
/// bases produce adds its offset whatever the thread: the offset of
/// registers r is offsetOf(thread, r & mask) + offsetOf(r & ~mask), the
/// second a constant.
unsigned getThreadDependentRegisters(
    const tilegpu::LinearLayout &layout, unsigned vec,
    llvm::function_ref<int64_t(llvm::ArrayRef<int64_t>)> offsetOf);

/// How many consecutive registers of `layout` hold consecutive elements along
/// `colDim` (at most `maxVec`) such that every group of them starts aligned to
/// its size: one vector access each.
unsigned contiguousRegisters(const tilegpu::LinearLayout &layout,
                             unsigned colDim, unsigned maxVec);

/// Whether ldmatrix on `tile` (with .trans when `trans`: pairs of registers
/// run along the strided dim) gives each thread the registers of `layout`,
/// 16-bit elements. `layout` must have 32 lanes.
bool matchesLdmatrixLanes(const tilegpu::LinearLayout &layout,
                          const SwizzledTile &tile, bool trans);

/// The registers of `layout` (matchesLdmatrixLanes holds) read with ldmatrix
/// x4 (fewer matrices when the layout has fewer registers) from `tile` at
/// `base`.
Registers emitLdmatrixLoads(mlir::OpBuilder &builder, mlir::Location loc,
                            mlir::Value base, const SwizzledTile &tile,
                            const tilegpu::LinearLayout &layout, bool trans,
                            mlir::Type element, ThreadId thread);

/// Emits an error at the first shared-memory buffer op of `module` the
/// lowering cannot take: a local_alloc whose `tilegpu.offset` is not 16-byte
/// aligned, a swizzle that moves chunks past a row's end, or a cp.async of
/// less than 4 bytes per vector (`vectorWidth` as for global loads). Runs
/// after the check that every user of shared memory has its offset.
mlir::LogicalResult
verifySharedMemoryBuffers(mlir::ModuleOp module,
                          const VectorWidthQuery &vectorWidth);

/// Pattern population, one function per file.
void populateElementwiseOpToLLVMPatterns(
    const mlir::LLVMTypeConverter &converter,
    mlir::RewritePatternSet &patterns);
void populateMemoryOpToLLVMPatterns(const mlir::LLVMTypeConverter &converter,
                                    mlir::RewritePatternSet &patterns,
                                    VectorWidthQuery vectorWidth);
void populateSharedMemoryOpToLLVMPatterns(
    const mlir::LLVMTypeConverter &converter,
    mlir::RewritePatternSet &patterns);
/// blocked -> dot_op<mma v2> conversions through swizzled shared memory and
/// ldmatrix; takes precedence over the generic convert_layout pattern.
void populateDotOperandToLLVMPatterns(const mlir::LLVMTypeConverter &converter,
                                      mlir::RewritePatternSet &patterns);
/// local_alloc/dealloc, memdesc_index, local_load/store, cp.async and its
/// groups: the explicit shared-memory buffers of ttgir.
void populateSharedMemoryBufferOpToLLVMPatterns(
    const mlir::LLVMTypeConverter &converter, mlir::RewritePatternSet &patterns,
    VectorWidthQuery vectorWidth);
/// atomic_rmw and atomic_cas: predicated PTX atom, once per element, the old
/// values given to every copy.
void populateAtomicOpToLLVMPatterns(const mlir::LLVMTypeConverter &converter,
                                    mlir::RewritePatternSet &patterns);
/// scan: in registers, across lanes (shfl.up/down), across warps (shared
/// memory).
void populateScanOpToLLVMPatterns(const mlir::LLVMTypeConverter &converter,
                                  mlir::RewritePatternSet &patterns);
/// histogram and bin_rank: counters in shared memory, a warp's equal values
/// grouped with match.any.sync.
void populateHistogramOpToLLVMPatterns(const mlir::LLVMTypeConverter &converter,
                                       mlir::RewritePatternSet &patterns);
void populateDotOpToLLVMPatterns(const mlir::LLVMTypeConverter &converter,
                                 mlir::RewritePatternSet &patterns);
/// warpgroup_dot (and its wait) as Hopper wgmma with shared-memory
/// descriptors.
void populateWarpGroupDotOpToLLVMPatterns(
    const mlir::LLVMTypeConverter &converter,
    mlir::RewritePatternSet &patterns);

/// mbarriers (init, expect, wait, inval) and TMA copies, issued by thread 0
/// as predicated inline PTX.
void populateTmaOpToLLVMPatterns(const mlir::LLVMTypeConverter &converter,
                                 mlir::RewritePatternSet &patterns);

} // namespace tilec::lowering

#endif // TILEC_LIB_CONVERSION_TILEGPUTOLLVM_LOWERINGUTILS_H
