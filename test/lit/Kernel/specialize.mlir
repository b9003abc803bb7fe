// The kernel definitions specialize to the ttir their sources describe.
// RUN: tilec-kernel --kernel matmul --config BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_warps=4 --arg-values M=512,N=512,K=512 | FileCheck %s --check-prefix=MATMUL
// RUN: tilec-kernel --kernel matmul --config BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_warps=4 | FileCheck %s --check-prefix=GENERIC
// RUN: tilec-kernel --kernel matmul --config BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f32,ALLOW_TF32=1 | FileCheck %s --check-prefix=MATMUL-F32
// RUN: tilec-kernel --kernel vector_add --config BLOCK=1024 | FileCheck %s --check-prefix=VADD
// RUN: tilec-kernel --kernel softmax --config BLOCK_N=256,num_warps=8 | FileCheck %s --check-prefix=SOFTMAX
// RUN: tilec-kernel --kernel gather_matmul --config BLOCK_M=64,BLOCK_N=32,BLOCK_K=32 | FileCheck %s --check-prefix=GATHER

// A dense call as Triton specializes it: unit strides are constants, the
// pointers, sizes and row strides are divisible by 16.
// MATMUL-LABEL: func.func @matmul(
// MATMUL-SAME: %a_ptr: !tile.ptr<f16> {tile.divisibility = 16 : i32}
// MATMUL-SAME: %b_ptr: !tile.ptr<f16> {tile.divisibility = 16 : i32}
// MATMUL-SAME: %c_ptr: !tile.ptr<f16> {tile.divisibility = 16 : i32}
// MATMUL-SAME: %M: i32 {tile.divisibility = 16 : i32}
// MATMUL-SAME: %stride_am: i32 {tile.divisibility = 16 : i32}, %stride_ak: i32 {tile.equal_to_one}
// MATMUL-SAME: %stride_bk: i32 {tile.divisibility = 16 : i32}, %stride_bn: i32 {tile.equal_to_one}
// MATMUL-SAME: %stride_cm: i32 {tile.divisibility = 16 : i32}, %stride_cn: i32 {tile.equal_to_one})
// MATMUL-SAME: attributes {tile.kernel}
// MATMUL-DAG: %[[ACC0:.+]] = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
// GROUP_M = 8 swizzle of the one-dimensional program id.
// MATMUL: %[[PID:.+]] = tile.program_id x : i32
// MATMUL: %num_pid_in_group = arith.muli %{{.+}}, %c8_i32 : i32
// MATMUL: %group_size_m{{.*}} = arith.minsi %{{.+}}, %c8_i32 : i32
// MATMUL: %[[ROW0:.+]] = arith.muli %{{.+}}, %c64_i32 : i32
// MATMUL: %[[COL0:.+]] = arith.muli %{{.+}}, %c64_i32 : i32
// MATMUL: %[[LOOP:.+]] = scf.for %[[KT:.+]] = %c0_i32 to %{{.+}} step %c1_i32 iter_args(%[[ACC:.+]] = %[[ACC0]]) -> (tensor<64x64xf32>) : i32
// A and B are read a block at a time, zeros past M, N and K (the unit
// column strides are constants).
// MATMUL: %[[K0:.+]] = arith.muli %[[KT]], %c32_i32 : i32
// MATMUL: %[[A:.+]] = tile.load_tile %a_ptr[%[[ROW0]], %[[K0]]] shape[%M, %K] strides[%stride_am, %c1_i32] : !tile.ptr<f16> -> tensor<64x32xf16>
// MATMUL: %[[B:.+]] = tile.load_tile %b_ptr[%[[K0]], %[[COL0]]] shape[%K, %N] strides[%stride_bk, %c1_i32] : !tile.ptr<f16> -> tensor<32x64xf16>
// MATMUL: %[[NEXT_ACC:.+]] = tile.dot %[[A]], %[[B]], %[[ACC]] : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
// MATMUL: scf.yield %[[NEXT_ACC]]
// MATMUL: %[[OUT:.+]] = arith.truncf %[[LOOP]] : tensor<64x64xf32> to tensor<64x64xf16>
// MATMUL: %[[C_MASK:.+]] = arith.andi %{{.+}}, %{{.+}} : tensor<64x64xi1>
// MATMUL: tile.store %{{.+}}, %[[OUT]], %[[C_MASK]] : tensor<64x64x!tile.ptr<f16>>
// MATMUL-NEXT: return
// MATMUL-NOT: scf.for
// MATMUL-NOT: tile.dot

