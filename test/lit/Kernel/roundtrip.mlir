// What tilec-kernel prints is ttir that tilec-opt reads, prints back unchanged,
// and that canonicalize + cse leave alone (specialize already ran them).
// RUN: tilec-kernel --kernel matmul --config BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_warps=4 > %t.matmul.mlir
// RUN: tilec-opt %t.matmul.mlir > %t.matmul.opt.mlir
// RUN: tilec-opt %t.matmul.opt.mlir | diff - %t.matmul.opt.mlir
// RUN: tilec-opt -canonicalize -cse %t.matmul.mlir | diff - %t.matmul.opt.mlir
// RUN: tilec-kernel --kernel matmul --numbered-values --config BLOCK_M=64,BLOCK_N=64,BLOCK_K=32 | diff - %t.matmul.opt.mlir
// RUN: FileCheck %s < %t.matmul.opt.mlir

// RUN: tilec-kernel --kernel gather_matmul --config BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f32 > %t.gather.mlir
// RUN: tilec-opt %t.gather.mlir > %t.gather.opt.mlir
// RUN: tilec-opt -canonicalize -cse %t.gather.mlir | diff - %t.gather.opt.mlir
// RUN: tilec-kernel --kernel softmax --config BLOCK_N=1024 | tilec-opt -canonicalize -cse > /dev/null
// RUN: tilec-kernel --kernel vector_add --config BLOCK=256 | tilec-opt -canonicalize -cse > /dev/null

// CHECK: func.func @matmul(%arg0: !tile.ptr<f16> {tile.divisibility = 16 : i32}
// CHECK: scf.for
// CHECK: tile.dot
// CHECK: scf.yield
// CHECK: tile.store
