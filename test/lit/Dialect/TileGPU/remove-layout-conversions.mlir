// RUN: tilec-opt -tilegpu-remove-layout-conversions -split-input-file %s | FileCheck %s
// RUN: tilec-opt -tilegpu-remove-layout-conversions=max-remat-ops=2 -split-input-file %s | FileCheck %s --check-prefix=SMALL

// Pointers built from a splat, a range and addptr are recomputed in the load's
// layout: the conversion disappears and so does the dead original chain.

// CHECK-DAG: #[[VEC4:.+]] = #tilegpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#blocked = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#vec4 = #tilegpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, "tilegpu.target" = "sm_90"} {
  // CHECK-LABEL: func.func @pointer_chain
  // SMALL-LABEL: func.func @pointer_chain
  func.func @pointer_chain(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f32>, %start: i32) {
    // CHECK-NOT: tilegpu.convert_layout
    // CHECK: %[[R:.+]] = tile.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #[[VEC4]]>
    // CHECK: %[[S:.+]] = tile.splat %{{.+}} : i32 -> tensor<1024xi32, #[[VEC4]]>
    // CHECK: %[[O:.+]] = arith.addi %[[S]], %[[R]] : tensor<1024xi32, #[[VEC4]]>
    // CHECK: %[[B:.+]] = tile.splat %{{.+}} : !tile.ptr<f32> -> tensor<1024x!tile.ptr<f32>, #[[VEC4]]>
    // CHECK: %[[P:.+]] = tile.addptr %[[B]], %[[O]] : tensor<1024x!tile.ptr<f32>, #[[VEC4]]>, tensor<1024xi32, #[[VEC4]]>
    // CHECK: %[[V:.+]] = tile.load %[[P]] : tensor<1024x!tile.ptr<f32>, #[[VEC4]]>
    // CHECK-NOT: tilegpu.convert_layout
    // CHECK: tile.store %{{.+}}, %[[V]] : tensor<1024x!tile.ptr<f32>, #[[VEC4]]>
    // SMALL: tilegpu.convert_layout
    %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32, #blocked>
    %starts = tile.splat %start : i32 -> tensor<1024xi32, #blocked>
    %offs = arith.addi %starts, %r : tensor<1024xi32, #blocked>
    %xs = tile.splat %x : !tile.ptr<f32> -> tensor<1024x!tile.ptr<f32>, #blocked>
    %xp = tile.addptr %xs, %offs : tensor<1024x!tile.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
    %xp4 = tilegpu.convert_layout %xp : tensor<1024x!tile.ptr<f32>, #blocked> -> tensor<1024x!tile.ptr<f32>, #vec4>
    %v4 = tile.load %xp4 : tensor<1024x!tile.ptr<f32>, #vec4>
    %v = tilegpu.convert_layout %v4 : tensor<1024xf32, #vec4> -> tensor<1024xf32, #blocked>
    %ys = tile.splat %y : !tile.ptr<f32> -> tensor<1024x!tile.ptr<f32>, #blocked>
    %yp = tile.addptr %ys, %offs : tensor<1024x!tile.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
    %yp4 = tilegpu.convert_layout %yp : tensor<1024x!tile.ptr<f32>, #blocked> -> tensor<1024x!tile.ptr<f32>, #vec4>
    %v44 = tilegpu.convert_layout %v : tensor<1024xf32, #blocked> -> tensor<1024xf32, #vec4>
    tile.store %yp4, %v44 : tensor<1024x!tile.ptr<f32>, #vec4>
    return
  }
}

// -----

// 2-D offsets through expand_dims: the range feeding expand_dims is rebuilt
// in the slice of the new layout. The original offsets still feed a store in
// the old layout, so they stay next to the recomputed ones.

