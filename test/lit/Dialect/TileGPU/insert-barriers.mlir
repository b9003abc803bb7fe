// RUN: tilec-opt %s -split-input-file -tilegpu-allocate-shared-memory -tilegpu-insert-barriers | FileCheck %s

// Read after write: the load waits for every thread's store; the store,
// first to touch the buffer, needs none.
// CHECK-LABEL: func.func @raw
// CHECK-NEXT: tilegpu.local_alloc
// CHECK-NEXT: tilegpu.local_store
// CHECK-NEXT: tilegpu.barrier
// CHECK-NEXT: tilegpu.local_load
// CHECK-NEXT: return
#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @raw(%a: tensor<64x32xf16, #blocked>) {
    %buf = tilegpu.local_alloc : () -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    tilegpu.local_store %a, %buf : tensor<64x32xf16, #blocked> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    %t = tilegpu.local_load %buf : !tilegpu.memdesc<64x32xf16, #shared, mutable> -> tensor<64x32xf16, #blocked>
    return
  }
}

// -----

// A local_alloc from a tensor writes; after one barrier, two loads read
// without another.
// CHECK-LABEL: func.func @two_loads
// CHECK-NEXT: tilegpu.local_alloc
// CHECK-NEXT: tilegpu.barrier
// CHECK-NEXT: tilegpu.local_load
// CHECK-NEXT: tilegpu.local_load
// CHECK-NEXT: return
#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @two_loads(%a: tensor<64x32xf16, #blocked>) {
    %buf = tilegpu.local_alloc %a : (tensor<64x32xf16, #blocked>) -> !tilegpu.memdesc<64x32xf16, #shared>
    %t0 = tilegpu.local_load %buf : !tilegpu.memdesc<64x32xf16, #shared> -> tensor<64x32xf16, #blocked>
    %t1 = tilegpu.local_load %buf : !tilegpu.memdesc<64x32xf16, #shared> -> tensor<64x32xf16, #blocked>
    return
  }
}

// -----

// Bytes that do not overlap need no barrier: two live buffers, and the two
// copies of a ring selected by constant indices. A dynamic index may name
// either copy.
// CHECK-LABEL: func.func @disjoint
// CHECK: tilegpu.local_store %{{.+}}, %[[A:.+]] :
// CHECK-NEXT: tilegpu.local_load %[[B:.+]] :
// CHECK-NEXT: tilegpu.local_store %{{.+}}, %[[S0:.+]] :
// CHECK-NEXT: tilegpu.local_load %[[S1:.+]] :
// CHECK-NEXT: tilegpu.barrier
// CHECK-NEXT: tilegpu.local_load %[[SK:.+]] :
// CHECK-NEXT: return
#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @disjoint(%x: tensor<64x32xf16, #blocked>, %k: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %a = tilegpu.local_alloc : () -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    %b = tilegpu.local_alloc : () -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    %ring = tilegpu.local_alloc : () -> !tilegpu.memdesc<2x64x32xf16, #shared, mutable>
    %s0 = tilegpu.memdesc_index %ring[%c0] : !tilegpu.memdesc<2x64x32xf16, #shared, mutable> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    %s1 = tilegpu.memdesc_index %ring[%c1] : !tilegpu.memdesc<2x64x32xf16, #shared, mutable> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    %sk = tilegpu.memdesc_index %ring[%k] : !tilegpu.memdesc<2x64x32xf16, #shared, mutable> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    tilegpu.local_store %x, %a : tensor<64x32xf16, #blocked> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    %0 = tilegpu.local_load %b : !tilegpu.memdesc<64x32xf16, #shared, mutable> -> tensor<64x32xf16, #blocked>
    tilegpu.local_store %x, %s0 : tensor<64x32xf16, #blocked> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    %1 = tilegpu.local_load %s1 : !tilegpu.memdesc<64x32xf16, #shared, mutable> -> tensor<64x32xf16, #blocked>
    %2 = tilegpu.local_load %sk : !tilegpu.memdesc<64x32xf16, #shared, mutable> -> tensor<64x32xf16, #blocked>
    return
  }
}

