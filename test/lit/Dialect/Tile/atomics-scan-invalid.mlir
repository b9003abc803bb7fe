// RUN: tilec-opt %s -split-input-file -verify-diagnostics

func.func @rmw_float_max(%p: tensor<64x!tile.ptr<f32>>, %v: tensor<64xf32>) {
  // expected-error @+1 {{atomic 'max' takes i32 or i64, got 'f32'}}
  %0 = tile.atomic_rmw max, %p, %v : tensor<64x!tile.ptr<f32>>
  return
}

// -----

func.func @rmw_f16_add(%p: !tile.ptr<f16>, %v: f16) {
  // expected-error @+1 {{atomic 'add' takes i32, i64 or f32, got 'f16'}}
  %0 = tile.atomic_rmw add, %p, %v : !tile.ptr<f16>
  return
}

// -----

func.func @rmw_shared(%p: !tile.ptr<i32, 3>, %v: i32) {
  // expected-error @+1 {{atomics need global pointers (address space 1), got '!tile.ptr<i32, 3>'}}
  %0 = tile.atomic_rmw add, %p, %v : !tile.ptr<i32, 3>
  return
}

// -----

func.func @rmw_value_type(%p: tensor<64x!tile.ptr<i32>>, %v: tensor<64xi64>) {
  // expected-error @+1 {{'tile.atomic_rmw' op failed to verify that value type matches the pointee type of ptr}}
  %0 = "tile.atomic_rmw"(%p, %v) <{kind = 0 : i32}> : (tensor<64x!tile.ptr<i32>>, tensor<64xi64>) -> tensor<64xi32>
  return
}

// -----

func.func @rmw_unknown_kind(%p: !tile.ptr<i32>, %v: i32) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [add, max, min, umax, umin, and, or, xor, xchg]}}
  %0 = tile.atomic_rmw nand, %p, %v : !tile.ptr<i32>
  return
}

// -----

func.func @cas_float(%p: !tile.ptr<f32>, %v: f32) {
  // expected-error @+1 {{atomic_cas takes i32 or i64, got 'f32'}}
  %0 = tile.atomic_cas %p, %v, %v : !tile.ptr<f32>
  return
}

// -----

func.func @scan_axis(%x: tensor<16x128xi32>) {
  // expected-error @+1 {{axis 2 is out of range [0, 2)}}
  %0 = tile.scan add %x {axis = 2 : i32} : tensor<16x128xi32>
  return
}

// -----

func.func @scan_float_xor(%x: tensor<128xf32>) {
  // expected-error @+1 {{scan 'xor' needs integer elements, got 'f32'}}
  %0 = tile.scan xor %x {axis = 0 : i32} : tensor<128xf32>
  return
}
