// RUN: tilec-opt -split-input-file %s | tilec-opt -split-input-file | FileCheck %s

// The shared-memory ops of a two-stage ring round-trip through the printer.

// CHECK-DAG: #[[SHARED:.+]] = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
// CHECK-LABEL: func.func @ring
// CHECK: %[[RING:.+]] = tilegpu.local_alloc : () -> !tilegpu.memdesc<2x64x32xf16, #[[SHARED]], mutable>
// CHECK: %[[SLOT:.+]] = tilegpu.memdesc_index %[[RING]][%{{.+}}] : !tilegpu.memdesc<2x64x32xf16, #[[SHARED]], mutable> -> !tilegpu.memdesc<64x32xf16, #[[SHARED]], mutable>
// CHECK: tilegpu.async_copy_global_to_local %{{.+}}, %[[SLOT]] mask %{{.+}} : tensor<64x32x!tile.ptr<f16>, #{{.+}}> -> !tilegpu.memdesc<64x32xf16, #[[SHARED]], mutable>
// CHECK: tilegpu.async_commit_group
// CHECK: tilegpu.async_wait {num = 1 : i32}
// CHECK: tilegpu.barrier
// CHECK: tilegpu.local_load %[[SLOT]] : !tilegpu.memdesc<64x32xf16, #[[SHARED]], mutable> -> tensor<64x32xf16, #{{.+}}>
// CHECK: tilegpu.local_store %{{.+}}, %[[SLOT]] : tensor<64x32xf16, #{{.+}}> -> !tilegpu.memdesc<64x32xf16, #[[SHARED]], mutable>
// CHECK: tilegpu.local_alloc %{{.+}} : (tensor<64x32xf16, #{{.+}}>) -> !tilegpu.memdesc<64x32xf16, #[[SHARED]]>
// CHECK: tilegpu.local_dealloc %[[RING]] : !tilegpu.memdesc<2x64x32xf16, #[[SHARED]], mutable>
#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#dot_a = #tilegpu.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>
#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @ring(%ptrs: tensor<64x32x!tile.ptr<f16>, #blocked>, %mask: tensor<64x32xi1, #blocked>, %i: i32) {
    %ring = tilegpu.local_alloc : () -> !tilegpu.memdesc<2x64x32xf16, #shared, mutable>
    %slot = tilegpu.memdesc_index %ring[%i] : !tilegpu.memdesc<2x64x32xf16, #shared, mutable> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    tilegpu.async_copy_global_to_local %ptrs, %slot mask %mask : tensor<64x32x!tile.ptr<f16>, #blocked> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    tilegpu.async_commit_group
    tilegpu.async_wait {num = 1 : i32}
    tilegpu.barrier
    %a = tilegpu.local_load %slot : !tilegpu.memdesc<64x32xf16, #shared, mutable> -> tensor<64x32xf16, #dot_a>
    %b = tilegpu.local_load %slot : !tilegpu.memdesc<64x32xf16, #shared, mutable> -> tensor<64x32xf16, #blocked>
    tilegpu.local_store %b, %slot : tensor<64x32xf16, #blocked> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    %c = tilegpu.local_alloc %b : (tensor<64x32xf16, #blocked>) -> !tilegpu.memdesc<64x32xf16, #shared>
    tilegpu.local_dealloc %ring : !tilegpu.memdesc<2x64x32xf16, #shared, mutable>
    return
  }
}

// -----

// A warpgroup dot reads both operands from nvmma_shared tiles; its
// accumulator has an mma v3 layout.

// CHECK-DAG: #[[NVA:.+]] = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
// CHECK-DAG: #[[NVB:.+]] = #tilegpu.nvmma_shared<{swizzlingByteWidth = 64, order = [0, 1]}>
// CHECK-LABEL: func.func @warpgroup
// CHECK: %[[D:.+]] = tilegpu.warpgroup_dot %{{.+}}, %{{.+}}, %{{.+}} {isAsync} : !tilegpu.memdesc<128x64xf16, #[[NVA]], mutable> * !tilegpu.memdesc<64x128xf16, #[[NVB]]> -> tensor<128x128xf32, #{{.+}}>
// CHECK: tilegpu.warpgroup_dot_wait %[[D]] {pendings = 0 : i32} : tensor<128x128xf32
#mma3 = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 128, 16]}>
#nva = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
#nvb = #tilegpu.nvmma_shared<{swizzlingByteWidth = 64, order = [0, 1]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90a", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @warpgroup(%a: !tilegpu.memdesc<128x64xf16, #nva, mutable>, %b: !tilegpu.memdesc<64x128xf16, #nvb>, %c: tensor<128x128xf32, #mma3>) -> tensor<128x128xf32, #mma3> {
    %d = tilegpu.warpgroup_dot %a, %b, %c {isAsync} : !tilegpu.memdesc<128x64xf16, #nva, mutable> * !tilegpu.memdesc<64x128xf16, #nvb> -> tensor<128x128xf32, #mma3>
    %w = tilegpu.warpgroup_dot_wait %d {pendings = 0 : i32} : tensor<128x128xf32, #mma3>
    return %w : tensor<128x128xf32, #mma3>
  }
}

// -----

// A tf32 dot computed transposed (D^T = B^T A^T): b in registers in the
// fragment layout of a transposed mma v3 accumulator; the default
// `transposed = false` is not printed.
// CHECK-DAG: #[[MMAT:.+]] = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [8, 1], instrShape = [16, 256, 8], transposed = true}>
// CHECK-DAG: #[[DOTT:.+]] = #tilegpu.dot_op<{opIdx = 1, parent = #[[MMAT]], kWidth = 1}>
// CHECK-DAG: #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 8]}>
// CHECK-LABEL: func.func @warpgroup_transposed
// CHECK: tilegpu.warpgroup_dot %{{.+}}, %{{.+}}, %{{.+}} {isAsync} : !tilegpu.memdesc<256x32xf32, #{{.+}}, mutable> * tensor<32x128xf32, #[[DOTT]]> -> tensor<256x128xf32, #[[MMAT]]>
#mmat = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [8, 1], instrShape = [16, 256, 8], transposed = true}>
#mma = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 8], transposed = false}>
#dot = #tilegpu.dot_op<{opIdx = 1, parent = #mmat, kWidth = 1}>
#nva = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 8 : i32, tilegpu.target = "sm_90a", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @warpgroup_transposed(%a: !tilegpu.memdesc<256x32xf32, #nva, mutable>, %b: tensor<32x128xf32, #dot>, %c: tensor<256x128xf32, #mmat>, %e: tensor<64x64xf32, #mma>) -> tensor<256x128xf32, #mmat> {
    %d = tilegpu.warpgroup_dot %a, %b, %c {isAsync} : !tilegpu.memdesc<256x32xf32, #nva, mutable> * tensor<32x128xf32, #dot> -> tensor<256x128xf32, #mmat>
    %w = tilegpu.warpgroup_dot_wait %d {pendings = 0 : i32} : tensor<256x128xf32, #mmat>
    return %w : tensor<256x128xf32, #mmat>
  }
}
