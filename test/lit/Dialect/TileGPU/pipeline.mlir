// RUN: tilec-opt -tilegpu-pipeline=num-stages=3 -canonicalize -cse -split-input-file %s | FileCheck %s
// RUN: tilec-opt -tilegpu-pipeline=num-stages=2 -split-input-file %s | FileCheck %s --check-prefix=TWO
// RUN: tilec-opt -tilegpu-pipeline=num-stages=1 -split-input-file %s | FileCheck %s --check-prefix=ONE

// A dense K loop: both operand loads become copies into 3-buffer rings
// issued two steps ahead; the prologue starts steps 0 and 1 (predicated on
// the trip count), step k waits for its own group, copies step k + 2 and
// reads slot k mod 3; the tail is drained after the loop.

// CHECK-DAG: #[[SA:.+]] = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
// CHECK-DAG: #[[SB:.+]] = #tilegpu.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
// CHECK-LABEL: func.func @dense
// CHECK: %[[RA:.+]] = tilegpu.local_alloc : () -> !tilegpu.memdesc<3x64x32xf16, #[[SA]], mutable>
// CHECK: %[[RB:.+]] = tilegpu.local_alloc : () -> !tilegpu.memdesc<3x32x64xf16, #[[SB]], mutable>
// CHECK: tilegpu.async_copy_global_to_local %{{.+}}, %{{.+}} mask %{{.+}} : tensor<64x32x!tile.ptr<f16>, #{{.+}}> -> !tilegpu.memdesc<64x32xf16, #[[SA]], mutable>
// CHECK: tilegpu.async_copy_global_to_local
// CHECK-NEXT: tilegpu.async_commit_group
// CHECK: tilegpu.async_copy_global_to_local
// CHECK: tilegpu.async_copy_global_to_local
// CHECK-NEXT: tilegpu.async_commit_group
// CHECK-NOT: tile.load
// CHECK: scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step
// CHECK: tilegpu.async_wait {num = 1 : i32}
// CHECK: %[[AHEAD:.+]] = arith.addi %[[K]], %c2_i32
// CHECK: %[[SLOT:.+]] = arith.remsi %[[AHEAD]], %c3_i32
// CHECK: tilegpu.memdesc_index %[[RA]][%[[SLOT]]]
// CHECK: tilegpu.async_copy_global_to_local
// CHECK: tilegpu.memdesc_index %[[RB]][%[[SLOT]]]
// CHECK: tilegpu.async_copy_global_to_local
// CHECK-NEXT: tilegpu.async_commit_group
// CHECK: %[[READ:.+]] = arith.remsi %[[K]], %c3_i32
// CHECK: %[[A:.+]] = tilegpu.memdesc_index %[[RA]][%[[READ]]]
// CHECK: tilegpu.local_load %[[A]] : !tilegpu.memdesc<64x32xf16, #[[SA]], mutable> -> tensor<64x32xf16, #{{.+}}>
// CHECK: tilegpu.local_load
// CHECK-NOT: tilegpu.convert_layout
// CHECK: tile.dot
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: tilegpu.async_wait {num = 0 : i32}
// CHECK-NEXT: tilegpu.local_dealloc %[[RA]]
// CHECK-NEXT: tilegpu.local_dealloc %[[RB]]

// TWO-LABEL: func.func @dense
// TWO: tilegpu.local_alloc : () -> !tilegpu.memdesc<2x64x32xf16
// TWO: tilegpu.async_commit_group
// TWO-NOT: tilegpu.async_commit_group
// TWO: scf.for
// TWO: tilegpu.async_wait {num = 0 : i32}

// ONE-LABEL: func.func @dense
// ONE-NOT: tilegpu.local_alloc
// ONE: tile.load
// ONE: tilegpu.convert_layout

#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#dot_a = #tilegpu.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>
#dot_b = #tilegpu.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @dense(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %b: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %n: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %c32 = arith.constant dense<32> : tensor<64x1xi32, #blocked>
    %c64 = arith.constant dense<64> : tensor<32x1xi32, #blocked1>
    %stepa = arith.constant dense<32> : tensor<64x32xi32, #blocked>
    %stepb = arith.constant dense<2048> : tensor<32x64xi32, #blocked1>
    %m = tile.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 1, parent = #blocked}>>
    %m2 = tile.expand_dims %m {axis = 1 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 1, parent = #blocked}>> -> tensor<64x1xi32, #blocked>
    %ka = tile.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #tilegpu.slice<{dim = 0, parent = #blocked}>>
    %ka2 = tile.expand_dims %ka {axis = 0 : i32} : tensor<32xi32, #tilegpu.slice<{dim = 0, parent = #blocked}>> -> tensor<1x32xi32, #blocked>
    %rowa = arith.muli %m2, %c32 : tensor<64x1xi32, #blocked>
    %rowa2 = tile.broadcast %rowa : tensor<64x1xi32, #blocked> -> tensor<64x32xi32, #blocked>
    %cola = tile.broadcast %ka2 : tensor<1x32xi32, #blocked> -> tensor<64x32xi32, #blocked>
    %offa = arith.addi %rowa2, %cola : tensor<64x32xi32, #blocked>
    %basea = tile.splat %a : !tile.ptr<f16> -> tensor<64x32x!tile.ptr<f16>, #blocked>
    %pa = tile.addptr %basea, %offa : tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<64x32xi32, #blocked>
    %kb = tile.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #tilegpu.slice<{dim = 1, parent = #blocked1}>>
    %kb2 = tile.expand_dims %kb {axis = 1 : i32} : tensor<32xi32, #tilegpu.slice<{dim = 1, parent = #blocked1}>> -> tensor<32x1xi32, #blocked1>
    %nb = tile.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 0, parent = #blocked1}>>
    %nb2 = tile.expand_dims %nb {axis = 0 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 0, parent = #blocked1}>> -> tensor<1x64xi32, #blocked1>
    %rowb = arith.muli %kb2, %c64 : tensor<32x1xi32, #blocked1>
    %rowb2 = tile.broadcast %rowb : tensor<32x1xi32, #blocked1> -> tensor<32x64xi32, #blocked1>
    %colb = tile.broadcast %nb2 : tensor<1x64xi32, #blocked1> -> tensor<32x64xi32, #blocked1>
    %offb = arith.addi %rowb2, %colb : tensor<32x64xi32, #blocked1>
    %baseb = tile.splat %b : !tile.ptr<f16> -> tensor<32x64x!tile.ptr<f16>, #blocked1>
    %pb = tile.addptr %baseb, %offb : tensor<32x64x!tile.ptr<f16>, #blocked1>, tensor<32x64xi32, #blocked1>
    %r:3 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %pai = %pa, %pbi = %pb) -> (tensor<64x64xf32, #mma>, tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<32x64x!tile.ptr<f16>, #blocked1>) : i32 {
      %x = tile.load %pai : tensor<64x32x!tile.ptr<f16>, #blocked>
      %y = tile.load %pbi : tensor<32x64x!tile.ptr<f16>, #blocked1>
      %xa = tilegpu.convert_layout %x : tensor<64x32xf16, #blocked> -> tensor<64x32xf16, #dot_a>
      %yb = tilegpu.convert_layout %y : tensor<32x64xf16, #blocked1> -> tensor<32x64xf16, #dot_b>
      %d = tile.dot %xa, %yb, %acc : tensor<64x32xf16, #dot_a> * tensor<32x64xf16, #dot_b> -> tensor<64x64xf32, #mma>
      %pan = tile.addptr %pai, %stepa : tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<64x32xi32, #blocked>
      %pbn = tile.addptr %pbi, %stepb : tensor<32x64x!tile.ptr<f16>, #blocked1>, tensor<32x64xi32, #blocked1>
      scf.yield %d, %pan, %pbn : tensor<64x64xf32, #mma>, tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<32x64x!tile.ptr<f16>, #blocked1>
    }
    return %r#0 : tensor<64x64xf32, #mma>
  }
}

