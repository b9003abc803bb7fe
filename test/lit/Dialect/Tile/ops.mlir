// RUN: tilec-opt %s -split-input-file | FileCheck %s
// Round-trip through the generic form too: the custom assembly must not lose anything.
// RUN: tilec-opt %s -split-input-file -mlir-print-op-generic | tilec-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @program_queries
func.func @program_queries() -> (i32, i32, i32) {
  // CHECK: tile.program_id x : i32
  %0 = tile.program_id x : i32
  // CHECK: tile.program_id z : i32
  %1 = tile.program_id z : i32
  // CHECK: tile.num_programs y : i32
  %2 = tile.num_programs y : i32
  return %0, %1, %2 : i32, i32, i32
}

// -----

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: f32, %t: tensor<4x32xf32>) -> (tensor<128xi32>, tensor<1x128xi32>, tensor<64x128xi32>, tensor<64x128xf32>, tensor<128xf32>, tensor<32x4xf32>) {
  // CHECK: tile.make_range {end = 160 : i32, start = 32 : i32} : tensor<128xi32>
  %r = tile.make_range {start = 32 : i32, end = 160 : i32} : tensor<128xi32>
  // CHECK: tile.expand_dims %{{.*}} {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %e = tile.expand_dims %r {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  // CHECK: tile.broadcast %{{.*}} : tensor<1x128xi32> -> tensor<64x128xi32>
  %b = tile.broadcast %e : tensor<1x128xi32> -> tensor<64x128xi32>
  // CHECK: tile.splat %{{.*}} : f32 -> tensor<64x128xf32>
  %s = tile.splat %x : f32 -> tensor<64x128xf32>
  // CHECK: tile.reshape %{{.*}} : tensor<4x32xf32> -> tensor<128xf32>
  %f = tile.reshape %t : tensor<4x32xf32> -> tensor<128xf32>
  // CHECK: tile.trans %{{.*}} {order = array<i32: 1, 0>} : tensor<4x32xf32> -> tensor<32x4xf32>
  %tr = tile.trans %t {order = array<i32: 1, 0>} : tensor<4x32xf32> -> tensor<32x4xf32>
  return %r, %e, %b, %s, %f, %tr : tensor<128xi32>, tensor<1x128xi32>, tensor<64x128xi32>, tensor<64x128xf32>, tensor<128xf32>, tensor<32x4xf32>
}

// -----

// CHECK-LABEL: func.func @pointers
// CHECK-SAME: !tile.ptr<f16>
// CHECK-SAME: !tile.ptr<f32, 3>
func.func @pointers(%p: !tile.ptr<f16>, %q: !tile.ptr<f32, 3>, %i: i64) -> (tensor<128x!tile.ptr<f16>>, !tile.ptr<f32, 3>, i64, !tile.ptr<i16>, tensor<2xi32>) {
  %r = tile.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  // CHECK: tile.splat %{{.*}} : !tile.ptr<f16> -> tensor<128x!tile.ptr<f16>>
  %ps = tile.splat %p : !tile.ptr<f16> -> tensor<128x!tile.ptr<f16>>
  // CHECK: tile.addptr %{{.*}}, %{{.*}} : tensor<128x!tile.ptr<f16>>, tensor<128xi32>
  %pa = tile.addptr %ps, %r : tensor<128x!tile.ptr<f16>>, tensor<128xi32>
  // CHECK: tile.addptr %{{.*}}, %{{.*}} : !tile.ptr<f32, 3>, i64
  %qa = tile.addptr %q, %i : !tile.ptr<f32, 3>, i64
  // CHECK: tile.ptr_to_int %{{.*}} : !tile.ptr<f16> -> i64
  %pi = tile.ptr_to_int %p : !tile.ptr<f16> -> i64
  // CHECK: tile.int_to_ptr %{{.*}} : i64 -> !tile.ptr<f16>
  %ip = tile.int_to_ptr %pi : i64 -> !tile.ptr<f16>
  // CHECK: tile.bitcast %{{.*}} : !tile.ptr<f16> -> !tile.ptr<i16>
  %bc = tile.bitcast %ip : !tile.ptr<f16> -> !tile.ptr<i16>
  %two = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: tile.bitcast %{{.*}} : tensor<2xf32> -> tensor<2xi32>
  %bits = tile.bitcast %two : tensor<2xf32> -> tensor<2xi32>
  return %pa, %qa, %pi, %bc, %bits : tensor<128x!tile.ptr<f16>>, !tile.ptr<f32, 3>, i64, !tile.ptr<i16>, tensor<2xi32>
}

// -----

