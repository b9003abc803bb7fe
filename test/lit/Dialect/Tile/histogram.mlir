// RUN: tilec-opt %s -split-input-file | FileCheck %s
// RUN: tilec-opt %s -split-input-file -mlir-print-op-generic | tilec-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @histogram
// CHECK: %{{.+}} = tile.histogram %arg0 : tensor<256xi32> -> tensor<128xi32>
// CHECK: %{{.+}} = tile.histogram %arg0, %arg1 : tensor<256xi32> -> tensor<16xi32>
func.func @histogram(%x: tensor<256xi32>, %m: tensor<256xi1>) {
  %0 = tile.histogram %x : tensor<256xi32> -> tensor<128xi32>
  %1 = tile.histogram %x, %m : tensor<256xi32> -> tensor<16xi32>
  return
}

// -----

// CHECK-LABEL: func.func @bin_rank
// CHECK: %{{.+}} = tile.bin_rank %arg0 {bins = 128 : i32} : tensor<256xi32>
// CHECK: %{{.+}} = tile.bin_rank %arg0, %arg1 {bins = 3 : i32} : tensor<256xi32>
func.func @bin_rank(%x: tensor<256xi32>, %m: tensor<256xi1>) {
  %0 = tile.bin_rank %x {bins = 128 : i32} : tensor<256xi32>
  %1 = tile.bin_rank %x, %m {bins = 3 : i32} : tensor<256xi32>
  return
}