// -----

// B's rows have a stride with no known alignment: its vectors would move 2
// bytes, below cp.async's 4, so B is prefetched in registers instead, one
// step ahead of the math (stage 1 of 2 while A's copies run two steps
// ahead): the loop carries the loaded tile and converts last step's.

// CHECK-LABEL: func.func @unaligned_b
// CHECK: tilegpu.local_alloc : () -> !tilegpu.memdesc<3x64x32xf16
// CHECK-NOT: tilegpu.local_alloc
// CHECK: %[[B0:.+]] = tile.load %{{.+}}, %{{.+}} : tensor<32x64x!tile.ptr<f16>
// CHECK: scf.for {{.+}} iter_args({{.+}}, %[[BPREV:.+]] = %[[B0]])
// CHECK: tilegpu.async_wait {num = 1 : i32}
// CHECK: %[[BNEXT:.+]] = tile.load %{{.+}}, %{{.+}} : tensor<32x64x!tile.ptr<f16>
// CHECK: tilegpu.async_copy_global_to_local %{{.+}} : tensor<64x32x!tile.ptr<f16>
// CHECK-NEXT: tilegpu.async_commit_group
// CHECK: tilegpu.local_load
// CHECK: tilegpu.convert_layout %[[BPREV]] : tensor<32x64xf16, #{{.+}}> -> tensor<32x64xf16, #dot_op{{.*}}>
// CHECK: tile.dot
// CHECK: scf.yield {{.+}}, %[[BNEXT]] :

#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#dot_a = #tilegpu.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>
#dot_b = #tilegpu.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @unaligned_b(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %b: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %ldb: i32, %n: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %c32 = arith.constant dense<32> : tensor<64x1xi32, #blocked>
    %stepa = arith.constant dense<32> : tensor<64x32xi32, #blocked>
    %m = tile.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 1, parent = #blocked}>>
    %m2 = tile.expand_dims %m {axis = 1 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 1, parent = #blocked}>> -> tensor<64x1xi32, #blocked>
    %ka = tile.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #tilegpu.slice<{dim = 0, parent = #blocked}>>
    %ka2 = tile.expand_dims %ka {axis = 0 : i32} : tensor<32xi32, #tilegpu.slice<{dim = 0, parent = #blocked}>> -> tensor<1x32xi32, #blocked>
    %rowa = arith.muli %m2, %c32 : tensor<64x1xi32, #blocked>
    %rowa2 = tile.broadcast %rowa : tensor<64x1xi32, #blocked> -> tensor<64x32xi32, #blocked>
    %cola = tile.broadcast %ka2 : tensor<1x32xi32, #blocked> -> tensor<64x32xi32, #blocked>
    %offa = arith.addi %rowa2, %cola : tensor<64x32xi32, #blocked>
    %basea = tile.splat %a : !tile.ptr<f16> -> tensor<64x32x!tile.ptr<f16>, #blocked>
    %pa = tile.addptr %basea, %offa : tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<64x32xi32, #blocked>
    %ldbs = tile.splat %ldb : i32 -> tensor<32x1xi32, #blocked1>
    %kb = tile.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #tilegpu.slice<{dim = 1, parent = #blocked1}>>
    %kb2 = tile.expand_dims %kb {axis = 1 : i32} : tensor<32xi32, #tilegpu.slice<{dim = 1, parent = #blocked1}>> -> tensor<32x1xi32, #blocked1>
    %nb = tile.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 0, parent = #blocked1}>>
    %nb2 = tile.expand_dims %nb {axis = 0 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 0, parent = #blocked1}>> -> tensor<1x64xi32, #blocked1>
    %rowb = arith.muli %kb2, %ldbs : tensor<32x1xi32, #blocked1>
    %rowb2 = tile.broadcast %rowb : tensor<32x1xi32, #blocked1> -> tensor<32x64xi32, #blocked1>
    %colb = tile.broadcast %nb2 : tensor<1x64xi32, #blocked1> -> tensor<32x64xi32, #blocked1>
    %offb = arith.addi %rowb2, %colb : tensor<32x64xi32, #blocked1>
    %baseb = tile.splat %b : !tile.ptr<f16> -> tensor<32x64x!tile.ptr<f16>, #blocked1>
    %pb = tile.addptr %baseb, %offb : tensor<32x64x!tile.ptr<f16>, #blocked1>, tensor<32x64xi32, #blocked1>
    %r:3 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %pai = %pa, %pbi = %pb) -> (tensor<64x64xf32, #mma>, tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<32x64x!tile.ptr<f16>, #blocked1>) : i32 {
      %x = tile.load %pai : tensor<64x32x!tile.ptr<f16>, #blocked>
      %y = tile.load %pbi : tensor<32x64x!tile.ptr<f16>, #blocked1>
      %xa = tilegpu.convert_layout %x : tensor<64x32xf16, #blocked> -> tensor<64x32xf16, #dot_a>
      %yb = tilegpu.convert_layout %y : tensor<32x64xf16, #blocked1> -> tensor<32x64xf16, #dot_b>
      %d = tile.dot %xa, %yb, %acc : tensor<64x32xf16, #dot_a> * tensor<32x64xf16, #dot_b> -> tensor<64x64xf32, #mma>
      %pan = tile.addptr %pai, %stepa : tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<64x32xi32, #blocked>
      %c32s = arith.constant 32 : i32
      %s = arith.muli %ldb, %c32s : i32
      %sb = tile.splat %s : i32 -> tensor<32x64xi32, #blocked1>
      %pbn = tile.addptr %pbi, %sb : tensor<32x64x!tile.ptr<f16>, #blocked1>, tensor<32x64xi32, #blocked1>
      scf.yield %d, %pan, %pbn : tensor<64x64xf32, #mma>, tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<32x64x!tile.ptr<f16>, #blocked1>
    }
    return %r#0 : tensor<64x64xf32, #mma>
  }
}

// -----

// The step of A's pointers depends on the accumulator, so its copies could
// not run ahead: the loop is left as it was.