// CHECK-LABEL: func.func @memory
func.func @memory(%p: tensor<128x!tile.ptr<f32>>, %m: tensor<128xi1>, %s: !tile.ptr<i32>) -> (tensor<128xf32>, tensor<128xf32>, i32) {
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  // CHECK: tile.load %{{.*}} : tensor<128x!tile.ptr<f32>>
  %a = tile.load %p : tensor<128x!tile.ptr<f32>>
  // CHECK: tile.load %{{.*}}, %{{.*}}, %{{.*}} {cache = #tile.cache<cg>, evict = #tile.evict<evict_last>} : tensor<128x!tile.ptr<f32>>
  %b = tile.load %p, %m, %zero {cache = #tile.cache<cg>, evict = #tile.evict<evict_last>} : tensor<128x!tile.ptr<f32>>
  // CHECK: tile.load %{{.*}} {isVolatile} : !tile.ptr<i32>
  %c = tile.load %s {isVolatile} : !tile.ptr<i32>
  // CHECK: tile.store %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x!tile.ptr<f32>>
  tile.store %p, %b, %m : tensor<128x!tile.ptr<f32>>
  // CHECK: tile.store %{{.*}}, %{{.*}} {cache = #tile.cache<cs>} : !tile.ptr<i32>
  tile.store %s, %c {cache = #tile.cache<cs>} : !tile.ptr<i32>
  return %a, %b, %c : tensor<128xf32>, tensor<128xf32>, i32
}

// -----

// CHECK-LABEL: func.func @compute
func.func @compute(%a: tensor<64x32xf16>, %b: tensor<32x16xf16>, %c: tensor<64x16xf32>,
                   %fa: tensor<64x32xf32>, %fb: tensor<32x16xf32>, %i: tensor<8x4xi32>) -> (tensor<64x16xf32>, tensor<64x16xf32>, tensor<64xf32>, f32, tensor<4xi32>) {
  // CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32xf16> * tensor<32x16xf16> -> tensor<64x16xf32>
  %d = tile.dot %a, %b, %c : tensor<64x32xf16> * tensor<32x16xf16> -> tensor<64x16xf32>
  // CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} {inputPrecision = #tile.precision<tf32>} : tensor<64x32xf32> * tensor<32x16xf32> -> tensor<64x16xf32>
  %e = tile.dot %fa, %fb, %d {inputPrecision = #tile.precision<tf32>} : tensor<64x32xf32> * tensor<32x16xf32> -> tensor<64x16xf32>
  // CHECK: tile.reduce max %{{.*}} {axis = 1 : i32} : tensor<64x16xf32> -> tensor<64xf32>
  %r = tile.reduce max %e {axis = 1 : i32} : tensor<64x16xf32> -> tensor<64xf32>
  // CHECK: tile.reduce add %{{.*}} {axis = 0 : i32} : tensor<64xf32> -> f32
  %s = tile.reduce add %r {axis = 0 : i32} : tensor<64xf32> -> f32
  // CHECK: tile.reduce xor %{{.*}} {axis = 0 : i32} : tensor<8x4xi32> -> tensor<4xi32>
  %x = tile.reduce xor %i {axis = 0 : i32} : tensor<8x4xi32> -> tensor<4xi32>
  return %d, %e, %r, %s, %x : tensor<64x16xf32>, tensor<64x16xf32>, tensor<64xf32>, f32, tensor<4xi32>
}

// -----

// A kernel: func.func with tile.kernel and divisibility hints on its arguments.
// CHECK-LABEL: func.func @kernel
// CHECK-SAME: tile.divisibility = 16 : i32
// CHECK-SAME: attributes {tile.kernel}
func.func @kernel(%p: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %init = arith.constant dense<0.0> : tensor<16xf32>
  // CHECK: scf.for
  %acc = scf.for %iv = %c0 to %c4 step %c1 iter_args(%a = %init) -> tensor<16xf32> {
    %r = tile.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
    %ps = tile.splat %p : !tile.ptr<f32> -> tensor<16x!tile.ptr<f32>>
    %pa = tile.addptr %ps, %r : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
    %v = tile.load %pa : tensor<16x!tile.ptr<f32>>
    %e = math.exp %v : tensor<16xf32>
    %s = arith.addf %a, %e : tensor<16xf32>
    scf.yield %s : tensor<16xf32>
  }
  return
}

// -----

// A dot whose rows in groups with a clear bit keep the accumulator.
// CHECK-LABEL: func.func @dot_row_groups
func.func @dot_row_groups(%a: tensor<128x32xf16>, %b: tensor<32x64xf16>, %c: tensor<128x64xf32>, %g: i32) -> tensor<128x64xf32> {
  // CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} row_groups(%{{.*}}) {rowsPerGroup = 64 : i32} : tensor<128x32xf16> * tensor<32x64xf16> -> tensor<128x64xf32>
  %d = tile.dot %a, %b, %c row_groups(%g) {rowsPerGroup = 64 : i32} : tensor<128x32xf16> * tensor<32x64xf16> -> tensor<128x64xf32>
  return %d : tensor<128x64xf32>
}