// CHECK-DAG: #[[OLD:.+]] = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: #[[NEW:.+]] = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: #[[NEW_ROW:.+]] = #tilegpu.slice<{dim = 0, parent = #[[NEW]]}>
#blocked = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#rows = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#row = #tilegpu.slice<{dim = 0, parent = #blocked}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, "tilegpu.target" = "sm_90"} {
  // CHECK-LABEL: func.func @expand_dims_slice
  func.func @expand_dims_slice(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %b: !tile.ptr<i32>) {
    // CHECK-DAG: tile.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #[[NEW_ROW]]>
    // CHECK-DAG: tile.expand_dims %{{.+}} {axis = 0 : i32} : tensor<64xi32, #[[NEW_ROW]]> -> tensor<1x64xi32, #[[NEW]]>
    // CHECK-DAG: tile.broadcast %{{.+}} : tensor<1x64xi32, #[[NEW]]> -> tensor<32x64xi32, #[[NEW]]>
    // CHECK-DAG: %[[OLD_OFFS:.+]] = tile.broadcast %{{.+}} : tensor<1x64xi32, #[[OLD]]> -> tensor<32x64xi32, #[[OLD]]>
    // CHECK-NOT: tilegpu.convert_layout
    // CHECK: tile.load %{{.+}} : tensor<32x64x!tile.ptr<f16>, #[[NEW]]>
    // CHECK: tile.store %{{.+}}, %[[OLD_OFFS]] : tensor<32x64x!tile.ptr<i32>, #[[OLD]]>
    %r = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #row>
    %e = tile.expand_dims %r {axis = 0 : i32} : tensor<64xi32, #row> -> tensor<1x64xi32, #blocked>
    %offs = tile.broadcast %e : tensor<1x64xi32, #blocked> -> tensor<32x64xi32, #blocked>
    %as = tile.splat %a : !tile.ptr<f16> -> tensor<32x64x!tile.ptr<f16>, #blocked>
    %ap = tile.addptr %as, %offs : tensor<32x64x!tile.ptr<f16>, #blocked>, tensor<32x64xi32, #blocked>
    %ap8 = tilegpu.convert_layout %ap : tensor<32x64x!tile.ptr<f16>, #blocked> -> tensor<32x64x!tile.ptr<f16>, #rows>
    %v = tile.load %ap8 : tensor<32x64x!tile.ptr<f16>, #rows>
    tile.store %ap8, %v : tensor<32x64x!tile.ptr<f16>, #rows>
    %bs = tile.splat %b : !tile.ptr<i32> -> tensor<32x64x!tile.ptr<i32>, #blocked>
    %bp = tile.addptr %bs, %offs : tensor<32x64x!tile.ptr<i32>, #blocked>, tensor<32x64xi32, #blocked>
    tile.store %bp, %offs : tensor<32x64x!tile.ptr<i32>, #blocked>
    return
  }
}

// -----

// A pointer tensor carried by a loop and converted for the load in every
// iteration: the loop carries it in the load's layout instead, with its
// update recomputed there; the old carried value dies and is dropped.

// CHECK-DAG: #[[ROWS:.+]] = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#rows = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#row = #tilegpu.slice<{dim = 0, parent = #blocked}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, "tilegpu.target" = "sm_90"} {
  // CHECK-LABEL: func.func @loop_carried_pointers
  func.func @loop_carried_pointers(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %k: i32) -> tensor<64x32xf16, #rows> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<64x32xf16, #rows>
    %step = arith.constant dense<32> : tensor<64x32xi32, #blocked>
    %rk = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32, #row>
    %ks = tile.expand_dims %rk {axis = 0 : i32} : tensor<32xi32, #row> -> tensor<1x32xi32, #blocked>
    %ksb = tile.broadcast %ks : tensor<1x32xi32, #blocked> -> tensor<64x32xi32, #blocked>
    %base = tile.splat %a : !tile.ptr<f16> -> tensor<64x32x!tile.ptr<f16>, #blocked>
    %ptrs = tile.addptr %base, %ksb : tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<64x32xi32, #blocked>
    // CHECK: %[[STEP:.+]] = arith.constant dense<32> : tensor<64x32xi32, #[[ROWS]]>
    // CHECK: %[[INIT:.+]] = tile.addptr %{{.+}}, %{{.+}} : tensor<64x32x!tile.ptr<f16>, #[[ROWS]]>
    // CHECK: %[[RES:.+]]:2 = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}, %[[P:.+]] = %[[INIT]]) -> (tensor<64x32xf16, #[[ROWS]]>, tensor<64x32x!tile.ptr<f16>, #[[ROWS]]>)
    // CHECK-NOT: tilegpu.convert_layout
    // CHECK: %[[V:.+]] = tile.load %[[P]] : tensor<64x32x!tile.ptr<f16>, #[[ROWS]]>
    // CHECK: %[[SUM:.+]] = arith.addf %[[ACC]], %[[V]]
    // CHECK: %[[NEXT:.+]] = tile.addptr %[[P]], %[[STEP]] : tensor<64x32x!tile.ptr<f16>, #[[ROWS]]>
    // CHECK: scf.yield %[[SUM]], %[[NEXT]]
    %res:2 = scf.for %i = %c0 to %k step %c1 iter_args(%p = %ptrs, %acc = %zero) -> (tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<64x32xf16, #rows>) : i32 {
      %p8 = tilegpu.convert_layout %p : tensor<64x32x!tile.ptr<f16>, #blocked> -> tensor<64x32x!tile.ptr<f16>, #rows>
      %v = tile.load %p8 : tensor<64x32x!tile.ptr<f16>, #rows>
      %sum = arith.addf %acc, %v : tensor<64x32xf16, #rows>
      %pn = tile.addptr %p, %step : tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<64x32xi32, #blocked>
      scf.yield %pn, %sum : tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<64x32xf16, #rows>
    }
    // CHECK: return %[[RES]]#0
    return %res#1 : tensor<64x32xf16, #rows>
  }
}