// CHECK-LABEL: func.func @depends_on_dot
// CHECK-NOT: tilegpu.local_alloc
// CHECK-NOT: tilegpu.async_copy_global_to_local
// CHECK: tile.load
// CHECK: tilegpu.convert_layout

#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#dot_a = #tilegpu.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>
#dot_b = #tilegpu.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @depends_on_dot(%pa: tensor<64x32x!tile.ptr<f16>, #blocked> , %yb: tensor<32x64xf16, #dot_b>, %n: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %r:2 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %pai = %pa) -> (tensor<64x64xf32, #mma>, tensor<64x32x!tile.ptr<f16>, #blocked>) : i32 {
      %x = tile.load %pai : tensor<64x32x!tile.ptr<f16>, #blocked>
      %xa = tilegpu.convert_layout %x : tensor<64x32xf16, #blocked> -> tensor<64x32xf16, #dot_a>
      %d = tile.dot %xa, %yb, %acc : tensor<64x32xf16, #dot_a> * tensor<32x64xf16, #dot_b> -> tensor<64x64xf32, #mma>
      %big = tile.reduce max %d {axis = 1 : i32} : tensor<64x64xf32, #mma> -> tensor<64xf32, #tilegpu.slice<{dim = 1, parent = #mma}>>
      %all = tile.reduce max %big {axis = 0 : i32} : tensor<64xf32, #tilegpu.slice<{dim = 1, parent = #mma}>> -> f32
      %i = arith.fptosi %all : f32 to i32
      %is = tile.splat %i : i32 -> tensor<64x32xi32, #blocked>
      %pan = tile.addptr %pai, %is : tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<64x32xi32, #blocked>
      scf.yield %d, %pan : tensor<64x64xf32, #mma>, tensor<64x32x!tile.ptr<f16>, #blocked>
    }
    return %r#0 : tensor<64x64xf32, #mma>
  }
}

// -----

// Gathered rows, as in a sparse convolution: each step loads a column of a
// neighbour map (row indices) and gathers A's rows through it. The index
// load runs a stage ahead of the copy it feeds (its level of indirection),
// its mask predicated like the copy's: the copy of step k + 2 reads indices
// loaded in the step before, while step k + 3's are loaded; the map's
// pointer, advanced each step, runs in the index load's stage. The gathered
// rows are 16-byte aligned (index * 32 elements) and contiguous along K, so
// they pipeline like an affine tile.

// CHECK-LABEL: func.func @gathered_rows
// CHECK: tilegpu.local_alloc : () -> !tilegpu.memdesc<3x64x32xf16
// CHECK: %[[P0:.+]] = arith.cmpi sgt, %{{.+}}, %c0_i32 : i32
// CHECK: %[[M0:.+]] = tile.splat %[[P0]] : i1 -> tensor<64xi1
// CHECK: tile.load %{{.+}}, %[[M0]] : tensor<64x!tile.ptr<i32>
// CHECK: %[[P1:.+]] = arith.cmpi sgt, %{{.+}}, %c1_i32 : i32
// CHECK: tile.load
// CHECK: tilegpu.async_copy_global_to_local
// CHECK-NEXT: tilegpu.async_commit_group
// CHECK: %[[P2:.+]] = arith.cmpi sgt, %{{.+}}, %c2_i32 : i32
// CHECK: tile.load
// CHECK: tilegpu.async_copy_global_to_local
// CHECK-NEXT: tilegpu.async_commit_group
// CHECK-NOT: tilegpu.async_copy_global_to_local
// CHECK: scf.for {{.+}} iter_args(%{{[^ ]+}} = %{{[^ ]+}}, %[[PTRS:[^ ]+]] = %{{[^ ]+}}, %[[ROWS:[^ ]+]] = %{{[^ ]+}})
// CHECK: tilegpu.async_wait {num = 1 : i32}
// CHECK: %[[NEXT:.+]] = tile.load %[[PTRS]], %{{.+}} : tensor<64x!tile.ptr<i32>
// CHECK: tile.expand_dims %[[ROWS]]
// CHECK: tilegpu.async_copy_global_to_local %{{.+}}, %{{.+}} mask %{{.+}} : tensor<64x32x!tile.ptr<f16>
// CHECK-NEXT: tilegpu.async_commit_group
// CHECK: tilegpu.local_load
// CHECK: tile.dot
// CHECK: scf.yield %{{.+}}, %{{.+}}, %[[NEXT]]

#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#dot_a = #tilegpu.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>
#dot_b = #tilegpu.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>
#rows = #tilegpu.slice<{dim = 1, parent = #blocked}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @gathered_rows(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %map: !tile.ptr<i32> {tile.divisibility = 16 : i32}, %yb: tensor<32x64xf16, #dot_b>, %n: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %c32 = arith.constant dense<32> : tensor<64x1xi32, #blocked>
    %c64 = arith.constant dense<64> : tensor<64xi32, #rows>
    %m = tile.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #rows>
    %mapb = tile.splat %map : !tile.ptr<i32> -> tensor<64x!tile.ptr<i32>, #rows>
    %pm = tile.addptr %mapb, %m : tensor<64x!tile.ptr<i32>, #rows>, tensor<64xi32, #rows>
    %ka = tile.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #tilegpu.slice<{dim = 0, parent = #blocked}>>
    %ka2 = tile.expand_dims %ka {axis = 0 : i32} : tensor<32xi32, #tilegpu.slice<{dim = 0, parent = #blocked}>> -> tensor<1x32xi32, #blocked>
    %cola = tile.broadcast %ka2 : tensor<1x32xi32, #blocked> -> tensor<64x32xi32, #blocked>
    %basea = tile.splat %x : !tile.ptr<f16> -> tensor<64x32x!tile.ptr<f16>, #blocked>
    %r:2 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %pmi = %pm) -> (tensor<64x64xf32, #mma>, tensor<64x!tile.ptr<i32>, #rows>) : i32 {
      %idx = tile.load %pmi : tensor<64x!tile.ptr<i32>, #rows>
      %idx2 = tile.expand_dims %idx {axis = 1 : i32} : tensor<64xi32, #rows> -> tensor<64x1xi32, #blocked>
      %rowa = arith.muli %idx2, %c32 : tensor<64x1xi32, #blocked>
      %rowa2 = tile.broadcast %rowa : tensor<64x1xi32, #blocked> -> tensor<64x32xi32, #blocked>
      %offa = arith.addi %rowa2, %cola : tensor<64x32xi32, #blocked>
      %pa = tile.addptr %basea, %offa : tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<64x32xi32, #blocked>
      %a = tile.load %pa : tensor<64x32x!tile.ptr<f16>, #blocked>
      %xa = tilegpu.convert_layout %a : tensor<64x32xf16, #blocked> -> tensor<64x32xf16, #dot_a>
      %d = tile.dot %xa, %yb, %acc : tensor<64x32xf16, #dot_a> * tensor<32x64xf16, #dot_b> -> tensor<64x64xf32, #mma>
      %pmn = tile.addptr %pmi, %c64 : tensor<64x!tile.ptr<i32>, #rows>, tensor<64xi32, #rows>
      scf.yield %d, %pmn : tensor<64x64xf32, #mma>, tensor<64x!tile.ptr<i32>, #rows>
    }
    return %r#0 : tensor<64x64xf32, #mma>
  }
}

