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

#include "tilec/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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
void populateDotOpToLLVMPatterns(const mlir::LLVMTypeConverter &converter,
                                 mlir::RewritePatternSet &patterns);

} // namespace tilec::lowering

#endif // TILEC_LIB_CONVERSION_TILEGPUTOLLVM_LOWERINGUTILS_H