// -----

// cp.async: no barrier before the load that follows its wait other than the
// one after the wait, and none before the copy.
// CHECK-LABEL: func.func @async_copy
// CHECK-NEXT: tilegpu.local_alloc
// CHECK-NEXT: tilegpu.async_copy_global_to_local
// CHECK-NEXT: tilegpu.async_commit_group
// CHECK-NEXT: tilegpu.async_wait {num = 0 : i32}
// CHECK-NEXT: tilegpu.barrier
// CHECK-NEXT: tilegpu.local_load
// CHECK-NEXT: return
#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @async_copy(%ptrs: tensor<64x32x!tile.ptr<f16>, #blocked>) {
    %buf = tilegpu.local_alloc : () -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    tilegpu.async_copy_global_to_local %ptrs, %buf : tensor<64x32x!tile.ptr<f16>, #blocked> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    tilegpu.async_commit_group
    tilegpu.async_wait {num = 0 : i32}
    %t = tilegpu.local_load %buf : !tilegpu.memdesc<64x32xf16, #shared, mutable> -> tensor<64x32xf16, #blocked>
    return
  }
}

// -----

// A three-stage pipeline: the prologue fills slots 0 and 1; each iteration
// waits for slot k%3, copies into slot (k+2)%3 (read in the previous
// iteration) and reads slot k%3. The barrier after the wait both publishes
// slot k%3 and ends the previous iteration's reads: exactly one per
// iteration. A barrier already after a wait is kept, not doubled.
// CHECK-LABEL: func.func @pipeline
// CHECK-NOT: tilegpu.barrier
// CHECK: scf.for
// CHECK-NOT: tilegpu.barrier
// CHECK: tilegpu.async_wait {num = 1 : i32}
// CHECK-NEXT: tilegpu.barrier
// CHECK-NEXT: tilegpu.async_copy_global_to_local
// CHECK-NEXT: tilegpu.async_commit_group
// CHECK-NEXT: tilegpu.local_load
// CHECK-NEXT: }
// CHECK-NEXT: tilegpu.async_wait {num = 0 : i32}
// CHECK-NEXT: tilegpu.barrier
// CHECK-NEXT: tilegpu.local_dealloc
// CHECK-NEXT: return
#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @pipeline(%ptrs: tensor<64x32x!tile.ptr<f16>, #blocked>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c3 = arith.constant 3 : i32
    %ring = tilegpu.local_alloc : () -> !tilegpu.memdesc<3x64x32xf16, #shared, mutable>
    %s0 = tilegpu.memdesc_index %ring[%c0] : !tilegpu.memdesc<3x64x32xf16, #shared, mutable> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    tilegpu.async_copy_global_to_local %ptrs, %s0 : tensor<64x32x!tile.ptr<f16>, #blocked> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    tilegpu.async_commit_group
    %s1 = tilegpu.memdesc_index %ring[%c1] : !tilegpu.memdesc<3x64x32xf16, #shared, mutable> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    tilegpu.async_copy_global_to_local %ptrs, %s1 : tensor<64x32x!tile.ptr<f16>, #blocked> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    tilegpu.async_commit_group
    scf.for %k = %c0 to %n step %c1 : i32 {
      %next = arith.addi %k, %c2 : i32
      %write = arith.remsi %next, %c3 : i32
      %read = arith.remsi %k, %c3 : i32
      %dst = tilegpu.memdesc_index %ring[%write] : !tilegpu.memdesc<3x64x32xf16, #shared, mutable> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
      %src = tilegpu.memdesc_index %ring[%read] : !tilegpu.memdesc<3x64x32xf16, #shared, mutable> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
      tilegpu.async_wait {num = 1 : i32}
      tilegpu.async_copy_global_to_local %ptrs, %dst : tensor<64x32x!tile.ptr<f16>, #blocked> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
      tilegpu.async_commit_group
      %t = tilegpu.local_load %src : !tilegpu.memdesc<64x32xf16, #shared, mutable> -> tensor<64x32xf16, #blocked>
    }
    tilegpu.async_wait {num = 0 : i32}
    tilegpu.barrier
    tilegpu.local_dealloc %ring : !tilegpu.memdesc<3x64x32xf16, #shared, mutable>
    return
  }
}