// -----

// The sparse convolution's loop: step s works on offset list[s / chunks],
// read by a scalar load, and gathers rows through that offset's column of
// the map. The division has a divisor the loop does not change, so it runs
// ahead with the loads it feeds (unpredicated; the scalar load's mask is the
// step's predicate). Two levels of indirection, two stages before the
// copies: the offset of step k + 4 is loaded, the map's column of step
// k + 3 read with the offset loaded in the step before, and the rows of
// step k + 2 gathered with the column loaded in the step before.

// CHECK-LABEL: func.func @offset_list
// CHECK: tilegpu.local_alloc : () -> !tilegpu.memdesc<3x64x32xf16
// CHECK: arith.divsi %c0_i32, %{{.+}} : i32
// CHECK: tile.load %{{.+}}, %{{.+}} : !tile.ptr<i32>
// CHECK: tilegpu.async_copy_global_to_local
// CHECK: tilegpu.async_copy_global_to_local
// CHECK-NOT: tilegpu.async_copy_global_to_local
// CHECK: scf.for {{.+}} iter_args(%{{[^ ]+}} = %{{[^ ]+}}, %[[OFFSET:[^ ]+]] = %{{[^ ]+}}, %[[ROWS:[^ ]+]] = %{{[^ ]+}})
// CHECK: arith.divsi
// CHECK: %[[NEXT_OFFSET:.+]] = tile.load %{{.+}}, %{{.+}} : !tile.ptr<i32>
// CHECK: arith.muli %[[OFFSET]], %c4096_i32 : i32
// CHECK: %[[NEXT_ROWS:.+]] = tile.load %{{.+}}, %{{.+}} : tensor<64x!tile.ptr<i32>
// CHECK: tile.expand_dims %[[ROWS]]
// CHECK: tilegpu.async_copy_global_to_local
// CHECK: tile.dot
// CHECK: scf.yield %{{.+}}, %[[NEXT_OFFSET]], %[[NEXT_ROWS]]

// TWO-LABEL: func.func @offset_list
// TWO: tilegpu.local_alloc : () -> !tilegpu.memdesc<2x64x32xf16

#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#dot_a = #tilegpu.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>
#dot_b = #tilegpu.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>
#rows = #tilegpu.slice<{dim = 1, parent = #blocked}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @offset_list(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %map: !tile.ptr<i32> {tile.divisibility = 16 : i32}, %list: !tile.ptr<i32> {tile.divisibility = 16 : i32}, %yb: tensor<32x64xf16, #dot_b>, %n: i32, %chunks: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c4096 = arith.constant 4096 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %c32 = arith.constant dense<32> : tensor<64x1xi32, #blocked>
    %m = tile.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #rows>
    %ka = tile.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #tilegpu.slice<{dim = 0, parent = #blocked}>>
    %ka2 = tile.expand_dims %ka {axis = 0 : i32} : tensor<32xi32, #tilegpu.slice<{dim = 0, parent = #blocked}>> -> tensor<1x32xi32, #blocked>
    %cola = tile.broadcast %ka2 : tensor<1x32xi32, #blocked> -> tensor<64x32xi32, #blocked>
    %basea = tile.splat %x : !tile.ptr<f16> -> tensor<64x32x!tile.ptr<f16>, #blocked>
    %r = scf.for %s = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>) : i32 {
      %slot = arith.divsi %s, %chunks : i32
      %pl = tile.addptr %list, %slot : !tile.ptr<i32>, i32
      %offset = tile.load %pl : !tile.ptr<i32>
      %column = arith.muli %offset, %c4096 : i32
      %pc = tile.addptr %map, %column : !tile.ptr<i32>, i32
      %pcb = tile.splat %pc : !tile.ptr<i32> -> tensor<64x!tile.ptr<i32>, #rows>
      %pm = tile.addptr %pcb, %m : tensor<64x!tile.ptr<i32>, #rows>, tensor<64xi32, #rows>
      %idx = tile.load %pm : tensor<64x!tile.ptr<i32>, #rows>
      %idx2 = tile.expand_dims %idx {axis = 1 : i32} : tensor<64xi32, #rows> -> tensor<64x1xi32, #blocked>
      %rowa = arith.muli %idx2, %c32 : tensor<64x1xi32, #blocked>
      %rowa2 = tile.broadcast %rowa : tensor<64x1xi32, #blocked> -> tensor<64x32xi32, #blocked>
      %offa = arith.addi %rowa2, %cola : tensor<64x32xi32, #blocked>
      %pa = tile.addptr %basea, %offa : tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<64x32xi32, #blocked>
      %a = tile.load %pa : tensor<64x32x!tile.ptr<f16>, #blocked>
      %xa = tilegpu.convert_layout %a : tensor<64x32xf16, #blocked> -> tensor<64x32xf16, #dot_a>
      %d = tile.dot %xa, %yb, %acc : tensor<64x32xf16, #dot_a> * tensor<32x64xf16, #dot_b> -> tensor<64x64xf32, #mma>
      scf.yield %d : tensor<64x64xf32, #mma>
    }
    return %r : tensor<64x64xf32, #mma>
  }
}

// -----

// A division by a value the loop computes may divide by zero in a step
// that does not exist: such a loop is left as it was.

// CHECK-LABEL: func.func @divisor_in_loop
// CHECK-NOT: tilegpu.local_alloc
// CHECK: scf.for
// CHECK: tile.load %{{.+}} : tensor<64x32x!tile.ptr<f16>

#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#dot_a = #tilegpu.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>
#dot_b = #tilegpu.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @divisor_in_loop(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %yb: tensor<32x64xf16, #dot_b>, %n: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c4096 = arith.constant 4096 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %ka = tile.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #tilegpu.slice<{dim = 0, parent = #blocked}>>
    %ka2 = tile.expand_dims %ka {axis = 0 : i32} : tensor<32xi32, #tilegpu.slice<{dim = 0, parent = #blocked}>> -> tensor<1x32xi32, #blocked>
    %cola = tile.broadcast %ka2 : tensor<1x32xi32, #blocked> -> tensor<64x32xi32, #blocked>
    %r = scf.for %s = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>) : i32 {
      %q = arith.divsi %c4096, %s : i32
      %base = tile.addptr %x, %q : !tile.ptr<f16>, i32
      %basea = tile.splat %base : !tile.ptr<f16> -> tensor<64x32x!tile.ptr<f16>, #blocked>
      %pa = tile.addptr %basea, %cola : tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<64x32xi32, #blocked>
      %a = tile.load %pa : tensor<64x32x!tile.ptr<f16>, #blocked>
      %xa = tilegpu.convert_layout %a : tensor<64x32xf16, #blocked> -> tensor<64x32xf16, #dot_a>
      %d = tile.dot %xa, %yb, %acc : tensor<64x32xf16, #dot_a> * tensor<32x64xf16, #dot_b> -> tensor<64x64xf32, #mma>
      scf.yield %d : tensor<64x64xf32, #mma>
    }
    return %r : tensor<64x64xf32, #mma>
  }
}

