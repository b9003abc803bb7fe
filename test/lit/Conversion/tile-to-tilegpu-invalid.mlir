// RUN: tilec-opt %s -split-input-file -convert-tile-to-tilegpu -verify-diagnostics
// RUN: not tilec-opt %s -convert-tile-to-tilegpu="num-warps=3" 2>&1 | FileCheck %s --check-prefix=WARPS
// RUN: not tilec-opt %s -convert-tile-to-tilegpu="num-warps=64" 2>&1 | FileCheck %s --check-prefix=WARPS64
// RUN: not tilec-opt %s -convert-tile-to-tilegpu="target=gfx90a" 2>&1 | FileCheck %s --check-prefix=TARGET
// WARPS: error: num-warps must be a power of two from 1 to 32, got 3
// WARPS64: error: num-warps must be a power of two from 1 to 32, got 64
// TARGET: error: target must look like sm_90, got 'gfx90a'

func.func @not_power_of_two() -> tensor<96xi32> {
  // expected-error @+1 {{tensor dimensions must be powers of two, got 'tensor<96xi32>'}}
  %r = tile.make_range {start = 0 : i32, end = 96 : i32} : tensor<96xi32>
  return %r : tensor<96xi32>
}
