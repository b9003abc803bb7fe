//===- TestKernels.h - MLIR inputs shared by the Target tests ---*- C++ -*-===//

#ifndef TILEC_TEST_UNIT_TARGET_TESTKERNELS_H
#define TILEC_TEST_UNIT_TARGET_TESTKERNELS_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

namespace tilec::test {

/// b[tid] = expf(a[tid] * s + a[tid]): a mul+add to contract into fma and a
/// libdevice call.
inline constexpr const char *kExpKernel = R"mlir(
module {
  llvm.func @__nv_expf(f32) -> f32
  llvm.func @k(%a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %s: f32)
      attributes {nvvm.kernel} {
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %i = llvm.sext %tid : i32 to i64
    %pa = llvm.getelementptr %a[%i] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    %x = llvm.load %pa : !llvm.ptr<1> -> f32
    %m = llvm.fmul %x, %s : f32
    %y = llvm.fadd %m, %x : f32
    %e = llvm.call @__nv_expf(%y) : (f32) -> f32
    %pb = llvm.getelementptr %b[%i] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    llvm.store %e, %pb : f32, !llvm.ptr<1>
    llvm.return
  }
}
)mlir";

/// b[tid] = a[tid] * s + a[tid] without libdevice, with the calling
/// convention spelled out instead of the nvvm.kernel attribute.
inline constexpr const char *kMadKernel = R"mlir(
module {
  llvm.func ptx_kernelcc @mad(%a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %s: f32) {
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %i = llvm.sext %tid : i32 to i64
    %pa = llvm.getelementptr %a[%i] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    %x = llvm.load %pa : !llvm.ptr<1> -> f32
    %m = llvm.fmul %x, %s : f32
    %y = llvm.fadd %m, %x : f32
    %pb = llvm.getelementptr %b[%i] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    llvm.store %y, %pb : f32, !llvm.ptr<1>
    llvm.return
  }
}
)mlir";

/// A context that knows the LLVM and NVVM dialects.
inline void loadDialects(mlir::MLIRContext &ctx) {
  ctx.loadDialect<mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect>();
}

inline mlir::OwningOpRef<mlir::ModuleOp> parse(mlir::MLIRContext &ctx,
                                               const char *source) {
  loadDialects(ctx);
  return mlir::parseSourceString<mlir::ModuleOp>(source,
                                                 mlir::ParserConfig(&ctx));
}

} // namespace tilec::test

#endif // TILEC_TEST_UNIT_TARGET_TESTKERNELS_H