// -----

// Hopper: the operands of a warpgroup dot are local_allocs of its loads.
// They become rings in wgmma's layout (128-byte swizzle for A's 64-element
// rows, 128 for B's), the dot reads the ring slots directly and runs
// asynchronously with one group in flight; the copies of step k + 2 follow
// the wait for the dot of step k - 1, the last reader of their slot, and the
// last group is waited for after the loop, before the copies' drain and its
// barrier free the rings.

// CHECK-DAG: #[[NV:.+]] = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
// CHECK-LABEL: func.func @warpgroup
// CHECK: %[[RA:.+]] = tilegpu.local_alloc : () -> !tilegpu.memdesc<3x64x64xf16, #[[NV]], mutable>
// CHECK: %[[RB:.+]] = tilegpu.local_alloc : () -> !tilegpu.memdesc<3x64x64xf16, #[[NV]], mutable>
// CHECK: scf.for
// CHECK: tilegpu.async_wait {num = 1 : i32}
// CHECK: %[[D:.+]] = tilegpu.warpgroup_dot %{{.+}}, %{{.+}}, %{{.+}} {isAsync} : !tilegpu.memdesc<64x64xf16, #[[NV]], mutable> * !tilegpu.memdesc<64x64xf16, #[[NV]], mutable> -> tensor<64x64xf32, #{{.+}}>
// CHECK-NEXT: %[[W:.+]] = tilegpu.warpgroup_dot_wait %[[D]] {pendings = 1 : i32}
// CHECK: tilegpu.async_copy_global_to_local
// CHECK: tilegpu.async_copy_global_to_local
// CHECK-NEXT: tilegpu.async_commit_group
// CHECK: scf.yield %[[W]]
// CHECK: %[[LAST:.+]] = tilegpu.warpgroup_dot_wait %{{.+}}#0 {pendings = 0 : i32}
// CHECK-NEXT: tilegpu.async_wait {num = 0 : i32}
// CHECK: return %[[LAST]]

#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma3 = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
#nv = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90a", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @warpgroup(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %b: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %n: i32) -> tensor<64x64xf32, #mma3> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma3>
    %c64 = arith.constant dense<64> : tensor<64x1xi32, #blocked>
    %step = arith.constant dense<64> : tensor<64x64xi32, #blocked>
    %stepb = arith.constant dense<4096> : tensor<64x64xi32, #blocked>
    %m = tile.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 1, parent = #blocked}>>
    %m2 = tile.expand_dims %m {axis = 1 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 1, parent = #blocked}>> -> tensor<64x1xi32, #blocked>
    %k = tile.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 0, parent = #blocked}>>
    %k2 = tile.expand_dims %k {axis = 0 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 0, parent = #blocked}>> -> tensor<1x64xi32, #blocked>
    %row = arith.muli %m2, %c64 : tensor<64x1xi32, #blocked>
    %row2 = tile.broadcast %row : tensor<64x1xi32, #blocked> -> tensor<64x64xi32, #blocked>
    %col = tile.broadcast %k2 : tensor<1x64xi32, #blocked> -> tensor<64x64xi32, #blocked>
    %off = arith.addi %row2, %col : tensor<64x64xi32, #blocked>
    %basea = tile.splat %a : !tile.ptr<f16> -> tensor<64x64x!tile.ptr<f16>, #blocked>
    %pa = tile.addptr %basea, %off : tensor<64x64x!tile.ptr<f16>, #blocked>, tensor<64x64xi32, #blocked>
    %baseb = tile.splat %b : !tile.ptr<f16> -> tensor<64x64x!tile.ptr<f16>, #blocked>
    %pb = tile.addptr %baseb, %off : tensor<64x64x!tile.ptr<f16>, #blocked>, tensor<64x64xi32, #blocked>
    %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %pai = %pa, %pbi = %pb) -> (tensor<64x64xf32, #mma3>, tensor<64x64x!tile.ptr<f16>, #blocked>, tensor<64x64x!tile.ptr<f16>, #blocked>) : i32 {
      %x = tile.load %pai : tensor<64x64x!tile.ptr<f16>, #blocked>
      %y = tile.load %pbi : tensor<64x64x!tile.ptr<f16>, #blocked>
      %xs = tilegpu.local_alloc %x : (tensor<64x64xf16, #blocked>) -> !tilegpu.memdesc<64x64xf16, #nv>
      %ys = tilegpu.local_alloc %y : (tensor<64x64xf16, #blocked>) -> !tilegpu.memdesc<64x64xf16, #nv>
      %d = tilegpu.warpgroup_dot %xs, %ys, %acc : !tilegpu.memdesc<64x64xf16, #nv> * !tilegpu.memdesc<64x64xf16, #nv> -> tensor<64x64xf32, #mma3>
      %pan = tile.addptr %pai, %step : tensor<64x64x!tile.ptr<f16>, #blocked>, tensor<64x64xi32, #blocked>
      %pbn = tile.addptr %pbi, %stepb : tensor<64x64x!tile.ptr<f16>, #blocked>, tensor<64x64xi32, #blocked>
      scf.yield %d, %pan, %pbn : tensor<64x64xf32, #mma3>, tensor<64x64x!tile.ptr<f16>, #blocked>, tensor<64x64x!tile.ptr<f16>, #blocked>
    }
    return %r#0 : tensor<64x64xf32, #mma3>
  }
}

// -----

// tf32: the rings take the order wgmma reads, K-major for both operands,
// whatever the loads' order: b's loads are N-contiguous (each thread copies
// single elements, which cp.async moves in 4 bytes), its ring is K-major.

// CHECK-DAG: #[[TA:.+]] = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
// CHECK-DAG: #[[TB:.+]] = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [0, 1]}>
// CHECK-LABEL: func.func @warpgroup_tf32
// CHECK: tilegpu.local_alloc : () -> !tilegpu.memdesc<3x64x32xf32, #[[TA]], mutable>
// CHECK: tilegpu.local_alloc : () -> !tilegpu.memdesc<3x32x64xf32, #[[TB]], mutable>
// CHECK: scf.for
// CHECK: tilegpu.warpgroup_dot %{{.+}}, %{{.+}}, %{{.+}} {isAsync} : !tilegpu.memdesc<64x32xf32, #[[TA]], mutable> * !tilegpu.memdesc<32x64xf32, #[[TB]], mutable> -> tensor<64x64xf32, #{{.+}}>
// CHECK: tilegpu.async_copy_global_to_local %{{.+}} : tensor<64x32x!tile.ptr<f32>, #{{.+}}> -> !tilegpu.memdesc<64x32xf32, #[[TA]], mutable>
// CHECK: tilegpu.async_copy_global_to_local %{{.+}} : tensor<32x64x!tile.ptr<f32>, #{{.+}}> -> !tilegpu.memdesc<32x64xf32, #[[TB]], mutable>

#rows = #tilegpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#transposing = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [1, 0]}>
#mma3 = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 8]}>
#ka = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
#kb = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [0, 1]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90a", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @warpgroup_tf32(%pa: tensor<64x32x!tile.ptr<f32>, #rows>, %pb: tensor<32x64x!tile.ptr<f32>, #transposing>, %n: i32) -> tensor<64x64xf32, #mma3> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma3>
    %step = arith.constant dense<32> : tensor<64x32xi32, #rows>
    %stepb = arith.constant dense<2048> : tensor<32x64xi32, #transposing>
    %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %pai = %pa, %pbi = %pb) -> (tensor<64x64xf32, #mma3>, tensor<64x32x!tile.ptr<f32>, #rows>, tensor<32x64x!tile.ptr<f32>, #transposing>) : i32 {
      %x = tile.load %pai : tensor<64x32x!tile.ptr<f32>, #rows>
      %y = tile.load %pbi : tensor<32x64x!tile.ptr<f32>, #transposing>
      %xs = tilegpu.local_alloc %x : (tensor<64x32xf32, #rows>) -> !tilegpu.memdesc<64x32xf32, #ka>
      %ys = tilegpu.local_alloc %y : (tensor<32x64xf32, #transposing>) -> !tilegpu.memdesc<32x64xf32, #kb>
      %d = tilegpu.warpgroup_dot %xs, %ys, %acc : !tilegpu.memdesc<64x32xf32, #ka> * !tilegpu.memdesc<32x64xf32, #kb> -> tensor<64x64xf32, #mma3>
      %pan = tile.addptr %pai, %step : tensor<64x32x!tile.ptr<f32>, #rows>, tensor<64x32xi32, #rows>
      %pbn = tile.addptr %pbi, %stepb : tensor<32x64x!tile.ptr<f32>, #transposing>, tensor<32x64xi32, #transposing>
      scf.yield %d, %pan, %pbn : tensor<64x64xf32, #mma3>, tensor<64x32x!tile.ptr<f32>, #rows>, tensor<32x64x!tile.ptr<f32>, #transposing>
    }
    return %r#0 : tensor<64x64xf32, #mma3>
  }
}

