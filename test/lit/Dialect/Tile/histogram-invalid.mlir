// RUN: tilec-opt %s -split-input-file -verify-diagnostics

func.func @histogram_2d(%x: tensor<16x16xi32>) {
  // expected-error @+1 {{counts a 1-D tensor into a 1-D tensor of bins, got 'tensor<16x16xi32>' -> 'tensor<128xi32>'}}
  %0 = tile.histogram %x : tensor<16x16xi32> -> tensor<128xi32>
  return
}

// -----

func.func @histogram_f32(%x: tensor<256xf32>) {
  // expected-error @+1 {{'src' must be tensor of 32-bit signless integer values, but got 'tensor<256xf32>'}}
  %0 = tile.histogram %x : tensor<256xf32> -> tensor<128xi32>
  return
}

// -----

func.func @histogram_mask_shape(%x: tensor<256xi32>, %m: tensor<128xi1>) {
  // expected-error @+1 {{failed to verify that mask is i1 with the shape of src}}
  %0 = "tile.histogram"(%x, %m) : (tensor<256xi32>, tensor<128xi1>) -> tensor<128xi32>
  return
}

// -----

func.func @bin_rank_no_bins(%x: tensor<256xi32>) {
  // expected-error @+1 {{attribute 'bins' failed to satisfy constraint: 32-bit signless integer attribute whose minimum value is 1}}
  %0 = tile.bin_rank %x {bins = 0 : i32} : tensor<256xi32>
  return
}

// -----

func.func @bin_rank_2d(%x: tensor<16x16xi32>) {
  // expected-error @+1 {{ranks the elements of a 1-D tensor, got 'tensor<16x16xi32>'}}
  %0 = tile.bin_rank %x {bins = 4 : i32} : tensor<16x16xi32>
  return
}
