// RUN: tilec-opt %s -split-input-file -convert-tilegpu-to-llvm -verify-diagnostics | FileCheck %s

// The lowering places nothing in shared memory itself: without
// tilegpu-allocate-shared-memory a module that uses it is refused.
#rows = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90"} {
  func.func @no_total(%x: f32) attributes {tile.kernel} {
    %s = tile.splat %x : f32 -> tensor<32x32xf32, #rows>
    // expected-error @+1 {{'tile.trans' op uses shared memory but the module has no 'tilegpu.shared': run tilegpu-allocate-shared-memory first}}
    %t = tile.trans %s {order = array<i32: 1, 0>} : tensor<32x32xf32, #rows> -> tensor<32x32xf32, #rows>
    return
  }
}

// -----

#rows = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90", tilegpu.shared = 4096 : i32} {
  func.func @no_offset(%x: f32) attributes {tile.kernel} {
    %s = tile.splat %x : f32 -> tensor<32x32xf32, #rows>
    // expected-error @+1 {{'tile.trans' op uses shared memory but has no 'tilegpu.offset': run tilegpu-allocate-shared-memory first}}
    %t = tile.trans %s {order = array<i32: 1, 0>} : tensor<32x32xf32, #rows> -> tensor<32x32xf32, #rows>
    return
  }
}

// -----

// A hand-written place is honoured: the scratch starts 1024 bytes in, and
// the module's total stays as written.
// CHECK: module attributes {{.*}}tilegpu.shared = 5120 : i32
// CHECK-LABEL: llvm.func @placed
// CHECK: %[[BASE:.+]] = llvm.mlir.addressof @global_smem : !llvm.ptr<3>
// CHECK: llvm.getelementptr %[[BASE]][1024] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
#rows = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90", tilegpu.shared = 5120 : i32} {
  func.func @placed(%x: f32) attributes {tile.kernel} {
    %s = tile.splat %x : f32 -> tensor<32x32xf32, #rows>
    %t = tile.trans %s {order = array<i32: 1, 0>, tilegpu.offset = 1024 : i32} : tensor<32x32xf32, #rows> -> tensor<32x32xf32, #rows>
    return
  }
}
