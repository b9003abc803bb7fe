//===- TileGPUAttrs.td - layout encodings ------------------*- tablegen -*-===//
//
// Layouts say which thread holds which tensor element. Each distributed layout
// can be expressed as a LinearLayout (LinearLayout.h): a map from (register,
// lane, warp) bits to tensor coordinates; every op lowers through that map,
// so new layouts (mma v3 for wgmma, ...) slot in by defining it.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_DIALECT_TILEGPU_IR_TILEGPUATTRS_TD
#define TILEC_DIALECT_TILEGPU_IR_TILEGPUATTRS_TD

include "tilec/Dialect/TileGPU/IR/TileGPUDialect.td"
include "mlir/IR/AttrTypeBase.td"

def TileGPU_DistributedLayoutInterface
    : AttrInterface<"DistributedLayoutInterface"> {
  let cppNamespace = "::tilec::tilegpu";
  let description = [{
    A layout of a tensor held in registers, distributed over the threads of a
    CTA.
  }];
  let methods = [
    InterfaceMethod<
      "The (register, lane, warp) -> coordinates map for a tensor of `shape`.",
      "::tilec::tilegpu::LinearLayout", "toLinearLayout",
      (ins "::llvm::ArrayRef<int64_t>":$shape)>,
    InterfaceMethod<"Number of warps the layout spans.", "unsigned",
      "getNumWarps">,
  ];
}

def TileGPU_SharedEncodingInterface : AttrInterface<"SharedEncodingInterface"> {
  let cppNamespace = "::tilec::tilegpu";
  let description = [{
    A layout of a tile in shared memory (a `!tilegpu.memdesc`'s encoding):
    where element (row, col) of a 2-D tile sits, with col = dimension
    order[0] (the contiguous one) and row = order[1].
  }];
  let methods = [
    InterfaceMethod<"Dimensions, fastest first.",
      "::llvm::ArrayRef<unsigned>", "getOrder">,
  ];
}

// A list of unsigned integers printed as `[1, 2]`.
def TileGPU_UnsignedList : ArrayRefParameter<"unsigned"> {
  let parser = "::tilec::tilegpu::parseUnsignedList($_parser)";
  let printer = "::tilec::tilegpu::printUnsignedList($_printer, $_self)";
}

class TileGPU_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<TileGPU_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def TileGPU_BlockedEncodingAttr : TileGPU_Attr<"BlockedEncoding", "blocked",
    [DeclareAttrInterfaceMethods<TileGPU_DistributedLayoutInterface>]> {
  let summary = "Each thread holds a contiguous sizePerThread block";
  let description = [{
    A CTA tile of `sizePerThread[d] * threadsPerWarp[d] * warpsPerCTA[d]`
    elements per dimension: each thread holds `sizePerThread` consecutive
    elements, lanes then warps tile the rest, `order[0]` is the fastest
    dimension. Larger tensors repeat the tile in registers; smaller ones
    broadcast (several threads hold the same element).
  }];
  let parameters = (ins TileGPU_UnsignedList:$sizePerThread,
                        TileGPU_UnsignedList:$threadsPerWarp,
                        TileGPU_UnsignedList:$warpsPerCTA,
                        TileGPU_UnsignedList:$order);
  let assemblyFormat = "`<` `{` struct(params) `}` `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    unsigned getRank() const { return getOrder().size(); }
  }];
}

def TileGPU_SliceEncodingAttr : TileGPU_Attr<"SliceEncoding", "slice",
    [DeclareAttrInterfaceMethods<TileGPU_DistributedLayoutInterface>]> {
  let summary = "The parent layout with dimension `dim` removed";
  let description = [{
    The layout of a reduction's result over `dim`, and of the operand of an
    `expand_dims` at `dim`: threads that differed only along `dim` hold
    copies.
  }];
  let parameters = (ins "unsigned":$dim, "::mlir::Attribute":$parent);
  let assemblyFormat = "`<` `{` struct(params) `}` `>`";
  let genVerifyDecl = 1;
}

