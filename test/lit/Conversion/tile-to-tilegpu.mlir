// RUN: tilec-opt %s -split-input-file -convert-tile-to-tilegpu | FileCheck %s
// RUN: tilec-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=8 target=sm_80" | FileCheck %s --check-prefix=WARPS8
// RUN: tilec-opt %s -split-input-file -convert-tile-to-tilegpu="target=sm_75" | FileCheck %s --check-prefix=SM75
// RUN: tilec-opt %s -split-input-file -convert-tile-to-tilegpu="num-warps=8 target=sm_90a" | FileCheck %s --check-prefix=HOPPER

// On sm_90a a 16-bit dot is a warpgroup dot (wgmma): both operands are
// stored to shared memory in wgmma's swizzled layout (as many bytes of a row
// as fit 128), the accumulator takes the mma v3 layout. Two warpgroups of
// 8 warps split M (64 rows each per instruction); one instruction spans all
// 256 columns. sm_90 (no "a") keeps mma.sync.
// HOPPER-DAG: #[[V3:.+]] = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [8, 1], instrShape = [16, 256, 16]}>
// HOPPER-DAG: #[[SA:.+]] = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
// HOPPER-LABEL: func.func @dot_wgmma
// HOPPER: %[[A:.+]] = tilegpu.local_alloc %{{.+}} : (tensor<128x64xf16, #{{.+}}>) -> !tilegpu.memdesc<128x64xf16, #[[SA]]>
// HOPPER: %[[B:.+]] = tilegpu.local_alloc %{{.+}} : (tensor<64x256xf16, #{{.+}}>) -> !tilegpu.memdesc<64x256xf16, #[[SA]]>
// HOPPER: tilegpu.warpgroup_dot %[[A]], %[[B]], %{{.+}} : !tilegpu.memdesc<128x64xf16, #[[SA]]> * !tilegpu.memdesc<64x256xf16, #[[SA]]> -> tensor<128x256xf32, #[[V3]]>
// CHECK-LABEL: func.func @dot_wgmma
// CHECK: tile.dot
// CHECK-NOT: tilegpu.warpgroup_dot
func.func @dot_wgmma(%a: tensor<128x64xf16>, %b: tensor<64x256xf16>, %c: tensor<128x256xf32>) -> tensor<128x256xf32> {
  %d = tile.dot %a, %b, %c : tensor<128x64xf16> * tensor<64x256xf16> -> tensor<128x256xf32>
  return %d : tensor<128x256xf32>
}

// -----