// -----

// An iter_arg converted at the top of the body whose yielded value is
// converted from that same layout: the loop carries the other layout and both
// conversions go, even though the loop's update is a load (not recomputable).

// CHECK-DAG: #[[A:.+]] = #tilegpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#a = #tilegpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#b = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, "tilegpu.target" = "sm_90"} {
  // CHECK-LABEL: func.func @carried_in_other_layout
  func.func @carried_in_other_layout(%init: tensor<512x!tile.ptr<i64>, #a>, %n: i32) -> tensor<512x!tile.ptr<i64>, #a> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %init_b = tilegpu.convert_layout %init : tensor<512x!tile.ptr<i64>, #a> -> tensor<512x!tile.ptr<i64>, #b>
    // CHECK: %[[RES:.+]] = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[P:.+]] = %{{.+}}) -> (tensor<512x!tile.ptr<i64>, #[[A]]>)
    // CHECK-NOT: tilegpu.convert_layout
    // CHECK: %[[ADDR:.+]] = tile.load %[[P]] : tensor<512x!tile.ptr<i64>, #[[A]]>
    // CHECK: %[[NEXT:.+]] = tile.int_to_ptr %[[ADDR]] : tensor<512xi64, #[[A]]> -> tensor<512x!tile.ptr<i64>, #[[A]]>
    // CHECK: scf.yield %[[NEXT]]
    // CHECK: return %[[RES]]
    %res = scf.for %i = %c0 to %n step %c1 iter_args(%p = %init_b) -> (tensor<512x!tile.ptr<i64>, #b>) : i32 {
      %pa = tilegpu.convert_layout %p : tensor<512x!tile.ptr<i64>, #b> -> tensor<512x!tile.ptr<i64>, #a>
      %addr = tile.load %pa : tensor<512x!tile.ptr<i64>, #a>
      %next = tile.int_to_ptr %addr : tensor<512xi64, #a> -> tensor<512x!tile.ptr<i64>, #a>
      %next_b = tilegpu.convert_layout %next : tensor<512x!tile.ptr<i64>, #a> -> tensor<512x!tile.ptr<i64>, #b>
      scf.yield %next_b : tensor<512x!tile.ptr<i64>, #b>
    }
    %out = tilegpu.convert_layout %res : tensor<512x!tile.ptr<i64>, #b> -> tensor<512x!tile.ptr<i64>, #a>
    return %out : tensor<512x!tile.ptr<i64>, #a>
  }
}

// -----

// Conversions that must stay: a loaded value (loads are not recomputed)
// feeding a reduction, and a dot operand. Conversion chains still fold.

