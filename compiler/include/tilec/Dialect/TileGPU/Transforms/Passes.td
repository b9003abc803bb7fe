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
    pointer tensors. A load of no more elements than the CTA has threads
    (a gather's row indices) is repeated in the new layout, its pointers and
    mask recomputed with it; larger loads, dots, reductions and function
    arguments stop the slice: their conversions stay. A conversion feeding
    a narrowing elementwise op (truncf f32 -> f16) moves after it, so that
    it moves fewer bytes; a full reduction reads through a conversion, and a
    conversion whose one user is an elementwise op with splat operands moves
    past it, so a row stays in its load's layout. Finally dead loop-carried
    values are dropped and common subexpressions merged.
  }];
  let dependentDialects = ["::tilec::tilegpu::TileGPUDialect",
                           "::mlir::scf::SCFDialect"];
  let options = [
    Option<"maxRematOps", "max-remat-ops", "unsigned", "32",
           "Most ops cloned to remove one conversion">,
  ];
}

def TileGPUPipeline : Pass<"tilegpu-pipeline", "mlir::ModuleOp"> {
  let summary = "Software-pipeline the loads that feed dots through shared memory";
  let description = [{
    For each `scf.for` whose body loads a tile that reaches a `tile.dot`
    operand through one `tilegpu.convert_layout` to a `dot_op` layout, the
    load becomes an asynchronous copy (`async_copy_global_to_local`, cp.async)
    into a ring of `num-stages` shared buffers and the conversion a
    `local_load` from it. The loop is then pipelined with a distance of
    `num-stages - 1` steps (the upstream scf loop pipeliner, with predication
    instead of a peeled epilogue): a prologue starts the copies of the first
    `num-stages - 1` steps; step k waits until its own copy landed
    (`async_wait {num = num-stages - 2}`), starts the copy of step
    k + num-stages - 1 into the buffer step k - 1 read, commits it as one
    group (also when predicated off, so that counts stay exact), and runs
    its math; after the loop the remaining groups are drained and the rings
    deallocated. The address, mask and index computations of a copy move
    with it, so pointer tensors built from a gathered index vector (a row
    of a neighbour map) pipeline like affine tiles, and masked tails become
    zero-filled copies. A load whose vectors would move fewer than 4 bytes
    (cp.async's minimum: e.g. f16 rows with odd strides) or whose `other` is
    not zero is prefetched in registers instead, one step ahead of its
    conversion (the loop carries the loaded tile). On sm_90a a warpgroup dot
    whose operands both come from rings runs asynchronously with one group
    in flight (`warpgroup_dot_wait {pendings = 1}`), the step's copies after
    that wait. Nothing changes when what an address depends on cannot run
    ahead (a store, or a value the dot produces). The ring's shared
    layout is swizzled for the operand's reads (16-byte vectors, one phase per
    128 bytes of row).
  }];
  let dependentDialects = ["::tilec::tilegpu::TileGPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
  let options = [
    Option<"numStages", "num-stages", "unsigned", "1",
           "Buffers per pipelined load; 1 or 0 leaves loops unchanged">,
  ];
}

def TileGPUAllocateSharedMemory
    : Pass<"tilegpu-allocate-shared-memory", "mlir::ModuleOp"> {
  let summary = "Give every shared buffer and scratch its place";
  let description = [{
    Numbers each function's ops in program order and computes live ranges:
    a `local_alloc` lives from itself to its last use, following
    `memdesc_index` views and memdescs carried by `scf.for` / `scf.if`
    (a `local_dealloc` is a use); a use inside a loop or region that does
    not contain the alloc stretches the range over that whole op, since the
    buffer is live across its iterations. An op whose lowering uses scratch
    (`getSharedMemoryBytes`: layout conversions that are not register
    renamings, reshape, trans, reductions across warps) lives only at
    itself. Allocations are placed largest first (ties in program order) at
    the lowest 128-byte-aligned offset that overlaps no placed allocation
    with an overlapping live range. Each one's place is recorded as
    `tilegpu.offset` (i32, bytes) and the high-water mark over all functions
    as the module's `tilegpu.shared` (i32).
  }];
  let dependentDialects = ["::tilec::tilegpu::TileGPUDialect"];
}

def TileGPUInsertBarriers : Pass<"tilegpu-insert-barriers", "mlir::ModuleOp"> {
  let summary = "Insert tilegpu.barrier where threads share bytes of shared memory";
  let description = [{
    Tracks, in program order, the byte intervals of shared memory read and
    written since the last barrier (from the `tilegpu.offset` of the buffer
    accessed: a `memdesc_index` with a constant index narrows to its copy,
    a dynamic one means the whole buffer; a scratch op reads and writes its
    own bytes) and puts a `tilegpu.barrier` before an op that reads bytes
    pending a write, or writes bytes pending a read or write. `local_store`
    and `local_alloc` with a source write, `local_load` reads.
    `async_copy_global_to_local` is checked against what is pending, but its
    write is not added: its data is read only after an `async_wait`, and
    every `async_wait` is followed by a barrier (completion is per thread),
    which clears everything. An `scf.for` body is iterated to a fixed point
    with the state at its end flowing back to its start, and the state after
    the loop joins its entry and the body's end; `scf.if` joins its
    branches. Needs `tilegpu-allocate-shared-memory` first.
  }];
  let dependentDialects = ["::tilec::tilegpu::TileGPUDialect"];
}

#endif // TILEC_DIALECT_TILEGPU_TRANSFORMS_PASSES_TD
