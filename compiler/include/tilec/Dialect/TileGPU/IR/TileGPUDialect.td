//===- TileGPUDialect.td - the tilegpu dialect (ttgir) -----*- tablegen -*-===//

#ifndef TILEC_DIALECT_TILEGPU_IR_TILEGPUDIALECT_TD
#define TILEC_DIALECT_TILEGPU_IR_TILEGPUDIALECT_TD

include "mlir/IR/OpBase.td"

def TileGPU_Dialect : Dialect {
  let name = "tilegpu";
  let cppNamespace = "::tilec::tilegpu";
  let summary = "Tile programs with GPU layouts (tilec's ttgir)";
  let description = [{
    In ttgir every tensor type carries a layout encoding that says which
    thread holds which element: distributed layouts (`blocked`, `slice`,
    `mma`, `dot_op`) for values in registers, and `swizzled_shared` or
    `nvmma_shared` (what wgmma reads) for
    shared memory, where tensors live as `!tilegpu.memdesc` buffers
    (`local_alloc`, `local_store`, `local_load`, `async_copy_global_to_local`).
    `tile` ops keep working on encoded tensors;
    `tilegpu.convert_layout` is the only way to move data between layouts.
    The module carries the target: `tilegpu.num-warps`,
    `tilegpu.threads-per-warp`, `tilegpu.target` (e.g. "sm_90"), where a
    config asks for more than one `tilegpu.min-blocks-per-sm` (the blocks an
    SM must hold at once; the kernel's `.minnctapersm`), and after
    `tilegpu-allocate-shared-memory` `tilegpu.shared` (bytes of dynamic shared
    memory).
  }];
  let dependentDialects = ["::tilec::tile::TileDialect"];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    static constexpr ::llvm::StringLiteral getNumWarpsAttrName() {
      return ::llvm::StringLiteral("tilegpu.num-warps");
    }
    static constexpr ::llvm::StringLiteral getThreadsPerWarpAttrName() {
      return ::llvm::StringLiteral("tilegpu.threads-per-warp");
    }
    static constexpr ::llvm::StringLiteral getTargetAttrName() {
      return ::llvm::StringLiteral("tilegpu.target");
    }
    static constexpr ::llvm::StringLiteral getMinBlocksPerSMAttrName() {
      return ::llvm::StringLiteral("tilegpu.min-blocks-per-sm");
    }
    static constexpr ::llvm::StringLiteral getSharedAttrName() {
      return ::llvm::StringLiteral("tilegpu.shared");
    }
    /// Bytes from the start of the dynamic shared memory, on a local_alloc
    /// or an op that uses scratch; set by tilegpu-allocate-shared-memory.
    static constexpr ::llvm::StringLiteral getOffsetAttrName() {
      return ::llvm::StringLiteral("tilegpu.offset");
    }
    /// On a kernel argument of type !tilegpu.tensormap: the indices of the
    /// arguments the runtime encodes it from (base, rows, cols, row_stride)
    /// and the box (box_rows, box_cols, swizzle in bytes).
    static constexpr ::llvm::StringLiteral getTensorMapAttrName() {
      return ::llvm::StringLiteral("tilegpu.tensor_map");
    }
    /// Reads a module's num-warps; 0 when absent.
    static int getNumWarps(::mlir::Operation *module);
    static int getThreadsPerWarp(::mlir::Operation *module);
    /// Reads a module's min-blocks-per-sm; 1 when absent.
    static int getMinBlocksPerSM(::mlir::Operation *module);

  private:
    void registerAttributes();
    void registerTypes();
  }];
}

#endif // TILEC_DIALECT_TILEGPU_IR_TILEGPUDIALECT_TD