// CHECK-DAG: #[[VEC4:.+]] = #tilegpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: #[[DEFAULT:.+]] = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: #[[DOT_A:.+]] = #tilegpu.dot_op<{opIdx = 0, parent = #[[DEFAULT]]}>
#blocked = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#vec4 = #tilegpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#dot_a = #tilegpu.dot_op<{opIdx = 0, parent = #blocked}>
#dot_b = #tilegpu.dot_op<{opIdx = 1, parent = #blocked}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, "tilegpu.target" = "sm_90"} {
  // CHECK-LABEL: func.func @must_stay
  func.func @must_stay(%p: tensor<32x16x!tile.ptr<f32>, #vec4>, %b: tensor<16x32xf32, #dot_b>) -> (tensor<32xf32, #tilegpu.slice<{dim = 1, parent = #blocked}>>, tensor<32x32xf32, #blocked>) {
    // CHECK: %[[V:.+]] = tile.load %{{.+}} : tensor<32x16x!tile.ptr<f32>, #[[VEC4]]>
    // CHECK: %[[VD:.+]] = tilegpu.convert_layout %[[V]] : tensor<32x16xf32, #[[VEC4]]> -> tensor<32x16xf32, #[[DEFAULT]]>
    // CHECK: tile.reduce add %[[VD]]
    // CHECK: %[[VA:.+]] = tilegpu.convert_layout %[[V]] : tensor<32x16xf32, #[[VEC4]]> -> tensor<32x16xf32, #[[DOT_A]]>
    // CHECK: tile.dot %[[VA]]
    %v = tile.load %p : tensor<32x16x!tile.ptr<f32>, #vec4>
    %vd = tilegpu.convert_layout %v : tensor<32x16xf32, #vec4> -> tensor<32x16xf32, #blocked>
    %sum = tile.reduce add %vd {axis = 1 : i32} : tensor<32x16xf32, #blocked> -> tensor<32xf32, #tilegpu.slice<{dim = 1, parent = #blocked}>>
    %va = tilegpu.convert_layout %vd : tensor<32x16xf32, #blocked> -> tensor<32x16xf32, #dot_a>
    %zero = arith.constant dense<0.0> : tensor<32x32xf32, #blocked>
    %d = tile.dot %va, %b, %zero : tensor<32x16xf32, #dot_a> * tensor<16x32xf32, #dot_b> -> tensor<32x32xf32, #blocked>
    return %sum, %d : tensor<32xf32, #tilegpu.slice<{dim = 1, parent = #blocked}>>, tensor<32x32xf32, #blocked>
  }
}

// -----

// Elementwise arithmetic on a converted load is recomputed after the load,
// in its layout: the conversion back and forth around it disappears.

// CHECK-DAG: #[[VEC4:.+]] = #tilegpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#blocked = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#vec4 = #tilegpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, "tilegpu.target" = "sm_90"} {
  // CHECK-LABEL: func.func @elementwise_after_load
  func.func @elementwise_after_load(%p: tensor<1024x!tile.ptr<f32>, #vec4>, %s: f32) {
    // CHECK-NOT: tilegpu.convert_layout
    // CHECK: %[[V:.+]] = tile.load %{{.+}} : tensor<1024x!tile.ptr<f32>, #[[VEC4]]>
    // CHECK: %[[S:.+]] = tile.splat %{{.+}} : f32 -> tensor<1024xf32, #[[VEC4]]>
    // CHECK: %[[M:.+]] = arith.mulf %[[V]], %[[S]] : tensor<1024xf32, #[[VEC4]]>
    // CHECK: tile.store %{{.+}}, %[[M]] : tensor<1024x!tile.ptr<f32>, #[[VEC4]]>
    %v4 = tile.load %p : tensor<1024x!tile.ptr<f32>, #vec4>
    %v = tilegpu.convert_layout %v4 : tensor<1024xf32, #vec4> -> tensor<1024xf32, #blocked>
    %ss = tile.splat %s : f32 -> tensor<1024xf32, #blocked>
    %m = arith.mulf %v, %ss : tensor<1024xf32, #blocked>
    %m4 = tilegpu.convert_layout %m : tensor<1024xf32, #blocked> -> tensor<1024xf32, #vec4>
    tile.store %p, %m4 : tensor<1024x!tile.ptr<f32>, #vec4>
    return
  }
}

// -----

// Nested loops: the inner loop's carried pointers are converted for its load;
// both loops carry them in the new layout and the old copies, alive only
// through each other's back edges, are dropped.

