//===- Passes.td - tilec conversion passes -----------------*- tablegen -*-===//

#ifndef TILEC_CONVERSION_PASSES_TD
#define TILEC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTileToTileGPU : Pass<"convert-tile-to-tilegpu", "mlir::ModuleOp"> {
  let summary = "Assign a layout to every tensor (ttir -> ttgir)";
  let description = [{
    Gives every tensor Triton's default blocked layout for its shape (one
    element per thread, lanes then warps along the fastest dimension),
    reduction results the slice of their operand's layout, and dot operands
    `dot_op` layouts of the accumulator's; `tilegpu.convert_layout` ops are
    inserted where an op needs its operand in another layout. The target is
    recorded as module attributes.
  }];
  let dependentDialects = ["::tilec::tilegpu::TileGPUDialect"];
  let options = [
    Option<"numWarps", "num-warps", "unsigned", "4", "Warps per CTA">,
    Option<"threadsPerWarp", "threads-per-warp", "unsigned", "32",
           "Threads per warp">,
    Option<"target", "target", "std::string", "\"sm_90\"",
           "GPU architecture, e.g. sm_80 or sm_90">,
  ];
}

def ConvertTileGPUToLLVM : Pass<"convert-tilegpu-to-llvm", "mlir::ModuleOp"> {
  let summary = "Lower ttgir to the LLVM and NVVM dialects (ttgir -> llir)";
  let description = [{
    Every tensor becomes the registers one thread holds, as its layout's
    linear map says; each op becomes per-thread code whose indices come from
    that map (lane and warp ids, constant register offsets). Shared memory
    serves layout conversions and cross-warp reductions through one dynamic
    buffer whose size is recorded in `tilegpu.shared`. Kernels become
    `llvm.func`s with `nvvm.kernel` and `nvvm.maxntid`.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::math::MathDialect"];
}

#endif // TILEC_CONVERSION_PASSES_TD