// -----

// tf32 computed transposed (D^T = B^T A^T): b is read into registers in
// B^T's wgmma A fragment, so its ring takes the order of its loads
// (N-contiguous) and is read by a local_load each step; a's ring is K-major
// for wgmma's B. A warp's fragment covers 4 rows of b by 8 words: 32-byte
// chunks over 4 phases put the rows in different banks. The dot reads both
// from rings, so it runs asynchronously with one group in flight.

// CHECK-DAG: #[[TA:.+]] = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
// CHECK-DAG: #[[SB:.+]] = #tilegpu.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 4, order = [1, 0]}>
// CHECK-DAG: #[[DT:.+]] = #tilegpu.dot_op<{opIdx = 1, parent = #{{.+}}, kWidth = 1}>
// CHECK-LABEL: func.func @warpgroup_tf32_transposed
// CHECK: tilegpu.local_alloc : () -> !tilegpu.memdesc<3x64x32xf32, #[[TA]], mutable>
// CHECK: tilegpu.local_alloc : () -> !tilegpu.memdesc<3x32x64xf32, #[[SB]], mutable>
// CHECK: scf.for
// CHECK: %[[BR:.+]] = tilegpu.local_load %{{.+}} : !tilegpu.memdesc<32x64xf32, #[[SB]], mutable> -> tensor<32x64xf32, #[[DT]]>
// CHECK: %[[D:.+]] = tilegpu.warpgroup_dot %{{.+}}, %[[BR]], %{{.+}} {isAsync} : !tilegpu.memdesc<64x32xf32, #[[TA]], mutable> * tensor<32x64xf32, #[[DT]]> -> tensor<64x64xf32, #{{.+}}>
// CHECK-NEXT: tilegpu.warpgroup_dot_wait %[[D]] {pendings = 1 : i32}
// CHECK: tilegpu.async_copy_global_to_local %{{.+}} : tensor<64x32x!tile.ptr<f32>, #{{.+}}> -> !tilegpu.memdesc<64x32xf32, #[[TA]], mutable>
// CHECK: tilegpu.async_copy_global_to_local %{{.+}} : tensor<32x64x!tile.ptr<f32>, #{{.+}}> -> !tilegpu.memdesc<32x64xf32, #[[SB]], mutable>
// CHECK: tilegpu.warpgroup_dot_wait %{{.+}}#0 {pendings = 0 : i32}

#rows = #tilegpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#nrows = #tilegpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#mmat = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 8], transposed = true}>
#dott = #tilegpu.dot_op<{opIdx = 1, parent = #mmat, kWidth = 1}>
#ka = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90a", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @warpgroup_tf32_transposed(%a: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %b: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32) -> tensor<64x64xf32, #mmat> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mmat>
    %ra = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32, #tilegpu.slice<{dim = 0, parent = #rows}>>
    %ka = tile.expand_dims %ra {axis = 0 : i32} : tensor<32xi32, #tilegpu.slice<{dim = 0, parent = #rows}>> -> tensor<1x32xi32, #rows>
    %kab = tile.broadcast %ka : tensor<1x32xi32, #rows> -> tensor<64x32xi32, #rows>
    %abase = tile.splat %a : !tile.ptr<f32> -> tensor<64x32x!tile.ptr<f32>, #rows>
    %pa = tile.addptr %abase, %kab : tensor<64x32x!tile.ptr<f32>, #rows>, tensor<64x32xi32, #rows>
    %rb = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 0, parent = #nrows}>>
    %nb = tile.expand_dims %rb {axis = 0 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 0, parent = #nrows}>> -> tensor<1x64xi32, #nrows>
    %nbb = tile.broadcast %nb : tensor<1x64xi32, #nrows> -> tensor<32x64xi32, #nrows>
    %bbase = tile.splat %b : !tile.ptr<f32> -> tensor<32x64x!tile.ptr<f32>, #nrows>
    %pb = tile.addptr %bbase, %nbb : tensor<32x64x!tile.ptr<f32>, #nrows>, tensor<32x64xi32, #nrows>
    %step = arith.constant dense<32> : tensor<64x32xi32, #rows>
    %stepb = arith.constant dense<2048> : tensor<32x64xi32, #nrows>
    %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %pai = %pa, %pbi = %pb) -> (tensor<64x64xf32, #mmat>, tensor<64x32x!tile.ptr<f32>, #rows>, tensor<32x64x!tile.ptr<f32>, #nrows>) : i32 {
      %x = tile.load %pai : tensor<64x32x!tile.ptr<f32>, #rows>
      %y = tile.load %pbi : tensor<32x64x!tile.ptr<f32>, #nrows>
      %xs = tilegpu.local_alloc %x : (tensor<64x32xf32, #rows>) -> !tilegpu.memdesc<64x32xf32, #ka>
      %yr = tilegpu.convert_layout %y : tensor<32x64xf32, #nrows> -> tensor<32x64xf32, #dott>
      %d = tilegpu.warpgroup_dot %xs, %yr, %acc : !tilegpu.memdesc<64x32xf32, #ka> * tensor<32x64xf32, #dott> -> tensor<64x64xf32, #mmat>
      %pan = tile.addptr %pai, %step : tensor<64x32x!tile.ptr<f32>, #rows>, tensor<64x32xi32, #rows>
      %pbn = tile.addptr %pbi, %stepb : tensor<32x64x!tile.ptr<f32>, #nrows>, tensor<32x64xi32, #nrows>
      scf.yield %d, %pan, %pbn : tensor<64x64xf32, #mmat>, tensor<64x32x!tile.ptr<f32>, #rows>, tensor<32x64x!tile.ptr<f32>, #nrows>
    }
    return %r#0 : tensor<64x64xf32, #mmat>
  }
}

