// RUN: tilec-opt -convert-tilegpu-to-llvm -split-input-file %s | FileCheck %s

// A tensor map argument becomes a 128-byte parameter read in place
// (byval, 64-byte aligned, grid constant); the mbarrier ops and the TMA copy
// become inline PTX that thread 0 runs (the copy also under its own
// predicate), the wait a retry loop that every thread runs. A 64 x 128 f16
// block with a 128-byte swizzle is two boxes of 64 columns: the second lands
// 64 rows x 128 bytes (8192) after the first, 64 columns further along.
// CHECK-LABEL: llvm.func @tma
// CHECK-SAME: %[[MAP:[^:]+]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}
// CHECK-DAG: %[[C64:.+]] = llvm.mlir.constant(64 : i32) : i32
// CHECK-DAG: %[[C8192:.+]] = llvm.mlir.constant(8192 : i32) : i32
// CHECK: %[[TID:.+]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[FIRST:.+]] = llvm.icmp "eq" %[[TID]], %{{.+}} : i32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "@$1 mbarrier.init.shared::cta.b64 [$0], 1;\0A\09@$1 fence.mbarrier_init.release.cluster;\0A\09@$1 fence.proxy.async.shared::cta;", "r,b" %{{.+}}, %[[FIRST]]
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "@$1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], 16384;", "r,b"
// CHECK: %[[MAP_INT:.+]] = llvm.ptrtoint %[[MAP]] : !llvm.ptr to i64
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "@$5 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];", "r,l,r,r,r,b" %[[DST:.+]], %[[MAP_INT]], %arg5, %arg4, %{{.+}}, %{{.+}} : (i32, i64, i32, i32, i32, i1) -> ()
// CHECK: %[[DST2:.+]] = llvm.add %[[DST]], %[[C8192]] : i32
// CHECK: %[[COL2:.+]] = llvm.add %arg5, %[[C64]] : i32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "@$5 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];", "r,l,r,r,r,b" %[[DST2]], %[[MAP_INT]], %[[COL2]], %arg4
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A\09.reg .pred complete;\0A\09wait_phase:\0A\09mbarrier.try_wait.parity.shared::cta.b64 complete, [$0], $1;\0A\09@!complete bra.uni wait_phase;\0A\09}", "r,r"
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "@$1 mbarrier.inval.shared::cta.b64 [$0];", "r,b"
#bars = #tilegpu.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#shared = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90a", "tilegpu.threads-per-warp" = 32 : i32, tilegpu.shared = 17408 : i32} {
  func.func @tma(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %rows: i32, %cols: i32,
                 %map: !tilegpu.tensormap {tilegpu.tensor_map = {base = 0 : i32, box_cols = 64 : i32, box_rows = 64 : i32, cols = 2 : i32, row_stride = 2 : i32, rows = 1 : i32, swizzle = 128 : i32}},
                 %row: i32, %col: i32, %phase: i32, %pred: i1) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %bars = tilegpu.local_alloc {tilegpu.offset = 16384 : i32} : () -> !tilegpu.memdesc<1x1x1xi64, #bars, mutable>
    %bar = tilegpu.memdesc_index %bars[%c0] : !tilegpu.memdesc<1x1x1xi64, #bars, mutable> -> !tilegpu.memdesc<1x1xi64, #bars, mutable>
    tilegpu.init_barrier %bar, 1 : !tilegpu.memdesc<1x1xi64, #bars, mutable>
    %ring = tilegpu.local_alloc {tilegpu.offset = 0 : i32} : () -> !tilegpu.memdesc<1x64x128xf16, #shared, mutable>
    %slot = tilegpu.memdesc_index %ring[%c0] : !tilegpu.memdesc<1x64x128xf16, #shared, mutable> -> !tilegpu.memdesc<64x128xf16, #shared, mutable>
    tilegpu.barrier_expect %bar, 16384, %pred : !tilegpu.memdesc<1x1xi64, #bars, mutable>
    tilegpu.async_tma_copy %map[%row, %col], %slot, %bar, %pred : !tilegpu.tensormap, !tilegpu.memdesc<64x128xf16, #shared, mutable>, !tilegpu.memdesc<1x1xi64, #bars, mutable>
    tilegpu.wait_barrier %bar, %phase : !tilegpu.memdesc<1x1xi64, #bars, mutable>
    tilegpu.inval_barrier %bar : !tilegpu.memdesc<1x1xi64, #bars, mutable>
    return
  }
}
