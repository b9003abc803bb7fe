// RUN: tilec-opt %s -split-input-file -tilegpu-allocate-shared-memory -tilegpu-check-block-resources -verify-diagnostics

// What counts is the total: two buffers of 128 KiB fit an sm_90 block one
// after the other, not both at once.
#shared = #tilegpu.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90"} {
  func.func @one_after_the_other() attributes {tile.kernel} {
    %a = tilegpu.local_alloc : () -> !tilegpu.memdesc<128x256xf32, #shared, mutable>
    tilegpu.local_dealloc %a : !tilegpu.memdesc<128x256xf32, #shared, mutable>
    %b = tilegpu.local_alloc : () -> !tilegpu.memdesc<128x256xf32, #shared, mutable>
    tilegpu.local_dealloc %b : !tilegpu.memdesc<128x256xf32, #shared, mutable>
    return
  }
}

// -----

#shared = #tilegpu.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90"} {
  func.func @both_at_once() attributes {tile.kernel} {
    %a = tilegpu.local_alloc : () -> !tilegpu.memdesc<128x256xf32, #shared, mutable>
    // expected-error @+1 {{'tilegpu.local_alloc' op needs 262144 B of shared memory in all; a block on sm_90 has at most 232448 B (this op's 131072 B at offset 131072 cross the limit)}}
    %b = tilegpu.local_alloc : () -> !tilegpu.memdesc<128x256xf32, #shared, mutable>
    tilegpu.local_dealloc %a : !tilegpu.memdesc<128x256xf32, #shared, mutable>
    tilegpu.local_dealloc %b : !tilegpu.memdesc<128x256xf32, #shared, mutable>
    return
  }
}

// -----

// The error names the allocation that first crosses the limit, not the few
// bytes placed last (as a pipeline's mbarriers are, after its rings).
#shared = #tilegpu.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90"} {
  func.func @crossing_then_small() attributes {tile.kernel} {
    %a = tilegpu.local_alloc : () -> !tilegpu.memdesc<128x256xf32, #shared, mutable>
    // expected-error @+1 {{'tilegpu.local_alloc' op needs 262208 B of shared memory in all; a block on sm_90 has at most 232448 B (this op's 131072 B at offset 131072 cross the limit)}}
    %b = tilegpu.local_alloc : () -> !tilegpu.memdesc<128x256xf32, #shared, mutable>
    %c = tilegpu.local_alloc : () -> !tilegpu.memdesc<4x4xf32, #shared, mutable>
    tilegpu.local_dealloc %a : !tilegpu.memdesc<128x256xf32, #shared, mutable>
    tilegpu.local_dealloc %b : !tilegpu.memdesc<128x256xf32, #shared, mutable>
    tilegpu.local_dealloc %c : !tilegpu.memdesc<4x4xf32, #shared, mutable>
    return
  }
}

// -----

// Two blocks of 96 KiB an SM: 2 x (96 KiB + the 1 KiB reserved per block)
// fit an sm_90 SM's 228 KiB.
#shared = #tilegpu.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 8 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90", "tilegpu.min-blocks-per-sm" = 2 : i32} {
  func.func @two_blocks_fit() attributes {tile.kernel} {
    %a = tilegpu.local_alloc : () -> !tilegpu.memdesc<96x256xf32, #shared, mutable>
    tilegpu.local_dealloc %a : !tilegpu.memdesc<96x256xf32, #shared, mutable>
    return
  }
}

// -----

// A block of 128 KiB fits an sm_90 block, but two of them do not fit its SM.
#shared = #tilegpu.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 8 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90", "tilegpu.min-blocks-per-sm" = 2 : i32} {
  // expected-error @+1 {{tilegpu.min-blocks-per-sm = 2 needs 2 x (131072 + 1024) B of shared memory on an SM; an SM of sm_90 has 233472 B}}
  func.func @two_blocks_do_not_fit() attributes {tile.kernel} {
    %a = tilegpu.local_alloc : () -> !tilegpu.memdesc<128x256xf32, #shared, mutable>
    tilegpu.local_dealloc %a : !tilegpu.memdesc<128x256xf32, #shared, mutable>
    return
  }
}
