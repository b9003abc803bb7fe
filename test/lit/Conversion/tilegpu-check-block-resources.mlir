// RUN: tilec-opt %s -split-input-file -tilegpu-allocate-shared-memory -tilegpu-check-block-resources -verify-diagnostics
// The lowering checks the same before it writes code for every register.
// RUN: tilec-opt %s -split-input-file -tilegpu-allocate-shared-memory -convert-tilegpu-to-llvm -verify-diagnostics -o /dev/null

// The lowering writes every op once per register of its tensors: a tensor
// may take at most 4096 registers per thread. 2^20 i32 over 128 threads take
// 8192.
#blocked = #tilegpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90"} {
  func.func @registers(%n: i32) attributes {tile.kernel} {
    // expected-error @+1 {{'tensor<1048576xi32, #tilegpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>' needs 8192 registers per thread; one tensor may take at most 4096}}
    %r = tile.make_range {start = 0 : i32, end = 1048576 : i32} : tensor<1048576xi32, #blocked>
    return
  }
}

// -----

// On one warp, 2^17 i32 take 4096 registers per thread: more than a thread
// has (ptxas spills) but within the bound. A pointer takes two.
#blocked = #tilegpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
module attributes {"tilegpu.num-warps" = 1 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90"} {
  func.func @pointers(%p: !tile.ptr<i32>) attributes {tile.kernel} {
    %r = tile.make_range {start = 0 : i32, end = 131072 : i32} : tensor<131072xi32, #blocked>
    // expected-error @+1 {{'tensor<131072x!tile.ptr<i32>, #tilegpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>>' needs 8192 registers per thread}}
    %ps = tile.splat %p : !tile.ptr<i32> -> tensor<131072x!tile.ptr<i32>, #blocked>
    return
  }
}

// -----

// trans moves every element through shared memory: 256x256 f32 are 256 KiB,
// more than the 227 KiB of an sm_90 block. The error names the module's total
// at the allocation that reaches it.
#rows = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90"} {
  func.func @trans(%x: f32) attributes {tile.kernel} {
    %s = tile.splat %x : f32 -> tensor<256x256xf32, #rows>
    // expected-error @+1 {{'tile.trans' op needs 262144 B of shared memory in all; a block on sm_90 has at most 232448 B (this op's 262144 B at offset 0 cross the limit)}}
    %t = tile.trans %s {order = array<i32: 1, 0>} : tensor<256x256xf32, #rows> -> tensor<256x256xf32, #rows>
    return
  }
}

// -----

// 128 KiB fit an sm_90 block...
#rows = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90"} {
  func.func @reshape(%x: f32) attributes {tile.kernel} {
    %s = tile.splat %x : f32 -> tensor<128x256xf32, #rows>
    %t = tile.reshape %s : tensor<128x256xf32, #rows> -> tensor<256x128xf32, #rows>
    return
  }
}

// -----

// ... not an sm_75 one (64 KiB).
#rows = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_75"} {
  func.func @reshape_sm75(%x: f32) attributes {tile.kernel} {
    %s = tile.splat %x : f32 -> tensor<128x256xf32, #rows>
    // expected-error @+1 {{'tile.reshape' op needs 131072 B of shared memory in all; a block on sm_75 has at most 65536 B}}
    %t = tile.reshape %s : tensor<128x256xf32, #rows> -> tensor<256x128xf32, #rows>
    return
  }
}

// -----

// A conversion where every thread already holds its elements renames
// registers and needs no shared memory, however large; one that moves
// elements between warps goes through shared memory, its rows padded by one
// f32 so that a warp reading a column spreads over the banks (256 x 257 x 4 B).
#rows = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#rows_t = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [0, 1]}>
#cols = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90"} {
  func.func @convert(%x: f32) attributes {tile.kernel} {
    %s = tile.splat %x : f32 -> tensor<256x256xf32, #rows>
    %renamed = tilegpu.convert_layout %s : tensor<256x256xf32, #rows> -> tensor<256x256xf32, #rows_t>
    // expected-error @+1 {{'tilegpu.convert_layout' op needs 263168 B of shared memory in all}}
    %moved = tilegpu.convert_layout %s : tensor<256x256xf32, #rows> -> tensor<256x256xf32, #cols>
    return
  }
}

// -----

// A reduction across warps keeps one partial per result element and warp:
// 4 warps x 16384 f32.
#rows = #tilegpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90"} {
  func.func @reduce(%x: f32) attributes {tile.kernel} {
    %s = tile.splat %x : f32 -> tensor<4x16384xf32, #rows>
    // expected-error @+1 {{'tile.reduce' op needs 262144 B of shared memory in all}}
    %t = tile.reduce add %s {axis = 0 : i32} : tensor<4x16384xf32, #rows> -> tensor<16384xf32, #tilegpu.slice<{dim = 0, parent = #rows}>>
    return
  }
}

// -----

// expected-error @+1 {{no shared-memory limit known for target 'sm_61'; known: sm_75 sm_80 sm_86 sm_87 sm_89 sm_90 sm_100 sm_103 sm_110 sm_120 sm_121}}
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_61"} {
}

// -----

// expected-error @+1 {{missing 'tilegpu.target': run convert-tile-to-tilegpu first}}
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32} {
}
