//===- TileOps.td - tile dialect operations ----------------*- tablegen -*-===//

#ifndef TILEC_DIALECT_TILE_IR_TILEOPS_TD
#define TILEC_DIALECT_TILE_IR_TILEOPS_TD

include "tilec/Dialect/Tile/IR/TileDialect.td"
include "tilec/Dialect/Tile/IR/TileTypes.td"
include "tilec/Dialect/Tile/IR/TileAttrs.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Program instance queries
//===----------------------------------------------------------------------===//

def Tile_ProgramIdOp : Tile_Op<"program_id", [Pure]> {
  let summary = "Index of this program instance along a grid axis";
  let description = [{
    ```mlir
    %pid = tile.program_id x : i32
    ```
  }];
  let arguments = (ins Tile_ProgramAxis:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
}

def Tile_NumProgramsOp : Tile_Op<"num_programs", [Pure]> {
  let summary = "Number of program instances along a grid axis";
  let description = [{
    ```mlir
    %n = tile.num_programs y : i32
    ```
  }];
  let arguments = (ins Tile_ProgramAxis:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Tensor construction and shape manipulation
//===----------------------------------------------------------------------===//

def Tile_MakeRangeOp : Tile_Op<"make_range", [Pure]> {
  let summary = "The half-open integer range [start, end) as a 1-D tensor";
  let description = [{
    ```mlir
    %r = tile.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
    ```
  }];
  let arguments = (ins I32Attr:$start, I32Attr:$end);
  let results = (outs Tile_IntTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_SplatOp : Tile_Op<"splat", [Pure,
    TypesMatchWith<"result element type matches the scalar", "result", "src",
                   "::llvm::cast<::mlir::RankedTensorType>($_self).getElementType()">]> {
  let summary = "A tensor whose every element is the given scalar";
  let description = [{
    ```mlir
    %t = tile.splat %x : f32 -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins Tile_Scalar:$src);
  let results = (outs Tile_StaticTensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasFolder = 1;
}

def Tile_BroadcastOp : Tile_Op<"broadcast", [Pure, SameOperandsAndResultElementType]> {
  let summary = "Repeat a tensor along its size-1 dimensions";
  let description = [{
    Every dimension of the source either equals the result's or is 1.
    ```mlir
    %b = tile.broadcast %x : tensor<1x128xf32> -> tensor<64x128xf32>
    ```
  }];
  let arguments = (ins Tile_StaticTensor:$src);
  let results = (outs Tile_StaticTensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Tile_ExpandDimsOp : Tile_Op<"expand_dims", [Pure, SameOperandsAndResultElementType]> {
  let summary = "Insert a size-1 dimension at `axis`";
  let description = [{
    ```mlir
    %e = tile.expand_dims %r {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
    ```
  }];
  let arguments = (ins Tile_StaticTensor:$src, I32Attr:$axis);
  let results = (outs Tile_StaticTensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Tile_ReshapeOp : Tile_Op<"reshape", [Pure, SameOperandsAndResultElementType]> {
  let summary = "Reinterpret a tensor with another shape of the same size";
  let description = [{
    Elements keep their row-major order.
    ```mlir
    %r = tile.reshape %x : tensor<4x32xf32> -> tensor<128xf32>
    ```
  }];
  let arguments = (ins Tile_StaticTensor:$src);
  let results = (outs Tile_StaticTensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_TransOp : Tile_Op<"trans", [Pure, SameOperandsAndResultElementType]> {
  let summary = "Permute the dimensions of a tensor";
  let description = [{
    Result dimension `i` is source dimension `order[i]`.
    ```mlir
    %t = tile.trans %x {order = array<i32: 1, 0>} : tensor<32x64xf16> -> tensor<64x32xf16>
    ```
  }];
  let arguments = (ins Tile_StaticTensor:$src, DenseI32ArrayAttr:$order);
  let results = (outs Tile_StaticTensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Pointers and memory
//===----------------------------------------------------------------------===//

def Tile_AddPtrOp : Tile_Op<"addptr", [Pure, Elementwise,
    SameOperandsAndResultShape, AllTypesMatch<["ptr", "result"]>]> {
  let summary = "Advance pointers by a number of elements";
  let description = [{
    `offset` counts elements of the pointee type, like C pointer arithmetic.
    ```mlir
    %p = tile.addptr %base, %offs : tensor<128x!tile.ptr<f32>>, tensor<128xi32>
    ```
  }];
  let arguments = (ins Tile_PtrLike:$ptr, Tile_IntLike:$offset);
  let results = (outs Tile_PtrLike:$result);
  let assemblyFormat = "$ptr `,` $offset attr-dict `:` type($ptr) `,` type($offset)";
  let hasFolder = 1;
}

def Tile_IntToPtrOp : Tile_Op<"int_to_ptr", [Pure, Elementwise, SameOperandsAndResultShape]> {
  let summary = "Reinterpret 64-bit integers as pointers";
  let arguments = (ins Tile_IntLike:$src);
  let results = (outs Tile_PtrLike:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_PtrToIntOp : Tile_Op<"ptr_to_int", [Pure, Elementwise, SameOperandsAndResultShape]> {
  let summary = "Reinterpret pointers as 64-bit integers";
  let arguments = (ins Tile_PtrLike:$src);
  let results = (outs Tile_IntLike:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_BitcastOp : Tile_Op<"bitcast", [Pure, Elementwise, SameOperandsAndResultShape]> {
  let summary = "Reinterpret bits: pointer to pointer, or between equal-width scalars";
  let arguments = (ins Tile_Value:$src);
  let results = (outs Tile_Value:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_LoadOp : Tile_Op<"load", [
    MemoryEffects<[MemRead]>,
    TypesMatchWith<"result type matches the pointee type of ptr", "ptr", "result",
                   "::tilec::tile::getPointeeTypeOrTensorOf($_self)">,
    OptionalTypesMatchWith<"mask is i1 with the shape of ptr", "ptr", "mask",
                   "::tilec::tile::getI1TypeWithShapeOf($_self)">,
    OptionalTypesMatchWith<"other matches the result type", "ptr", "other",
                   "::tilec::tile::getPointeeTypeOrTensorOf($_self)">,
    AttrSizedOperandSegments]> {
  let summary = "Load through pointers, optionally masked";
  let description = [{
    Lanes where `mask` is false do not touch memory and yield `other`
    (undefined when `other` is absent).
    ```mlir
    %v = tile.load %ptrs, %mask, %zero {cache = #tile.cache<cg>} : tensor<128x!tile.ptr<f16>>
    ```
  }];
  let arguments = (ins Tile_PtrLike:$ptr, Optional<Tile_BoolLike>:$mask,
                       Optional<Tile_Value>:$other,
                       DefaultValuedAttr<Tile_CacheModifierAttr, "::tilec::tile::CacheModifier::None">:$cache,
                       DefaultValuedAttr<Tile_EvictionPolicyAttr, "::tilec::tile::EvictionPolicy::Normal">:$evict,
                       UnitAttr:$isVolatile);
  let results = (outs Tile_Value:$result);
  let assemblyFormat = [{
    $ptr (`,` $mask^)? (`,` $other^)? attr-dict `:` type($ptr)
  }];
  let hasVerifier = 1;
}

def Tile_LoadTileOp : Tile_Op<"load_tile", [MemoryEffects<[MemRead]>]> {
  let summary = "Load a 2-D block of an array, zeros outside the array";
  let description = [{
    `base` is the first element of an array of `rows` x `cols` elements,
    `row_stride` and `col_stride` elements apart. The result's element
    (i, j) is the array's element (row + i, col + j), or zero where that
    lies outside the array (row + i >= rows or col + j >= cols). `row` and
    `col` are not negative, and every element offset fits an i32.

    The block is named as a whole, not through a tensor of pointers: on
    sm_90a a block that feeds a warpgroup dot in a pipelined loop is copied
    by TMA (cp.async.bulk.tensor, a tensor map the runtime encodes from
    `base`, `rows`, `cols` and `row_stride`, which are then kernel
    arguments, with `col_stride` 1); elsewhere `convert-tile-to-tilegpu`
    expands it into pointers and a masked load.
    ```mlir
    %a = tile.load_tile %a_ptr[%row, %col] shape [%M, %K] strides [%sm, %c1] : !tile.ptr<f16> -> tensor<128x64xf16>
    ```
  }];
  let arguments = (ins Tile_Ptr:$base, I32:$row, I32:$col, I32:$rows,
                       I32:$cols, I32:$rowStride, I32:$colStride);
  let results = (outs Tile_StaticTensor:$result);
  let assemblyFormat = [{
    $base `[` $row `,` $col `]` `shape` `[` $rows `,` $cols `]` `strides` `[` $rowStride `,` $colStride `]` attr-dict `:` qualified(type($base)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_StoreOp : Tile_Op<"store", [
    MemoryEffects<[MemWrite]>,
    TypesMatchWith<"value type matches the pointee type of ptr", "ptr", "value",
                   "::tilec::tile::getPointeeTypeOrTensorOf($_self)">,
    OptionalTypesMatchWith<"mask is i1 with the shape of ptr", "ptr", "mask",
                   "::tilec::tile::getI1TypeWithShapeOf($_self)">]> {
  let summary = "Store through pointers, optionally masked";
  let description = [{
    ```mlir
    tile.store %ptrs, %v, %mask : tensor<128x!tile.ptr<f32>>
    ```
  }];
  let arguments = (ins Tile_PtrLike:$ptr, Tile_Value:$value, Optional<Tile_BoolLike>:$mask,
                       DefaultValuedAttr<Tile_CacheModifierAttr, "::tilec::tile::CacheModifier::None">:$cache,
                       DefaultValuedAttr<Tile_EvictionPolicyAttr, "::tilec::tile::EvictionPolicy::Normal">:$evict);
  let assemblyFormat = [{
    $ptr `,` $value (`,` $mask^)? attr-dict `:` type($ptr)
  }];
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

def Tile_DotOp : Tile_Op<"dot", [Pure, AllTypesMatch<["c", "d"]>]> {
  let summary = "Matrix product with accumulator: d = a * b + c";
  let description = [{
    `a` is MxK, `b` is KxN, `c` and `d` are MxN. f32 inputs use `ieee`
    products unless `inputPrecision` allows tf32 tensor cores.

    With `row_groups(%groups)` and `rowsPerGroup = R`, row r of `d` is row
    r of `c` alone, the product not added, when bit r / R of `%groups` is
    clear: a kernel that knows which groups of rows of `a` hold nothing
    (the gathered rows of a sparse convolution) says so, and the warpgroup
    MMA skips the instructions of rows whose groups are all clear. At most
    32 groups.
    ```mlir
    %d = tile.dot %a, %b, %c : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    %e = tile.dot %a, %b, %c row_groups(%g) {rowsPerGroup = 64 : i32} : tensor<128x32xf16> * tensor<32x64xf16> -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Tile_NumericTensor:$a, Tile_NumericTensor:$b, Tile_NumericTensor:$c,
                       Optional<I32>:$rowGroups,
                       DefaultValuedAttr<Tile_InputPrecisionAttr, "::tilec::tile::InputPrecision::IEEE">:$inputPrecision,
                       DefaultValuedAttr<I32Attr, "0">:$maxNumImpreciseAcc,
                       OptionalAttr<I32Attr>:$rowsPerGroup);
  let results = (outs Tile_NumericTensor:$d);
  let assemblyFormat = [{
    $a `,` $b `,` $c (`row_groups` `(` $rowGroups^ `)`)? attr-dict `:` type($a) `*` type($b) `->` type($d)
  }];
  let builders = [
    // A dot of every row.
    OpBuilder<(ins "::mlir::Type":$d, "::mlir::Value":$a, "::mlir::Value":$b,
                   "::mlir::Value":$c,
                   "::tilec::tile::InputPrecision":$inputPrecision,
                   "uint32_t":$maxNumImpreciseAcc), [{
      build($_builder, $_state, d, a, b, c, /*rowGroups=*/::mlir::Value(),
            inputPrecision, maxNumImpreciseAcc, /*rowsPerGroup=*/nullptr);
    }]>
  ];
  let hasVerifier = 1;
}

def Tile_ReduceOp : Tile_Op<"reduce", [Pure]> {
  let summary = "Reduce a tensor along one axis";
  let description = [{
    The result drops dimension `axis`; reducing a 1-D tensor gives a scalar.
    `max`/`min` on floats propagate NaN; `umax`/`umin` compare unsigned.
    ```mlir
    %s = tile.reduce add %x {axis = 1 : i32} : tensor<64x128xf32> -> tensor<64xf32>
    ```
  }];
  let arguments = (ins Tile_ReduceKind:$kind, Tile_NumericTensor:$src, I32Attr:$axis);
  let results = (outs Tile_Value:$result);
  let assemblyFormat = "$kind $src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_ScanOp : Tile_Op<"scan", [Pure, SameOperandsAndResultType]> {
  let summary = "Inclusive scan of a tensor along one axis";
  let description = [{
    Element `i` along `axis` of the result combines elements `0..i` of the
    source (`i..n-1` when `reverse`), with the kinds of `tile.reduce`.
    ```mlir
    %c = tile.scan add %x {axis = 0 : i32} : tensor<1024xi32>
    ```
  }];
  let arguments = (ins Tile_ReduceKind:$kind, Tile_NumericTensor:$src,
                       I32Attr:$axis, DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Tile_NumericTensor:$result);
  let assemblyFormat = "$kind $src attr-dict `:` type($src)";
  let hasVerifier = 1;
}

def Tile_HistogramOp : Tile_Op<"histogram", [Pure,
    OptionalTypesMatchWith<"mask is i1 with the shape of src", "src", "mask",
                   "::tilec::tile::getI1TypeWithShapeOf($_self)">]> {
  let summary = "Counts of a 1-D tensor's values in bins of width 1 from 0";
  let description = [{
    `tl.histogram(src, num_bins, mask)`: element `b` of the result counts the
    elements of `src` equal to `b` where `mask` holds; values outside
    `[0, bins)`, the result's size, count in no bin.
    ```mlir
    %counts = tile.histogram %digits, %in_range : tensor<256xi32> -> tensor<128xi32>
    ```
  }];
  let arguments = (ins I32Tensor:$src, Optional<Tile_BoolTensor>:$mask);
  let results = (outs I32Tensor:$result);
  let assemblyFormat = [{
    $src (`,` $mask^)? attr-dict `:` type($src) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_BinRankOp : Tile_Op<"bin_rank", [Pure,
    AllTypesMatch<["src", "result"]>,
    OptionalTypesMatchWith<"mask is i1 with the shape of src", "src", "mask",
                   "::tilec::tile::getI1TypeWithShapeOf($_self)">]> {
  let summary = "Each element's count of the equal elements before it";
  let description = [{
    Element `i` of the result counts the elements `j < i` of `src` with
    `src[j] == src[i]` where `mask` holds, for `src[i]` in `[0, bins)` and
    `mask[i]`; elsewhere it is 0, and such elements count for none. With
    the bins' counts (`tile.histogram`) it places the elements of a stable
    counting sort: element `i` goes after the elements of the smaller bins,
    at its rank among its own.
    ```mlir
    %rank = tile.bin_rank %digits, %in_range {bins = 128 : i32} : tensor<256xi32>
    ```
  }];
  let arguments = (ins I32Tensor:$src, Optional<Tile_BoolTensor>:$mask,
                       ConfinedAttr<I32Attr, [IntMinValue<1>]>:$bins);
  let results = (outs I32Tensor:$result);
  let assemblyFormat = [{
    $src (`,` $mask^)? attr-dict `:` type($src)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Atomics
//===----------------------------------------------------------------------===//

def Tile_AtomicRMWOp : Tile_Op<"atomic_rmw", [
    MemoryEffects<[MemRead, MemWrite]>,
    TypesMatchWith<"value type matches the pointee type of ptr", "ptr", "val",
                   "::tilec::tile::getPointeeTypeOrTensorOf($_self)">,
    TypesMatchWith<"result type matches the pointee type of ptr", "ptr", "result",
                   "::tilec::tile::getPointeeTypeOrTensorOf($_self)">,
    OptionalTypesMatchWith<"mask is i1 with the shape of ptr", "ptr", "mask",
                   "::tilec::tile::getI1TypeWithShapeOf($_self)">]> {
  let summary = "Atomic read-modify-write through pointers; yields the old values";
  let description = [{
    Each element is updated once, whichever threads hold it, and every holder
    receives the value memory had before. Lanes where `mask` is false do not
    touch memory and yield 0. `max`/`min` compare signed, `umax`/`umin`
    unsigned; `xchg` stores `val`.
    ```mlir
    %old = tile.atomic_rmw add, %ptrs, %ones, %mask {sem = #tile.sem<relaxed>} : tensor<128x!tile.ptr<i32>>
    ```
  }];
  let arguments = (ins Tile_AtomicRMWKind:$kind, Tile_PtrLike:$ptr, Tile_Value:$val,
                       Optional<Tile_BoolLike>:$mask,
                       DefaultValuedAttr<Tile_MemSemanticAttr, "::tilec::tile::MemSemantic::AcqRel">:$sem,
                       DefaultValuedAttr<Tile_MemSyncScopeAttr, "::tilec::tile::MemSyncScope::GPU">:$scope);
  let results = (outs Tile_Value:$result);
  let assemblyFormat = [{
    $kind `,` $ptr `,` $val (`,` $mask^)? attr-dict `:` type($ptr)
  }];
  let hasVerifier = 1;
}

def Tile_AtomicCASOp : Tile_Op<"atomic_cas", [
    MemoryEffects<[MemRead, MemWrite]>,
    TypesMatchWith<"cmp type matches the pointee type of ptr", "ptr", "cmp",
                   "::tilec::tile::getPointeeTypeOrTensorOf($_self)">,
    TypesMatchWith<"value type matches the pointee type of ptr", "ptr", "val",
                   "::tilec::tile::getPointeeTypeOrTensorOf($_self)">,
    TypesMatchWith<"result type matches the pointee type of ptr", "ptr", "result",
                   "::tilec::tile::getPointeeTypeOrTensorOf($_self)">,
    OptionalTypesMatchWith<"mask is i1 with the shape of ptr", "ptr", "mask",
                   "::tilec::tile::getI1TypeWithShapeOf($_self)">]> {
  let summary = "Atomic compare-and-swap through pointers; yields the old values";
  let description = [{
    Where memory holds `cmp` it becomes `val`; either way the element's old
    value is yielded (equal to `cmp` exactly when the swap happened). Like
    `atomic_rmw`, once per element, and masked-off lanes yield 0.
    ```mlir
    %old = tile.atomic_cas %slots, %empty, %keys, %mask : tensor<64x!tile.ptr<i32>>
    ```
  }];
  let arguments = (ins Tile_PtrLike:$ptr, Tile_Value:$cmp, Tile_Value:$val,
                       Optional<Tile_BoolLike>:$mask,
                       DefaultValuedAttr<Tile_MemSemanticAttr, "::tilec::tile::MemSemantic::AcqRel">:$sem,
                       DefaultValuedAttr<Tile_MemSyncScopeAttr, "::tilec::tile::MemSyncScope::GPU">:$scope);
  let results = (outs Tile_Value:$result);
  let assemblyFormat = [{
    $ptr `,` $cmp `,` $val (`,` $mask^)? attr-dict `:` type($ptr)
  }];
  let hasVerifier = 1;
}

def Tile_BarrierOp : Tile_Op<"barrier", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Every thread of the program arrives before any goes on";
  let description = [{
    `tl.debug_barrier()`: the program's threads wait for each other, and
    the memory operations each issued before it are ordered before those
    any issues after it. What makes a program's earlier stores part of what
    a following atomic with release semantics publishes to other programs
    (the atomic of a scalar is performed by one thread):
    ```mlir
    tile.store %partials, %acc : tensor<128x128x!tile.ptr<f32>>
    tile.barrier
    %arrived = tile.atomic_rmw add, %count, %one : !tile.ptr<i32>
    ```
  }];
  let assemblyFormat = "attr-dict";
}

#endif // TILEC_DIALECT_TILE_IR_TILEOPS_TD
