// RUN: tilec-opt -convert-tilegpu-to-llvm -split-input-file -verify-diagnostics %s

#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90", tilegpu.shared = 8192 : i32} {
  func.func @no_offset() {
    // expected-error @+1 {{'tilegpu.local_alloc' op uses shared memory but has no 'tilegpu.offset': run tilegpu-allocate-shared-memory first}}
    %a = tilegpu.local_alloc : () -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    return
  }
}

// -----

#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90", tilegpu.shared = 8192 : i32} {
  func.func @misaligned_offset() {
    // expected-error @+1 {{needs a 'tilegpu.offset' that is a non-negative integer multiple of 16 (bytes; its vectors are aligned), got 8 : i32}}
    %a = tilegpu.local_alloc {tilegpu.offset = 8 : i32} : () -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    return
  }
}

// -----

// 8-element chunks over 8 phases need rows of 64 elements.
#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90", tilegpu.shared = 4096 : i32} {
  func.func @swizzle_past_row() {
    // expected-error @+1 {{swizzles chunks of 8 elements over 8 phases, which rows of 32 elements of '!tilegpu.memdesc<64x32xf16, #tilegpu.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>, mutable>' do not hold}}
    %a = tilegpu.local_alloc {tilegpu.offset = 0 : i32} : () -> !tilegpu.memdesc<64x32xf16, #shared, mutable>
    return
  }
}

// -----

// Nothing is known of these pointers' contiguity: one f16 (2 B) per copy.
#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #tilegpu.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90", tilegpu.shared = 8192 : i32} {
  func.func @narrow_copy(%ptrs: tensor<128x32x!tile.ptr<f16>, #blocked>) {
    %a = tilegpu.local_alloc {tilegpu.offset = 0 : i32} : () -> !tilegpu.memdesc<128x32xf16, #shared, mutable>
    // expected-error @+1 {{'tilegpu.async_copy_global_to_local' op copies 2 B per cp.async from 'tensor<128x32x!tile.ptr<f16>, #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>>' (the layout's contiguous registers, the pointers' contiguity and alignment, the mask's uniformity and the swizzle chunk allow no more); cp.async moves 4, 8 or 16 B}}
    tilegpu.async_copy_global_to_local %ptrs, %a : tensor<128x32x!tile.ptr<f16>, #blocked> -> !tilegpu.memdesc<128x32xf16, #shared, mutable>
    return
  }
}
