// The kernels in kernels/ parse, verify and round-trip through tilec-opt.
// RUN: tilec-opt %kernels/matmul.ttir > %t.matmul.mlir
// RUN: tilec-opt %t.matmul.mlir | diff - %t.matmul.mlir
// RUN: tilec-opt %kernels/vector_add.ttir > %t.vadd.mlir
// RUN: tilec-opt %t.vadd.mlir | diff - %t.vadd.mlir
// RUN: FileCheck %s --check-prefix=MATMUL < %t.matmul.mlir
// RUN: FileCheck %s --check-prefix=VADD < %t.vadd.mlir

// MATMUL: func.func @matmul
// MATMUL-SAME: attributes {tile.kernel}
// MATMUL: scf.for
// MATMUL: tile.load %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32x!tile.ptr<f16>>
// MATMUL: tile.dot %{{.*}} : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
// MATMUL: scf.yield
// MATMUL: tile.store %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x64x!tile.ptr<f16>>

// VADD: func.func @vector_add
// VADD: tile.load
// VADD: arith.addf %{{.*}}, %{{.*}} : tensor<1024xf32>
// VADD: tile.store
