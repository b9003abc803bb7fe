// RUN: tilec-opt %s -split-input-file -convert-tile-to-tilegpu | FileCheck %s

// Atomics and scans take the default layout of their shape for every operand
// and the result; a scalar atomic stays scalar.
// CHECK-DAG: #[[B64:.+]] = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-LABEL: func.func @atomics
// CHECK: %[[OLD:.+]] = tile.atomic_rmw add, %{{.+}}, %{{.+}}, %{{.+}} {sem = #tile.sem<relaxed>} : tensor<64x!tile.ptr<i32>, #[[B64]]>
// CHECK: tile.atomic_cas %{{.+}}, %{{.+}}, %[[OLD]], %{{.+}} : tensor<64x!tile.ptr<i32>, #[[B64]]>
// CHECK: tile.atomic_rmw xchg, %arg1, %{{.+}} : !tile.ptr<f32>
func.func @atomics(%p: !tile.ptr<i32>, %s: !tile.ptr<f32>, %n: i32) {
  %r = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %ps = tile.splat %p : !tile.ptr<i32> -> tensor<64x!tile.ptr<i32>>
  %pp = tile.addptr %ps, %r : tensor<64x!tile.ptr<i32>>, tensor<64xi32>
  %ns = tile.splat %n : i32 -> tensor<64xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<64xi32>
  %one = arith.constant dense<1> : tensor<64xi32>
  %old = tile.atomic_rmw add, %pp, %one, %m {sem = #tile.sem<relaxed>} : tensor<64x!tile.ptr<i32>>
  %cas = tile.atomic_cas %pp, %one, %old, %m : tensor<64x!tile.ptr<i32>>
  %f = arith.constant 1.0 : f32
  %x = tile.atomic_rmw xchg, %s, %f : !tile.ptr<f32>
  return
}

// -----

// CHECK-DAG: #[[ROWS:.+]] = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-LABEL: func.func @scan
// CHECK: tile.scan add %{{.+}} {axis = 0 : i32} : tensor<1024x16xi32, #[[ROWS]]>
// CHECK: tile.scan max %{{.+}} {axis = 1 : i32, reverse = true} : tensor<1024x16xi32, #[[ROWS]]>
func.func @scan(%x: tensor<1024x16xi32>) -> tensor<1024x16xi32> {
  %0 = tile.scan add %x {axis = 0 : i32} : tensor<1024x16xi32>
  %1 = tile.scan max %0 {axis = 1 : i32, reverse = true} : tensor<1024x16xi32>
  return %1 : tensor<1024x16xi32>
}

// -----

// The program's barrier is the CTA's, where it was.
// CHECK-LABEL: func.func @barrier
// CHECK: tile.store
// CHECK-NEXT: tilegpu.barrier
// CHECK-NEXT: tile.atomic_rmw add, %arg2, %arg3 : !tile.ptr<i32>
// CHECK-NOT: tile.barrier
func.func @barrier(%p: tensor<64x!tile.ptr<f32>>, %v: tensor<64xf32>, %c: !tile.ptr<i32>, %one: i32) {
  tile.store %p, %v : tensor<64x!tile.ptr<f32>>
  tile.barrier
  %0 = tile.atomic_rmw add, %c, %one : !tile.ptr<i32>
  return
}

// -----

// histogram counts its operand where it lies and its mask joins it there;
// the bins take their default layout. bin_rank's operands take the default
// layout, one element a thread a round. (A reduction's result is converted
// to its default layout at once, so both see that.)
// CHECK-DAG: #[[B1:.+]] = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-LABEL: func.func @binned
// CHECK: %[[ROWS:.+]] = tilegpu.convert_layout %{{.+}} -> tensor<256xi32, #[[B1]]>
// CHECK: tile.histogram %[[ROWS]], %arg1 : tensor<256xi32, #[[B1]]> -> tensor<64xi32, #[[B1]]>
// CHECK: tile.bin_rank %[[ROWS]], %arg1 {bins = 64 : i32} : tensor<256xi32, #[[B1]]>
func.func @binned(%x: tensor<256x64xi32>, %m: tensor<256xi1>) -> (tensor<64xi32>, tensor<256xi32>) {
  %rows = tile.reduce max %x {axis = 1 : i32} : tensor<256x64xi32> -> tensor<256xi32>
  %h = tile.histogram %rows, %m : tensor<256xi32> -> tensor<64xi32>
  %r = tile.bin_rank %rows, %m {bins = 64 : i32} : tensor<256xi32>
  return %h, %r : tensor<64xi32>, tensor<256xi32>
}
