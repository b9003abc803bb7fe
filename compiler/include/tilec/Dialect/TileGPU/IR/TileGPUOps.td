//===- TileGPUOps.td - tilegpu operations ------------------*- tablegen -*-===//

#ifndef TILEC_DIALECT_TILEGPU_IR_TILEGPUOPS_TD
#define TILEC_DIALECT_TILEGPU_IR_TILEGPUOPS_TD

include "tilec/Dialect/TileGPU/IR/TileGPUDialect.td"
include "tilec/Dialect/TileGPU/IR/TileGPUAttrs.td"
include "tilec/Dialect/TileGPU/IR/TileGPUTypes.td"
include "tilec/Dialect/Tile/IR/TileTypes.td"
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

//===----------------------------------------------------------------------===//
// Shared memory
//===----------------------------------------------------------------------===//

// The CTA's shared memory, so that passes see which ops touch it.
def TileGPU_SharedMemory : Resource<"::tilec::tilegpu::SharedMemory">;

def TileGPU_MemDesc : Type<CPred<"::llvm::isa<::tilec::tilegpu::MemDescType>($_self)">,
                           "shared memory descriptor",
                           "::tilec::tilegpu::MemDescType">;

def TileGPU_LocalAllocOp : TileGPU_Op<"local_alloc", [
    MemoryEffects<[MemAlloc<TileGPU_SharedMemory>]>]> {
  let summary = "A buffer in shared memory, optionally filled from a tensor";
  let description = [{
    Without `src` the buffer is mutable and its contents undefined; with
    `src` every thread stores its elements of `src` and the result is
    immutable. `tilegpu-allocate-shared-memory` gives each buffer its place,
    recorded as `tilegpu.offset` (bytes from the start of the CTA's dynamic
    shared memory); the buffer lives from here to its last use, or to its
    `local_dealloc`.
    ```mlir
    %ring = tilegpu.local_alloc : () -> !tilegpu.memdesc<3x128x32xf16, #shared, mutable>
    %tile = tilegpu.local_alloc %a : (tensor<128x32xf16, #blocked>) -> !tilegpu.memdesc<128x32xf16, #shared>
    ```
  }];
  let arguments = (ins Optional<AnyRankedTensor>:$src);
  let results = (outs TileGPU_MemDesc:$result);
  let assemblyFormat = "($src^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  // A layout conversion of `src` is folded away: the buffer holds the same
  // elements whichever threads store them.
  let hasFolder = 1;
  let extraClassDeclaration = [{
    static constexpr ::llvm::StringLiteral getOffsetAttrName() {
      return TileGPUDialect::getOffsetAttrName();
    }
  }];
}

def TileGPU_LocalDeallocOp : TileGPU_Op<"local_dealloc", [
    MemoryEffects<[MemFree<TileGPU_SharedMemory>]>]> {
  let summary = "End of a shared buffer's life";
  let description = [{
    The buffer's place may be reused after this point. Optional: without it
    a buffer lives to its last use. A software pipeline deallocates its ring
    after the `async_wait` that drains it, since outstanding copies still
    write the ring after its last read.
  }];
  let arguments = (ins TileGPU_MemDesc:$buffer);
  let assemblyFormat = "$buffer attr-dict `:` qualified(type($buffer))";
}

