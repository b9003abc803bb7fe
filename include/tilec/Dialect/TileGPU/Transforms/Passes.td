//===- Passes.td - tilegpu layout passes -------------------*- tablegen -*-===//

#ifndef TILEC_DIALECT_TILEGPU_TRANSFORMS_PASSES_TD
#define TILEC_DIALECT_TILEGPU_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TileGPUCoalesce : Pass<"tilegpu-coalesce", "mlir::ModuleOp"> {
  let summary = "Give global loads and stores layouts that vectorize";
  let description = [{
    For every `tile.load` / `tile.store` through a tensor of pointers, picks a
    blocked layout whose fastest dimension is the pointers' most contiguous
    one and whose `sizePerThread` along it is the widest access the
    pointers allow: min(contiguity, alignment in elements, 128 bits, elements
    per thread of the CTA). The op is rebuilt in that layout with
    `tilegpu.convert_layout` on its operands (and back on a load's result);
    `tilegpu-remove-layout-conversions` then removes most of them. Like
    Triton, masks do not limit the layout, only the lowering's vector width.
    Reads `tilegpu.num-warps` and `tilegpu.threads-per-warp` from the module.
  }];
  let dependentDialects = ["::tilec::tilegpu::TileGPUDialect"];
}

def TileGPURemoveLayoutConversions
    : Pass<"tilegpu-remove-layout-conversions", "mlir::ModuleOp"> {
  let summary = "Remove tilegpu.convert_layout ops by recomputing values";
  let description = [{
    Folds chains and trivial conversions, then rematerializes the backward
    slice of each `tilegpu.convert_layout` to a blocked (or slice of blocked)
    layout in that layout when the slice holds only cheap ops (constants,
    splats, ranges, broadcasts, expand_dims, pointer arithmetic and other
    elementwise arithmetic) and ends at values already in the layout, at
    other conversions, or at scalars. Values carried by `scf.for` are carried
    in the new layout too, which removes per-iteration conversions of
    pointer tensors. Loads, dots, reductions and function arguments stop the
    slice: their conversions stay. A conversion feeding a narrowing
    elementwise op (truncf f32 -> f16) moves after it, so that it moves fewer
    bytes; a full reduction reads through a conversion, and a conversion
    whose one user is an elementwise op with splat operands moves past it,
    so a row stays in its load's layout. Finally dead loop-carried values are
    dropped and common subexpressions merged.
  }];
  let dependentDialects = ["::tilec::tilegpu::TileGPUDialect",
                           "::mlir::scf::SCFDialect"];
  let options = [
    Option<"maxRematOps", "max-remat-ops", "unsigned", "32",
           "Most ops cloned to remove one conversion">,
  ];
}

#endif // TILEC_DIALECT_TILEGPU_TRANSFORMS_PASSES_TD
