// RUN: tilec-opt %s -split-input-file -convert-tile-to-tilegpu -tilegpu-coalesce -tilegpu-remove-layout-conversions -canonicalize -tilegpu-allocate-shared-memory -tilegpu-insert-barriers -convert-tilegpu-to-llvm | FileCheck %s
// RUN: tilec-opt %s -split-input-file -convert-tile-to-tilegpu -tilegpu-coalesce -tilegpu-remove-layout-conversions -canonicalize -tilegpu-allocate-shared-memory -tilegpu-insert-barriers -convert-tilegpu-to-llvm -cse | FileCheck %s --check-prefix=CSE

// A kernel becomes an llvm.func marked for NVVM with its block size (and
// .minnctapersm 1, so ptxas does not cap registers at 32); pointer
// divisibility becomes llvm.align; contiguous, aligned, uniformly masked
// accesses become 128-bit predicated PTX loads and stores.
// CHECK: module attributes {{.*}}tilegpu.shared = 0 : i32
// CHECK-LABEL: llvm.func @add
// CHECK-SAME: %arg0: !llvm.ptr<1> {llvm.align = 16 : i32}
// CHECK-SAME: attributes {nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>, nvvm.minctasm = 1 : i32}
// CHECK: nvvm.read.ptx.sreg.tid.x
// CHECK: llvm.inline_asm {{.*}}"mov.b32 $0, $4;{{.*}}@$8 ld.global.v4.b32 { $0, $1, $2, $3 }, [ $9 + 0 ];"
// CHECK: llvm.fadd
// CHECK: llvm.inline_asm has_side_effects {{.*}}"@$5 st.global.v4.b32 [ $0 + 0 ], { $1, $2, $3, $4 };"
func.func @add(%p: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 512 : i32} : tensor<512xi32>
  %ns = tile.splat %n : i32 -> tensor<512xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<512xi32>
  %ps = tile.splat %p : !tile.ptr<f32> -> tensor<512x!tile.ptr<f32>>
  %pa = tile.addptr %ps, %r : tensor<512x!tile.ptr<f32>>, tensor<512xi32>
  %v = tile.load %pa, %m : tensor<512x!tile.ptr<f32>>
  %s = arith.addf %v, %v : tensor<512xf32>
  tile.store %pa, %s, %m : tensor<512x!tile.ptr<f32>>
  return
}

// -----

// Without alignment facts about the mask, each element gets its own
// predicated access.
// CHECK-LABEL: llvm.func @unaligned_mask
// CHECK: "mov.b32 $0, $1;{{.*}}@$2 ld.global.b32 $0, [ $3 + 0 ];"
// CHECK-NOT: ld.global.v4
func.func @unaligned_mask(%p: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  %ns = tile.splat %n : i32 -> tensor<128xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<128xi32>
  %ps = tile.splat %p : !tile.ptr<f32> -> tensor<128x!tile.ptr<f32>>
  %pa = tile.addptr %ps, %r : tensor<128x!tile.ptr<f32>>, tensor<128xi32>
  %v = tile.load %pa, %m : tensor<128x!tile.ptr<f32>>
  tile.store %pa, %v, %m : tensor<128x!tile.ptr<f32>>
  return
}

// -----

// A row reduction: in registers, then butterfly shuffles across the lanes of
// the row, then across warps through shared memory, with a barrier between
// the partials' stores and loads (nothing used those bytes before, so no
// barrier precedes the stores); math.exp goes to libdevice.
// CHECK: llvm.mlir.global external @global_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: llvm.func @row_max
// CHECK: llvm.call @__nv_expf
// CHECK: nvvm.shfl.sync bfly
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK: llvm.intr.maximum
func.func @row_max(%p: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %q: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  %ps = tile.splat %p : !tile.ptr<f32> -> tensor<256x!tile.ptr<f32>>
  %pa = tile.addptr %ps, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  %v = tile.load %pa : tensor<256x!tile.ptr<f32>>
  %e = math.exp %v : tensor<256xf32>
  %m = tile.reduce max %e {axis = 0 : i32} : tensor<256xf32> -> f32
  tile.store %q, %m : !tile.ptr<f32>
  return
}

// -----