// CHECK-DAG: #[[VEC4:.+]] = #tilegpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#a = #tilegpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#b = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, "tilegpu.target" = "sm_90"} {
  // CHECK-LABEL: func.func @nested_loops
  func.func @nested_loops(%x: !tile.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32, #b>
    %xs = tile.splat %x : !tile.ptr<f32> -> tensor<1024x!tile.ptr<f32>, #b>
    %xp = tile.addptr %xs, %r : tensor<1024x!tile.ptr<f32>, #b>, tensor<1024xi32, #b>
    %step = arith.constant dense<1024> : tensor<1024xi32, #b>
    // CHECK-NOT: tilegpu.convert_layout
    // CHECK: scf.for %{{.+}} iter_args(%[[P:.+]] = %{{.+}}) -> (tensor<1024x!tile.ptr<f32>, #[[VEC4]]>)
    // CHECK: scf.for %{{.+}} iter_args(%[[Q:.+]] = %[[P]]) -> (tensor<1024x!tile.ptr<f32>, #[[VEC4]]>)
    // CHECK: tile.load %[[Q]] : tensor<1024x!tile.ptr<f32>, #[[VEC4]]>
    // CHECK-NOT: tilegpu.convert_layout
    %res = scf.for %i = %c0 to %n step %c1 iter_args(%p = %xp) -> (tensor<1024x!tile.ptr<f32>, #b>) : i32 {
      %inner = scf.for %j = %c0 to %n step %c1 iter_args(%q = %p) -> (tensor<1024x!tile.ptr<f32>, #b>) : i32 {
        %qa = tilegpu.convert_layout %q : tensor<1024x!tile.ptr<f32>, #b> -> tensor<1024x!tile.ptr<f32>, #a>
        %v = tile.load %qa : tensor<1024x!tile.ptr<f32>, #a>
        tile.store %qa, %v : tensor<1024x!tile.ptr<f32>, #a>
        %qn = tile.addptr %q, %step : tensor<1024x!tile.ptr<f32>, #b>, tensor<1024xi32, #b>
        scf.yield %qn : tensor<1024x!tile.ptr<f32>, #b>
      }
      %pn = tile.addptr %inner, %step : tensor<1024x!tile.ptr<f32>, #b>, tensor<1024xi32, #b>
      scf.yield %pn : tensor<1024x!tile.ptr<f32>, #b>
    }
    return
  }
}

// -----

// A loop that carries an accumulator in one layout and, in an argument the
// body never reads, its conversion to another: the conversion moves after
// the loop and runs once.
// CHECK-DAG: #[[DEF:.+]] = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: #[[ACC:.+]] = #tilegpu.blocked<{sizePerThread = [2, 2], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-LABEL: func.func @sink_carried_conversion
// CHECK: %[[LOOP:.*]] = scf.for {{.*}} -> (tensor<32x16xf32, #[[ACC]]>)
// CHECK-NOT: tilegpu.convert_layout
// CHECK: scf.yield
// CHECK: %[[OUT:.*]] = tilegpu.convert_layout %[[LOOP]] : tensor<32x16xf32, #[[ACC]]> -> tensor<32x16xf32, #[[DEF]]>
// CHECK: return %[[OUT]]
#def = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#acc = #tilegpu.blocked<{sizePerThread = [2, 2], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90"} {
  func.func @sink_carried_conversion(%x: tensor<32x16xf32, #acc>, %n: index) -> tensor<32x16xf32, #def> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zacc = arith.constant dense<0.0> : tensor<32x16xf32, #acc>
    %zdef = arith.constant dense<0.0> : tensor<32x16xf32, #def>
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zacc, %unused = %zdef) -> (tensor<32x16xf32, #acc>, tensor<32x16xf32, #def>) {
      %s = arith.addf %a, %x : tensor<32x16xf32, #acc>
      %c = tilegpu.convert_layout %s : tensor<32x16xf32, #acc> -> tensor<32x16xf32, #def>
      scf.yield %s, %c : tensor<32x16xf32, #acc>, tensor<32x16xf32, #def>
    }
    return %r#1 : tensor<32x16xf32, #def>
  }
}

// -----

// A tensor-core epilogue: the f32 -> f16 truncation moves before the
// conversion, which then moves half the bytes. A widening op does not move.

