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
