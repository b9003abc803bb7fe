// RUN: tilec-opt -tilegpu-coalesce -split-input-file %s | FileCheck %s

// f32 vector add: 16-byte aligned, contiguous pointers give 4 elements (16 B)
// per thread. The load's mask moves with it and its result goes back.

// CHECK-DAG: #[[DEFAULT:.+]] = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-DAG: #[[VEC4:.+]] = #tilegpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#blocked = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, "tilegpu.target" = "sm_90"} {
  // CHECK-LABEL: func.func @vector_add
  func.func @vector_add(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32) attributes {tile.kernel} {
    %c1024 = arith.constant 1024 : i32
    %pid = tile.program_id x : i32
    %start = arith.muli %pid, %c1024 : i32
    %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32, #blocked>
    %starts = tile.splat %start : i32 -> tensor<1024xi32, #blocked>
    %offs = arith.addi %starts, %r : tensor<1024xi32, #blocked>
    %ns = tile.splat %n : i32 -> tensor<1024xi32, #blocked>
    %mask = arith.cmpi slt, %offs, %ns : tensor<1024xi32, #blocked>
    %xs = tile.splat %x : !tile.ptr<f32> -> tensor<1024x!tile.ptr<f32>, #blocked>
    // CHECK: %[[XP:.+]] = tile.addptr
    %xp = tile.addptr %xs, %offs : tensor<1024x!tile.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
    // CHECK: %[[XP4:.+]] = tilegpu.convert_layout %[[XP]] : tensor<1024x!tile.ptr<f32>, #[[DEFAULT]]> -> tensor<1024x!tile.ptr<f32>, #[[VEC4]]>
    // CHECK: %[[MASK4:.+]] = tilegpu.convert_layout %[[MASK:.+]] : tensor<1024xi1, #[[DEFAULT]]> -> tensor<1024xi1, #[[VEC4]]>
    // CHECK: %[[V4:.+]] = tile.load %[[XP4]], %[[MASK4]] : tensor<1024x!tile.ptr<f32>, #[[VEC4]]>
    // CHECK: %[[V:.+]] = tilegpu.convert_layout %[[V4]] : tensor<1024xf32, #[[VEC4]]> -> tensor<1024xf32, #[[DEFAULT]]>
    %v = tile.load %xp, %mask : tensor<1024x!tile.ptr<f32>, #blocked>
    // CHECK: %[[W:.+]] = arith.addf %[[V]], %[[V]] : tensor<1024xf32, #[[DEFAULT]]>
    %w = arith.addf %v, %v : tensor<1024xf32, #blocked>
    %ys = tile.splat %y : !tile.ptr<f32> -> tensor<1024x!tile.ptr<f32>, #blocked>
    // CHECK: %[[YP:.+]] = tile.addptr
    %yp = tile.addptr %ys, %offs : tensor<1024x!tile.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
    // CHECK: %[[YP4:.+]] = tilegpu.convert_layout %[[YP]] : {{.*}} -> tensor<1024x!tile.ptr<f32>, #[[VEC4]]>
    // CHECK: %[[W4:.+]] = tilegpu.convert_layout %[[W]] : {{.*}} -> tensor<1024xf32, #[[VEC4]]>
    // CHECK: %[[SMASK4:.+]] = tilegpu.convert_layout %[[MASK]] : {{.*}} -> tensor<1024xi1, #[[VEC4]]>
    // CHECK: tile.store %[[YP4]], %[[W4]], %[[SMASK4]] : tensor<1024x!tile.ptr<f32>, #[[VEC4]]>
    tile.store %yp, %w, %mask : tensor<1024x!tile.ptr<f32>, #blocked>
    return
  }
}

// -----

// A row-major f16 tile from 16-divisible pointers and strides: 8 f16 (16 B)
// per thread along the rows, as Triton's #blocked<[1, 8], [4, 8], [4, 1]>.
// The masked load with a fill value converts mask and fill too.