// CHECK-DAG: #[[MMA:.+]] = #tilegpu.mma
#mma = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, "tilegpu.target" = "sm_90"} {
  // CHECK-LABEL: func.func @narrow_first
  func.func @narrow_first(%acc: tensor<64x64xf32, #mma>, %p: tensor<64x64x!tile.ptr<f16>, #blocked>) {
    // CHECK: %[[T:.+]] = arith.truncf %{{.+}} : tensor<64x64xf32, #[[MMA]]> to tensor<64x64xf16, #[[MMA]]>
    // CHECK: %[[C:.+]] = tilegpu.convert_layout %[[T]] : tensor<64x64xf16, #[[MMA]]> -> tensor<64x64xf16, #{{.+}}>
    // CHECK: tile.store %{{.+}}, %[[C]]
    %c = tilegpu.convert_layout %acc : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #blocked>
    %h = arith.truncf %c : tensor<64x64xf32, #blocked> to tensor<64x64xf16, #blocked>
    tile.store %p, %h : tensor<64x64x!tile.ptr<f16>, #blocked>
    return
  }

  // CHECK-LABEL: func.func @widen_after
  func.func @widen_after(%x: tensor<64x64xf16, #mma>, %p: tensor<64x64x!tile.ptr<f32>, #blocked>) {
    // CHECK: %[[C:.+]] = tilegpu.convert_layout %{{.+}} : tensor<64x64xf16, #[[MMA]]> -> tensor<64x64xf16, #{{.+}}>
    // CHECK: arith.extf %[[C]]
    %c = tilegpu.convert_layout %x : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #blocked>
    %w = arith.extf %c : tensor<64x64xf16, #blocked> to tensor<64x64xf32, #blocked>
    tile.store %p, %w : tensor<64x64x!tile.ptr<f32>, #blocked>
    return
  }
}

// -----

// The narrowed conversion stays where the conversion was: a user inside a
// loop does not pull a one-time conversion into it.

#mma = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, "tilegpu.target" = "sm_90"} {
  // CHECK-LABEL: func.func @narrow_outside_loop
  func.func @narrow_outside_loop(%acc: tensor<64x64xf32, #mma>, %p: tensor<64x64x!tile.ptr<f16>, #blocked>, %n: i32) {
    // CHECK: arith.truncf %{{.+}} : tensor<64x64xf32, #{{.+}}> to tensor<64x64xf16, #{{.+}}>
    // CHECK-NEXT: %[[C:.+]] = tilegpu.convert_layout
    // CHECK-NEXT: scf.for
    // CHECK-NEXT: tile.store %{{.+}}, %[[C]]
    // CHECK-NEXT: }
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c = tilegpu.convert_layout %acc : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #blocked>
    scf.for %i = %c0 to %n step %c1 : i32 {
      %h = arith.truncf %c : tensor<64x64xf32, #blocked> to tensor<64x64xf16, #blocked>
      tile.store %p, %h : tensor<64x64x!tile.ptr<f16>, #blocked>
    }
    return
  }
}

// -----

// A row computation after a vectorized load (softmax): the conversion to
// the computation's layout sinks through the elementwise ops and vanishes at
// the full reductions, so everything runs in the load's layout, once.

