// RUN: tilec-opt -split-input-file -tilegpu-allocate-shared-memory -tilegpu-insert-barriers -convert-tilegpu-to-llvm %s | FileCheck %s

// 256 elements on 128 threads: two runs (registers) of lanes then warps.
// Per run: 5 Hillis-Steele steps with shfl.up by 1..16 lanes, one more for
// the lanes' exclusive prefix, shfl.idx of lane 31's total; then the warps'
// totals through the scratch (2 runs x 4 warps x 4 B), one barrier, and each
// run reads the totals of its warps: all 4 for the first run, whose total
// the second adds, 3 for the last (the total of the last warp is not needed).
// CHECK: module attributes {{.*}}tilegpu.shared = 32 : i32
// CHECK-LABEL: llvm.func @cumsum
// CHECK-COUNT-6: nvvm.shfl.sync  up
// CHECK: nvvm.shfl.sync  idx
// CHECK-COUNT-6: nvvm.shfl.sync  up
// CHECK: nvvm.shfl.sync  idx
// CHECK-NOT: nvvm.shfl.sync
// CHECK-COUNT-2: llvm.store %{{.+}}, %{{.+}} : i32, !llvm.ptr<3>
// CHECK-NEXT: nvvm.barrier0
// CHECK-COUNT-7: llvm.load %{{.+}} : !llvm.ptr<3> -> i32
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.return
#blocked = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @cumsum(%x: tensor<256xi32, #blocked>, %out: tensor<256x!tile.ptr<i32>, #blocked>) {
    %0 = tile.scan add %x {axis = 0 : i32} : tensor<256xi32, #blocked>
    tile.store %out, %0 : tensor<256x!tile.ptr<i32>, #blocked>
    return
  }
}

// -----

// Reversed: the lanes take from above (shfl.down). 32 elements on 4 warps
// are copied in every warp: no scratch, no barrier.
// CHECK: module attributes {{.*}}tilegpu.shared = 0 : i32
// CHECK-LABEL: llvm.func @reverse_max
// CHECK-COUNT-6: nvvm.shfl.sync  down
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.return
#blocked = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @reverse_max(%x: tensor<32xf32, #blocked>, %out: tensor<32x!tile.ptr<f32>, #blocked>) {
    %0 = tile.scan max %x {axis = 0 : i32, reverse = true} : tensor<32xf32, #blocked>
    tile.store %out, %0 : tensor<32x!tile.ptr<f32>, #blocked>
    return
  }
}

// -----

// Along axis 1 of 16x128 with 4 elements per thread along it: three adds in
// registers per row before the lanes.
// CHECK-LABEL: llvm.func @rows
// CHECK: %[[A:.+]] = llvm.add %arg0, %arg1 : i32
// CHECK: %[[B:.+]] = llvm.add %[[A]], %arg2 : i32
// CHECK: llvm.add %[[B]], %arg3 : i32
// CHECK: nvvm.shfl.sync  up
#blocked = #tilegpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @rows(%x: tensor<16x128xi32, #blocked>, %out: tensor<16x128x!tile.ptr<i32>, #blocked>) {
    %0 = tile.scan add %x {axis = 1 : i32} : tensor<16x128xi32, #blocked>
    tile.store %out, %0 : tensor<16x128x!tile.ptr<i32>, #blocked>
    return
  }
}