// CHECK-DAG: #[[ROWS:.+]] = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#col = #tilegpu.slice<{dim = 1, parent = #blocked}>
#row = #tilegpu.slice<{dim = 0, parent = #blocked}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, "tilegpu.target" = "sm_90"} {
  // CHECK-LABEL: func.func @row_major_f16
  func.func @row_major_f16(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %stride: i32 {tile.divisibility = 16 : i32}, %m: i32) attributes {tile.kernel} {
    %zero = arith.constant dense<0.0> : tensor<64x64xf16, #blocked>
    %rm = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #col>
    %rn = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #row>
    %rows = tile.expand_dims %rm {axis = 1 : i32} : tensor<64xi32, #col> -> tensor<64x1xi32, #blocked>
    %strides = tile.splat %stride : i32 -> tensor<64x1xi32, #blocked>
    %row_offs = arith.muli %rows, %strides : tensor<64x1xi32, #blocked>
    %row_offsb = tile.broadcast %row_offs : tensor<64x1xi32, #blocked> -> tensor<64x64xi32, #blocked>
    %cols = tile.expand_dims %rn {axis = 0 : i32} : tensor<64xi32, #row> -> tensor<1x64xi32, #blocked>
    %colsb = tile.broadcast %cols : tensor<1x64xi32, #blocked> -> tensor<64x64xi32, #blocked>
    %offs = arith.addi %row_offsb, %colsb : tensor<64x64xi32, #blocked>
    %base = tile.splat %a : !tile.ptr<f16> -> tensor<64x64x!tile.ptr<f16>, #blocked>
    %ptrs = tile.addptr %base, %offs : tensor<64x64x!tile.ptr<f16>, #blocked>, tensor<64x64xi32, #blocked>
    %ms = tile.splat %m : i32 -> tensor<64x1xi32, #blocked>
    %in = arith.cmpi slt, %rows, %ms : tensor<64x1xi32, #blocked>
    %mask = tile.broadcast %in : tensor<64x1xi1, #blocked> -> tensor<64x64xi1, #blocked>
    // CHECK: %[[P:.+]] = tilegpu.convert_layout %{{.+}} : tensor<64x64x!tile.ptr<f16>, #{{.+}}> -> tensor<64x64x!tile.ptr<f16>, #[[ROWS]]>
    // CHECK: %[[M:.+]] = tilegpu.convert_layout %{{.+}} : tensor<64x64xi1, #{{.+}}> -> tensor<64x64xi1, #[[ROWS]]>
    // CHECK: %[[Z:.+]] = tilegpu.convert_layout %{{.+}} : tensor<64x64xf16, #{{.+}}> -> tensor<64x64xf16, #[[ROWS]]>
    // CHECK: tile.load %[[P]], %[[M]], %[[Z]] {cache = #tile.cache<cg>} : tensor<64x64x!tile.ptr<f16>, #[[ROWS]]>
    %v = tile.load %ptrs, %mask, %zero {cache = #tile.cache<cg>} : tensor<64x64x!tile.ptr<f16>, #blocked>
    tile.store %ptrs, %v : tensor<64x64x!tile.ptr<f16>, #blocked>
    return
  }
}

// -----

// Pointers contiguous down the columns (a transposed view): dimension 0
// becomes the fastest, with 8 f16 per thread along it.

// CHECK-DAG: #[[COLS:.+]] = #tilegpu.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>
#blocked = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#col = #tilegpu.slice<{dim = 1, parent = #blocked}>
#row = #tilegpu.slice<{dim = 0, parent = #blocked}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, "tilegpu.target" = "sm_90"} {
  // CHECK-LABEL: func.func @column_major_f16
  func.func @column_major_f16(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %stride: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %rm = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #col>
    %rn = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #row>
    %rows = tile.expand_dims %rm {axis = 1 : i32} : tensor<64xi32, #col> -> tensor<64x1xi32, #blocked>
    %rowsb = tile.broadcast %rows : tensor<64x1xi32, #blocked> -> tensor<64x64xi32, #blocked>
    %cols = tile.expand_dims %rn {axis = 0 : i32} : tensor<64xi32, #row> -> tensor<1x64xi32, #blocked>
    %strides = tile.splat %stride : i32 -> tensor<1x64xi32, #blocked>
    %col_offs = arith.muli %cols, %strides : tensor<1x64xi32, #blocked>
    %col_offsb = tile.broadcast %col_offs : tensor<1x64xi32, #blocked> -> tensor<64x64xi32, #blocked>
    %offs = arith.addi %rowsb, %col_offsb : tensor<64x64xi32, #blocked>
    %base = tile.splat %a : !tile.ptr<f16> -> tensor<64x64x!tile.ptr<f16>, #blocked>
    %ptrs = tile.addptr %base, %offs : tensor<64x64x!tile.ptr<f16>, #blocked>, tensor<64x64xi32, #blocked>
    // CHECK: tile.load %{{.+}} : tensor<64x64x!tile.ptr<f16>, #[[COLS]]>
    %v = tile.load %ptrs : tensor<64x64x!tile.ptr<f16>, #blocked>
    %w = arith.addf %v, %v : tensor<64x64xf16, #blocked>
    // CHECK: tile.store %{{.+}}, %{{.+}} : tensor<64x64x!tile.ptr<f16>, #[[COLS]]>
    tile.store %ptrs, %w : tensor<64x64x!tile.ptr<f16>, #blocked>
    return
  }
}

