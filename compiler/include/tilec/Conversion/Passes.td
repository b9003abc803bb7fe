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
    recorded as module attributes. A `tile.load_tile` stays for
    tilegpu-pipeline to copy with TMA where it can (sm_90a, num-stages >= 2,
    both operands of a warpgroup dot in a loop, arrays that tensor maps
    describe); every other one becomes pointers and a masked `tile.load`.
  }];
  let dependentDialects = ["::tilec::tilegpu::TileGPUDialect"];
  let options = [
    Option<"numWarps", "num-warps", "unsigned", "4", "Warps per CTA">,
    Option<"threadsPerWarp", "threads-per-warp", "unsigned", "32",
           "Threads per warp">,
    Option<"target", "target", "std::string", "\"sm_90\"",
           "GPU architecture, e.g. sm_80 or sm_90">,
    Option<"numStages", "num-stages", "unsigned", "1",
           "Stages tilegpu-pipeline will give the loads of dots; from 2 on "
           "sm_90a, tile.load_tile blocks of warpgroup dots stay for TMA">,
    Option<"minBlocksPerSM", "min-blocks-per-sm", "unsigned", "1",
           "Blocks an SM must hold at once (the kernel's .minnctapersm); "
           "recorded as tilegpu.min-blocks-per-sm where more than 1">,
  ];
}

def ConvertTileGPUToLLVM : Pass<"convert-tilegpu-to-llvm", "mlir::ModuleOp"> {
  let summary = "Lower ttgir to the LLVM and NVVM dialects (ttgir -> llir)";
  let description = [{
    Every tensor becomes the registers one thread holds, as its layout's
    linear map says; each op becomes per-thread code whose indices come from
    that map (lane and warp ids, constant register offsets). Shared memory
    serves layout conversions and cross-warp reductions through one dynamic
    buffer: each op's scratch sits at its `tilegpu.offset` and the buffer's
    size is the module's `tilegpu.shared` (`tilegpu-allocate-shared-memory`
    sets both; an op without its place is an error), and `tilegpu.barrier`s
    (`tilegpu-insert-barriers`) become `bar.sync`. A `!tilegpu.memdesc`
    becomes the `!llvm.ptr<3>` of its buffer (`@global_smem` plus the
    local_alloc's `tilegpu.offset`); local_load/local_store address elements
    by their shared encoding's formula in vectors within a chunk,
    16-bit mma v2 operands load with ldmatrix, async_copy_global_to_local
    becomes cp.async (4, 8 or 16 bytes, masked elements zero-filled),
    warpgroup_dot becomes wgmma.mma_async, and these ops emit no barriers of
    their own. Kernels become
    `llvm.func`s with `nvvm.kernel`, `nvvm.maxntid` and `nvvm.minctasm`
    (the module's `tilegpu.min-blocks-per-sm`, 1 without it). Ttgir past the
    limits of `tilegpu-check-block-resources` is refused before any code is
    written.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::math::MathDialect",
                           // The atomics' owner-only stores are scf.if.
                           "::mlir::scf::SCFDialect"];
}

def TileGPUCheckBlockResources
    : Pass<"tilegpu-check-block-resources", "mlir::ModuleOp"> {
  let summary = "Reject ttgir that the lowering cannot give a thread block";
  let description = [{
    `convert-tilegpu-to-llvm` gives every thread the registers of its
    tensors' layouts (one per element it holds, two for 64-bit elements),
    writing each op once per register, and moves elements between threads
    through shared memory (layout conversions that are not register
    renamings, `reshape`, `trans`, reductions across warps) and
    `local_alloc` buffers. This pass fails with an error at the first op
    with a tensor of more than 4096 registers per thread
    (`kMaxTensorRegistersPerThread`: a bound on the code written, not on the
    hardware, whose 255 per thread a tensor may exceed by spilling), or at
    the module when its total shared memory (`tilegpu.shared`, from
    `tilegpu-allocate-shared-memory`) is more than a block of the module's
    `tilegpu.target` can opt in to (227 KB on sm_90, 163 KB on sm_80, ...),
    with a note at the allocation that reaches the total. An op that uses
    shared memory in a module without `tilegpu.shared` is an error. The
    ttgir pipeline ends with it, and the lowering checks the same before it
    writes any code.
  }];
}

#endif // TILEC_CONVERSION_PASSES_TD
