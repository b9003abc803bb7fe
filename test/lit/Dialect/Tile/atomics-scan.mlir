// RUN: tilec-opt %s -split-input-file | FileCheck %s
// RUN: tilec-opt %s -split-input-file -mlir-print-op-generic | tilec-opt -split-input-file | FileCheck %s

// Defaults (acq_rel, gpu) are not printed; the result type follows from the
// pointers.
// CHECK-LABEL: func.func @atomic_rmw
// CHECK: %{{.+}} = tile.atomic_rmw add, %arg0, %arg1, %arg2 {scope = #tile.scope<cta>, sem = #tile.sem<relaxed>} : tensor<64x!tile.ptr<i32>>
// CHECK: %{{.+}} = tile.atomic_rmw umax, %arg0, %arg1 : tensor<64x!tile.ptr<i32>>
// CHECK: %{{.+}} = tile.atomic_rmw xchg, %arg3, %arg4 {scope = #tile.scope<sys>, sem = #tile.sem<release>} : !tile.ptr<f32>
// CHECK: %{{.+}} = tile.atomic_rmw max, %arg5, %arg6 {sem = #tile.sem<acquire>} : !tile.ptr<i64>
func.func @atomic_rmw(%p: tensor<64x!tile.ptr<i32>>, %v: tensor<64xi32>, %m: tensor<64xi1>,
                      %s: !tile.ptr<f32>, %f: f32, %q: !tile.ptr<i64>, %w: i64) {
  %0 = tile.atomic_rmw add, %p, %v, %m {sem = #tile.sem<relaxed>, scope = #tile.scope<cta>} : tensor<64x!tile.ptr<i32>>
  %1 = tile.atomic_rmw umax, %p, %v {sem = #tile.sem<acq_rel>, scope = #tile.scope<gpu>} : tensor<64x!tile.ptr<i32>>
  %2 = tile.atomic_rmw xchg, %s, %f {sem = #tile.sem<release>, scope = #tile.scope<sys>} : !tile.ptr<f32>
  %3 = tile.atomic_rmw max, %q, %w {sem = #tile.sem<acquire>} : !tile.ptr<i64>
  return
}

// -----

// CHECK-LABEL: func.func @atomic_cas
// CHECK: %{{.+}} = tile.atomic_cas %arg0, %arg1, %arg2, %arg3 : tensor<16x!tile.ptr<i64>>
// CHECK: %{{.+}} = tile.atomic_cas %arg4, %arg5, %arg5 {sem = #tile.sem<relaxed>} : !tile.ptr<i32>
func.func @atomic_cas(%p: tensor<16x!tile.ptr<i64>>, %c: tensor<16xi64>, %v: tensor<16xi64>, %m: tensor<16xi1>,
                      %s: !tile.ptr<i32>, %x: i32) {
  %0 = tile.atomic_cas %p, %c, %v, %m : tensor<16x!tile.ptr<i64>>
  %1 = tile.atomic_cas %s, %x, %x {sem = #tile.sem<relaxed>} : !tile.ptr<i32>
  return
}

// -----

// CHECK-LABEL: func.func @scan
// CHECK: %{{.+}} = tile.scan add %arg0 {axis = 0 : i32} : tensor<1024xi32>
// CHECK: %{{.+}} = tile.scan max %arg1 {axis = 1 : i32, reverse = true} : tensor<16x128xf32>
// CHECK: %{{.+}} = tile.scan xor %arg2 {axis = 0 : i32} : tensor<64x4xi64>
func.func @scan(%a: tensor<1024xi32>, %b: tensor<16x128xf32>, %c: tensor<64x4xi64>) {
  %0 = tile.scan add %a {axis = 0 : i32} : tensor<1024xi32>
  %1 = tile.scan max %b {axis = 1 : i32, reverse = true} : tensor<16x128xf32>
  %2 = tile.scan xor %c {axis = 0 : i32, reverse = false} : tensor<64x4xi64>
  return
}

// -----

// A barrier between a program's stores and the atomic that publishes them.
// CHECK-LABEL: func.func @barrier
// CHECK: tile.store
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: tile.atomic_rmw add
func.func @barrier(%p: tensor<64x!tile.ptr<f32>>, %v: tensor<64xf32>, %c: !tile.ptr<i32>, %one: i32) {
  tile.store %p, %v : tensor<64x!tile.ptr<f32>>
  tile.barrier
  %0 = tile.atomic_rmw add, %c, %one : !tile.ptr<i32>
  return
}
