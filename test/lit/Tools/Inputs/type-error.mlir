func.func @f(%x: f16) -> tensor<4xf32> {
  %0 = tile.splat %x : f16 -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