def TileGPU_MmaEncodingAttr : TileGPU_Attr<"MmaEncoding", "mma",
    [DeclareAttrInterfaceMethods<TileGPU_DistributedLayoutInterface>]> {
  let summary = "Accumulator layout of tensor-core instructions";
  let description = [{
    `versionMajor = 2`: mma.sync; each warp holds `instrShape` ([16, 8]) tiles
    with the PTX C/D fragment, warps cover `warpsPerCTA` tiles (warp id
    fastest along N), larger shapes repeat in registers. `versionMajor = 3`
    is the Hopper wgmma accumulator (`instrShape = [16, N, K]` per warp,
    4-warp groups along M, warp id fastest along M).

    `transposed` (v3 only) is the layout of a product computed transposed,
    D^T = B^T A^T: the tensor is D (M x N), and the instructions compute its
    transpose, so the instruction's M runs along dimension 1 and its N along
    dimension 0. `warpsPerCTA` and `instrShape` are the instruction's (D^T's);
    every basis of the untransposed layout of D^T has its two coordinates
    swapped, the permutation a transpose of a distributed tensor is.
    ```mlir
    #mma = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [8, 1], instrShape = [16, 256, 8], transposed = true}>
    ```
  }];
  let parameters = (ins "unsigned":$versionMajor,
                        TileGPU_UnsignedList:$warpsPerCTA,
                        TileGPU_UnsignedList:$instrShape,
                        DefaultValuedParameter<"bool", "false">:$transposed);
  let builders = [
    AttrBuilder<(ins "unsigned":$versionMajor,
                     "::llvm::ArrayRef<unsigned>":$warpsPerCTA,
                     "::llvm::ArrayRef<unsigned>":$instrShape), [{
      return $_get($_ctxt, versionMajor, warpsPerCTA, instrShape,
                   /*transposed=*/false);
    }]>
  ];
  let assemblyFormat = "`<` `{` struct(params) `}` `>`";
  let genVerifyDecl = 1;
}

def TileGPU_DotOperandEncodingAttr : TileGPU_Attr<"DotOperandEncoding", "dot_op",
    [DeclareAttrInterfaceMethods<TileGPU_DistributedLayoutInterface>]> {
  let summary = "Layout of operand `opIdx` of a dot whose result has `parent`";
  let description = [{
    With a `blocked` parent (the FMA path) each thread holds, for the rows
    (opIdx 0) or columns (opIdx 1) of the result it owns, the whole K extent.
    With an `mma` parent it is the PTX A/B fragment; `kWidth` consecutive K
    elements per thread (2 for f16/bf16, 1 for tf32). With an `mma` v3
    parent it is the register A operand of wgmma (tf32 only, kWidth 1): per
    warp the m16n8k8 tf32 A fragment, the warps of a warpgroup stacked along
    the instruction's M; it is operand 0 of an untransposed parent and
    operand 1 (B^T's fragment, seen as B) of a transposed one.
  }];
  let parameters = (ins "unsigned":$opIdx, "::mlir::Attribute":$parent,
                        DefaultValuedParameter<"unsigned", "0">:$kWidth);
  let assemblyFormat = "`<` `{` struct(params) `}` `>`";
  let genVerifyDecl = 1;
}

def TileGPU_SwizzledSharedEncodingAttr
    : TileGPU_Attr<"SwizzledSharedEncoding", "swizzled_shared",
                   [TileGPU_SharedEncodingInterface]> {
  let summary = "A tensor in shared memory with XOR-swizzled vectors";
  let description = [{
    Row = dimension order[1], column = order[0]:
    phase = (row / perPhase) % maxPhase, stored column =
    ((column / vec) xor phase) * vec + column % vec. Chosen for dot operands
    so that ldmatrix reads are free of bank conflicts.
  }];
  let parameters = (ins "unsigned":$vec, "unsigned":$perPhase,
                        "unsigned":$maxPhase, TileGPU_UnsignedList:$order);
  let assemblyFormat = "`<` `{` struct(params) `}` `>`";
  let genVerifyDecl = 1;
}

def TileGPU_NvmmaSharedEncodingAttr
    : TileGPU_Attr<"NvmmaSharedEncoding", "nvmma_shared",
                   [TileGPU_SharedEncodingInterface]> {
  let summary = "A tile in the shared layout Hopper's wgmma reads";
  let description = [{
    The layout wgmma's matrix descriptors address with a 32-, 64- or
    128-byte swizzle (`swizzlingByteWidth`). The contiguous dimension
    (order[0], "col") is cut into blocks of `swizzlingByteWidth` bytes;
    each block holds every row, one after the other, and blocks follow each
    other. Within a block, 16-byte chunk c of row r is stored at chunk
    c xor ((r / (128 / swizzlingByteWidth)) mod (swizzlingByteWidth / 16)),
    so that eight consecutive rows of one chunk fall in different banks.
    When a row fits one block this is `swizzled_shared` with 16-byte
    vectors. The pattern repeats every 8 x 128 bytes: buffers are placed at
    1024-byte boundaries.
  }];
  let parameters = (ins "unsigned":$swizzlingByteWidth,
                        TileGPU_UnsignedList:$order);
  let assemblyFormat = "`<` `{` struct(params) `}` `>`";
  let genVerifyDecl = 1;
}

#endif // TILEC_DIALECT_TILEGPU_IR_TILEGPUATTRS_TD
