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
