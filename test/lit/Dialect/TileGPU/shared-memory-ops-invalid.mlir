// RUN: tilec-opt -split-input-file -verify-diagnostics %s

#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
// expected-error @+1 {{a memdesc needs a shared encoding}}
func.func @not_shared(%m: !tilegpu.memdesc<64x32xf16, #blocked, mutable>) {
  return
}

// -----

#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
// expected-error @+1 {{the encoding orders 2 dimensions but the memdesc has 1}}
func.func @rank(%m: !tilegpu.memdesc<64xf16, #shared, mutable>) {
  return
}

// -----

// expected-error @+1 {{vec, perPhase and maxPhase entries must be powers of two, got 3}}
#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 3, maxPhase = 4, order = [1, 0]}>

// -----

#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
func.func @alloc_immutable() {
  // expected-error @+1 {{without a source must give a mutable buffer}}
  %m = tilegpu.local_alloc : () -> !tilegpu.memdesc<64x32xf16, #shared>
  return
}

// -----

#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
func.func @store_immutable(%t: tensor<64x32xf16, #blocked>) {
  %m = tilegpu.local_alloc %t : (tensor<64x32xf16, #blocked>) -> !tilegpu.memdesc<64x32xf16, #shared>
  // expected-error @+1 {{writes an immutable buffer}}
  tilegpu.local_store %t, %m : tensor<64x32xf16, #blocked> -> !tilegpu.memdesc<64x32xf16, #shared>
  return
}

// -----

#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
func.func @load_shape(%m: !tilegpu.memdesc<64x32xf16, #shared, mutable>) {
  // expected-error @+1 {{differ in shape or element type}}
  %t = tilegpu.local_load %m : !tilegpu.memdesc<64x32xf16, #shared, mutable> -> tensor<32x64xf16, #blocked>
  return
}

// -----

#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
func.func @index_no_copies(%m: !tilegpu.memdesc<64x32xf16, #shared, mutable>, %i: i32) {
  // expected-error @+1 {{has no leading copy dimension}}
  %s = tilegpu.memdesc_index %m[%i] : !tilegpu.memdesc<64x32xf16, #shared, mutable> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
  return
}

// -----

#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
func.func @copy_type(%p: tensor<64x32x!tile.ptr<f32>, #blocked>, %m: !tilegpu.memdesc<64x32xf16, #shared, mutable>) {
  // expected-error @+1 {{differ in shape or element type}}
  tilegpu.async_copy_global_to_local %p, %m : tensor<64x32x!tile.ptr<f32>, #blocked> -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
  return
}

// -----

// expected-error @+1 {{swizzlingByteWidth must be 32, 64 or 128, got 16}}
#nv = #tilegpu.nvmma_shared<{swizzlingByteWidth = 16, order = [1, 0]}>

// -----

#mma2 = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#nv = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
func.func @v2_accumulator(%a: !tilegpu.memdesc<64x64xf16, #nv>, %b: !tilegpu.memdesc<64x64xf16, #nv>, %c: tensor<64x64xf32, #mma2>) {
  // expected-error @+1 {{the accumulator needs an mma v3 layout}}
  %d = tilegpu.warpgroup_dot %a, %b, %c : !tilegpu.memdesc<64x64xf16, #nv> * !tilegpu.memdesc<64x64xf16, #nv> -> tensor<64x64xf32, #mma2>
  return
}

// -----

#mma3 = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
#nv = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
func.func @shapes(%a: !tilegpu.memdesc<64x32xf16, #nv>, %b: !tilegpu.memdesc<64x64xf16, #nv>, %c: tensor<64x64xf32, #mma3>) {
  // expected-error @+1 {{shapes do not make a product}}
  %d = tilegpu.warpgroup_dot %a, %b, %c : !tilegpu.memdesc<64x32xf16, #nv> * !tilegpu.memdesc<64x64xf16, #nv> -> tensor<64x64xf32, #mma3>
  return
}

// -----

// tf32 has no transposed form: an N-major b is refused.
#mma3 = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 8]}>
#nv = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
func.func @tf32_n_major(%a: !tilegpu.memdesc<64x32xf32, #nv>, %b: !tilegpu.memdesc<32x64xf32, #nv>, %c: tensor<64x64xf32, #mma3>) {
  // expected-error @+1 {{reads 'f32' operands K-major only; operand b is '!tilegpu.memdesc<32x64xf32, #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>>'}}
  %d = tilegpu.warpgroup_dot %a, %b, %c : !tilegpu.memdesc<64x32xf32, #nv> * !tilegpu.memdesc<32x64xf32, #nv> -> tensor<64x64xf32, #mma3>
  return
}

// -----

// K steps are whole instructions: 8 elements for tf32.
#mma3 = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 8]}>
#ka = #tilegpu.nvmma_shared<{swizzlingByteWidth = 32, order = [1, 0]}>
#kb = #tilegpu.nvmma_shared<{swizzlingByteWidth = 32, order = [0, 1]}>
func.func @tf32_partial_k(%a: !tilegpu.memdesc<64x12xf32, #ka>, %b: !tilegpu.memdesc<12x64xf32, #kb>, %c: tensor<64x64xf32, #mma3>) {
  // expected-error @+1 {{is not whole wgmma instructions of #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 8]}> (a power-of-two N, 8-wide K steps)}}
  %d = tilegpu.warpgroup_dot %a, %b, %c : !tilegpu.memdesc<64x12xf32, #ka> * !tilegpu.memdesc<12x64xf32, #kb> -> tensor<64x64xf32, #mma3>
  return
}

// -----

#mma3 = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
#nv = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
func.func @i8_operands(%a: !tilegpu.memdesc<64x64xi8, #nv>, %b: !tilegpu.memdesc<64x64xi8, #nv>, %c: tensor<64x64xf32, #mma3>) {
  // expected-error @+1 {{operands must be f16, bf16 or f32 (tf32), got 'i8'}}
  %d = tilegpu.warpgroup_dot %a, %b, %c : !tilegpu.memdesc<64x64xi8, #nv> * !tilegpu.memdesc<64x64xi8, #nv> -> tensor<64x64xf32, #mma3>
  return
}

// -----

// A transposed product (D^T = B^T A^T): b in registers needs a transposed
// accumulator layout, and a transposed layout needs b in registers.
#mma3 = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 8]}>
#nv = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
#blocked = #tilegpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
func.func @register_b_untransposed(%a: !tilegpu.memdesc<64x32xf32, #nv>, %b: tensor<32x64xf32, #blocked>, %c: tensor<64x64xf32, #mma3>) {
  // expected-error @+1 {{takes b from registers only for a transposed accumulator layout (D^T = B^T A^T, B^T as wgmma's A); got #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 8]}>}}
  %d = tilegpu.warpgroup_dot %a, %b, %c : !tilegpu.memdesc<64x32xf32, #nv> * tensor<32x64xf32, #blocked> -> tensor<64x64xf32, #mma3>
  return
}

// -----

#mmat = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 8], transposed = true}>
#nv = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
#kb = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [0, 1]}>
func.func @transposed_shared_b(%a: !tilegpu.memdesc<64x32xf32, #nv>, %b: !tilegpu.memdesc<32x64xf32, #kb>, %c: tensor<64x64xf32, #mmat>) {
  // expected-error @+1 {{a transposed accumulator layout takes b from registers, got '!tilegpu.memdesc<32x64xf32, #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [0, 1]}>>'}}
  %d = tilegpu.warpgroup_dot %a, %b, %c : !tilegpu.memdesc<64x32xf32, #nv> * !tilegpu.memdesc<32x64xf32, #kb> -> tensor<64x64xf32, #mmat>
  return
}

// -----

// Register b holds B^T's wgmma A fragment: the dot_op layout of the
// accumulator, operand 1, kWidth 1.
#mmat = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 8], transposed = true}>
#nv = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
#blocked = #tilegpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
func.func @register_b_layout(%a: !tilegpu.memdesc<64x32xf32, #nv>, %b: tensor<32x64xf32, #blocked>, %c: tensor<64x64xf32, #mmat>) {
  // expected-error @+1 {{register b must have the layout #tilegpu.dot_op<{opIdx = 1, parent = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 8], transposed = true}>, kWidth = 1}>, got 'tensor<32x64xf32, #tilegpu.blocked<}}
  %d = tilegpu.warpgroup_dot %a, %b, %c : !tilegpu.memdesc<64x32xf32, #nv> * tensor<32x64xf32, #blocked> -> tensor<64x64xf32, #mmat>
  return
}

// -----

// Only tf32 takes the register form.
#mmat = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 16], transposed = true}>
#nv = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
func.func @register_b_f16(%a: !tilegpu.memdesc<64x64xf16, #nv>, %b: tensor<64x64xf16, #blocked>, %c: tensor<64x64xf32, #mmat>) {
  // expected-error @+1 {{takes register operands of tf32 dots only (f32 elements), got 'tensor<64x64xf16}}
  %d = tilegpu.warpgroup_dot %a, %b, %c : !tilegpu.memdesc<64x64xf16, #nv> * tensor<64x64xf16, #blocked> -> tensor<64x64xf32, #mmat>
  return
}

// -----

// wgmma's B (A^T, the tile of a) is read K-major for tf32 here too.
#mmat = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 8], transposed = true}>
#dot = #tilegpu.dot_op<{opIdx = 1, parent = #mmat, kWidth = 1}>
#mn = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [0, 1]}>
func.func @transposed_a_m_major(%a: !tilegpu.memdesc<64x32xf32, #mn>, %b: tensor<32x64xf32, #dot>, %c: tensor<64x64xf32, #mmat>) {
  // expected-error @+1 {{reads 'f32' operands K-major only; operand a is}}
  %d = tilegpu.warpgroup_dot %a, %b, %c : !tilegpu.memdesc<64x32xf32, #mn> * tensor<32x64xf32, #dot> -> tensor<64x64xf32, #mmat>
  return
}

// -----

// expected-error @+1 {{only mma v3 (wgmma) computes transposed products}}
#mma2 = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8], transposed = true}>

// -----

#mma3 = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 8]}>
// expected-error @+1 {{operand 1 of an mma v3 parent is wgmma's B, which is read from shared memory; only operand 0 can be in registers}}
#dot = #tilegpu.dot_op<{opIdx = 1, parent = #mma3, kWidth = 1}>

// -----

#mmat = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 8], transposed = true}>
// expected-error @+1 {{operand 0 of an mma v3 transposed parent is wgmma's B, which is read from shared memory; only operand 1 can be in registers}}
#dot = #tilegpu.dot_op<{opIdx = 0, parent = #mmat, kWidth = 1}>

// -----

#mmat = #tilegpu.mma<{versionMajor = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 16], transposed = true}>
// expected-error @+1 {{mma v3 operands in registers are tf32 A fragments (kWidth 1), got kWidth 2}}
#dot = #tilegpu.dot_op<{opIdx = 1, parent = #mmat, kWidth = 2}>

// -----

#bars = #tilegpu.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
func.func @barrier_shape(%b: !tilegpu.memdesc<2x1xi64, #bars, mutable>) {
  // expected-error @+1 {{needs an mbarrier (a mutable memdesc<1x1xi64>), got '!tilegpu.memdesc<2x1xi64, #tilegpu.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>, mutable>'}}
  tilegpu.init_barrier %b, 1 : !tilegpu.memdesc<2x1xi64, #bars, mutable>
  return
}

// -----

#bars = #tilegpu.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
func.func @barrier_count(%b: !tilegpu.memdesc<1x1xi64, #bars, mutable>) {
  // expected-error @+1 {{counts 1 to 2^20 - 1 arrivals, got 0}}
  tilegpu.init_barrier %b, 0 : !tilegpu.memdesc<1x1xi64, #bars, mutable>
  return
}

// -----

#bars = #tilegpu.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
func.func @tma_layout(%map: !tilegpu.tensormap, %i: i32, %p: i1, %d: !tilegpu.memdesc<64x64xf16, #shared, mutable>, %b: !tilegpu.memdesc<1x1xi64, #bars, mutable>) {
  // expected-error @+1 {{copies into a row-major nvmma_shared tile}}
  tilegpu.async_tma_copy %map[%i, %i], %d, %b, %p : !tilegpu.tensormap, !tilegpu.memdesc<64x64xf16, #shared, mutable>, !tilegpu.memdesc<1x1xi64, #bars, mutable>
  return
}

// -----

#bars = #tilegpu.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#shared = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
func.func @tma_box_rows(%map: !tilegpu.tensormap, %i: i32, %p: i1, %d: !tilegpu.memdesc<512x64xf16, #shared, mutable>, %b: !tilegpu.memdesc<1x1xi64, #bars, mutable>) {
  // expected-error @+1 {{copies boxes of at most 256 rows and whole 128-byte swizzle spans}}
  tilegpu.async_tma_copy %map[%i, %i], %d, %b, %p : !tilegpu.tensormap, !tilegpu.memdesc<512x64xf16, #shared, mutable>, !tilegpu.memdesc<1x1xi64, #bars, mutable>
  return
}

// -----

#bars = #tilegpu.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#shared = #tilegpu.nvmma_shared<{swizzlingByteWidth = 128, order = [1, 0]}>
func.func @tma_immutable(%map: !tilegpu.tensormap, %i: i32, %p: i1, %d: !tilegpu.memdesc<64x64xf16, #shared>, %b: !tilegpu.memdesc<1x1xi64, #bars, mutable>) {
  // expected-error @+1 {{writes an immutable buffer}}
  tilegpu.async_tma_copy %map[%i, %i], %d, %b, %p : !tilegpu.tensormap, !tilegpu.memdesc<64x64xf16, #shared>, !tilegpu.memdesc<1x1xi64, #bars, mutable>
  return
}
