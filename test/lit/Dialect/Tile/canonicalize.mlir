// RUN: tilec-opt %s -split-input-file -canonicalize | FileCheck %s

// CHECK-LABEL: func.func @splat_of_constant
// CHECK: %[[C:.*]] = arith.constant dense<2.000000e+00> : tensor<64xf32>
// CHECK-NOT: tile.splat
// CHECK: return %[[C]]
func.func @splat_of_constant() -> tensor<64xf32> {
  %c = arith.constant 2.0 : f32
  %s = tile.splat %c : f32 -> tensor<64xf32>
  return %s : tensor<64xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_of_broadcast
// CHECK: tile.broadcast %arg0 : tensor<1x1xf32> -> tensor<8x16xf32>
// CHECK-NOT: tile.broadcast
func.func @broadcast_of_broadcast(%x: tensor<1x1xf32>) -> tensor<8x16xf32> {
  %a = tile.broadcast %x : tensor<1x1xf32> -> tensor<1x16xf32>
  %b = tile.broadcast %a : tensor<1x16xf32> -> tensor<8x16xf32>
  return %b : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_of_splat
// CHECK: %[[S:.*]] = tile.splat %arg0 : f32 -> tensor<8x16xf32>
// CHECK-NEXT: return %[[S]]
func.func @broadcast_of_splat(%x: f32) -> tensor<8x16xf32> {
  %a = tile.splat %x : f32 -> tensor<1x16xf32>
  %b = tile.broadcast %a : tensor<1x16xf32> -> tensor<8x16xf32>
  return %b : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_identity
// CHECK-NEXT: return %arg0
func.func @broadcast_identity(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %b = tile.broadcast %x : tensor<8x16xf32> -> tensor<8x16xf32>
  return %b : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @expand_dims_of_splat
// CHECK: %[[S:.*]] = tile.splat %arg0 : i32 -> tensor<1x16xi32>
// CHECK-NEXT: return %[[S]]
func.func @expand_dims_of_splat(%x: i32) -> tensor<1x16xi32> {
  %a = tile.splat %x : i32 -> tensor<16xi32>
  %b = tile.expand_dims %a {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  return %b : tensor<1x16xi32>
}

// -----

// CHECK-LABEL: func.func @expand_dims_of_constant
// CHECK: arith.constant dense<3> : tensor<16x1xi32>
func.func @expand_dims_of_constant() -> tensor<16x1xi32> {
  %a = arith.constant dense<3> : tensor<16xi32>
  %b = tile.expand_dims %a {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  return %b : tensor<16x1xi32>
}

// -----

// CHECK-LABEL: func.func @reshape_chain
// CHECK: %[[R:.*]] = tile.reshape %arg0 : tensor<4x32xf32> -> tensor<8x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_chain(%x: tensor<4x32xf32>) -> tensor<8x16xf32> {
  %a = tile.reshape %x : tensor<4x32xf32> -> tensor<128xf32>
  %b = tile.reshape %a : tensor<128xf32> -> tensor<8x16xf32>
  return %b : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @trans_of_trans
// CHECK-NEXT: return %arg0
func.func @trans_of_trans(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %a = tile.trans %x {order = array<i32: 1, 0>} : tensor<4x32xf32> -> tensor<32x4xf32>
  %b = tile.trans %a {order = array<i32: 1, 0>} : tensor<32x4xf32> -> tensor<4x32xf32>
  return %b : tensor<4x32xf32>
}

// -----

// CHECK-LABEL: func.func @addptr_zero
// CHECK-NEXT: return %arg0
func.func @addptr_zero(%p: tensor<16x!tile.ptr<f32>>) -> tensor<16x!tile.ptr<f32>> {
  %z = arith.constant dense<0> : tensor<16xi32>
  %q = tile.addptr %p, %z : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
  return %q : tensor<16x!tile.ptr<f32>>
}

// -----

// Loads are not pure: an unused load is still removed only if it has no effect
// that matters; a store must stay.
// CHECK-LABEL: func.func @store_kept
// CHECK: tile.store
func.func @store_kept(%p: !tile.ptr<f32>, %v: f32) {
  tile.store %p, %v : !tile.ptr<f32>
  return
}
