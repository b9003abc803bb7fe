// RUN: tilec-opt -convert-tilegpu-to-llvm -split-input-file %s | FileCheck %s

// A 64x64x64 f16 warpgroup dot, one warpgroup: four wgmma m64n64k16, one
// per 16 elements of K, between a fence and a commit, waited for at once
// (not async). The descriptors carry the 128-byte swizzle (mode 1 in bits
// 62-63) and SBO = 1024 B (8 rows of 128 B) in bits 32-45; A is K-major
// (LBO unused, 1), B is N-major, its LBO the 8 KiB between 64-column
// blocks; A advances 32 B per K step, B 16 rows (2 KiB).
// CHECK-LABEL: llvm.func @warpgroup
// CHECK-DAG: llvm.mlir.constant(4611686293305360384 : i64) : i64
// CHECK-DAG: llvm.mlir.constant(4611686293338849280 : i64) : i64
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma3 = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
#nv = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90a", "tilegpu.threads-per-warp" = 32 : i32, tilegpu.shared = 16384 : i32} {
  func.func @warpgroup(%out: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma3>
    %a = tilegpu.local_alloc {tilegpu.offset = 0 : i32} : () -> !tilegpu.memdesc<64x64xf16, #nv, mutable>
    %b = tilegpu.local_alloc {tilegpu.offset = 8192 : i32} : () -> !tilegpu.memdesc<64x64xf16, #nv, mutable>
    %d = tilegpu.warpgroup_dot %a, %b, %zero : !tilegpu.memdesc<64x64xf16, #nv, mutable> * !tilegpu.memdesc<64x64xf16, #nv, mutable> -> tensor<64x64xf32, #mma3>
    %s = tile.reduce add %d {axis = 1 : i32} : tensor<64x64xf32, #mma3> -> tensor<64xf32, #tilegpu.slice<{dim = 1, parent = #mma3}>>
    %rows = tile.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 1, parent = #mma3}>>
    %base = tile.splat %out : !tile.ptr<f32> -> tensor<64x!tile.ptr<f32>, #tilegpu.slice<{dim = 1, parent = #mma3}>>
    %p = tile.addptr %base, %rows : tensor<64x!tile.ptr<f32>, #tilegpu.slice<{dim = 1, parent = #mma3}>>, tensor<64xi32, #tilegpu.slice<{dim = 1, parent = #mma3}>>
    tile.store %p, %s : tensor<64x!tile.ptr<f32>, #tilegpu.slice<{dim = 1, parent = #mma3}>>
    return
  }
}

// -----

// f32 operands are read as tf32, k8 per instruction: four m64n64k8 over
// K = 32. Both tiles are K-major (the only form tf32 has), so both
// descriptors carry the K-major bits (LBO unused, 1; SBO 1024 B; 128-byte
// swizzle) and advance 32 B per step.
// CHECK-LABEL: llvm.func @warpgroup_tf32
// CHECK: llvm.mlir.constant(4611686293305360384 : i64) : i64
// CHECK-NOT: llvm.mlir.constant(4611686293338849280 : i64)
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
#mma3 = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 8]}>
#ka = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
#kb = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [0, 1]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90a", "tilegpu.threads-per-warp" = 32 : i32, tilegpu.shared = 16384 : i32} {
  func.func @warpgroup_tf32(%out: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma3>
    %a = tilegpu.local_alloc {tilegpu.offset = 0 : i32} : () -> !tilegpu.memdesc<64x32xf32, #ka, mutable>
    %b = tilegpu.local_alloc {tilegpu.offset = 8192 : i32} : () -> !tilegpu.memdesc<32x64xf32, #kb, mutable>
    %d = tilegpu.warpgroup_dot %a, %b, %zero : !tilegpu.memdesc<64x32xf32, #ka, mutable> * !tilegpu.memdesc<32x64xf32, #kb, mutable> -> tensor<64x64xf32, #mma3>
    %s = tile.reduce add %d {axis = 1 : i32} : tensor<64x64xf32, #mma3> -> tensor<64xf32, #tilegpu.slice<{dim = 1, parent = #mma3}>>
    %rows = tile.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 1, parent = #mma3}>>
    %base = tile.splat %out : !tile.ptr<f32> -> tensor<64x!tile.ptr<f32>, #tilegpu.slice<{dim = 1, parent = #mma3}>>
    %p = tile.addptr %base, %rows : tensor<64x!tile.ptr<f32>, #tilegpu.slice<{dim = 1, parent = #mma3}>>, tensor<64xi32, #tilegpu.slice<{dim = 1, parent = #mma3}>>
    tile.store %p, %s : tensor<64x!tile.ptr<f32>, #tilegpu.slice<{dim = 1, parent = #mma3}>>
    return
  }
}

