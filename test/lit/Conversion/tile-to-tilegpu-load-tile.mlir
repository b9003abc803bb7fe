// RUN: tilec-opt %s -split-input-file -convert-tile-to-tilegpu="target=sm_90a num-warps=4 num-stages=3" -canonicalize | FileCheck %s --check-prefix=TMA
// RUN: tilec-opt %s -split-input-file -convert-tile-to-tilegpu="target=sm_90a num-warps=4 num-stages=1" -canonicalize | FileCheck %s --check-prefix=NOPIPE
// RUN: tilec-opt %s -split-input-file -convert-tile-to-tilegpu="target=sm_80 num-warps=4 num-stages=3" -canonicalize | FileCheck %s --check-prefix=SM80

// A matmul's K loop over two arrays that tensor maps describe (kernel
// arguments, unit column strides, rows 16-byte aligned): on sm_90a with a
// pipeline both blocks stay for TMA copies. Without a pipeline, or without
// wgmma, they become pointers and masked loads: the block's offsets
// (i * row_stride + j) before the loop, each step's first element and its
// bounds (i < rows - row, j < cols - col) at the load, zeros outside.
// TMA-LABEL: func.func @matmul
// TMA: scf.for
// TMA: tile.load_tile %arg0[%{{.+}}, %{{.+}}] shape[%arg3, %arg5] strides[%arg6, %c1_i32] : !tile.ptr<f16> -> tensor<128x64xf16, #{{.+}}>
// TMA: tile.load_tile %arg1[%{{.+}}, %c0_i32] shape[%arg5, %arg4] strides[%arg7, %c1_i32] : !tile.ptr<f16> -> tensor<64x128xf16, #{{.+}}>
// TMA: tilegpu.warpgroup_dot
// TMA-NOT: tile.load
// NOPIPE-LABEL: func.func @matmul
// NOPIPE-NOT: tile.load_tile
// NOPIPE: %[[A_BLOCK:.+]] = tile.addptr %{{.+}} : tensor<128x64x!tile.ptr<f16>, #{{.+}}>, tensor<128x64xi32, #{{.+}}>
// NOPIPE: %[[B_BLOCK:.+]] = tile.addptr %{{.+}} : tensor<64x128x!tile.ptr<f16>, #{{.+}}>, tensor<64x128xi32, #{{.+}}>
// NOPIPE: scf.for
// NOPIPE: %[[A_PTRS:.+]] = tile.addptr %[[A_BLOCK]], %{{.+}}
// NOPIPE-DAG: arith.subi %arg5, %{{.+}} : i32
// NOPIPE-DAG: arith.subi %arg3, %{{.+}} : i32
// NOPIPE: tile.load %[[A_PTRS]], %{{.+}}, %cst{{.*}} : tensor<128x64x!tile.ptr<f16>, #{{.+}}>
// NOPIPE: tile.addptr %[[B_BLOCK]]
// NOPIPE: tile.load
// NOPIPE: tilegpu.warpgroup_dot
// SM80-LABEL: func.func @matmul
// SM80-NOT: tile.load_tile
// SM80: scf.for
// SM80: tile.load
// SM80: tile.load
// SM80: tile.dot
func.func @matmul(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32},
                  %b: !tile.ptr<f16> {tile.divisibility = 16 : i32},
                  %c: !tile.ptr<f32> {tile.divisibility = 16 : i32},
                  %M: i32, %N: i32, %K: i32,
                  %sa: i32 {tile.divisibility = 8 : i32},
                  %sb: i32 {tile.divisibility = 8 : i32}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %acc0 = arith.constant dense<0.0> : tensor<128x128xf32>
  %pid = tile.program_id x : i32
  %m0 = arith.muli %pid, %c64 : i32
  %kt = arith.divsi %K, %c64 : i32
  %acc = scf.for %k = %c0 to %kt step %c1 iter_args(%acc1 = %acc0) -> (tensor<128x128xf32>) : i32 {
    %k0 = arith.muli %k, %c64 : i32
    %x = tile.load_tile %a[%m0, %k0] shape [%M, %K] strides [%sa, %c1] : !tile.ptr<f16> -> tensor<128x64xf16>
    %y = tile.load_tile %b[%k0, %c0] shape [%K, %N] strides [%sb, %c1] : !tile.ptr<f16> -> tensor<64x128xf16>
    %d = tile.dot %x, %y, %acc1 : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %cs = tile.splat %c : !tile.ptr<f32> -> tensor<128x128x!tile.ptr<f32>>
  tile.store %cs, %acc : tensor<128x128x!tile.ptr<f32>>
  return
}

