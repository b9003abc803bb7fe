//===- TileGPUTypes.td - tilegpu types ---------------------*- tablegen -*-===//

#ifndef TILEC_DIALECT_TILEGPU_IR_TILEGPUTYPES_TD
#define TILEC_DIALECT_TILEGPU_IR_TILEGPUTYPES_TD

include "tilec/Dialect/TileGPU/IR/TileGPUDialect.td"
include "mlir/IR/AttrTypeBase.td"

def TileGPU_MemDescType : TypeDef<TileGPU_Dialect, "MemDesc"> {
  let mnemonic = "memdesc";
  let summary = "A tensor that lives in shared memory";
  let description = [{
    A block of shared memory holding a tensor of `shape`, written by
    `local_store` or `async_copy_global_to_local`, read by `local_load`.
    The shared `encoding` (`#tilegpu.swizzled_shared` or
    `#tilegpu.nvmma_shared`) places the trailing two dimensions; leading dimensions index whole copies laid
    one after the other (the ring of a software pipeline), which
    `memdesc_index` selects. `mutable` buffers may be written after they are
    allocated; a `local_alloc` from a tensor gives an immutable one.
    ```mlir
    !tilegpu.memdesc<3x128x32xf16, #shared, mutable>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        "::mlir::Attribute":$encoding,
                        "bool":$isMutable);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Bytes of one whole descriptor (every leading copy included).
    int64_t getSizeInBytes() const;
    /// The shared encoding; verified to be one.
    SharedEncodingInterface getSharedEncoding() const;
  }];
}

def TileGPU_TensorMapType : TypeDef<TileGPU_Dialect, "TensorMap"> {
  let mnemonic = "tensormap";
  let summary = "A TMA tensor map the kernel takes as a parameter";
  let description = [{
    The 128-byte CUtensorMap of a 2-D array in global memory: a kernel
    parameter (`.param .align 64`, read in place) that `tilegpu-pipeline`
    appends for each array it copies with TMA, after the kernel's own. The
    argument's `tilegpu.tensor_map` attribute says which of the kernel's
    arguments the runtime encodes it from and the box one copy moves.
  }];
}

#endif // TILEC_DIALECT_TILEGPU_IR_TILEGPUTYPES_TD