// -----

// A tf32 dot computed transposed (D^T = B^T A^T), asynchronous: wgmma's A
// is b's registers (B^T's fragments, four per instruction, copied by
// mov.b32 and fenced), its B a's K-major tile read through the K-major
// descriptor. Each of the four m64n64k8 instructions is its own group,
// followed by a wait that leaves three (one dot's worth less one) in
// flight; the dot's own wait comes after.
// CHECK-LABEL: llvm.func @warpgroup_transposed
// CHECK: llvm.mlir.constant(4611686293305360384 : i64) : i64
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: llvm.inline_asm has_side_effects asm_dialect = att "mov.b32 $0, $1;", "=r,r"
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {$0, {{.*}}, $31}, {$64, $65, $66, $67}, $68, p, 1, 1;
// CHECK-SAME: "=f,{{.*}},0,{{.*}},31,r,r,r,r,l"
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 3
// CHECK-COUNT-3: wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 3
// CHECK-NOT: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
#mmat = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 8], transposed = true}>
#dot = #tilegpu.dot_op<{opIdx = 1, parent = #mmat, kWidth = 1}>
#ka = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
#sb = #tilegpu.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90a", "tilegpu.threads-per-warp" = 32 : i32, tilegpu.shared = 16384 : i32} {
  func.func @warpgroup_transposed(%out: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mmat>
    %a = tilegpu.local_alloc {tilegpu.offset = 0 : i32} : () -> !tilegpu.memdesc<64x32xf32, #ka, mutable>
    %bt = tilegpu.local_alloc {tilegpu.offset = 8192 : i32} : () -> !tilegpu.memdesc<32x64xf32, #sb, mutable>
    %b = tilegpu.local_load %bt : !tilegpu.memdesc<32x64xf32, #sb, mutable> -> tensor<32x64xf32, #dot>
    %d = tilegpu.warpgroup_dot %a, %b, %zero {isAsync} : !tilegpu.memdesc<64x32xf32, #ka, mutable> * tensor<32x64xf32, #dot> -> tensor<64x64xf32, #mmat>
    %w = tilegpu.warpgroup_dot_wait %d {pendings = 0 : i32} : tensor<64x64xf32, #mmat>
    %s = tile.reduce add %w {axis = 0 : i32} : tensor<64x64xf32, #mmat> -> tensor<64xf32, #tilegpu.slice<{dim = 0, parent = #mmat}>>
    %rows = tile.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 0, parent = #mmat}>>
    %base = tile.splat %out : !tile.ptr<f32> -> tensor<64x!tile.ptr<f32>, #tilegpu.slice<{dim = 0, parent = #mmat}>>
    %p = tile.addptr %base, %rows : tensor<64x!tile.ptr<f32>, #tilegpu.slice<{dim = 0, parent = #mmat}>>, tensor<64xi32, #tilegpu.slice<{dim = 0, parent = #mmat}>>
    tile.store %p, %s : tensor<64x!tile.ptr<f32>, #tilegpu.slice<{dim = 0, parent = #mmat}>>
    return
  }
}