// -----

// A's rows are 2 bytes apart from 16-byte boundaries (stride %2 only): no
// tensor map describes it, and a dot's blocks go to TMA together or not at
// all, so B is expanded too.
// TMA-LABEL: func.func @odd_stride
// TMA-NOT: tile.load_tile
// TMA: scf.for
// TMA: tile.load
// TMA: tile.load
func.func @odd_stride(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32},
                      %b: !tile.ptr<f16> {tile.divisibility = 16 : i32},
                      %c: !tile.ptr<f32> {tile.divisibility = 16 : i32},
                      %M: i32, %N: i32, %K: i32,
                      %sa: i32 {tile.divisibility = 2 : i32},
                      %sb: i32 {tile.divisibility = 8 : i32}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %acc0 = arith.constant dense<0.0> : tensor<128x128xf32>
  %kt = arith.divsi %K, %c64 : i32
  %acc = scf.for %k = %c0 to %kt step %c1 iter_args(%acc1 = %acc0) -> (tensor<128x128xf32>) : i32 {
    %k0 = arith.muli %k, %c64 : i32
    %x = tile.load_tile %a[%c0, %k0] shape [%M, %K] strides [%sa, %c1] : !tile.ptr<f16> -> tensor<128x64xf16>
    %y = tile.load_tile %b[%k0, %c0] shape [%K, %N] strides [%sb, %c1] : !tile.ptr<f16> -> tensor<64x128xf16>
    %d = tile.dot %x, %y, %acc1 : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %cs = tile.splat %c : !tile.ptr<f32> -> tensor<128x128x!tile.ptr<f32>>
  tile.store %cs, %acc : tensor<128x128x!tile.ptr<f32>>
  return
}

// -----

// A column stride that is not 1 (a transposed A), a loop that stores, and
// a block outside any loop: pointers.
// TMA-LABEL: func.func @not_tma
// TMA-NOT: tile.load_tile
// TMA: return
func.func @not_tma(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32},
                   %b: !tile.ptr<f16> {tile.divisibility = 16 : i32},
                   %c: !tile.ptr<f32> {tile.divisibility = 16 : i32},
                   %M: i32, %N: i32, %K: i32,
                   %sa: i32 {tile.divisibility = 8 : i32},
                   %sb: i32 {tile.divisibility = 8 : i32}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %acc0 = arith.constant dense<0.0> : tensor<128x128xf32>
  %cs = tile.splat %c : !tile.ptr<f32> -> tensor<128x128x!tile.ptr<f32>>
  %kt = arith.divsi %K, %c64 : i32
  %acc = scf.for %k = %c0 to %kt step %c1 iter_args(%acc1 = %acc0) -> (tensor<128x128xf32>) : i32 {
    %k0 = arith.muli %k, %c64 : i32
    %x = tile.load_tile %a[%c0, %k0] shape [%M, %K] strides [%c1, %sa] : !tile.ptr<f16> -> tensor<128x64xf16>
    %y = tile.load_tile %b[%k0, %c0] shape [%K, %N] strides [%sb, %c1] : !tile.ptr<f16> -> tensor<64x128xf16>
    %d = tile.dot %x, %y, %acc1 : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %acc2 = scf.for %k = %c0 to %kt step %c1 iter_args(%acc1 = %acc) -> (tensor<128x128xf32>) : i32 {
    %k0 = arith.muli %k, %c64 : i32
    %x = tile.load_tile %a[%c0, %k0] shape [%M, %K] strides [%sa, %c1] : !tile.ptr<f16> -> tensor<128x64xf16>
    %y = tile.load_tile %b[%k0, %c0] shape [%K, %N] strides [%sb, %c1] : !tile.ptr<f16> -> tensor<64x128xf16>
    %d = tile.dot %x, %y, %acc1 : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
    tile.store %cs, %d : tensor<128x128x!tile.ptr<f32>>
    scf.yield %d : tensor<128x128xf32>
  }
  %x = tile.load_tile %a[%c0, %c0] shape [%M, %K] strides [%sa, %c1] : !tile.ptr<f16> -> tensor<128x64xf16>
  %y = tile.load_tile %b[%c0, %c0] shape [%K, %N] strides [%sb, %c1] : !tile.ptr<f16> -> tensor<64x128xf16>
  %d = tile.dot %x, %y, %acc2 : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
  tile.store %cs, %d : tensor<128x128x!tile.ptr<f32>>
  return
}