// CHECK-DAG: #[[VEC:.+]] = #tilegpu.blocked<{sizePerThread = [4]
#vec4 = #tilegpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#blocked = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, "tilegpu.target" = "sm_90"} {
  // CHECK-LABEL: func.func @row_softmax
  func.func @row_softmax(%p: tensor<1024x!tile.ptr<f32>, #vec4>, %q: tensor<1024x!tile.ptr<f32>, #vec4>) {
    // CHECK-NOT: tilegpu.convert_layout
    // CHECK: %[[X:.+]] = tile.load
    // CHECK: tile.reduce max %[[X]] {axis = 0 : i32} : tensor<1024xf32, #[[VEC]]> -> f32
    // CHECK: %[[E:.+]] = math.exp %{{.+}} : tensor<1024xf32, #[[VEC]]>
    // CHECK: tile.reduce add %[[E]] {axis = 0 : i32} : tensor<1024xf32, #[[VEC]]> -> f32
    // CHECK-NOT: math.exp
    // CHECK-NOT: tilegpu.convert_layout
    %x4 = tile.load %p : tensor<1024x!tile.ptr<f32>, #vec4>
    %x = tilegpu.convert_layout %x4 : tensor<1024xf32, #vec4> -> tensor<1024xf32, #blocked>
    %m = tile.reduce max %x {axis = 0 : i32} : tensor<1024xf32, #blocked> -> f32
    %ms = tile.splat %m : f32 -> tensor<1024xf32, #blocked>
    %d = arith.subf %x, %ms : tensor<1024xf32, #blocked>
    %e = math.exp %d : tensor<1024xf32, #blocked>
    %s = tile.reduce add %e {axis = 0 : i32} : tensor<1024xf32, #blocked> -> f32
    %ss = tile.splat %s : f32 -> tensor<1024xf32, #blocked>
    %y = arith.divf %e, %ss : tensor<1024xf32, #blocked>
    %y4 = tilegpu.convert_layout %y : tensor<1024xf32, #blocked> -> tensor<1024xf32, #vec4>
    tile.store %q, %y4 : tensor<1024x!tile.ptr<f32>, #vec4>
    return
  }

  // A conversion with two elementwise users stays: sinking it would make two.
  // CHECK-LABEL: func.func @two_users
  // CHECK-COUNT-1: tilegpu.convert_layout
  // CHECK-NOT: tilegpu.convert_layout
  func.func @two_users(%p: tensor<1024x!tile.ptr<f32>, #vec4>, %q: tensor<1024x!tile.ptr<f32>, #blocked>, %r: tensor<1024x!tile.ptr<f32>, #blocked>) {
    %x4 = tile.load %p : tensor<1024x!tile.ptr<f32>, #vec4>
    %x = tilegpu.convert_layout %x4 : tensor<1024xf32, #vec4> -> tensor<1024xf32, #blocked>
    %a = math.exp %x : tensor<1024xf32, #blocked>
    %b = math.log %x : tensor<1024xf32, #blocked>
    tile.store %q, %a : tensor<1024x!tile.ptr<f32>, #blocked>
    tile.store %r, %b : tensor<1024x!tile.ptr<f32>, #blocked>
    return
  }
}

// -----

// A gather's row indices: a load of 64 elements (no more than the CTA's 128
// threads) converted to the rows of a 2-D layout is loaded in that layout
// instead, its pointers and mask with it: no conversion is left. A load of
// 256 elements is converted as before.

// CHECK-DAG: #[[ROWS:.+]] = #tilegpu.slice<{dim = 1, parent = #[[TILE:.+]]}>
// CHECK-DAG: #[[TILE]] = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#flat = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#tile = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#rows = #tilegpu.slice<{dim = 1, parent = #tile}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, "tilegpu.target" = "sm_90"} {
  // CHECK-LABEL: func.func @small_index_load
  func.func @small_index_load(%map: !tile.ptr<i32>, %n: i32) -> tensor<64x1xi32, #tile> {
    // CHECK-NOT: tilegpu.convert_layout
    // CHECK: %[[R:.+]] = tile.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #[[ROWS]]>
    // CHECK: %[[IDX:.+]] = tile.load %{{.+}}, %{{.+}}, %{{.+}} : tensor<64x!tile.ptr<i32>, #[[ROWS]]>
    // CHECK-NOT: tilegpu.convert_layout
    // CHECK: tile.expand_dims %[[IDX]] {axis = 1 : i32} : tensor<64xi32, #[[ROWS]]> -> tensor<64x1xi32, #[[TILE]]>
    %r = tile.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #flat>
    %base = tile.splat %map : !tile.ptr<i32> -> tensor<64x!tile.ptr<i32>, #flat>
    %p = tile.addptr %base, %r : tensor<64x!tile.ptr<i32>, #flat>, tensor<64xi32, #flat>
    %bound = tile.splat %n : i32 -> tensor<64xi32, #flat>
    %in = arith.cmpi slt, %r, %bound : tensor<64xi32, #flat>
    %none = arith.constant dense<-1> : tensor<64xi32, #flat>
    %idx = tile.load %p, %in, %none : tensor<64x!tile.ptr<i32>, #flat>
    %idxr = tilegpu.convert_layout %idx : tensor<64xi32, #flat> -> tensor<64xi32, #rows>
    %col = tile.expand_dims %idxr {axis = 1 : i32} : tensor<64xi32, #rows> -> tensor<64x1xi32, #tile>
    return %col : tensor<64x1xi32, #tile>
  }

  // CHECK-LABEL: func.func @large_index_load
  func.func @large_index_load(%map: !tile.ptr<i32>) -> tensor<256x1xi32, #tile> {
    // CHECK: %[[IDX:.+]] = tile.load %{{.+}} : tensor<256x!tile.ptr<i32>, #{{.+}}>
    // CHECK: tilegpu.convert_layout %[[IDX]]
    %r = tile.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32, #flat>
    %base = tile.splat %map : !tile.ptr<i32> -> tensor<256x!tile.ptr<i32>, #flat>
    %p = tile.addptr %base, %r : tensor<256x!tile.ptr<i32>, #flat>, tensor<256xi32, #flat>
    %idx = tile.load %p : tensor<256x!tile.ptr<i32>, #flat>
    %idxr = tilegpu.convert_layout %idx : tensor<256xi32, #flat> -> tensor<256xi32, #rows>
    %col = tile.expand_dims %idxr {axis = 1 : i32} : tensor<256xi32, #rows> -> tensor<256x1xi32, #tile>
    return %col : tensor<256x1xi32, #tile>
  }
}