// -----

// A dot of row groups (64 rows a group): each warpgroup's 64-row strip runs
// its four K steps as one inline PTX block that branches past them when its
// group's bit is clear ((groups >> row / 64) & 1). The branch is on a vote.sync.all of the condition, so that ptxas
// knows it is uniform and keeps the wgmma asynchronous (on a plain
// predicate it serialized them). 256 rows on two warpgroups make two strips
// a warpgroup: two blocks, eight wgmma, none outside them.
// CHECK-LABEL: llvm.func @warpgroup_row_groups
// CHECK-DAG: %[[ONE:.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-DAG: %[[SIZE:.+]] = llvm.mlir.constant(64 : i32) : i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[FIRST:.+]] = llvm.udiv %{{.+}}, %[[SIZE]] : i32
// CHECK: %[[SHIFTED:.+]] = llvm.lshr %arg1, %[[FIRST]] : i32
// CHECK: %[[ACTIVE:.+]] = llvm.and %[[SHIFTED]], %[[ONE]] : i32
// CHECK: llvm.inline_asm has_side_effects {{.*}}setp.eq.b32 q, $72, 0;\0Avote.sync.all.pred q, q, 0xffffffff;\0A@q bra skip_${:uid};\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, $64, $65, p, 1, 1, 0, 1;\0Awgmma{{.*}}, $66, $67, p, 1, 1, 0, 1;\0Awgmma{{.*}}, $68, $69, p, 1, 1, 0, 1;\0Awgmma{{.*}}, $70, $71, p, 1, 1, 0, 1;\0Askip_${:uid}:\0A}"{{.*}}"=f,{{.*}},l,l,l,l,l,l,l,l,r" {{.*}}, %[[ACTIVE]] :
// CHECK: llvm.inline_asm has_side_effects {{.*}}vote.sync.all.pred{{.*}}
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
#mma3 = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [8, 1], instrShape = [16, 64, 16]}>
#nv = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 8 : i32, tilegpu.target = "sm_90a", "tilegpu.threads-per-warp" = 32 : i32, tilegpu.shared = 32768 : i32} {
  func.func @warpgroup_row_groups(%out: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %groups: i32) attributes {tile.kernel} {
    %zero = arith.constant dense<0.000000e+00> : tensor<256x64xf32, #mma3>
    %a = tilegpu.local_alloc {tilegpu.offset = 0 : i32} : () -> !tilegpu.memdesc<256x64xf16, #nv, mutable>
    %b = tilegpu.local_alloc {tilegpu.offset = 32768 : i32} : () -> !tilegpu.memdesc<64x64xf16, #nv, mutable>
    %d = tilegpu.warpgroup_dot %a, %b, %zero row_groups(%groups) {rowsPerGroup = 64 : i32} : !tilegpu.memdesc<256x64xf16, #nv, mutable> * !tilegpu.memdesc<64x64xf16, #nv, mutable> -> tensor<256x64xf32, #mma3>
    %s = tile.reduce add %d {axis = 1 : i32} : tensor<256x64xf32, #mma3> -> tensor<256xf32, #tilegpu.slice<{dim = 1, parent = #mma3}>>
    %rows = tile.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32, #tilegpu.slice<{dim = 1, parent = #mma3}>>
    %base = tile.splat %out : !tile.ptr<f32> -> tensor<256x!tile.ptr<f32>, #tilegpu.slice<{dim = 1, parent = #mma3}>>
    %p = tile.addptr %base, %rows : tensor<256x!tile.ptr<f32>, #tilegpu.slice<{dim = 1, parent = #mma3}>>, tensor<256xi32, #tilegpu.slice<{dim = 1, parent = #mma3}>>
    tile.store %p, %s : tensor<256x!tile.ptr<f32>, #tilegpu.slice<{dim = 1, parent = #mma3}>>
    return
  }
}
