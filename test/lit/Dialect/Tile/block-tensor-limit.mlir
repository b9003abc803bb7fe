// RUN: tilec-opt %s -split-input-file -verify-diagnostics

// A tensor in a kernel holds at most 2^20 elements, whichever op makes it;
// parsing rejects more, before a pass could materialize them.

func.func @range(%n: i32) attributes {tile.kernel} {
  // expected-error @+1 {{'tensor<2097152xi32>' has 2097152 elements; a block tensor holds at most 1048576 (2^20)}}
  %r = tile.make_range {start = 0 : i32, end = 2097152 : i32} : tensor<2097152xi32>
  return
}

// -----

func.func @splat(%x: f32) attributes {tile.kernel} {
  // expected-error @+1 {{'tensor<1073741824xf32>' has 1073741824 elements}}
  %s = tile.splat %x : f32 -> tensor<1073741824xf32>
  return
}

// -----

func.func @broadcast(%x: f32) attributes {tile.kernel} {
  %s = tile.splat %x : f32 -> tensor<1x2048xf32>
  // expected-error @+1 {{'tensor<1024x2048xf32>' has 2097152 elements}}
  %b = tile.broadcast %s : tensor<1x2048xf32> -> tensor<1024x2048xf32>
  return
}

// -----

func.func @constant() attributes {tile.kernel} {
  // expected-error @+1 {{'tensor<2048x1024xf32>' has 2097152 elements}}
  %c = arith.constant dense<0.0> : tensor<2048x1024xf32>
  return
}

// -----

// Past int64 the count is not printed.
func.func @overflow() attributes {tile.kernel} {
  // expected-error @+1 {{'tensor<4294967296x4294967296xf32>' has more than 9223372036854775807 elements}}
  %c = arith.constant dense<0.0> : tensor<4294967296x4294967296xf32>
  return
}

// -----

// A block argument no op result shows: an unreachable block's.
func.func @block_argument() attributes {tile.kernel} {
  // expected-error @-1 {{block argument #0: 'tensor<2097152xf32>' has 2097152 elements}}
  return
^unreachable(%t: tensor<2097152xf32>):
  return
}

// -----

// Layouts do not change the count (ttgir is checked too).
#blocked = #tilegpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#blocked1 = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90"} {
  func.func @layout() attributes {tile.kernel} {
    // expected-error @+1 {{'tensor<2097152xi32, #tilegpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>' has 2097152 elements}}
    %r = tile.make_range {start = 0 : i32, end = 2097152 : i32} : tensor<2097152xi32, #blocked>
    %c = tilegpu.convert_layout %r : tensor<2097152xi32, #blocked> -> tensor<2097152xi32, #blocked1>
    return
  }
}

// -----

// Exactly 2^20 elements is a block tensor, in every op.
func.func @at_the_limit(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = tile.make_range {start = 0 : i32, end = 1048576 : i32} : tensor<1048576xi32>
  %ns = tile.splat %n : i32 -> tensor<1048576xi32>
  %mask = arith.cmpi slt, %r, %ns : tensor<1048576xi32>
  %ps = tile.splat %p : !tile.ptr<f32> -> tensor<1048576x!tile.ptr<f32>>
  %ptrs = tile.addptr %ps, %r : tensor<1048576x!tile.ptr<f32>>, tensor<1048576xi32>
  %zero = arith.constant dense<0.0> : tensor<1048576xf32>
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (tensor<1048576xf32>) {
    %x = tile.load %ptrs, %mask : tensor<1048576x!tile.ptr<f32>>
    %e = math.exp %x : tensor<1048576xf32>
    %next = arith.addf %acc, %e : tensor<1048576xf32>
    scf.yield %next : tensor<1048576xf32>
  }
  %m = tile.reshape %sum : tensor<1048576xf32> -> tensor<1024x1024xf32>
  %t = tile.trans %m {order = array<i32: 1, 0>} : tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  %f = tile.reshape %t : tensor<1024x1024xf32> -> tensor<1048576xf32>
  tile.store %ptrs, %f, %mask : tensor<1048576x!tile.ptr<f32>>
  return
}