// -----

// A 64-element load whose target layout gives every thread all 64 elements
// (a slice whose parent spreads every thread along the sliced dimension)
// would load 64 values a thread: its conversion stays.

#flat = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#wide = #tilegpu.blocked<{sizePerThread = [64, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [0, 1]}>
#all = #tilegpu.slice<{dim = 1, parent = #wide}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, "tilegpu.target" = "sm_90"} {
  // CHECK-LABEL: func.func @replicated_index_load
  func.func @replicated_index_load(%map: !tile.ptr<i32>) -> tensor<64xi32, #all> {
    // CHECK: %[[IDX:.+]] = tile.load %{{.+}} : tensor<64x!tile.ptr<i32>, #{{.+}}>
    // CHECK: tilegpu.convert_layout %[[IDX]]
    %r = tile.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #flat>
    %base = tile.splat %map : !tile.ptr<i32> -> tensor<64x!tile.ptr<i32>, #flat>
    %p = tile.addptr %base, %r : tensor<64x!tile.ptr<i32>, #flat>, tensor<64xi32, #flat>
    %idx = tile.load %p : tensor<64x!tile.ptr<i32>, #flat>
    %idxr = tilegpu.convert_layout %idx : tensor<64xi32, #flat> -> tensor<64xi32, #all>
    return %idxr : tensor<64xi32, #all>
  }
}

// -----

// A radix digit count after a vectorized load: the conversion sinks to the
// histogram, which counts in the load's layout; its mask (a range against a
// splat) is recomputed there. No conversion is left.

// CHECK-DAG: #[[VEC:.+]] = #tilegpu.blocked<{sizePerThread = [4]
#vec4 = #tilegpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#blocked = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, "tilegpu.target" = "sm_90"} {
  // CHECK-LABEL: func.func @digit_counts
  func.func @digit_counts(%p: tensor<1024x!tile.ptr<i32>, #vec4>, %n: i32, %q: tensor<128x!tile.ptr<i32>, #blocked>) {
    // CHECK-NOT: tilegpu.convert_layout
    // CHECK: %[[X:.+]] = tile.load
    // CHECK: %[[D:.+]] = arith.andi %[[X]], %{{.+}} : tensor<1024xi32, #[[VEC]]>
    // CHECK: %[[M:.+]] = arith.cmpi slt, %{{.+}}, %{{.+}} : tensor<1024xi32, #[[VEC]]>
    // CHECK: tile.histogram %[[D]], %[[M]] : tensor<1024xi32, #[[VEC]]> -> tensor<128xi32, #{{.+}}>
    // CHECK-NOT: tilegpu.convert_layout
    %x4 = tile.load %p : tensor<1024x!tile.ptr<i32>, #vec4>
    %x = tilegpu.convert_layout %x4 : tensor<1024xi32, #vec4> -> tensor<1024xi32, #blocked>
    %c127 = arith.constant dense<127> : tensor<1024xi32, #blocked>
    %d = arith.andi %x, %c127 : tensor<1024xi32, #blocked>
    %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32, #blocked>
    %ns = tile.splat %n : i32 -> tensor<1024xi32, #blocked>
    %m = arith.cmpi slt, %r, %ns : tensor<1024xi32, #blocked>
    %h = tile.histogram %d, %m : tensor<1024xi32, #blocked> -> tensor<128xi32, #blocked>
    tile.store %q, %h : tensor<128x!tile.ptr<i32>, #blocked>
    return
  }
}
