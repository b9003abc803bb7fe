// RUN: tilec-opt %s -split-input-file -tilegpu-allocate-shared-memory -tilegpu-insert-barriers -convert-tilegpu-to-llvm | FileCheck %s

// Tensor-core operands go through shared memory in 16-byte vectors, XOR
// swizzled, and come back with ldmatrix: A (K contiguous) without .trans,
// B (N contiguous, K strided) with it. 64x32 f16 is 16 elements, two 16-byte
// vectors, per thread. Each warp of the 2x2 mma grid reads a
// 32x32 block of A (2 m16 x 2 k16 fragments: 4 x4 loads) and a 32x32 block of
// B (4 n8 x 2 k16 fragments: 4 x4.trans loads), then 2 x 4 x 2 = 16 mma.sync.
// Each conversion fences its stores from its ldmatrix; both use offset 0, so
// tilegpu-insert-barriers fences B's stores from A's reads, and nothing comes
// before A's.

// CHECK-LABEL: llvm.func @operands
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-2: llvm.store %{{.+}}, %{{.+}} {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: llvm.xor
// CHECK-COUNT-4: nvvm.ldmatrix %{{.+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK: nvvm.barrier0
// CHECK-COUNT-2: llvm.store %{{.+}}, %{{.+}} {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-COUNT-4: nvvm.ldmatrix %{{.+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
// The mma operands are the ldmatrix registers themselves.
// CHECK-NOT: llvm.insertelement
// CHECK-COUNT-16: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
#blocked = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blockedB = #tilegpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#opA = #tilegpu.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>
#opB = #tilegpu.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90"} {
  func.func @operands(%a: tensor<64x32xf16, #blocked>, %b: tensor<32x64xf16, #blockedB>, %c: tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #mma> {
    %x = tilegpu.convert_layout %a : tensor<64x32xf16, #blocked> -> tensor<64x32xf16, #opA>
    %y = tilegpu.convert_layout %b : tensor<32x64xf16, #blockedB> -> tensor<32x64xf16, #opB>
    %d = tile.dot %x, %y, %c : tensor<64x32xf16, #opA> * tensor<32x64xf16, #opB> -> tensor<64x64xf32, #mma>
    return %d : tensor<64x64xf32, #mma>
  }
}

// -----

// A K-contiguous B (stored N x K, transposed in registers by the layout) is
// read without .trans. Rows of 16 elements (32 bytes) take perPhase 4,
// maxPhase 2.
// CHECK-LABEL: llvm.func @b_k_contiguous
// CHECK: nvvm.ldmatrix %{{.+}} {{{.*}}layout = #nvvm.mma_layout<row>{{.*}}} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK-NOT: #nvvm.mma_layout<col>
#kmajor = #tilegpu.blocked<{sizePerThread = [8, 1], threadsPerWarp = [2, 16], warpsPerCTA = [1, 4], order = [0, 1]}>
#mma = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#opB = #tilegpu.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90"} {
  func.func @b_k_contiguous(%b: tensor<16x64xf16, #kmajor>) -> tensor<16x64xf16, #opB> {
    %y = tilegpu.convert_layout %b : tensor<16x64xf16, #kmajor> -> tensor<16x64xf16, #opB>
    return %y : tensor<16x64xf16, #opB>
  }
}

// -----

// f32 operands (tf32 or FMA) are not ldmatrix's: the generic round trip runs.
// CHECK-LABEL: llvm.func @f32_operand
// CHECK-NOT: nvvm.ldmatrix
// CHECK: llvm.load
#blocked = #tilegpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #tilegpu.mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#opA = #tilegpu.dot_op<{opIdx = 0, parent = #mma, kWidth = 1}>
module attributes {"tilegpu.num-warps" = 4 : i32, "tilegpu.threads-per-warp" = 32 : i32, tilegpu.target = "sm_90"} {
  func.func @f32_operand(%a: tensor<64x16xf32, #blocked>) -> tensor<64x16xf32, #opA> {
    %x = tilegpu.convert_layout %a : tensor<64x16xf32, #blocked> -> tensor<64x16xf32, #opA>
    return %x : tensor<64x16xf32, #opA>
  }
}
