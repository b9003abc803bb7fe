// RUN: tilec-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=8 min-blocks-per-sm=2" | FileCheck %s --check-prefix=TTGIR
// RUN: tilec-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=8 min-blocks-per-sm=2" -tilegpu-allocate-shared-memory -convert-tilegpu-to-llvm | FileCheck %s
// RUN: tilec-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=8" -tilegpu-allocate-shared-memory -convert-tilegpu-to-llvm | FileCheck %s --check-prefix=ONE

// A config's min_blocks_per_sm = 2 is recorded on the ttgir module and
// becomes the kernel's .minnctapersm 2: ptxas caps a thread's registers at
// what two blocks of 256 threads leave (128). Without it the module has no
// attribute and the kernel .minnctapersm 1.
// TTGIR: module attributes {{.*}}"tilegpu.min-blocks-per-sm" = 2 : i32
// CHECK-LABEL: llvm.func @twice
// CHECK-SAME: nvvm.maxntid = array<i32: 256, 1, 1>, nvvm.minctasm = 2 : i32
// ONE-NOT: tilegpu.min-blocks-per-sm
// ONE: nvvm.maxntid = array<i32: 256, 1, 1>, nvvm.minctasm = 1 : i32
func.func @twice(%p: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  %ps = tile.splat %p : !tile.ptr<f32> -> tensor<256x!tile.ptr<f32>>
  %pa = tile.addptr %ps, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  %v = tile.load %pa : tensor<256x!tile.ptr<f32>>
  %s = arith.addf %v, %v : tensor<256xf32>
  tile.store %pa, %s : tensor<256x!tile.ptr<f32>>
  return
}