// -----

// mma.sync tf32 (m16n8k8): a warp reads a fragment of the N-contiguous b
// as 4 rows by 8 words, so b's ring takes 32-byte chunks over 4 phases;
// the K-contiguous a is read 8 rows by 4 words, which the ldmatrix-style
// swizzle of 16-byte chunks over 8 phases already spreads over the banks.

// CHECK-DAG: #[[SA:.+]] = #tilegpu.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]}>
// CHECK-DAG: #[[SB:.+]] = #tilegpu.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 4, order = [1, 0]}>
// CHECK-LABEL: func.func @mma_tf32
// CHECK: tilegpu.local_alloc : () -> !tilegpu.memdesc<3x64x32xf32, #[[SA]], mutable>
// CHECK: tilegpu.local_alloc : () -> !tilegpu.memdesc<3x32x64xf32, #[[SB]], mutable>
// CHECK: scf.for
// CHECK: tilegpu.async_copy_global_to_local %{{.+}} : tensor<64x32x!tile.ptr<f32>, #{{.+}}> -> !tilegpu.memdesc<64x32xf32, #[[SA]], mutable>
// CHECK: tilegpu.async_copy_global_to_local %{{.+}} : tensor<32x64x!tile.ptr<f32>, #{{.+}}> -> !tilegpu.memdesc<32x64xf32, #[[SB]], mutable>
// CHECK: tilegpu.local_load %{{.+}} : !tilegpu.memdesc<64x32xf32, #[[SA]], mutable> -> tensor<64x32xf32, #{{.+}}>
// CHECK: tilegpu.local_load %{{.+}} : !tilegpu.memdesc<32x64xf32, #[[SB]], mutable> -> tensor<32x64xf32, #{{.+}}>
// CHECK: tile.dot

#rows = #tilegpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#nrows = #tilegpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#dot_a = #tilegpu.dot_op<{opIdx = 0, parent = #mma, kWidth = 1}>
#dot_b = #tilegpu.dot_op<{opIdx = 1, parent = #mma, kWidth = 1}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_80", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @mma_tf32(%a: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %b: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %ra = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32, #tilegpu.slice<{dim = 0, parent = #rows}>>
    %ka = tile.expand_dims %ra {axis = 0 : i32} : tensor<32xi32, #tilegpu.slice<{dim = 0, parent = #rows}>> -> tensor<1x32xi32, #rows>
    %kab = tile.broadcast %ka : tensor<1x32xi32, #rows> -> tensor<64x32xi32, #rows>
    %abase = tile.splat %a : !tile.ptr<f32> -> tensor<64x32x!tile.ptr<f32>, #rows>
    %pa = tile.addptr %abase, %kab : tensor<64x32x!tile.ptr<f32>, #rows>, tensor<64x32xi32, #rows>
    %rb = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 0, parent = #nrows}>>
    %nb = tile.expand_dims %rb {axis = 0 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 0, parent = #nrows}>> -> tensor<1x64xi32, #nrows>
    %nbb = tile.broadcast %nb : tensor<1x64xi32, #nrows> -> tensor<32x64xi32, #nrows>
    %bbase = tile.splat %b : !tile.ptr<f32> -> tensor<32x64x!tile.ptr<f32>, #nrows>
    %pb = tile.addptr %bbase, %nbb : tensor<32x64x!tile.ptr<f32>, #nrows>, tensor<32x64xi32, #nrows>
    %step = arith.constant dense<32> : tensor<64x32xi32, #rows>
    %stepb = arith.constant dense<2048> : tensor<32x64xi32, #nrows>
    %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %pai = %pa, %pbi = %pb) -> (tensor<64x64xf32, #mma>, tensor<64x32x!tile.ptr<f32>, #rows>, tensor<32x64x!tile.ptr<f32>, #nrows>) : i32 {
      %x = tile.load %pai : tensor<64x32x!tile.ptr<f32>, #rows>
      %y = tile.load %pbi : tensor<32x64x!tile.ptr<f32>, #nrows>
      %xa = tilegpu.convert_layout %x : tensor<64x32xf32, #rows> -> tensor<64x32xf32, #dot_a>
      %yb = tilegpu.convert_layout %y : tensor<32x64xf32, #nrows> -> tensor<32x64xf32, #dot_b>
      %d = tile.dot %xa, %yb, %acc {inputPrecision = #tile.precision<tf32>} : tensor<64x32xf32, #dot_a> * tensor<32x64xf32, #dot_b> -> tensor<64x64xf32, #mma>
      %pan = tile.addptr %pai, %step : tensor<64x32x!tile.ptr<f32>, #rows>, tensor<64x32xi32, #rows>
      %pbn = tile.addptr %pbi, %stepb : tensor<32x64x!tile.ptr<f32>, #nrows>, tensor<32x64xi32, #nrows>
      scf.yield %d, %pan, %pbn : tensor<64x64xf32, #mma>, tensor<64x32x!tile.ptr<f32>, #rows>, tensor<32x64x!tile.ptr<f32>, #nrows>
    }
    return %r#0 : tensor<64x64xf32, #mma>
  }
}

// -----

// A dot whose result is read by anything but the next step's accumulator
// (here an add) stays synchronous: with one group in flight the add would
// read registers the wgmma still writes. A loop that stores to global memory
// is not pipelined at all: its loads would run ahead of the stores.

// CHECK-LABEL: func.func @warpgroup_not_accumulating
// CHECK: scf.for
// CHECK: tilegpu.warpgroup_dot %{{.+}}, %{{.+}}, %{{.+}} : !tilegpu.memdesc
// CHECK-NOT: warpgroup_dot_wait
// CHECK: arith.addf
// CHECK-LABEL: func.func @stores_in_loop
// CHECK-NOT: tilegpu.async_copy_global_to_local
// CHECK: tile.store

