// RUN: tilec-opt -split-input-file -tilegpu-allocate-shared-memory -convert-tilegpu-to-llvm -verify-diagnostics %s

// Four consecutive values a thread: a lane's elements are not one round's,
// so the ranks would follow the wrong order. Refused, not ranked wrong
// (tile-to-tilegpu gives bin_rank the default layout).
#vec = #tilegpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @vector_layout(%x: tensor<512xi32, #vec>) -> tensor<512xi32, #vec> {
    // expected-error @+2 {{failed to legalize operation 'tile.bin_rank'}}
    // expected-error @+1 {{cannot rank the elements of 'tensor<512xi32, #tilegpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>': its lane bases do not hold consecutive elements from the lowest bit up}}
    %0 = tile.bin_rank %x {bins = 16 : i32} : tensor<512xi32, #vec>
    return %0 : tensor<512xi32, #vec>
  }
}
