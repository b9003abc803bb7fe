//===- TileGPUOps.td - tilegpu operations ------------------*- tablegen -*-===//

#ifndef TILEC_DIALECT_TILEGPU_IR_TILEGPUOPS_TD
#define TILEC_DIALECT_TILEGPU_IR_TILEGPUOPS_TD

include "tilec/Dialect/TileGPU/IR/TileGPUDialect.td"
include "tilec/Dialect/TileGPU/IR/TileGPUAttrs.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class TileGPU_Op<string mnemonic, list<Trait> traits = []>
    : Op<TileGPU_Dialect, mnemonic, traits>;

def TileGPU_ConvertLayoutOp : TileGPU_Op<"convert_layout", [Pure,
    SameOperandsAndResultShape, SameOperandsAndResultElementType]> {
  let summary = "Move a tensor to another layout";
  let description = [{
    The only op that changes a tensor's layout. Lowers to a register
    permutation when both layouts give each thread the same elements, and to
    a round trip through shared memory otherwise.
    ```mlir
    %b = tilegpu.convert_layout %a : tensor<64x32xf16, #blocked> -> tensor<64x32xf16, #dot_a>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$src);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
  let hasVerifier = 1;
}

#endif // TILEC_DIALECT_TILEGPU_IR_TILEGPUOPS_TD