// f16 dots on sm_80+ run on tensor cores: operands reach their mma fragments
// through shared memory, then one mma.sync.m16n8k16 per 16x8x16 tile.
// CHECK-LABEL: llvm.func @dot
// CHECK: nvvm.barrier0
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: llvm.intr.fma
func.func @dot(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %c: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r16 = tile.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
  %row = tile.expand_dims %r16 {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %col = tile.expand_dims %r16 {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %c16 = arith.constant dense<16> : tensor<16x1xi32>
  %rows = arith.muli %row, %c16 : tensor<16x1xi32>
  %rb = tile.broadcast %rows : tensor<16x1xi32> -> tensor<16x16xi32>
  %cb = tile.broadcast %col : tensor<1x16xi32> -> tensor<16x16xi32>
  %off = arith.addi %rb, %cb : tensor<16x16xi32>
  %as = tile.splat %a : !tile.ptr<f16> -> tensor<16x16x!tile.ptr<f16>>
  %ap = tile.addptr %as, %off : tensor<16x16x!tile.ptr<f16>>, tensor<16x16xi32>
  %av = tile.load %ap : tensor<16x16x!tile.ptr<f16>>
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %d = tile.dot %av, %av, %zero : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
  %cs = tile.splat %c : !tile.ptr<f32> -> tensor<16x16x!tile.ptr<f32>>
  %cp = tile.addptr %cs, %off : tensor<16x16x!tile.ptr<f32>>, tensor<16x16xi32>
  tile.store %cp, %d : tensor<16x16x!tile.ptr<f32>>
  return
}

// -----

// f32 dots that allow tf32 run on tensor cores too: each operand register is
// rounded once (cvt.rna.tf32.f32), then one mma.sync.m16n8k8 per 16x8x8 tile,
// K in steps of 8 (here two), each fragment register one i32 operand.
// CHECK-LABEL: llvm.func @dot_tf32
// CHECK: nvvm.barrier0
// CHECK: nvvm.convert.float.to.tf32 %{{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK-NOT: llvm.intr.fma
// CHECK: nvvm.mma.sync A[%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}] B[%{{[^,]*}}, %{{[^,]*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: nvvm.mma.sync {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 8>
// CHECK-NOT: nvvm.mma.sync
// CHECK-NOT: llvm.intr.fma
// CHECK: llvm.return
func.func @dot_tf32(%a: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %c: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r16 = tile.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
  %row = tile.expand_dims %r16 {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %col = tile.expand_dims %r16 {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %c16 = arith.constant dense<16> : tensor<16x1xi32>
  %rows = arith.muli %row, %c16 : tensor<16x1xi32>
  %rb = tile.broadcast %rows : tensor<16x1xi32> -> tensor<16x16xi32>
  %cb = tile.broadcast %col : tensor<1x16xi32> -> tensor<16x16xi32>
  %off = arith.addi %rb, %cb : tensor<16x16xi32>
  %as = tile.splat %a : !tile.ptr<f32> -> tensor<16x16x!tile.ptr<f32>>
  %ap = tile.addptr %as, %off : tensor<16x16x!tile.ptr<f32>>, tensor<16x16xi32>
  %av = tile.load %ap : tensor<16x16x!tile.ptr<f32>>
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %d = tile.dot %av, %av, %zero {inputPrecision = #tile.precision<tf32>} : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
  %cs = tile.splat %c : !tile.ptr<f32> -> tensor<16x16x!tile.ptr<f32>>
  %cp = tile.addptr %cs, %off : tensor<16x16x!tile.ptr<f32>>, tensor<16x16xi32>
  tile.store %cp, %d : tensor<16x16x!tile.ptr<f32>>
  return
}

// -----

// f32 (ieee) dots run on CUDA cores: each accumulator register is a chain of
// fused multiply-adds over registers the thread holds.
// CHECK-LABEL: llvm.func @dot_f32
// CHECK: nvvm.barrier0
// CHECK: llvm.intr.fma
// CHECK-NOT: nvvm.mma.sync
func.func @dot_f32(%a: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %c: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r16 = tile.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
  %row = tile.expand_dims %r16 {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %col = tile.expand_dims %r16 {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %c16 = arith.constant dense<16> : tensor<16x1xi32>
  %rows = arith.muli %row, %c16 : tensor<16x1xi32>
  %rb = tile.broadcast %rows : tensor<16x1xi32> -> tensor<16x16xi32>
  %cb = tile.broadcast %col : tensor<1x16xi32> -> tensor<16x16xi32>
  %off = arith.addi %rb, %cb : tensor<16x16xi32>
  %as = tile.splat %a : !tile.ptr<f32> -> tensor<16x16x!tile.ptr<f32>>
  %ap = tile.addptr %as, %off : tensor<16x16x!tile.ptr<f32>>, tensor<16x16xi32>
  %av = tile.load %ap : tensor<16x16x!tile.ptr<f32>>
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %d = tile.dot %av, %av, %zero : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
  %cs = tile.splat %c : !tile.ptr<f32> -> tensor<16x16x!tile.ptr<f32>>
  %cp = tile.addptr %cs, %off : tensor<16x16x!tile.ptr<f32>>, tensor<16x16xi32>
  tile.store %cp, %d : tensor<16x16x!tile.ptr<f32>>
  return
}

// -----

// A load after a store to the same address reads memory again: loads are
// inline asm with side effects, which CSE does not merge.
// CHECK-LABEL: llvm.func @load_store_load
// CHECK: ld.global.v4.b32
// CHECK: st.global.v4.b32
// CHECK: ld.global.v4.b32
// CHECK: st.global.v4.b32
// CSE-LABEL: llvm.func @load_store_load
// CSE: ld.global.v4.b32
// CSE: st.global.v4.b32
// CSE: ld.global.v4.b32
// CSE: st.global.v4.b32
func.func @load_store_load(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %out: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %range = tile.make_range {start = 0 : i32, end = 512 : i32} : tensor<512xi32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<512x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %range : tensor<512x!tile.ptr<f32>>, tensor<512xi32>
  %a = tile.load %xp : tensor<512x!tile.ptr<f32>>
  %two = arith.addf %a, %a : tensor<512xf32>
  tile.store %xp, %two : tensor<512x!tile.ptr<f32>>
  %b = tile.load %xp : tensor<512x!tile.ptr<f32>>
  %os = tile.splat %out : !tile.ptr<f32> -> tensor<512x!tile.ptr<f32>>
  %op = tile.addptr %os, %range : tensor<512x!tile.ptr<f32>>, tensor<512xi32>
  tile.store %op, %b : tensor<512x!tile.ptr<f32>>
  return
}

// -----

// scf.while (KernelBuilder::whileLoop) carries tensors in their layouts: a
// loop of blocks whose condition, a reduction every thread holds alike,
// branches out; a volatile load reads memory again each trip
// (ld.global.volatile); the reduction's shared scratch is fenced with a
// barrier on every trip.
// CHECK-LABEL: llvm.func @spin_until_published
// CHECK: llvm.br ^[[BEFORE:bb[0-9]+]]
// CHECK: ^[[BEFORE]](
// CHECK: nvvm.barrier0
// CHECK: llvm.cond_br %{{.*}}, ^[[AFTER:bb[0-9]+]], ^[[EXIT:bb[0-9]+]]
// CHECK: ^[[AFTER]]:
// CHECK: ld.global.volatile
// CHECK: llvm.br ^[[BEFORE]](
// CHECK: ^[[EXIT]]:
// CHECK: llvm.return
func.func @spin_until_published(%flags: !tile.ptr<i32> {tile.divisibility = 16 : i32}, %out: !tile.ptr<i32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  %fs = tile.splat %flags : !tile.ptr<i32> -> tensor<128x!tile.ptr<i32>>
  %fp = tile.addptr %fs, %r : tensor<128x!tile.ptr<i32>>, tensor<128xi32>
  %zero = arith.constant dense<0> : tensor<128xi32>
  %c0 = arith.constant 0 : i32
  %seen = scf.while (%words = %zero) : (tensor<128xi32>) -> tensor<128xi32> {
    %unset = arith.cmpi eq, %words, %zero : tensor<128xi32>
    %unset32 = arith.extui %unset : tensor<128xi1> to tensor<128xi32>
    %any = tile.reduce max %unset32 {axis = 0 : i32} : tensor<128xi32> -> i32
    %wait = arith.cmpi ne, %any, %c0 : i32
    scf.condition(%wait) %words : tensor<128xi32>
  } do {
  ^bb0(%words: tensor<128xi32>):
    %read = tile.load %fp {isVolatile} : tensor<128x!tile.ptr<i32>>
    scf.yield %read : tensor<128xi32>
  }
  %os = tile.splat %out : !tile.ptr<i32> -> tensor<128x!tile.ptr<i32>>
  %op = tile.addptr %os, %r : tensor<128x!tile.ptr<i32>>, tensor<128xi32>
  tile.store %op, %seen : tensor<128x!tile.ptr<i32>>
  return
}