// -----

// Write after read across the back edge: each iteration's store must wait
// for the previous iteration's load, which only the loop's fixed point sees.
// CHECK-LABEL: func.func @war_back_edge
// CHECK: scf.for
// CHECK-NEXT: tilegpu.barrier
// CHECK-NEXT: tilegpu.local_store
// CHECK-NEXT: tilegpu.barrier
// CHECK-NEXT: tilegpu.local_load
// CHECK-NEXT: }
// CHECK-NEXT: return
#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @war_back_edge(%x: tensor<64x32xf16, #blocked>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %buf = tilegpu.local_alloc : () -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    scf.for %i = %c0 to %n step %c1 : i32 {
      tilegpu.local_store %x, %buf : tensor<64x32xf16, #blocked> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
      %t = tilegpu.local_load %buf : !tilegpu.memdesc<64x32xf16, #shared, mutable> -> tensor<64x32xf16, #blocked>
    }
    return
  }
}

// -----

// scf.if joins its branches: a store in one branch makes the load after the
// if wait; loads in both branches do not, but the store after them does.
// CHECK-LABEL: func.func @branches
// CHECK: scf.if
// CHECK-NEXT: tilegpu.local_store
// CHECK-NEXT: }
// CHECK-NEXT: tilegpu.barrier
// CHECK-NEXT: tilegpu.local_load
// CHECK-NEXT: scf.if
// CHECK-NEXT: tilegpu.local_load
// CHECK-NEXT: } else {
// CHECK-NEXT: tilegpu.local_load
// CHECK-NEXT: }
// CHECK-NEXT: tilegpu.local_load
// CHECK-NEXT: tilegpu.barrier
// CHECK-NEXT: tilegpu.local_store
// CHECK-NEXT: return
#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @branches(%x: tensor<64x32xf16, #blocked>, %c: i1) {
    %buf = tilegpu.local_alloc : () -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    scf.if %c {
      tilegpu.local_store %x, %buf : tensor<64x32xf16, #blocked> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    }
    %0 = tilegpu.local_load %buf : !tilegpu.memdesc<64x32xf16, #shared, mutable> -> tensor<64x32xf16, #blocked>
    scf.if %c {
      %1 = tilegpu.local_load %buf : !tilegpu.memdesc<64x32xf16, #shared, mutable> -> tensor<64x32xf16, #blocked>
    } else {
      %2 = tilegpu.local_load %buf : !tilegpu.memdesc<64x32xf16, #shared, mutable> -> tensor<64x32xf16, #blocked>
    }
    %3 = tilegpu.local_load %buf : !tilegpu.memdesc<64x32xf16, #shared, mutable> -> tensor<64x32xf16, #blocked>
    tilegpu.local_store %x, %buf : tensor<64x32xf16, #blocked> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    return
  }
}

// -----

// Scratch ops read and write their own bytes: two conversions that share
// offset 0 are fenced, the first one is not.
// CHECK-LABEL: func.func @scratch
// CHECK-NEXT: tile.splat
// CHECK-NEXT: tilegpu.convert_layout
// CHECK-NEXT: tilegpu.barrier
// CHECK-NEXT: tilegpu.convert_layout
// CHECK-NEXT: return
#rows = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#cols = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @scratch(%x: f32) {
    %s = tile.splat %x : f32 -> tensor<32x32xf32, #rows>
    %0 = tilegpu.convert_layout %s : tensor<32x32xf32, #rows> -> tensor<32x32xf32, #cols>
    %1 = tilegpu.convert_layout %s : tensor<32x32xf32, #rows> -> tensor<32x32xf32, #cols>
    return
  }
}