def TileGPU_MemDescIndexOp : TileGPU_Op<"memdesc_index", [Pure]> {
  let summary = "One copy of a shared buffer with a leading copy dimension";
  let description = [{
    ```mlir
    %slot = tilegpu.memdesc_index %ring[%i] : !tilegpu.memdesc<3x128x32xf16, #shared, mutable> -> !tilegpu.memdesc<128x32xf16, #shared, mutable>
    ```
    `index` must be in [0, shape[0]).
  }];
  let arguments = (ins TileGPU_MemDesc:$src, I32:$index);
  let results = (outs TileGPU_MemDesc:$result);
  let assemblyFormat = [{
    $src `[` $index `]` attr-dict `:` qualified(type($src)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def TileGPU_LocalLoadOp : TileGPU_Op<"local_load", [
    MemoryEffects<[MemRead<TileGPU_SharedMemory>]>]> {
  let summary = "Read a shared buffer into a tensor of a distributed layout";
  let description = [{
    Each thread reads the elements its layout gives it. A `dot_op` operand of
    an `mma` layout with 16-bit elements is read with `ldmatrix`.
    ```mlir
    %a = tilegpu.local_load %slot : !tilegpu.memdesc<128x32xf16, #shared, mutable> -> tensor<128x32xf16, #dot_op>
    ```
  }];
  let arguments = (ins TileGPU_MemDesc:$src);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$src attr-dict `:` qualified(type($src)) `->` type($result)";
  let hasVerifier = 1;
}

def TileGPU_LocalStoreOp : TileGPU_Op<"local_store", [
    MemoryEffects<[MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Write a tensor into a mutable shared buffer";
  let description = [{
    ```mlir
    tilegpu.local_store %a, %slot : tensor<128x32xf16, #blocked> -> !tilegpu.memdesc<128x32xf16, #shared, mutable>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$src, TileGPU_MemDesc:$dst);
  let assemblyFormat = "$src `,` $dst attr-dict `:` type($src) `->` qualified(type($dst))";
  let hasVerifier = 1;
}

def TileGPU_AsyncCopyGlobalToLocalOp
    : TileGPU_Op<"async_copy_global_to_local", [
        MemoryEffects<[MemRead, MemWrite<TileGPU_SharedMemory>]>,
        OptionalTypesMatchWith<"mask is i1 with the shape and layout of src",
                               "src", "mask",
                               "::tilec::tile::getI1TypeWithShapeOf($_self)">]> {
  let summary = "Start copying a tile from global to shared memory (cp.async)";
  let description = [{
    Each thread copies the elements its layout of `src` gives it, in vectors
    of up to 16 bytes; where `mask` is false the destination is zero-filled
    and global memory is not read. The copy joins this thread's current
    group: `async_commit_group` closes the group and `async_wait` waits for
    groups, after which a barrier makes the data visible to every thread.
    Vectors must be 4, 8 or 16 bytes (`tilegpu-pipeline` only pipelines
    loads whose pointers allow that).
    ```mlir
    tilegpu.async_copy_global_to_local %ptrs, %slot mask %m : tensor<128x32x!tile.ptr<f16>, #blocked> -> !tilegpu.memdesc<128x32xf16, #shared, mutable>
    ```
  }];
  let arguments = (ins Tile_PtrTensor:$src, TileGPU_MemDesc:$dst,
                       Optional<Tile_BoolTensor>:$mask);
  let assemblyFormat = [{
    $src `,` $dst (`mask` $mask^)? attr-dict `:` type($src) `->` qualified(type($dst))
  }];
  let hasVerifier = 1;
}

def TileGPU_AsyncCommitGroupOp : TileGPU_Op<"async_commit_group", [
    MemoryEffects<[MemRead<TileGPU_SharedMemory>,
                   MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Close this thread's group of asynchronous copies";
  let description = [{
    An empty group is complete at once, so a pipeline commits once per step
    whether or not it copied, and `async_wait`'s count stays exact.
  }];
  let assemblyFormat = "attr-dict";
}

def TileGPU_AsyncWaitOp : TileGPU_Op<"async_wait", [
    MemoryEffects<[MemRead<TileGPU_SharedMemory>,
                   MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Wait until at most `num` of this thread's groups are pending";
  let description = [{
    Completion is per thread: `tilegpu-insert-barriers` puts a barrier after
    every wait before other threads read what it waited for.
    ```mlir
    tilegpu.async_wait {num = 2 : i32}
    ```
  }];
  let arguments = (ins I32Attr:$num);
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// TMA: mbarriers and bulk tensor copies
//===----------------------------------------------------------------------===//

def TileGPU_TensorMap : Type<CPred<"::llvm::isa<::tilec::tilegpu::TensorMapType>($_self)">,
                             "a TMA tensor map", "::tilec::tilegpu::TensorMapType">;

def TileGPU_InitBarrierOp : TileGPU_Op<"init_barrier", [
    MemoryEffects<[MemRead<TileGPU_SharedMemory>,
                   MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Initialize an mbarrier in shared memory (one thread)";
  let description = [{
    Thread 0 initializes the 8-byte mbarrier `barrier` (a `memdesc<1x1xi64>`)
    for `count` arrivals per phase, and fences the initialization for the
    asynchronous proxy that TMA copies complete it from. Other threads use it
    after a barrier (`tilegpu-insert-barriers` counts this op as a write of
    its bytes and the other mbarrier ops as reads).
    ```mlir
    tilegpu.init_barrier %bar, 1 : !tilegpu.memdesc<1x1xi64, #bars, mutable>
    ```
  }];
  let arguments = (ins TileGPU_MemDesc:$barrier, I32Attr:$count);
  let assemblyFormat = "$barrier `,` $count attr-dict `:` qualified(type($barrier))";
  let hasVerifier = 1;
}

def TileGPU_InvalBarrierOp : TileGPU_Op<"inval_barrier", [
    MemoryEffects<[MemRead<TileGPU_SharedMemory>,
                   MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Invalidate an mbarrier before its bytes are reused (one thread)";
  let arguments = (ins TileGPU_MemDesc:$barrier);
  let assemblyFormat = "$barrier attr-dict `:` qualified(type($barrier))";
  let hasVerifier = 1;
}

def TileGPU_BarrierExpectOp : TileGPU_Op<"barrier_expect", [
    MemoryEffects<[MemRead<TileGPU_SharedMemory>,
                   MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Arrive on an mbarrier expecting `bytes` of copies (one thread)";
  let description = [{
    Where `pred` holds, thread 0 arrives on `barrier` and raises the bytes
    its current phase waits for by `bytes`: the phase completes when the
    TMA copies that signal it have written that many bytes.
    ```mlir
    tilegpu.barrier_expect %bar, 49152, %pred : !tilegpu.memdesc<1x1xi64, #bars, mutable>
    ```
  }];
  let arguments = (ins TileGPU_MemDesc:$barrier, I32Attr:$bytes, I1:$pred);
  let assemblyFormat = "$barrier `,` $bytes `,` $pred attr-dict `:` qualified(type($barrier))";
  let hasVerifier = 1;
}

def TileGPU_AsyncTmaCopyOp : TileGPU_Op<"async_tma_copy", [
    MemoryEffects<[MemRead, MemRead<TileGPU_SharedMemory>,
                   MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Start a TMA copy of a block into shared memory (one thread)";
  let description = [{
    Where `pred` holds, thread 0 copies the block of `dst`'s shape at
    (`row`, `col`) of the array `map` describes into `dst`, zeros where the
    block lies outside the array, and signals `barrier` with the bytes when
    they have landed. `dst` is a tile in `#tilegpu.nvmma_shared` layout in
    the map's swizzle, row-major: a block wider than the swizzle's span is
    copied as one box per span, each box's rows one after the other (the
    layout's blocks of 32, 64 or 128 bytes).
    ```mlir
    tilegpu.async_tma_copy %map[%row, %col], %slot, %bar, %pred : !tilegpu.tensormap, !tilegpu.memdesc<128x64xf16, #shared, mutable>, !tilegpu.memdesc<1x1xi64, #bars, mutable>
    ```
  }];
  let arguments = (ins TileGPU_TensorMap:$map, I32:$row, I32:$col,
                       TileGPU_MemDesc:$dst, TileGPU_MemDesc:$barrier, I1:$pred);
  let assemblyFormat = [{
    $map `[` $row `,` $col `]` `,` $dst `,` $barrier `,` $pred attr-dict `:` qualified(type($map)) `,` qualified(type($dst)) `,` qualified(type($barrier))
  }];
  let hasVerifier = 1;
}

def TileGPU_WaitBarrierOp : TileGPU_Op<"wait_barrier", [
    MemoryEffects<[MemRead<TileGPU_SharedMemory>,
                   MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Wait for the phase of parity `phase` of an mbarrier";
  let description = [{
    Every thread waits until `barrier` completes its phase of parity
    `phase` (0 or 1); the bytes of the TMA copies that signalled it are then
    visible to the thread, so no CTA barrier follows.
    ```mlir
    tilegpu.wait_barrier %bar, %phase : !tilegpu.memdesc<1x1xi64, #bars, mutable>
    ```
  }];
  let arguments = (ins TileGPU_MemDesc:$barrier, I32:$phase);
  let assemblyFormat = "$barrier `,` $phase attr-dict `:` qualified(type($barrier))";
  let hasVerifier = 1;
}

def TileGPU_BarrierOp : TileGPU_Op<"barrier", [
    MemoryEffects<[MemRead<TileGPU_SharedMemory>,
                   MemWrite<TileGPU_SharedMemory>, MemRead, MemWrite]>]> {
  let summary = "Synchronize the CTA's threads and their memory operations";
  let description = [{
    `bar.sync 0`. Inserted by `tilegpu-insert-barriers` where one thread may
    read or overwrite what another wrote or reads in shared memory, and
    converted from a program's `tile.barrier`, which also orders global
    memory operations (a program's stores before an atomic that publishes
    them): hence effects on the default resource too, so that no pass moves
    a global load or store across it.
  }];
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Hopper warpgroup MMA
//===----------------------------------------------------------------------===//

def TileGPU_WarpGroupDotOp : TileGPU_Op<"warpgroup_dot", [
    MemoryEffects<[MemRead<TileGPU_SharedMemory>]>,
    AllTypesMatch<["c", "d"]>]> {
  let summary = "d = a * b + c on Hopper tensor cores (wgmma)";
  let description = [{
    `a` (MxK) and `b` (KxN) are `nvmma_shared` tiles; `c` and `d` have an
    `mma` layout of version 3. Each warpgroup (four consecutive warps)
    issues `wgmma.mma_async` instructions of `instrShape` [16, N, K] per
    warp (m64nNk16 per warpgroup for f16/bf16, m64nNk8 for f32, whose
    products are tf32's) over its rows and columns, as one group. f32
    operands must be K-major (tf32 has no transposed form).

    With a `transposed` accumulator layout the instructions compute
    D^T = B^T A^T: `b` is a tensor in registers, in the `dot_op` layout
    (operand 1, kWidth 1) of that accumulator, which is B^T's register A
    fragment; `a` is read as wgmma's B operand (A^T, K-major). Only tf32
    dots take this form. Each instruction is then its own group, and each
    waits until at most one dot's worth of instructions less one is in
    flight, so that an instruction's fragment registers are only rewritten
    once the instruction that read them a step before has finished.

    Without `isAsync` the group is waited for at once; with it the result
    may only be read after a `warpgroup_dot_wait` that covers it, and the
    operands may not be overwritten before that.

    `row_groups` and `rowsPerGroup` are `tile.dot`'s: the instructions of a
    64-row strip whose group has its bit clear are skipped (the accumulator
    keeps its value). Groups of at least 64 rows (a strip lies in one), and
    not with a transposed layout.
    ```mlir
    %d = tilegpu.warpgroup_dot %a, %b, %c : !tilegpu.memdesc<128x64xf16, #nvmma, mutable> * !tilegpu.memdesc<64x128xf16, #nvmma1, mutable> -> tensor<128x128xf32, #mma>
    %e = tilegpu.warpgroup_dot %a, %bt, %c : !tilegpu.memdesc<256x32xf32, #nvmma, mutable> * tensor<32x128xf32, #dot_op_t> -> tensor<256x128xf32, #mma_t>
    ```
  }];
  let arguments = (ins TileGPU_MemDesc:$a,
                       AnyTypeOf<[TileGPU_MemDesc, AnyRankedTensor]>:$b,
                       AnyRankedTensor:$c, Optional<I32>:$rowGroups,
                       UnitAttr:$isAsync, OptionalAttr<I32Attr>:$rowsPerGroup);
  let results = (outs AnyRankedTensor:$d);
  let assemblyFormat = [{
    $a `,` $b `,` $c (`row_groups` `(` $rowGroups^ `)`)? attr-dict `:` qualified(type($a)) `*` qualified(type($b)) `->` type($d)
  }];
  let hasVerifier = 1;
}

def TileGPU_WarpGroupDotWaitOp : TileGPU_Op<"warpgroup_dot_wait", [
    // It orders the dots' reads: no shared-memory write may move above it.
    MemoryEffects<[MemRead<TileGPU_SharedMemory>,
                   MemWrite<TileGPU_SharedMemory>]>,
    AllTypesMatch<["inputs", "outputs"]>]> {
  let summary = "Wait until at most `pendings` groups of warpgroup dots are in flight";
  let description = [{
    The results are the inputs, readable now; they are threaded through so
    that nothing reads an accumulator before its wait.
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, I32Attr:$pendings);
  let results = (outs Variadic<AnyRankedTensor>:$outputs);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
}

#endif // TILEC_DIALECT_TILEGPU_IR_TILEGPUOPS_TD
