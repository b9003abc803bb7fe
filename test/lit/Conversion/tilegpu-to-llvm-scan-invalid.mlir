// RUN: tilec-opt -split-input-file -tilegpu-allocate-shared-memory -convert-tilegpu-to-llvm -verify-diagnostics %s

// An mma layout puts a register bit (rows g + 8) between its lanes and warps
// along the rows: refused, not scanned wrong.
#mma = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]}>
module attributes {"tilegpu.num-warps" = 4 : i32, tilegpu.target = "sm_90", "tilegpu.threads-per-warp" = 32 : i32} {
  func.func @mma_rows(%x: tensor<64x8xf32, #mma>) -> tensor<64x8xf32, #mma> {
    // expected-error @+2 {{failed to legalize operation 'tile.scan'}}
    // expected-error @+1 {{cannot scan along axis 0 of 'tensor<64x8xf32, #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]}>>': lanes, warps and registers do not follow each other along the axis (registers, lanes, warps, registers)}}
    %0 = tile.scan add %x {axis = 0 : i32} : tensor<64x8xf32, #mma>
    return %0 : tensor<64x8xf32, #mma>
  }
}
