// RUN: tilec-opt -tilegpu-pipeline=num-stages=3 -split-input-file -verify-diagnostics %s

// convert-tile-to-tilegpu leaves a tile.load_tile only for a loop this pass
// pipelines: one anywhere else has no lowering, and says so.
#blocked = #tilegpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90a", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @stray(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %m: i32, %k: i32, %s: i32) -> tensor<128x64xf16, #blocked> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    // expected-error @+1 {{was left for a TMA copy outside a pipelined loop}}
    %t = tile.load_tile %a[%c0, %c0] shape [%m, %k] strides [%s, %c1] : !tile.ptr<f16> -> tensor<128x64xf16, #blocked>
    return %t : tensor<128x64xf16, #blocked>
  }
}
