// RUN: tilec-opt -convert-tilegpu-to-llvm -split-input-file %s | FileCheck %s

// A two-stage ring of 128x32 f16 tiles filled by cp.async: the ring sits at
// @global_smem + its tilegpu.offset, a slot 8192 B further per index. Each
// thread copies 4 runs of 8 contiguous, 16-byte aligned f16 (the rows are
// 64 B, the pointers' stride 32 elements), so 4 x cp.async.cg of 16 B; the
// mask is uniform along a row and becomes the src-size (0: zero-fill). The
// slot is carried by the loop as a plain shared pointer.
// CHECK: module attributes {{.*}}tilegpu.shared = 17408 : i32
// CHECK-LABEL: llvm.func @ring
// CHECK: %[[COPY_BYTES:.+]] = llvm.mlir.constant(8192 : i32) : i32
// CHECK: %[[SMEM:.+]] = llvm.mlir.addressof @global_smem : !llvm.ptr<3>
// CHECK: %[[RING:.+]] = llvm.getelementptr %[[SMEM]][1024] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// Slot 0 is the ring's base.
// CHECK: llvm.br ^[[LOOP:.+]](%{{.+}}, %[[RING]] : i32, !llvm.ptr<3>)
// CHECK: ^[[LOOP]](%{{.+}}: i32, %[[SLOT:.+]]: !llvm.ptr<3>):
// CHECK: %[[DST:.+]] = llvm.getelementptr %[[SLOT]][%{{.+}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f16
// CHECK: %[[SIZE:.+]] = llvm.select %{{.+}}, %{{.+}}, %{{.+}} : i1, i32
// CHECK: nvvm.cp.async.shared.global %[[DST]], %{{.+}}, 16, cache ={{ +}}cg, %[[SIZE]] : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK-COUNT-3: nvvm.cp.async.shared.global %{{.+}}, %{{.+}}, 16, cache ={{ +}}cg, %{{.+}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 1
// CHECK: nvvm.barrier0
// CHECK: %[[NEXT:.+]] = llvm.mul %{{.+}}, %[[COPY_BYTES]] : i32
// CHECK: %[[SLOT1:.+]] = llvm.getelementptr %[[RING]][%[[NEXT]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: llvm.br ^[[LOOP]](%{{.+}}, %[[SLOT1]] : i32, !llvm.ptr<3>)
// CHECK-NOT: tilegpu.
// CHECK: llvm.return
#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#rows = #tilegpu.slice<{dim = 1, parent = #blocked}>
#cols = #tilegpu.slice<{dim = 0, parent = #blocked}>
#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90", tilegpu.shared = 17408 : i32} {
  func.func @ring(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %m: i32, %k: i32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %stride = arith.constant dense<32> : tensor<128x1xi32, #blocked>
    %r = tile.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32, #rows>
    %r2 = tile.expand_dims %r {axis = 1 : i32} : tensor<128xi32, #rows> -> tensor<128x1xi32, #blocked>
    %roff = arith.muli %r2, %stride : tensor<128x1xi32, #blocked>
    %base = tile.splat %a : !tile.ptr<f16> -> tensor<128x1x!tile.ptr<f16>, #blocked>
    %prow = tile.addptr %base, %roff : tensor<128x1x!tile.ptr<f16>, #blocked>, tensor<128x1xi32, #blocked>
    %pb = tile.broadcast %prow : tensor<128x1x!tile.ptr<f16>, #blocked> -> tensor<128x32x!tile.ptr<f16>, #blocked>
    %c = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32, #cols>
    %c2d = tile.expand_dims %c {axis = 0 : i32} : tensor<32xi32, #cols> -> tensor<1x32xi32, #blocked>
    %cb = tile.broadcast %c2d : tensor<1x32xi32, #blocked> -> tensor<128x32xi32, #blocked>
    %ptrs = tile.addptr %pb, %cb : tensor<128x32x!tile.ptr<f16>, #blocked>, tensor<128x32xi32, #blocked>
    %ms = tile.splat %m : i32 -> tensor<128x1xi32, #blocked>
    %inrow = arith.cmpi slt, %r2, %ms : tensor<128x1xi32, #blocked>
    %mask = tile.broadcast %inrow : tensor<128x1xi1, #blocked> -> tensor<128x32xi1, #blocked>
    %ring = tilegpu.local_alloc {tilegpu.offset = 1024 : i32} : () -> !tilegpu.memdesc<2x128x32xf16, #shared, mutable>
    %first = tilegpu.memdesc_index %ring[%c0] : !tilegpu.memdesc<2x128x32xf16, #shared, mutable> -> !tilegpu.memdesc<128x32xf16, #shared, mutable>
    %last = scf.for %i = %c0 to %k step %c1 iter_args(%slot = %first) -> (!tilegpu.memdesc<128x32xf16, #shared, mutable>) : i32 {
      tilegpu.async_copy_global_to_local %ptrs, %slot mask %mask : tensor<128x32x!tile.ptr<f16>, #blocked> -> !tilegpu.memdesc<128x32xf16, #shared, mutable>
      tilegpu.async_commit_group
      tilegpu.async_wait {num = 1 : i32}
      tilegpu.barrier
      %j = arith.remui %i, %c2 : i32
      %next = tilegpu.memdesc_index %ring[%j] : !tilegpu.memdesc<2x128x32xf16, #shared, mutable> -> !tilegpu.memdesc<128x32xf16, #shared, mutable>
      scf.yield %next : !tilegpu.memdesc<128x32xf16, #shared, mutable>
    }
    tilegpu.local_dealloc %ring : !tilegpu.memdesc<2x128x32xf16, #shared, mutable>
    return
  }
}

