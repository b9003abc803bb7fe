// RUN: tilec-opt -split-input-file -tilegpu-allocate-shared-memory -tilegpu-insert-barriers -convert-tilegpu-to-llvm %s | FileCheck %s

// One element per thread: every thread performs its own atomic, predicated
// by the mask only; nothing is shared.
// CHECK-LABEL: llvm.func @masked_add
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "mov.b32 $0, 0;\0A\09@$3 atom.relaxed.cta.global.add.u32 $0, [ $1 + 0 ], $2;", "=r,l,r,b" %{{.+}}, %{{.+}}, %{{.+}} : (!llvm.ptr<1>, i32, i1) -> i32
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.return
#blocked = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @masked_add(%p: tensor<128x!tile.ptr<i32>, #blocked>, %v: tensor<128xi32, #blocked>, %m: tensor<128xi1, #blocked>, %out: tensor<128x!tile.ptr<i32>, #blocked>) {
    %0 = tile.atomic_rmw add, %p, %v, %m {sem = #tile.sem<relaxed>, scope = #tile.scope<cta>} : tensor<128x!tile.ptr<i32>, #blocked>
    tile.store %out, %0 : tensor<128x!tile.ptr<i32>, #blocked>
    return
  }
}

// -----

// 64 elements on 128 threads: warps 2 and 3 hold copies of warps 0 and 1.
// Only threads with warp bit 1 clear perform the atomic (and the mask), they
// store the old values to the scratch, and after the barrier every thread
// reads its elements' slots.
// CHECK: module attributes {{.*}}tilegpu.shared = 256 : i32
// CHECK-LABEL: llvm.func @copies_in_other_warps
// CHECK: %[[TID:.+]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[WARP:.+]] = llvm.lshr %[[TID]], %{{.+}} : i32
// CHECK: %[[COPY:.+]] = llvm.and %[[WARP]], %{{.+}} : i32
// CHECK: %[[OWNER:.+]] = llvm.icmp "eq" %[[COPY]], %{{.+}} : i32
// CHECK: %[[PRED:.+]] = llvm.and %{{.+}}, %[[OWNER]] : i1
// CHECK: %[[OLD:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.b32 $0, 0;\0A\09@$3 atom.acq_rel.gpu.global.add.u32 $0, [ $1 + 0 ], $2;", "=r,l,r,b" %{{.+}}, %{{.+}}, %[[PRED]]
// CHECK: llvm.cond_br %{{.+}}, ^[[STORE:.+]], ^[[JOIN:.+]]
// CHECK: ^[[STORE]]:
// CHECK: llvm.store %[[OLD]], %{{.+}} : i32, !llvm.ptr<3>
// CHECK: ^[[JOIN]]:
// CHECK-NEXT: nvvm.barrier0
// CHECK: %[[SLOT:.+]] = llvm.getelementptr %{{.+}}[%{{.+}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
// CHECK: llvm.load %[[SLOT]] : !llvm.ptr<3> -> i32
#blocked = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @copies_in_other_warps(%p: tensor<64x!tile.ptr<i32>, #blocked>, %v: tensor<64xi32, #blocked>, %m: tensor<64xi1, #blocked>, %out: tensor<64x!tile.ptr<i32>, #blocked>) {
    %0 = tile.atomic_rmw add, %p, %v, %m : tensor<64x!tile.ptr<i32>, #blocked>
    tile.store %out, %0 : tensor<64x!tile.ptr<i32>, #blocked>
    return
  }
}

// -----

// The same atomic with its result unused needs no scratch and no barrier.
// CHECK: module attributes {{.*}}tilegpu.shared = 0 : i32
// CHECK-LABEL: llvm.func @unused_result
// CHECK: atom.acq_rel.gpu.global.max.s32
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.return
#blocked = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @unused_result(%p: tensor<64x!tile.ptr<i32>, #blocked>, %v: tensor<64xi32, #blocked>) {
    %0 = tile.atomic_rmw max, %p, %v : tensor<64x!tile.ptr<i32>, #blocked>
    return
  }
}

// -----

// 16 elements on one warp: lanes 16..31 hold copies of lanes 0..15 and take
// their old values with shfl.idx from lane & ~16.
// CHECK-LABEL: llvm.func @copies_in_other_lanes
// CHECK: %[[LANE:.+]] = llvm.and %{{.+}}, %{{.+}} : i32
// CHECK: %[[COPY:.+]] = llvm.and %[[LANE]], %{{.+}} : i32
// CHECK: %[[OWNER:.+]] = llvm.icmp "eq" %[[COPY]], %{{.+}} : i32
// CHECK: %[[OLD:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.b32 $0, 0;\0A\09@$3 atom.acq_rel.gpu.global.exch.b32 $0, [ $1 + 0 ], $2;", "=r,l,r,b" %{{.+}}, %{{.+}}, %[[OWNER]]
// CHECK: nvvm.shfl.sync  idx %{{.+}}, %[[OLD]], %{{.+}}, %{{.+}} : i32 -> i32
// CHECK-NOT: nvvm.barrier0
#blocked = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
module attributes {"tilegpu.num-warps" = 1 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @copies_in_other_lanes(%p: tensor<16x!tile.ptr<f32>, #blocked>, %v: tensor<16xf32, #blocked>, %out: tensor<16x!tile.ptr<f32>, #blocked>) {
    %0 = tile.atomic_rmw xchg, %p, %v : tensor<16x!tile.ptr<f32>, #blocked>
    tile.store %out, %0 : tensor<16x!tile.ptr<f32>, #blocked>
    return
  }
}

// -----

// A scalar is held by every thread: thread 0 swaps, the others read its old
// value from the scratch.
// CHECK: module attributes {{.*}}tilegpu.shared = 8 : i32
// CHECK-LABEL: llvm.func @scalar_cas
// CHECK: %[[OLD:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.b64 $0, 0;\0A\09@$4 atom.acq_rel.gpu.global.cas.b64 $0, [ $1 + 0 ], $2, $3;", "=l,l,l,l,b"
// CHECK: llvm.store %[[OLD]], %{{.+}} : i64, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: llvm.load %{{.+}} : !llvm.ptr<3> -> i64
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @scalar_cas(%p: !tile.ptr<i64>, %c: i64, %v: i64, %out: !tile.ptr<i64>) {
    %0 = tile.atomic_cas %p, %c, %v : !tile.ptr<i64>
    tile.store %out, %0 : !tile.ptr<i64>
    return
  }
}

// -----

// f32 adds cross the asm as their bits (the store takes them as they are).
// CHECK-LABEL: llvm.func @float_add
// CHECK: %[[BITS:.+]] = llvm.bitcast %{{.+}} : f32 to i32
// CHECK: %[[OLD:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "atom.release.sys.global.add.f32 $0, [ $1 + 0 ], $2;", "=r,l,r" %{{.+}}, %[[BITS]]
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "st.global.b32 [ $0 + 0 ], $1;", "l,r" %{{.+}}, %[[OLD]]
#blocked = #tilegpu.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @float_add(%p: tensor<256x!tile.ptr<f32>, #blocked>, %v: tensor<256xf32, #blocked>, %out: tensor<256x!tile.ptr<f32>, #blocked>) {
    %0 = tile.atomic_rmw add, %p, %v {sem = #tile.sem<release>, scope = #tile.scope<sys>} : tensor<256x!tile.ptr<f32>, #blocked>
    tile.store %out, %0 : tensor<256x!tile.ptr<f32>, #blocked>
    return
  }
}