#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma3 = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
#nv = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90a", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @warpgroup_not_accumulating(%pa: tensor<64x64x!tile.ptr<f16>, #blocked>, %ys: !tilegpu.memdesc<64x64xf16, #nv>, %n: i32) -> tensor<64x64xf32, #mma3> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma3>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma3>) : i32 {
      %x = tile.load %pa : tensor<64x64x!tile.ptr<f16>, #blocked>
      %xs = tilegpu.local_alloc %x : (tensor<64x64xf16, #blocked>) -> !tilegpu.memdesc<64x64xf16, #nv>
      %d = tilegpu.warpgroup_dot %xs, %ys, %zero : !tilegpu.memdesc<64x64xf16, #nv> * !tilegpu.memdesc<64x64xf16, #nv> -> tensor<64x64xf32, #mma3>
      %sum = arith.addf %acc, %d : tensor<64x64xf32, #mma3>
      scf.yield %sum : tensor<64x64xf32, #mma3>
    }
    return %r : tensor<64x64xf32, #mma3>
  }

  func.func @stores_in_loop(%pa: tensor<64x64x!tile.ptr<f16>, #blocked>, %ys: !tilegpu.memdesc<64x64xf16, #nv>, %out: tensor<64x64x!tile.ptr<f16>, #blocked>, %n: i32) -> tensor<64x64xf32, #mma3> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma3>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma3>) : i32 {
      %x = tile.load %pa : tensor<64x64x!tile.ptr<f16>, #blocked>
      %xs = tilegpu.local_alloc %x : (tensor<64x64xf16, #blocked>) -> !tilegpu.memdesc<64x64xf16, #nv>
      %d = tilegpu.warpgroup_dot %xs, %ys, %acc : !tilegpu.memdesc<64x64xf16, #nv> * !tilegpu.memdesc<64x64xf16, #nv> -> tensor<64x64xf32, #mma3>
      tile.store %out, %x : tensor<64x64x!tile.ptr<f16>, #blocked>
      scf.yield %d : tensor<64x64xf32, #mma3>
    }
    return %r : tensor<64x64xf32, #mma3>
  }
}

// -----

// A gathered A (a copy, its indices a stage ahead) next to a B whose rows
// have no alignment facts (prefetched in registers); both read the step's
// K offset. With two stages the prefetch runs in the copies' stage, in the
// body's order with the ops it reads.

// CHECK-LABEL: func.func @mixed
// CHECK: scf.for

// TWO-LABEL: func.func @mixed
// TWO: scf.for {{.+}} iter_args(%{{[^ ]+}} = %{{[^ ]+}}, %{{[^ ]+}} = %{{[^ ]+}}, %{{[^ ]+}} = %{{[^ ]+}}, %{{[^ ]+}} = %{{[^ ]+}})
// TWO: %[[ROWS:.+]] = tile.load %{{.+}}, %{{.+}} : tensor<64x!tile.ptr<i32>
// TWO: tilegpu.async_copy_global_to_local
// TWO: %[[B:.+]] = tile.load %{{.+}}, %{{.+}} : tensor<32x64x!tile.ptr<f16>
// TWO: tile.dot
// TWO: scf.yield %{{.+}}, %{{.+}}, %[[ROWS]], %[[B]]

#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#bl = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#dot_a = #tilegpu.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>
#dot_b = #tilegpu.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>
#rows = #tilegpu.slice<{dim = 1, parent = #blocked}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @mixed(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f16>, %map: !tile.ptr<i32> {tile.divisibility = 16 : i32}, %n: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c32s = arith.constant 32 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %c32 = arith.constant dense<32> : tensor<64x1xi32, #blocked>
    %c64 = arith.constant dense<64> : tensor<64xi32, #rows>
    %m = tile.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #rows>
    %mapb = tile.splat %map : !tile.ptr<i32> -> tensor<64x!tile.ptr<i32>, #rows>
    %pm = tile.addptr %mapb, %m : tensor<64x!tile.ptr<i32>, #rows>, tensor<64xi32, #rows>
    %ka = tile.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #tilegpu.slice<{dim = 0, parent = #blocked}>>
    %ka2 = tile.expand_dims %ka {axis = 0 : i32} : tensor<32xi32, #tilegpu.slice<{dim = 0, parent = #blocked}>> -> tensor<1x32xi32, #blocked>
    %cola = tile.broadcast %ka2 : tensor<1x32xi32, #blocked> -> tensor<64x32xi32, #blocked>
    %basea = tile.splat %x : !tile.ptr<f16> -> tensor<64x32x!tile.ptr<f16>, #blocked>
    %nb = tile.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 0, parent = #bl}>>
    %nb2 = tile.expand_dims %nb {axis = 0 : i32} : tensor<64xi32, #tilegpu.slice<{dim = 0, parent = #bl}>> -> tensor<1x64xi32, #bl>
    %colb = tile.broadcast %nb2 : tensor<1x64xi32, #bl> -> tensor<32x64xi32, #bl>
    %baseb = tile.splat %y : !tile.ptr<f16> -> tensor<32x64x!tile.ptr<f16>, #bl>
    %r:2 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %pmi = %pm) -> (tensor<64x64xf32, #mma>, tensor<64x!tile.ptr<i32>, #rows>) : i32 {
      %idx = tile.load %pmi : tensor<64x!tile.ptr<i32>, #rows>
      %idx2 = tile.expand_dims %idx {axis = 1 : i32} : tensor<64xi32, #rows> -> tensor<64x1xi32, #blocked>
      %rowa = arith.muli %idx2, %c32 : tensor<64x1xi32, #blocked>
      %rowa2 = tile.broadcast %rowa : tensor<64x1xi32, #blocked> -> tensor<64x32xi32, #blocked>
      %kk = arith.muli %k, %c32s : i32
      %kks = tile.splat %kk : i32 -> tensor<64x32xi32, #blocked>
      %offa = arith.addi %rowa2, %cola : tensor<64x32xi32, #blocked>
      %offa2 = arith.addi %offa, %kks : tensor<64x32xi32, #blocked>
      %pa = tile.addptr %basea, %offa2 : tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<64x32xi32, #blocked>
      %a = tile.load %pa : tensor<64x32x!tile.ptr<f16>, #blocked>
      %xa = tilegpu.convert_layout %a : tensor<64x32xf16, #blocked> -> tensor<64x32xf16, #dot_a>
      %kkb = tile.splat %kk : i32 -> tensor<32x64xi32, #bl>
      %offb = arith.addi %colb, %kkb : tensor<32x64xi32, #bl>
      %pb = tile.addptr %baseb, %offb : tensor<32x64x!tile.ptr<f16>, #bl>, tensor<32x64xi32, #bl>
      %b = tile.load %pb : tensor<32x64x!tile.ptr<f16>, #bl>
      %yb = tilegpu.convert_layout %b : tensor<32x64xf16, #bl> -> tensor<32x64xf16, #dot_b>
      %d = tile.dot %xa, %yb, %acc : tensor<64x32xf16, #dot_a> * tensor<32x64xf16, #dot_b> -> tensor<64x64xf32, #mma>
      %pmn = tile.addptr %pmi, %c64 : tensor<64x!tile.ptr<i32>, #rows>, tensor<64xi32, #rows>
      scf.yield %d, %pmn : tensor<64x64xf32, #mma>, tensor<64x!tile.ptr<i32>, #rows>
    }
    return %r#0 : tensor<64x64xf32, #mma>
  }
}