// -----

// Operands of mma v2 come from their swizzled buffers with ldmatrix x4: A
// (64x32, K contiguous) without .trans, B (32x64, N contiguous) with it, B
// stored K-contiguous (order [0, 1]) without. No barrier: the buffers were
// written and fenced before.
// CHECK-LABEL: llvm.func @operands
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-4: nvvm.ldmatrix %{{.+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK-COUNT-4: nvvm.ldmatrix %{{.+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK-COUNT-4: nvvm.ldmatrix %{{.+}} {{{.*}}layout = #nvvm.mma_layout<row>{{.*}}} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK-NOT: nvvm.ldmatrix
// CHECK-NOT: nvvm.barrier0
#mma = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#opA = #tilegpu.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>
#opB = #tilegpu.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>
#sharedA = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
#sharedB = #tilegpu.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#sharedBk = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [0, 1]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90", tilegpu.shared = 12288 : i32} {
  func.func @operands() -> (tensor<64x32xf16, #opA>, tensor<32x64xf16, #opB>, tensor<32x64xf16, #opB>) {
    %a = tilegpu.local_alloc {tilegpu.offset = 0 : i32} : () -> !tilegpu.memdesc<64x32xf16, #sharedA, mutable>
    %b = tilegpu.local_alloc {tilegpu.offset = 4096 : i64} : () -> !tilegpu.memdesc<32x64xf16, #sharedB, mutable>
    %bk = tilegpu.local_alloc {tilegpu.offset = 8192 : i32} : () -> !tilegpu.memdesc<32x64xf16, #sharedBk, mutable>
    %x = tilegpu.local_load %a : !tilegpu.memdesc<64x32xf16, #sharedA, mutable> -> tensor<64x32xf16, #opA>
    %y = tilegpu.local_load %b : !tilegpu.memdesc<32x64xf16, #sharedB, mutable> -> tensor<32x64xf16, #opB>
    %z = tilegpu.local_load %bk : !tilegpu.memdesc<32x64xf16, #sharedBk, mutable> -> tensor<32x64xf16, #opB>
    return %x, %y, %z : tensor<64x32xf16, #opA>, tensor<32x64xf16, #opB>, tensor<32x64xf16, #opB>
  }
}

// -----

// A swizzle of 4-element chunks splits ldmatrix's 8-element rows: the operand
// is read element pair by pair from the swizzled addresses instead.
// CHECK-LABEL: llvm.func @narrow_chunks
// CHECK-NOT: nvvm.ldmatrix
// CHECK: llvm.xor
// CHECK: llvm.load %{{.+}} {alignment = 4 : i64} : !llvm.ptr<3> -> vector<2xf16>
// CHECK-NOT: nvvm.ldmatrix
#mma = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#opA = #tilegpu.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>
#shared = #tilegpu.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90", tilegpu.shared = 4096 : i32} {
  func.func @narrow_chunks() -> tensor<64x32xf16, #opA> {
    %a = tilegpu.local_alloc {tilegpu.offset = 0 : i32} : () -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    %x = tilegpu.local_load %a : !tilegpu.memdesc<64x32xf16, #shared, mutable> -> tensor<64x32xf16, #opA>
    return %x : tensor<64x32xf16, #opA>
  }
}

// -----

// A blocked f32 tile through a swizzled buffer: each thread's 4 contiguous
// f32 stay in one 4-element chunk, so stores and loads are 16-byte vectors;
// local_alloc from a tensor stores the same way. No barriers.
// CHECK-LABEL: llvm.func @blocked_round_trip
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.xor
// CHECK-COUNT-8: llvm.store %{{.+}}, %{{.+}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK-NOT: llvm.store
// CHECK-COUNT-4: llvm.load %{{.+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK-NOT: llvm.load
// CHECK-NOT: nvvm.barrier0
#blocked = #tilegpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #tilegpu.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90", tilegpu.shared = 16384 : i32} {
  func.func @blocked_round_trip(%t: tensor<64x32xf32, #blocked>) -> tensor<64x32xf32, #blocked> {
    %buf = tilegpu.local_alloc {tilegpu.offset = 0 : i32} : () -> !tilegpu.memdesc<64x32xf32, #shared, mutable>
    tilegpu.local_store %t, %buf : tensor<64x32xf32, #blocked> -> !tilegpu.memdesc<64x32xf32, #shared, mutable>
    %copy = tilegpu.local_alloc %t {tilegpu.offset = 8192 : i32} : (tensor<64x32xf32, #blocked>) -> !tilegpu.memdesc<64x32xf32, #shared>
    %u = tilegpu.local_load %buf : !tilegpu.memdesc<64x32xf32, #shared, mutable> -> tensor<64x32xf32, #blocked>
    return %u : tensor<64x32xf32, #blocked>
  }
}

// -----

// A thread's row groups of a blocked f32 tile are 16 rows apart, a multiple
// of the swizzle's 8-row pattern: they take one swizzled address and the
// others at constant offsets (16 rows of 32 elements), which the backend
// folds into the loads.
// CHECK-LABEL: llvm.func @constant_row_groups
// CHECK: llvm.xor
// CHECK: %[[BASE:.+]] = llvm.getelementptr %{{.+}}[%{{.+}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
// CHECK-NEXT: %[[R1:.+]] = llvm.getelementptr %[[BASE]][512] : (!llvm.ptr<3>) -> !llvm.ptr<3>, f32
// CHECK-NEXT: %[[R2:.+]] = llvm.getelementptr %[[BASE]][1024] : (!llvm.ptr<3>) -> !llvm.ptr<3>, f32
// CHECK-NEXT: %[[R3:.+]] = llvm.getelementptr %[[BASE]][1536] : (!llvm.ptr<3>) -> !llvm.ptr<3>, f32
// CHECK-NEXT: llvm.load %[[BASE]] {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK-NOT: llvm.xor
// CHECK: llvm.load %[[R1]] {alignment = 16 : i64}
// CHECK: llvm.load %[[R2]] {alignment = 16 : i64}
// CHECK: llvm.load %[[R3]] {alignment = 16 : i64}
#blocked = #tilegpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #tilegpu.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90", tilegpu.shared = 8192 : i32} {
  func.func @constant_row_groups() -> tensor<64x32xf32, #blocked> {
    %buf = tilegpu.local_alloc {tilegpu.offset = 0 : i32} : () -> !tilegpu.memdesc<64x32xf32, #shared, mutable>
    %t = tilegpu.local_load %buf : !tilegpu.memdesc<64x32xf32, #shared, mutable> -> tensor<64x32xf32, #blocked>
    return %t : tensor<64x32xf32, #blocked>
  }
}