// A tf32 dot whose b is loaded N-contiguous (and a K-contiguous) is computed
// transposed, D^T = B^T A^T: b goes to registers in B^T's wgmma A fragment
// (operand 1 of the transposed accumulator layout), a to its K-major tile
// (wgmma's B, A^T); the instructions run along D^T (m64n128: the two
// warpgroups split N, each instruction spans M). A b loaded K-contiguous
// keeps the untransposed form, both tiles K-major.
// HOPPER-DAG: #[[MT:.+]] = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [8, 1], instrShape = [16, 128, 8], transposed = true}>
// HOPPER-DAG: #[[BT:.+]] = #tilegpu.dot_op<{opIdx = 1, parent = #[[MT]], kWidth = 1}>
// HOPPER-DAG: #[[KA:.+]] = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
// HOPPER-DAG: #[[KB:.+]] = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [0, 1]}>
// HOPPER-DAG: #[[M:.+]] = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [8, 1], instrShape = [16, 128, 8]}>
// HOPPER-LABEL: func.func @dot_wgmma_tf32_n_contiguous_b
// HOPPER: %[[A:.+]] = tilegpu.local_alloc %{{.+}} : (tensor<128x32xf32, #{{.+}}>) -> !tilegpu.memdesc<128x32xf32, #[[KA]]>
// HOPPER: %[[B:.+]] = tilegpu.convert_layout %{{.+}} : tensor<32x128xf32, #{{.+}}> -> tensor<32x128xf32, #[[BT]]>
// HOPPER: tilegpu.warpgroup_dot %[[A]], %[[B]], %{{.+}} : !tilegpu.memdesc<128x32xf32, #[[KA]]> * tensor<32x128xf32, #[[BT]]> -> tensor<128x128xf32, #[[MT]]>
// HOPPER-LABEL: func.func @dot_wgmma_tf32_k_contiguous_b
// HOPPER: tilegpu.warpgroup_dot %{{.+}}, %{{.+}}, %{{.+}} : !tilegpu.memdesc<128x32xf32, #[[KA]]> * !tilegpu.memdesc<32x128xf32, #[[KB]]> -> tensor<128x128xf32, #[[M]]>
// Without wgmma the contiguity changes nothing: mma.sync.
// CHECK-LABEL: func.func @dot_wgmma_tf32_n_contiguous_b
// CHECK-NOT: transposed
// CHECK: tile.dot
// CHECK-LABEL: func.func @dot_wgmma_tf32_k_contiguous_b
func.func @dot_wgmma_tf32_n_contiguous_b(%pa: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %pb: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %c: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %c4096 = arith.constant 4096 : i32
  %r128 = tile.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  %r32 = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
  %m = tile.expand_dims %r128 {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %s4096a = tile.splat %c4096 : i32 -> tensor<128x1xi32>
  %ms = arith.muli %m, %s4096a : tensor<128x1xi32>
  %mb = tile.broadcast %ms : tensor<128x1xi32> -> tensor<128x32xi32>
  %ka = tile.expand_dims %r32 {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %kab = tile.broadcast %ka : tensor<1x32xi32> -> tensor<128x32xi32>
  %aoff = arith.addi %mb, %kab : tensor<128x32xi32>
  %abase = tile.splat %pa : !tile.ptr<f32> -> tensor<128x32x!tile.ptr<f32>>
  %aptr = tile.addptr %abase, %aoff : tensor<128x32x!tile.ptr<f32>>, tensor<128x32xi32>
  %a = tile.load %aptr : tensor<128x32x!tile.ptr<f32>>
  %k = tile.expand_dims %r32 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %s4096b = tile.splat %c4096 : i32 -> tensor<32x1xi32>
  %ks = arith.muli %k, %s4096b : tensor<32x1xi32>
  %kb = tile.broadcast %ks : tensor<32x1xi32> -> tensor<32x128xi32>
  %n = tile.expand_dims %r128 {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %nb = tile.broadcast %n : tensor<1x128xi32> -> tensor<32x128xi32>
  %boff = arith.addi %kb, %nb : tensor<32x128xi32>
  %bbase = tile.splat %pb : !tile.ptr<f32> -> tensor<32x128x!tile.ptr<f32>>
  %bptr = tile.addptr %bbase, %boff : tensor<32x128x!tile.ptr<f32>>, tensor<32x128xi32>
  %b = tile.load %bptr : tensor<32x128x!tile.ptr<f32>>
  %d = tile.dot %a, %b, %c {inputPrecision = #tile.precision<tf32>} : tensor<128x32xf32> * tensor<32x128xf32> -> tensor<128x128xf32>
  return %d : tensor<128x128xf32>
}
func.func @dot_wgmma_tf32_k_contiguous_b(%pa: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %pb: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %c: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %c4096 = arith.constant 4096 : i32
  %r128 = tile.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  %r32 = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
  %m = tile.expand_dims %r128 {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %s4096a = tile.splat %c4096 : i32 -> tensor<128x1xi32>
  %ms = arith.muli %m, %s4096a : tensor<128x1xi32>
  %mb = tile.broadcast %ms : tensor<128x1xi32> -> tensor<128x32xi32>
  %ka = tile.expand_dims %r32 {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %kab = tile.broadcast %ka : tensor<1x32xi32> -> tensor<128x32xi32>
  %aoff = arith.addi %mb, %kab : tensor<128x32xi32>
  %abase = tile.splat %pa : !tile.ptr<f32> -> tensor<128x32x!tile.ptr<f32>>
  %aptr = tile.addptr %abase, %aoff : tensor<128x32x!tile.ptr<f32>>, tensor<128x32xi32>
  %a = tile.load %aptr : tensor<128x32x!tile.ptr<f32>>
  %k = tile.expand_dims %r32 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %kb = tile.broadcast %k : tensor<32x1xi32> -> tensor<32x128xi32>
  %n = tile.expand_dims %r128 {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %s4096b = tile.splat %c4096 : i32 -> tensor<1x128xi32>
  %ns = arith.muli %n, %s4096b : tensor<1x128xi32>
  %nb = tile.broadcast %ns : tensor<1x128xi32> -> tensor<32x128xi32>
  %boff = arith.addi %kb, %nb : tensor<32x128xi32>
  %bbase = tile.splat %pb : !tile.ptr<f32> -> tensor<32x128x!tile.ptr<f32>>
  %bptr = tile.addptr %bbase, %boff : tensor<32x128x!tile.ptr<f32>>, tensor<32x128xi32>
  %b = tile.load %bptr : tensor<32x128x!tile.ptr<f32>>
  %d = tile.dot %a, %b, %c {inputPrecision = #tile.precision<tf32>} : tensor<128x32xf32> * tensor<32x128xf32> -> tensor<128x128xf32>
  return %d : tensor<128x128xf32>
}

// -----

// An N-contiguous b whose rows are only 4-byte aligned copies element by
// element either way: it keeps the untransposed form (its transposing copy
// costs the same, and no fragments go through registers).
// HOPPER-DAG: #[[KB4:.+]] = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [0, 1]}>
// HOPPER-DAG: #[[M4:.+]] = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [8, 1], instrShape = [16, 128, 8]}>
// HOPPER-LABEL: func.func @dot_wgmma_tf32_n_contiguous_b_4_byte_aligned
// HOPPER-NOT: transposed
// HOPPER: tilegpu.warpgroup_dot %{{.+}}, %{{.+}}, %{{.+}} : !tilegpu.memdesc<128x32xf32, #{{.+}}> * !tilegpu.memdesc<32x128xf32, #[[KB4]]> -> tensor<128x128xf32, #[[M4]]>
// CHECK-LABEL: func.func @dot_wgmma_tf32_n_contiguous_b_4_byte_aligned
func.func @dot_wgmma_tf32_n_contiguous_b_4_byte_aligned(%pa: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %pb: !tile.ptr<f32> {tile.divisibility = 4 : i32}, %c: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %c4096 = arith.constant 4096 : i32
  %r128 = tile.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  %r32 = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
  %m = tile.expand_dims %r128 {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %s4096a = tile.splat %c4096 : i32 -> tensor<128x1xi32>
  %ms = arith.muli %m, %s4096a : tensor<128x1xi32>
  %mb = tile.broadcast %ms : tensor<128x1xi32> -> tensor<128x32xi32>
  %ka = tile.expand_dims %r32 {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %kab = tile.broadcast %ka : tensor<1x32xi32> -> tensor<128x32xi32>
  %aoff = arith.addi %mb, %kab : tensor<128x32xi32>
  %abase = tile.splat %pa : !tile.ptr<f32> -> tensor<128x32x!tile.ptr<f32>>
  %aptr = tile.addptr %abase, %aoff : tensor<128x32x!tile.ptr<f32>>, tensor<128x32xi32>
  %a = tile.load %aptr : tensor<128x32x!tile.ptr<f32>>
  %k = tile.expand_dims %r32 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %s4096b = tile.splat %c4096 : i32 -> tensor<32x1xi32>
  %ks = arith.muli %k, %s4096b : tensor<32x1xi32>
  %kb = tile.broadcast %ks : tensor<32x1xi32> -> tensor<32x128xi32>
  %n = tile.expand_dims %r128 {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %nb = tile.broadcast %n : tensor<1x128xi32> -> tensor<32x128xi32>
  %boff = arith.addi %kb, %nb : tensor<32x128xi32>
  %bbase = tile.splat %pb : !tile.ptr<f32> -> tensor<32x128x!tile.ptr<f32>>
  %bptr = tile.addptr %bbase, %boff : tensor<32x128x!tile.ptr<f32>>, tensor<32x128xi32>
  %b = tile.load %bptr : tensor<32x128x!tile.ptr<f32>>
  %d = tile.dot %a, %b, %c {inputPrecision = #tile.precision<tf32>} : tensor<128x32xf32> * tensor<32x128xf32> -> tensor<128x128xf32>
  return %d : tensor<128x128xf32>
}

// -----

// On sm_90a an f32 dot that allows tf32 is a warpgroup dot too (m64nNk8),
// but tf32 has no transposed form: b is stored K-major ([0, 1]), a
// row-major as always. An IEEE f32 dot stays on FMA.
// HOPPER-DAG: #[[TV3:.+]] = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [8, 1], instrShape = [16, 128, 8]}>
// HOPPER-DAG: #[[TSA:.+]] = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
// HOPPER-DAG: #[[TSB:.+]] = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [0, 1]}>
// HOPPER-LABEL: func.func @dot_wgmma_tf32
// HOPPER: %[[A:.+]] = tilegpu.local_alloc %{{.+}} : (tensor<128x32xf32, #{{.+}}>) -> !tilegpu.memdesc<128x32xf32, #[[TSA]]>
// HOPPER: %[[B:.+]] = tilegpu.local_alloc %{{.+}} : (tensor<32x128xf32, #{{.+}}>) -> !tilegpu.memdesc<32x128xf32, #[[TSB]]>
// HOPPER: tilegpu.warpgroup_dot %[[A]], %[[B]], %{{.+}} : !tilegpu.memdesc<128x32xf32, #[[TSA]]> * !tilegpu.memdesc<32x128xf32, #[[TSB]]> -> tensor<128x128xf32, #[[TV3]]>
// HOPPER-LABEL: func.func @dot_wgmma_f32_ieee
// HOPPER-NOT: tilegpu.warpgroup_dot
// HOPPER: tile.dot
func.func @dot_wgmma_tf32(%a: tensor<128x32xf32>, %b: tensor<32x128xf32>, %c: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %d = tile.dot %a, %b, %c {inputPrecision = #tile.precision<tf32>} : tensor<128x32xf32> * tensor<32x128xf32> -> tensor<128x128xf32>
  return %d : tensor<128x128xf32>
}
func.func @dot_wgmma_f32_ieee(%a: tensor<128x32xf32>, %b: tensor<32x128xf32>, %c: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %d = tile.dot %a, %b, %c : tensor<128x32xf32> * tensor<32x128xf32> -> tensor<128x128xf32>
  return %d : tensor<128x128xf32>
}

// -----

// Elementwise code gets Triton's default layout: one element per thread,
// lanes then warps along the fastest dimension.
// CHECK-DAG: #[[B1:.+]] = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK: module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32}
// CHECK-LABEL: func.func @vector
// CHECK: tile.make_range {{.*}} : tensor<256xi32, #[[B1]]>
// CHECK: tile.load %{{.*}}, %{{.*}} : tensor<256x!tile.ptr<f32>, #[[B1]]>
// CHECK: arith.addf %{{.*}} : tensor<256xf32, #[[B1]]>
// WARPS8: #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]}>
// WARPS8: tilegpu.target = "sm_80"
func.func @vector(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  %ns = tile.splat %n : i32 -> tensor<256xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<256xi32>
  %ps = tile.splat %p : !tile.ptr<f32> -> tensor<256x!tile.ptr<f32>>
  %pa = tile.addptr %ps, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  %v = tile.load %pa, %m : tensor<256x!tile.ptr<f32>>
  %s = arith.addf %v, %v : tensor<256xf32>
  tile.store %pa, %s, %m : tensor<256x!tile.ptr<f32>>
  return
}

// -----

// expand_dims takes its operand in the slice of its result's layout;
// broadcast takes its operand in its result's layout.
// CHECK-DAG: #[[COL:.+]] = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: #[[TILE:.+]] = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: #[[SLICE:.+]] = #tilegpu.slice<{dim = 1, parent = #[[COL]]}>
// CHECK-LABEL: func.func @expand_and_broadcast
// CHECK: %[[S:.*]] = tilegpu.convert_layout %{{.*}} -> tensor<64xi32, #[[SLICE]]>
// CHECK: %[[E:.*]] = tile.expand_dims %[[S]] {axis = 1 : i32} : tensor<64xi32, #[[SLICE]]> -> tensor<64x1xi32, #[[COL]]>
// CHECK: %[[C:.*]] = tilegpu.convert_layout %[[E]] : tensor<64x1xi32, #[[COL]]> -> tensor<64x1xi32, #[[TILE]]>
// CHECK: tile.broadcast %[[C]] : tensor<64x1xi32, #[[TILE]]> -> tensor<64x16xi32, #[[TILE]]>
func.func @expand_and_broadcast() -> tensor<64x16xi32> {
  %r = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %e = tile.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %b = tile.broadcast %e : tensor<64x1xi32> -> tensor<64x16xi32>
  return %b : tensor<64x16xi32>
}

// -----

// A reduction yields the slice of its operand's layout, converted back to the
// default for its consumers.
// CHECK-DAG: #[[ROWS:.+]] = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]}>
// CHECK-DAG: #[[ROWSLICE:.+]] = #tilegpu.slice<{dim = 1, parent = #[[ROWS]]}>
// CHECK-LABEL: func.func @reduce
// CHECK: %[[R:.*]] = tile.reduce max %{{.*}} {axis = 1 : i32} : tensor<8x64xf32, #[[ROWS]]> -> tensor<8xf32, #[[ROWSLICE]]>
// CHECK: tilegpu.convert_layout %[[R]]
// CHECK: tile.reduce add %{{.*}} {axis = 0 : i32} : tensor<8xf32, #{{.*}}> -> f32
func.func @reduce(%x: tensor<8x64xf32>) -> f32 {
  %r = tile.reduce max %x {axis = 1 : i32} : tensor<8x64xf32> -> tensor<8xf32>
  %s = tile.reduce add %r {axis = 0 : i32} : tensor<8xf32> -> f32
  return %s : f32
}

// -----

// dot (FMA path): the accumulator takes a blocked layout with a small block
// per thread, the operands dot_op layouts of it; converts to and from the
// default layout surround the dot until remove-layout-conversions runs.
// CHECK-DAG: #[[DEF:.+]] = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: #[[ACC:.+]] = #tilegpu.blocked<{sizePerThread = [2, 2], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: #[[A:.+]] = #tilegpu.dot_op<{opIdx = 0, parent = #[[ACC]]}>
// CHECK-DAG: #[[B:.+]] = #tilegpu.dot_op<{opIdx = 1, parent = #[[ACC]]}>
// CHECK-LABEL: func.func @dot_loop
// CHECK: scf.for {{.*}} -> (tensor<32x16xf32, #[[DEF]]>)
// CHECK: tilegpu.convert_layout %{{.*}} -> tensor<32x16xf32, #[[ACC]]>
// CHECK: tilegpu.convert_layout %{{.*}} -> tensor<32x8xf16, #[[A]]>
// CHECK: tilegpu.convert_layout %{{.*}} -> tensor<8x16xf16, #[[B]]>
// CHECK: tile.dot %{{.*}} : tensor<32x8xf16, #[[A]]> * tensor<8x16xf16, #[[B]]> -> tensor<32x16xf32, #[[ACC]]>
// CHECK: tilegpu.convert_layout %{{.*}} -> tensor<32x16xf32, #[[DEF]]>
func.func @dot_loop(%a: tensor<32x8xf16>, %b: tensor<8x16xf16>, %n: index) -> tensor<32x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<32x16xf32>
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> tensor<32x16xf32> {
    %d = tile.dot %a, %b, %acc : tensor<32x8xf16> * tensor<8x16xf16> -> tensor<32x16xf32>
    scf.yield %d : tensor<32x16xf32>
  }
  return %acc : tensor<32x16xf32>
}

// -----

// f16 inputs with an f32 accumulator on sm_80+: tensor cores. Warps go where
// the shape has more 16x8 tiles; operands take the mma fragments (kWidth 2).
// CHECK-DAG: #[[MMA:.+]] = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
// CHECK-DAG: #[[MA:.+]] = #tilegpu.dot_op<{opIdx = 0, parent = #[[MMA]], kWidth = 2}>
// CHECK-DAG: #[[MB:.+]] = #tilegpu.dot_op<{opIdx = 1, parent = #[[MMA]], kWidth = 2}>
// CHECK-LABEL: func.func @dot_mma
// CHECK: tile.dot %{{.*}} : tensor<64x32xf16, #[[MA]]> * tensor<32x64xf16, #[[MB]]> -> tensor<64x64xf32, #[[MMA]]>
func.func @dot_mma(%a: tensor<64x32xf16>, %b: tensor<32x64xf16>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %d = tile.dot %a, %b, %c : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
  return %d : tensor<64x64xf32>
}

// -----

// f32 inputs the dot allows to round to tf32: tensor cores (mma.sync
// m16n8k8), with one K element per thread and register (kWidth 1).
// CHECK-DAG: #[[TMMA:.+]] = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
// CHECK-DAG: #[[TA:.+]] = #tilegpu.dot_op<{opIdx = 0, parent = #[[TMMA]], kWidth = 1}>
// CHECK-DAG: #[[TB:.+]] = #tilegpu.dot_op<{opIdx = 1, parent = #[[TMMA]], kWidth = 1}>
// CHECK-LABEL: func.func @dot_tf32
// CHECK: tile.dot %{{.*}} {inputPrecision = #tile.precision<tf32>} : tensor<64x32xf32, #[[TA]]> * tensor<32x64xf32, #[[TB]]> -> tensor<64x64xf32, #[[TMMA]]>
// Before sm_80 there is no tf32 mma.sync: FMA.
// SM75-LABEL: func.func @dot_tf32
// SM75: tile.dot %{{.*}} {inputPrecision = #tile.precision<tf32>} : tensor<64x32xf32, #dot_op> * tensor<32x64xf32, #dot_op1> -> tensor<64x64xf32, #blocked{{[0-9]*}}>
func.func @dot_tf32(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %d = tile.dot %a, %b, %c {inputPrecision = #tile.precision<tf32>} : tensor<64x32xf32> * tensor<32x64xf32> -> tensor<64x64xf32>
  return %d : tensor<64x64xf32>
}

// -----

// IEEE f32 dots keep exact f32 products: the FMA path (blocked accumulator,
// dot_op operands without kWidth), as do tf32 dots too small for one m16n8k8
// (K < 8).
// CHECK-DAG: #[[FACC:.+]] = #tilegpu.blocked<{sizePerThread = [4, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: #[[FA:.+]] = #tilegpu.dot_op<{opIdx = 0, parent = #[[FACC]]}>
// CHECK-DAG: #[[FB:.+]] = #tilegpu.dot_op<{opIdx = 1, parent = #[[FACC]]}>
// CHECK-LABEL: func.func @dot_f32_ieee
// CHECK: tile.dot %{{.*}} : tensor<64x32xf32, #[[FA]]> * tensor<32x64xf32, #[[FB]]> -> tensor<64x64xf32, #[[FACC]]>
// CHECK-NOT: tilegpu.mma
// CHECK-LABEL: func.func @dot_tf32_short_k
// CHECK-NOT: tilegpu.mma
// CHECK: tile.dot %{{.*}} {inputPrecision = #tile.precision<tf32>} : tensor<64x4xf32, #{{.*}}> * tensor<4x64xf32, #{{.*}}> -> tensor<64x64xf32, #[[FACC]]>
func.func @dot_f32_ieee(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %d = tile.dot %a, %b, %c : tensor<64x32xf32> * tensor<32x64xf32> -> tensor<64x64xf32>
  return %d : tensor<64x64xf32>
}
func.func @dot_tf32_short_k(%a: tensor<64x4xf32>, %b: tensor<4x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %d = tile.dot %a, %b, %c {inputPrecision = #tile.precision<tf32>} : tensor<64x4xf32> * tensor<4x64xf32> -> tensor<64x64xf32>
  return %d : tensor<64x64xf32>
}

// -----

// A dot of row groups: the warpgroup dot keeps them (its instructions skip
// the 64-row strips whose groups are clear); mma.sync computes every row and
// keeps the accumulator's rows whose group bit is clear.
// HOPPER-LABEL: func.func @dot_row_groups
// HOPPER: tilegpu.warpgroup_dot %{{.+}}, %{{.+}}, %{{.+}} row_groups(%arg3) {rowsPerGroup = 64 : i32} : !tilegpu.memdesc<128x64xf16, #{{.+}}> * !tilegpu.memdesc<64x256xf16, #{{.+}}> -> tensor<128x256xf32, #{{.+}}>
// HOPPER-NOT: arith.select
// HOPPER: return
// CHECK-LABEL: func.func @dot_row_groups
// CHECK: %[[ACC:.+]] = tilegpu.convert_layout %arg2 : tensor<128x256xf32, #{{.+}}> -> tensor<128x256xf32, #[[MMA:.+]]>
// CHECK: %[[D:.+]] = tile.dot {{.+}} -> tensor<128x256xf32, #[[MMA]]>
// CHECK: %[[ROWS:.+]] = tile.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #[[SLICE:.+]]>
// CHECK: %[[GROUP:.+]] = arith.divui %[[ROWS]], %{{.+}} : tensor<128xi32, #[[SLICE]]>
// CHECK: %[[BITS:.+]] = tile.splat %arg3 : i32 -> tensor<128xi32, #[[SLICE]]>
// CHECK: arith.shrui %[[BITS]], %[[GROUP]]
// CHECK: %[[ACTIVE:.+]] = arith.cmpi ne
// CHECK: %[[COLUMN:.+]] = tile.expand_dims %[[ACTIVE]] {axis = 1 : i32} : tensor<128xi1, #[[SLICE]]> -> tensor<128x1xi1, #[[MMA]]>
// CHECK: %[[MASK:.+]] = tile.broadcast %[[COLUMN]] : tensor<128x1xi1, #[[MMA]]> -> tensor<128x256xi1, #[[MMA]]>
// CHECK: arith.select %[[MASK]], %[[D]], %[[ACC]] : tensor<128x256xi1, #[[MMA]]>, tensor<128x256xf32, #[[MMA]]>
func.func @dot_row_groups(%a: tensor<128x64xf16>, %b: tensor<64x256xf16>, %c: tensor<128x256xf32>, %g: i32) -> tensor<128x256xf32> {
  %d = tile.dot %a, %b, %c row_groups(%g) {rowsPerGroup = 64 : i32} : tensor<128x64xf16> * tensor<64x256xf16> -> tensor<128x256xf32>
  return %d : tensor<128x256xf32>
}

// -----

// Groups of 32 rows split a wgmma's 64-row strip: the warpgroup dot
// computes every row and the rows of clear groups are selected from the
// accumulator, as with mma.sync.
// HOPPER-LABEL: func.func @dot_small_row_groups
// HOPPER: %[[D:.+]] = tilegpu.warpgroup_dot %{{.+}}, %{{.+}}, %{{.+}} : !tilegpu.memdesc
// HOPPER: arith.divui
// HOPPER: arith.select %{{.+}}, %[[D]], %{{.+}}
func.func @dot_small_row_groups(%a: tensor<128x64xf16>, %b: tensor<64x256xf16>, %c: tensor<128x256xf32>, %g: i32) -> tensor<128x256xf32> {
  %d = tile.dot %a, %b, %c row_groups(%g) {rowsPerGroup = 32 : i32} : tensor<128x64xf16> * tensor<64x256xf16> -> tensor<128x256xf32>
  return %d : tensor<128x256xf32>
}
