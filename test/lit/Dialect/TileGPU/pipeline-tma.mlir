// RUN: tilec-opt -tilegpu-pipeline=num-stages=3 -canonicalize -cse -split-input-file %s | FileCheck %s
// RUN: tilec-opt -tilegpu-pipeline=num-stages=3 -canonicalize -cse -tilegpu-allocate-shared-memory -tilegpu-insert-barriers -split-input-file %s | FileCheck %s --check-prefix=BARRIERS

// The blocks convert-tile-to-tilegpu left for TMA (tile.load_tile) become
// copies into rings of 3 slots, one mbarrier per slot. The kernel takes a
// tensor map per array, appended to its arguments and described by the
// arguments the runtime encodes it from (base, rows, cols, row_stride) and
// the box: 128 x 64 for A, 64 x 64 for B (two boxes per 128-column block,
// one per 128-byte swizzle span). A step arms its slot's mbarrier with the
// bytes of both blocks (16384 + 16384), then copies; the step that reads
// the slot waits for the phase of its round ((step / 3) & 1) and the wgmma
// reads the slots directly. After the loop the mbarriers are invalidated.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: %[[MAP_A:[^:]+]]: !tilegpu.tensormap {tilegpu.tensor_map = {base = 0 : i32, box_cols = 64 : i32, box_rows = 128 : i32, cols = 5 : i32, row_stride = 6 : i32, rows = 3 : i32, swizzle = 128 : i32}}
// CHECK-SAME: %[[MAP_B:[^:]+]]: !tilegpu.tensormap {tilegpu.tensor_map = {base = 1 : i32, box_cols = 64 : i32, box_rows = 64 : i32, cols = 4 : i32, row_stride = 7 : i32, rows = 5 : i32, swizzle = 128 : i32}}
// CHECK: %[[BARS:.+]] = tilegpu.local_alloc : () -> !tilegpu.memdesc<3x1x1xi64, #{{.+}}, mutable>
// CHECK-COUNT-3: tilegpu.init_barrier %{{.+}}, 1
// CHECK: %[[RING_A:.+]] = tilegpu.local_alloc : () -> !tilegpu.memdesc<3x128x64xf16, #[[SHARED:.+]], mutable>
// CHECK: %[[RING_B:.+]] = tilegpu.local_alloc : () -> !tilegpu.memdesc<3x64x128xf16, #[[SHARED]], mutable>
// The prologue: steps 0 and 1, each only if the loop has it.
// CHECK: tilegpu.barrier_expect %{{.+}}, 32768, %{{.+}}
// CHECK: tilegpu.async_tma_copy %[[MAP_A]][%{{.+}}, %c0_i32], %{{.+}}, %{{.+}}, %{{.+}}
// CHECK: tilegpu.async_tma_copy %[[MAP_B]][%c0_i32, %c0_i32]
// CHECK: tilegpu.barrier_expect %{{.+}}, 32768, %{{.+}}
// CHECK: tilegpu.async_tma_copy %[[MAP_A]][%{{.+}}, %c64_i32]
// CHECK: tilegpu.async_tma_copy %[[MAP_B]][%c64_i32, %c0_i32]
// CHECK: scf.for %[[K:.+]] = %c0_i32 to %{{.+}} step %c1_i32
// CHECK: %[[SLOT:.+]] = arith.remsi %[[K]], %c3_i32 : i32
// CHECK: %[[ROUND:.+]] = arith.divsi %[[K]], %c3_i32 : i32
// CHECK: %[[PHASE:.+]] = arith.andi %[[ROUND]], %c1_i32 : i32
// CHECK: %[[BAR:.+]] = tilegpu.memdesc_index %[[BARS]][%[[SLOT]]]
// CHECK: tilegpu.wait_barrier %[[BAR]], %[[PHASE]]
// CHECK: %[[A:.+]] = tilegpu.memdesc_index %[[RING_A]][%[[SLOT]]]
// CHECK: %[[B:.+]] = tilegpu.memdesc_index %[[RING_B]][%[[SLOT]]]
// CHECK: tilegpu.warpgroup_dot %[[A]], %[[B]], %{{.+}} {isAsync}
// CHECK: tilegpu.warpgroup_dot_wait %{{.+}} {pendings = 1 : i32}
// Step k + 2's copies, off past the end.
// CHECK: tilegpu.barrier_expect %{{.+}}, 32768, %[[PRED:[^ ]+]] :
// CHECK: tilegpu.async_tma_copy %[[MAP_A]][%{{.+}}, %{{.+}}], %{{.+}}, %{{.+}}, %[[PRED]]
// CHECK: tilegpu.async_tma_copy %[[MAP_B]][%{{.+}}, %c0_i32], %{{.+}}, %{{.+}}, %[[PRED]]
// CHECK: scf.yield
// CHECK: tilegpu.warpgroup_dot_wait %{{.+}} {pendings = 0 : i32}
// CHECK-COUNT-3: tilegpu.inval_barrier
// CHECK-NOT: tile.load_tile