// -----

// An accumulator fragment (mma v3) written to shared memory for a blocked
// store: each lane writes two f16 of a row, the 8 lanes of a column pair
// rows 0-7. Unpadded 256-byte rows would put those 8 rows in the same banks;
// each row is padded by 8 f16 (16 B), so row 8 starts 8 * 136 elements in,
// and the blocked reads keep their 16-byte vectors (136 * 2 B rows stay
// aligned).
// CHECK-LABEL: llvm.func @padded_accumulator
// CHECK: %[[STORE_BASE:.+]] = llvm.getelementptr %{{.+}}[%{{.+}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f16
// CHECK: %[[ROW8:.+]] = llvm.getelementptr %[[STORE_BASE]][1088] : (!llvm.ptr<3>) -> !llvm.ptr<3>, f16
// CHECK: llvm.store %{{.+}}, %[[STORE_BASE]] {alignment = 4 : i64} : vector<2xf16>, !llvm.ptr<3>
// CHECK: llvm.store %{{.+}}, %[[ROW8]] {alignment = 4 : i64} : vector<2xf16>, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: llvm.load %{{.+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xf16>
#mma = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 128, 16]}>
#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90a", tilegpu.shared = 17408 : i32} {
  func.func @padded_accumulator(%x: tensor<64x128xf16, #mma>) -> tensor<64x128xf16, #blocked> {
    %y = tilegpu.convert_layout %x {tilegpu.offset = 0 : i32} : tensor<64x128xf16, #mma> -> tensor<64x128xf16, #blocked>
    return %y : tensor<64x128xf16, #blocked>
  }
}