// -----

// Without a divisibility hint the pointers are only known to be contiguous:
// one element per thread, which is the layout they already have, so nothing
// changes. A small tensor is capped by its elements per thread: 256 f16 over
// 128 threads give 2, not 8.

// CHECK-DAG: #[[ONE:.+]] = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-DAG: #[[TWO:.+]] = #tilegpu.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#blocked = #tilegpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, "tilegpu.target" = "sm_90"} {
  // CHECK-LABEL: func.func @unknown_alignment
  func.func @unknown_alignment(%x: !tile.ptr<f32>) attributes {tile.kernel} {
    %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32, #blocked>
    %xs = tile.splat %x : !tile.ptr<f32> -> tensor<1024x!tile.ptr<f32>, #blocked>
    %xp = tile.addptr %xs, %r : tensor<1024x!tile.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
    // CHECK-NOT: tilegpu.convert_layout
    // CHECK: %[[V:.+]] = tile.load %{{.+}} : tensor<1024x!tile.ptr<f32>, #[[ONE]]>
    %v = tile.load %xp : tensor<1024x!tile.ptr<f32>, #blocked>
    // CHECK-NEXT: tile.store %{{.+}}, %[[V]] : tensor<1024x!tile.ptr<f32>, #[[ONE]]>
    tile.store %xp, %v : tensor<1024x!tile.ptr<f32>, #blocked>
    return
  }

  // CHECK-LABEL: func.func @small_tensor
  func.func @small_tensor(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %r = tile.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32, #blocked>
    %xs = tile.splat %x : !tile.ptr<f16> -> tensor<256x!tile.ptr<f16>, #blocked>
    %xp = tile.addptr %xs, %r : tensor<256x!tile.ptr<f16>, #blocked>, tensor<256xi32, #blocked>
    // CHECK: tile.load %{{.+}} : tensor<256x!tile.ptr<f16>, #[[TWO]]>
    %v = tile.load %xp : tensor<256x!tile.ptr<f16>, #blocked>
    tile.store %xp, %v : tensor<256x!tile.ptr<f16>, #blocked>
    return
  }
}

// -----

// A masked load in a loop through a carried pointer tensor: the pointers are
// converted where they are used; tilegpu-remove-layout-conversions later
// carries them in the new layout.

// CHECK-DAG: #[[DEFAULT:.+]] = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: #[[ROWS:.+]] = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#row = #tilegpu.slice<{dim = 0, parent = #blocked}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, "tilegpu.target" = "sm_90"} {
  // CHECK-LABEL: func.func @loop
  func.func @loop(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %k: i32) -> tensor<64x32xf16, #blocked> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<64x32xf16, #blocked>
    %step = arith.constant dense<32> : tensor<64x32xi32, #blocked>
    %rk = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32, #row>
    %ks = tile.expand_dims %rk {axis = 0 : i32} : tensor<32xi32, #row> -> tensor<1x32xi32, #blocked>
    %ksb = tile.broadcast %ks : tensor<1x32xi32, #blocked> -> tensor<64x32xi32, #blocked>
    %base = tile.splat %a : !tile.ptr<f16> -> tensor<64x32x!tile.ptr<f16>, #blocked>
    %ptrs = tile.addptr %base, %ksb : tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<64x32xi32, #blocked>
    // CHECK: scf.for
    %res:2 = scf.for %i = %c0 to %k step %c1 iter_args(%p = %ptrs, %acc = %zero) -> (tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<64x32xf16, #blocked>) : i32 {
      %kleft = tile.splat %k : i32 -> tensor<64x32xi32, #blocked>
      %mask = arith.cmpi slt, %ksb, %kleft : tensor<64x32xi32, #blocked>
      // CHECK: %[[P:.+]] = tilegpu.convert_layout %{{.+}} : tensor<64x32x!tile.ptr<f16>, #[[DEFAULT]]> -> tensor<64x32x!tile.ptr<f16>, #[[ROWS]]>
      // CHECK: %[[M:.+]] = tilegpu.convert_layout %{{.+}} : tensor<64x32xi1, #[[DEFAULT]]> -> tensor<64x32xi1, #[[ROWS]]>
      // CHECK: %[[Z:.+]] = tilegpu.convert_layout %{{.+}} : tensor<64x32xf16, #[[DEFAULT]]> -> tensor<64x32xf16, #[[ROWS]]>
      // CHECK: %[[V:.+]] = tile.load %[[P]], %[[M]], %[[Z]] : tensor<64x32x!tile.ptr<f16>, #[[ROWS]]>
      // CHECK: tilegpu.convert_layout %[[V]] : tensor<64x32xf16, #[[ROWS]]> -> tensor<64x32xf16, #[[DEFAULT]]>
      %v = tile.load %p, %mask, %zero : tensor<64x32x!tile.ptr<f16>, #blocked>
      %sum = arith.addf %acc, %v : tensor<64x32xf16, #blocked>
      %pn = tile.addptr %p, %step : tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<64x32xi32, #blocked>
      scf.yield %pn, %sum : tensor<64x32x!tile.ptr<f16>, #blocked>, tensor<64x32xf16, #blocked>
    }
    return %res#1 : tensor<64x32xf16, #blocked>
  }
}