// The mbarriers' initialization is published by one barrier before their
// first use; a copy waits at a barrier for every warpgroup's wgmma of the
// step before (the last reader of its slot), and no barrier follows the
// wait on an mbarrier (each thread waits itself). The barriers are
// invalidated after every thread is done with them.
// BARRIERS-LABEL: func.func @matmul
// BARRIERS: tilegpu.init_barrier
// BARRIERS: tilegpu.init_barrier
// BARRIERS: tilegpu.init_barrier
// BARRIERS-NEXT: tilegpu.local_alloc
// BARRIERS-NEXT: tilegpu.local_alloc
// BARRIERS: tilegpu.barrier
// BARRIERS-NEXT: tilegpu.barrier_expect
// BARRIERS: scf.for
// BARRIERS: tilegpu.wait_barrier
// BARRIERS-NOT: tilegpu.barrier
// BARRIERS: tilegpu.warpgroup_dot_wait
// BARRIERS: tilegpu.barrier_expect
// BARRIERS: tilegpu.barrier
// BARRIERS-NEXT: tilegpu.async_tma_copy
// BARRIERS-NOT: tilegpu.barrier
// BARRIERS: scf.yield
// BARRIERS: tilegpu.warpgroup_dot_wait
// BARRIERS-NEXT: tilegpu.barrier
// BARRIERS-NEXT: tilegpu.inval_barrier
#blocked = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]}>
#blocked1 = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
#mma = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 128, 16]}>
#shared = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90a", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @matmul(%arg0: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %arg1: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %arg2: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %arg3: i32, %arg4: i32, %arg5: i32, %arg6: i32 {tile.divisibility = 8 : i32}, %arg7: i32 {tile.divisibility = 8 : i32}) attributes {tile.kernel} {
    %cst = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #mma>
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c64_i32 = arith.constant 64 : i32
    %0 = tile.program_id x : i32
    %1 = arith.muli %0, %c64_i32 : i32
    %2 = arith.divsi %arg5, %c64_i32 : i32
    %3 = scf.for %arg8 = %c0_i32 to %2 step %c1_i32 iter_args(%arg9 = %cst) -> (tensor<128x128xf32, #mma>)  : i32 {
      %6 = arith.muli %arg8, %c64_i32 : i32
      %7 = tile.load_tile %arg0[%1, %6] shape[%arg3, %arg5] strides[%arg6, %c1_i32] : !tile.ptr<f16> -> tensor<128x64xf16, #blocked>
      %8 = tile.load_tile %arg1[%6, %c0_i32] shape[%arg5, %arg4] strides[%arg7, %c1_i32] : !tile.ptr<f16> -> tensor<64x128xf16, #blocked1>
      %9 = tilegpu.local_alloc %7 : (tensor<128x64xf16, #blocked>) -> !tilegpu.memdesc<128x64xf16, #shared>
      %10 = tilegpu.local_alloc %8 : (tensor<64x128xf16, #blocked1>) -> !tilegpu.memdesc<64x128xf16, #shared>
      %11 = tilegpu.warpgroup_dot %9, %10, %arg9 : !tilegpu.memdesc<128x64xf16, #shared> * !tilegpu.memdesc<64x128xf16, #shared> -> tensor<128x128xf32, #mma>
      scf.yield %11 : tensor<128x128xf32, #mma>
    }
    %4 = tilegpu.convert_layout %3 : tensor<128x128xf32, #mma> -> tensor<128x128xf32, #blocked1>
    %5 = tile.splat %arg2 : !tile.ptr<f32> -> tensor<128x128x!tile.ptr<f32>, #blocked1>
    tile.store %5, %4 : tensor<128x128x!tile.ptr<f32>, #blocked1>
    return
  }
}

