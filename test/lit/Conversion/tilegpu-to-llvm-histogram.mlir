// RUN: tilec-opt -split-input-file -tilegpu-allocate-shared-memory -tilegpu-insert-barriers -convert-tilegpu-to-llvm %s | FileCheck %s

// 512 values, four a thread (a coalesced load's layout), into 128 bins: the
// 128 counters (512 B) zeroed one a thread, a barrier; per register the
// warp's lanes of one bin found with match.any, their lowest lane adding the
// group's size with one shared atomic; a barrier; each thread reads the bin
// it holds of the result.
// CHECK: module attributes {{.*}}tilegpu.shared = 512 : i32
// CHECK-LABEL: llvm.func @histogram
// CHECK: llvm.store %{{.+}}, %{{.+}} : i32, !llvm.ptr<3>
// CHECK-NEXT: nvvm.barrier0
// CHECK-COUNT-4: nvvm.match.sync  any %{{.+}}, %{{.+}} : i32 -> i32
// CHECK: llvm.atomicrmw add %{{.+}}, %{{.+}} monotonic : !llvm.ptr<3>, i32
// CHECK: nvvm.barrier0
// CHECK-NEXT: llvm.and
// CHECK: llvm.load %{{.+}} : !llvm.ptr<3> -> i32
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.return
#blocked = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#vec = #tilegpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @histogram(%x: tensor<512xi32, #vec>, %m: tensor<512xi1, #vec>, %out: tensor<128x!tile.ptr<i32>, #blocked>) {
    %0 = tile.histogram %x, %m : tensor<512xi32, #vec> -> tensor<128xi32, #blocked>
    tile.store %out, %0 : tensor<128x!tile.ptr<i32>, #blocked>
    return
  }
}

// -----

// 256 values on 128 threads: two rounds. Counters: a row for the earlier
// rounds and one per warp, 5 x 128 x 4 B, zeroed; per round a leader writes
// its group's size to its warp's row, a barrier, and each rank adds the
// lanes below in its group and the rows of the warps before its own (three
// selected loads); the second round also the earlier rounds' row. Between
// the rounds, two barriers around the column sums (a bin a thread).
// CHECK: module attributes {{.*}}tilegpu.shared = 2560 : i32
// CHECK-LABEL: llvm.func @bin_rank
// CHECK-COUNT-5: llvm.store %{{.+}}, %{{.+}} : i32, !llvm.ptr<3>
// CHECK-NEXT: nvvm.barrier0
// CHECK: nvvm.match.sync  any
// CHECK: llvm.store %{{.+}}, %{{.+}} : i32, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-COUNT-3: llvm.load %{{.+}} : !llvm.ptr<3> -> i32
// CHECK-NEXT: llvm.select
// CHECK: nvvm.barrier0
// CHECK-COUNT-5: llvm.load %{{.+}} : !llvm.ptr<3> -> i32
// CHECK: nvvm.barrier0
// CHECK: nvvm.match.sync  any
// CHECK: nvvm.barrier0
// CHECK-COUNT-4: llvm.load %{{.+}} : !llvm.ptr<3> -> i32
// CHECK-NOT: nvvm.barrier0
// CHECK-NOT: nvvm.shfl.sync
// CHECK: llvm.return
#blocked = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @bin_rank(%x: tensor<256xi32, #blocked>, %out: tensor<256x!tile.ptr<i32>, #blocked>) {
    %0 = tile.bin_rank %x {bins = 128 : i32} : tensor<256xi32, #blocked>
    tile.store %out, %0 : tensor<256x!tile.ptr<i32>, #blocked>
    return
  }
}

// -----

// 16 values on 4 warps: lanes 16-31 and warps 1-3 hold copies. One warp's
// row of counters (2 x 8 x 4 B); the copies' lanes take their owners' ranks
// with shfl.idx.
// CHECK: module attributes {{.*}}tilegpu.shared = 64 : i32
// CHECK-LABEL: llvm.func @bin_rank_copies
// CHECK: nvvm.match.sync  any
// CHECK: nvvm.shfl.sync  idx
// CHECK: llvm.return
#blocked = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @bin_rank_copies(%x: tensor<16xi32, #blocked>, %m: tensor<16xi1, #blocked>, %out: tensor<16x!tile.ptr<i32>, #blocked>) {
    %0 = tile.bin_rank %x, %m {bins = 8 : i32} : tensor<16xi32, #blocked>
    tile.store %out, %0 : tensor<16x!tile.ptr<i32>, #blocked>
    return
  }
}