// -----

// Warpgroup operands stored to nvmma tiles. tf32's b is N-contiguous in
// global memory but K-major in shared memory: its load takes single
// elements per thread, lanes 4 along K by 8 along N, so that a warp's
// copies hit 32 distinct banks of every swizzle and read whole 32-byte
// sectors. a (K-contiguous in both) and a 16-bit b stored N-major keep the
// 16-byte vectors.

// CHECK-DAG: #[[TRANSPOSING:.+]] = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [1, 0]}>
// CHECK-DAG: #[[VEC4:.+]] = #tilegpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: #[[VEC8:.+]] = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#row = #tilegpu.slice<{dim = 0, parent = #blocked}>
#col = #tilegpu.slice<{dim = 1, parent = #blocked}>
#kmajor = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [0, 1]}>
#nmajor = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, "tilegpu.target" = "sm_90a"} {
  // CHECK-LABEL: func.func @operands
  func.func @operands(%b32: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %b16: !tile.ptr<f16> {tile.divisibility = 16 : i32}) -> (!tilegpu.memdesc<32x128xf32, #kmajor>, !tilegpu.memdesc<32x128xf32, #nmajor>, !tilegpu.memdesc<32x128xf16, #nmajor>) {
    %rn = tile.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32, #row>
    %rk = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32, #col>
    %n = tile.expand_dims %rn {axis = 0 : i32} : tensor<128xi32, #row> -> tensor<1x128xi32, #blocked>
    %k = tile.expand_dims %rk {axis = 1 : i32} : tensor<32xi32, #col> -> tensor<32x1xi32, #blocked>
    %c128 = arith.constant dense<128> : tensor<32x1xi32, #blocked>
    %krow = arith.muli %k, %c128 : tensor<32x1xi32, #blocked>
    %kb = tile.broadcast %krow : tensor<32x1xi32, #blocked> -> tensor<32x128xi32, #blocked>
    %nb = tile.broadcast %n : tensor<1x128xi32, #blocked> -> tensor<32x128xi32, #blocked>
    %offs = arith.addi %kb, %nb : tensor<32x128xi32, #blocked>
    %s32 = tile.splat %b32 : !tile.ptr<f32> -> tensor<32x128x!tile.ptr<f32>, #blocked>
    %p32 = tile.addptr %s32, %offs : tensor<32x128x!tile.ptr<f32>, #blocked>, tensor<32x128xi32, #blocked>
    %s16 = tile.splat %b16 : !tile.ptr<f16> -> tensor<32x128x!tile.ptr<f16>, #blocked>
    %p16 = tile.addptr %s16, %offs : tensor<32x128x!tile.ptr<f16>, #blocked>, tensor<32x128xi32, #blocked>
    // CHECK: tile.load %{{.+}} : tensor<32x128x!tile.ptr<f32>, #[[TRANSPOSING]]>
    %v = tile.load %p32 : tensor<32x128x!tile.ptr<f32>, #blocked>
    %t = tilegpu.local_alloc %v : (tensor<32x128xf32, #blocked>) -> !tilegpu.memdesc<32x128xf32, #kmajor>
    // CHECK: tile.load %{{.+}} : tensor<32x128x!tile.ptr<f32>, #[[VEC4]]>
    %w = tile.load %p32 : tensor<32x128x!tile.ptr<f32>, #blocked>
    %u = tilegpu.local_alloc %w : (tensor<32x128xf32, #blocked>) -> !tilegpu.memdesc<32x128xf32, #nmajor>
    // CHECK: tile.load %{{.+}} : tensor<32x128x!tile.ptr<f16>, #[[VEC8]]>
    %h = tile.load %p16 : tensor<32x128x!tile.ptr<f16>, #blocked>
    %g = tilegpu.local_alloc %h : (tensor<32x128xf16, #blocked>) -> !tilegpu.memdesc<32x128xf16, #nmajor>
    return %t, %u, %g : !tilegpu.memdesc<32x128xf32, #kmajor>, !tilegpu.memdesc<32x128xf32, #nmajor>, !tilegpu.memdesc<32x128xf16, #nmajor>
  }
}