// Without sizes only the defaults that need none apply (unit inner strides);
// the sizes and row strides are unknown and scale the offsets.
// GENERIC-LABEL: func.func @matmul(
// GENERIC-SAME: %M: i32, %N: i32, %K: i32, %stride_am: i32, %stride_ak: i32 {tile.equal_to_one}, %stride_bk: i32, %stride_bn: i32 {tile.equal_to_one}, %stride_cm: i32, %stride_cn: i32 {tile.equal_to_one})
// GENERIC-DAG: strides[%stride_am, %c1_i32]
// GENERIC-DAG: strides[%stride_bk, %c1_i32]
// GENERIC-DAG: tile.splat %stride_cm

// MATMUL-F32: func.func @matmul(%a_ptr: !tile.ptr<f32>
// MATMUL-F32: tile.dot %{{.+}} {inputPrecision = #tile.precision<tf32>} : tensor<64x32xf32> * tensor<32x64xf32> -> tensor<64x64xf32>
// MATMUL-F32-NOT: arith.truncf
// MATMUL-F32: tile.store %{{.+}} : tensor<64x64x!tile.ptr<f32>>

// VADD-LABEL: func.func @vector_add(%x_ptr: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %y_ptr: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %out_ptr: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n_elements: i32) attributes {tile.kernel}
// VADD: %pid = tile.program_id x : i32
// VADD: %[[OFFS:.+]] = arith.addi %{{.+}} : tensor<1024xi32>
// VADD: %[[MASK:.+]] = arith.cmpi slt, %[[OFFS]], %{{.+}} : tensor<1024xi32>
// VADD: %[[X:.+]] = tile.load %{{.+}}, %[[MASK]] : tensor<1024x!tile.ptr<f32>>
// VADD: %[[Y:.+]] = tile.load %{{.+}}, %[[MASK]] : tensor<1024x!tile.ptr<f32>>
// VADD: %[[SUM:.+]] = arith.addf %[[X]], %[[Y]] : tensor<1024xf32>
// VADD: tile.store %{{.+}}, %[[SUM]], %[[MASK]] : tensor<1024x!tile.ptr<f32>>

// Columns past n_cols read -inf, which adds nothing to the sum of exps.
// SOFTMAX-LABEL: func.func @softmax(
// SOFTMAX: %[[NEG_INF:.+]] = arith.constant dense<0xFF800000> : tensor<256xf32>
// SOFTMAX: %[[ROW:.+]] = tile.load %{{.+}}, %[[MASK:.+]], %[[NEG_INF]] : tensor<256x!tile.ptr<f32>>
// SOFTMAX: %[[MAX:.+]] = tile.reduce max %[[ROW]] {axis = 0 : i32} : tensor<256xf32> -> f32
// SOFTMAX: %[[SHIFTED:.+]] = arith.subf %[[ROW]], %{{.+}} : tensor<256xf32>
// SOFTMAX: %[[NUM:.+]] = math.exp %[[SHIFTED]] : tensor<256xf32>
// SOFTMAX: %[[DEN:.+]] = tile.reduce add %[[NUM]] {axis = 0 : i32} : tensor<256xf32> -> f32
// SOFTMAX: %[[Y:.+]] = arith.divf %[[NUM]], %{{.+}} : tensor<256xf32>
// SOFTMAX: tile.store %{{.+}}, %[[Y]], %[[MASK]] : tensor<256x!tile.ptr<f32>>

// Rows whose index is -1 (or past M) read zeros from A.
// GATHER-LABEL: func.func @gather_matmul(
// GATHER-SAME: %idx_ptr: !tile.ptr<i32> {tile.divisibility = 16 : i32}
// GATHER-DAG: %[[NONE:.+]] = arith.constant dense<-1> : tensor<64xi32>
// GATHER: %[[IN_RANGE:.+]] = arith.cmpi slt, %{{.+}} : tensor<64xi32>
// GATHER: %[[IDX:.+]] = tile.load %{{.+}}, %[[IN_RANGE]], %[[NONE]] : tensor<64x!tile.ptr<i32>>
// GATHER: %[[FOUND:.+]] = arith.cmpi ne, %[[IDX]], %[[NONE]] : tensor<64xi32>
// GATHER: %[[HAS_ROW:.+]] = arith.andi %[[IN_RANGE]], %[[FOUND]] : tensor<64xi1>
// GATHER: arith.select %[[HAS_ROW]], %[[IDX]], %{{.+}} : tensor<64xi1>, tensor<64xi32>
// GATHER: %[[ROW_MASK:.+]] = tile.expand_dims %[[HAS_ROW]] {axis = 1 : i32} : tensor<64xi1> -> tensor<64x1xi1>
// GATHER: scf.for
// GATHER: tile.broadcast %[[ROW_MASK]] : tensor<64x1xi1> -> tensor<64x32xi1>
// GATHER: tile.load %{{.+}} : tensor<64x32x!tile.ptr<f16>>
// GATHER: tile.dot %{{.+}} : tensor<64x32xf16> * tensor<32x32xf16> -> tensor<64x32xf32>
