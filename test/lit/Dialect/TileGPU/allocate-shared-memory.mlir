// RUN: tilec-opt %s -split-input-file -tilegpu-allocate-shared-memory | FileCheck %s

// Two buffers whose live ranges do not overlap share offset 0; the total is
// the larger one.
// CHECK-LABEL: module attributes
// CHECK-SAME: tilegpu.shared = 4096 : i32
// CHECK: func.func @disjoint
// CHECK: tilegpu.local_alloc {tilegpu.offset = 0 : i32} : () -> !tilegpu.memdesc<64x32xf16
// CHECK: tilegpu.local_alloc {tilegpu.offset = 0 : i32} : () -> !tilegpu.memdesc<32x32xf16
#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @disjoint(%a: tensor<64x32xf16, #blocked>, %b: tensor<32x32xf16, #blocked>) {
    %0 = tilegpu.local_alloc : () -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    tilegpu.local_store %a, %0 : tensor<64x32xf16, #blocked> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    %1 = tilegpu.local_load %0 : !tilegpu.memdesc<64x32xf16, #shared, mutable> -> tensor<64x32xf16, #blocked>
    %2 = tilegpu.local_alloc : () -> !tilegpu.memdesc<32x32xf16, #shared, mutable>
    tilegpu.local_store %b, %2 : tensor<32x32xf16, #blocked> -> !tilegpu.memdesc<32x32xf16, #shared, mutable>
    %3 = tilegpu.local_load %2 : !tilegpu.memdesc<32x32xf16, #shared, mutable> -> tensor<32x32xf16, #blocked>
    return
  }
}

// -----

// Overlapping live ranges take disjoint bytes, largest first: 4096 B at 0,
// 300 B past them, and 256 B at the next multiple of 128 after those. A
// local_dealloc is a use.
// CHECK-LABEL: module attributes
// CHECK-SAME: tilegpu.shared = 4736 : i32
// CHECK: func.func @overlapping
// CHECK: tilegpu.local_alloc {tilegpu.offset = 4480 : i32} : () -> !tilegpu.memdesc<16x16xi8
// CHECK: tilegpu.local_alloc {tilegpu.offset = 0 : i32} : () -> !tilegpu.memdesc<64x32xf16
// CHECK: tilegpu.local_alloc {tilegpu.offset = 4096 : i32} : () -> !tilegpu.memdesc<10x30xi8
#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @overlapping(%a: tensor<64x32xf16, #blocked>) {
    %small = tilegpu.local_alloc : () -> !tilegpu.memdesc<16x16xi8, #shared, mutable>
    %big = tilegpu.local_alloc : () -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    %odd = tilegpu.local_alloc : () -> !tilegpu.memdesc<10x30xi8, #shared, mutable>
    tilegpu.local_store %a, %big : tensor<64x32xf16, #blocked> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    tilegpu.local_dealloc %small : !tilegpu.memdesc<16x16xi8, #shared, mutable>
    tilegpu.local_dealloc %odd : !tilegpu.memdesc<10x30xi8, #shared, mutable>
    return
  }
}

// -----

// A ring used in a loop through memdesc_index stays live over the whole
// loop, so the scratch of the convert_layout in the body does not reuse its
// bytes; the buffer allocated after the loop does. The scratch is 64 rows of
// 32 f16 padded by 2 (the column reads spread over the banks): 4352 B.
// CHECK-LABEL: module attributes
// CHECK-SAME: tilegpu.shared = 12544 : i32
// CHECK: func.func @loop
// CHECK: tilegpu.local_alloc {tilegpu.offset = 0 : i32} : () -> !tilegpu.memdesc<2x64x32xf16
// CHECK: scf.for
// CHECK: tilegpu.convert_layout %{{.+}} {tilegpu.offset = 8192 : i32}
// CHECK: }
// CHECK: tilegpu.local_alloc {tilegpu.offset = 0 : i32} : () -> !tilegpu.memdesc<64x32xf16
#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#cols = #tilegpu.blocked<{sizePerThread = [8, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @loop(%a: tensor<64x32xf16, #blocked>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %ring = tilegpu.local_alloc : () -> !tilegpu.memdesc<2x64x32xf16, #shared, mutable>
    scf.for %i = %c0 to %n step %c1 : i32 {
      %k = arith.remsi %i, %c2 : i32
      %slot = tilegpu.memdesc_index %ring[%k] : !tilegpu.memdesc<2x64x32xf16, #shared, mutable> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
      %t = tilegpu.local_load %slot : !tilegpu.memdesc<64x32xf16, #shared, mutable> -> tensor<64x32xf16, #blocked>
      %c = tilegpu.convert_layout %t : tensor<64x32xf16, #blocked> -> tensor<64x32xf16, #cols>
      tilegpu.local_store %a, %slot : tensor<64x32xf16, #blocked> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    }
    %after = tilegpu.local_alloc : () -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    tilegpu.local_store %a, %after : tensor<64x32xf16, #blocked> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    return
  }
}

// -----

// Scratch lives only at its op: a reduction across warps (4 warps x 32 f32)
// and a trans one after the other both take offset 0, while a buffer live
// across the second pair pushes them past its bytes. A register renaming
// takes no shared memory.
// CHECK-LABEL: module attributes
// CHECK-SAME: tilegpu.shared = 49152 : i32
// CHECK: func.func @scratch
// CHECK: tilegpu.convert_layout %{{.+}} : tensor<128x32xf32
// CHECK: tile.reduce add %{{.+}} {axis = 0 : i32, tilegpu.offset = 0 : i32}
// CHECK: tile.trans %{{.+}} {order = array<i32: 1, 0>, tilegpu.offset = 0 : i32}
// CHECK: tilegpu.local_alloc {tilegpu.offset = 0 : i32} : () -> !tilegpu.memdesc<64x128xf32
// CHECK: tile.reduce add %{{.+}} {axis = 0 : i32, tilegpu.offset = 32768 : i32}
// CHECK: tile.trans %{{.+}} {order = array<i32: 1, 0>, tilegpu.offset = 32768 : i32}
// CHECK: tilegpu.local_dealloc
#rows = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#rows_t = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [0, 1]}>
#shared = #tilegpu.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @scratch(%x: f32) {
    %s = tile.splat %x : f32 -> tensor<128x32xf32, #rows>
    %renamed = tilegpu.convert_layout %s : tensor<128x32xf32, #rows> -> tensor<128x32xf32, #rows_t>
    %r0 = tile.reduce add %s {axis = 0 : i32} : tensor<128x32xf32, #rows> -> tensor<32xf32, #tilegpu.slice<{dim = 0, parent = #rows}>>
    %t0 = tile.trans %s {order = array<i32: 1, 0>} : tensor<128x32xf32, #rows> -> tensor<32x128xf32, #rows>
    %buf = tilegpu.local_alloc : () -> !tilegpu.memdesc<64x128xf32, #shared, mutable>
    %r1 = tile.reduce add %s {axis = 0 : i32} : tensor<128x32xf32, #rows> -> tensor<32xf32, #tilegpu.slice<{dim = 0, parent = #rows}>>
    %t1 = tile.trans %s {order = array<i32: 1, 0>} : tensor<128x32xf32, #rows> -> tensor<32x128xf32, #rows>
    tilegpu.local_dealloc %buf : !tilegpu.memdesc<64x128xf32, #shared, mutable>
    return
  }
}
