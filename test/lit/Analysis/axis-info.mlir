// RUN: tilec-opt -tilec-test-print-axis-info -split-input-file -verify-diagnostics %s -o /dev/null

// Ranges, splats and their sums.
func.func @range_and_splat(%pid_base: i32 {tile.divisibility = 16 : i32}) {
  // expected-remark @below {{contiguity = [1], divisibility = [4], constancy = [1], constant_value = 4}}
  %c4 = arith.constant 4 : i32
  // expected-remark @below {{contiguity = [128], divisibility = [1073741824], constancy = [1], constant_value = <none>}}
  %r = tile.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  // expected-remark @below {{contiguity = [32], divisibility = [16], constancy = [1], constant_value = <none>}}
  %r16 = tile.make_range {start = 16 : i32, end = 48 : i32} : tensor<32xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1], constant_value = <none>}}
  %pid = tile.program_id x : i32
  // expected-remark @below {{contiguity = [1], divisibility = [4], constancy = [1], constant_value = <none>}}
  %block = arith.muli %pid, %c4 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [4], constancy = [128], constant_value = <none>}}
  %s = tile.splat %block : i32 -> tensor<128xi32>
  // expected-remark @below {{contiguity = [128], divisibility = [4], constancy = [1], constant_value = <none>}}
  %offs = arith.addi %s, %r : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [128], constant_value = <none>}}
  %base = tile.splat %pid_base : i32 -> tensor<128xi32>
  // expected-remark @below {{contiguity = [128], divisibility = [16], constancy = [1], constant_value = <none>}}
  %offs16 = arith.addi %r, %base : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1], constant_value = <none>}}
  %twice = arith.addi %r, %r : tensor<128xi32>
  // expected-remark @below {{contiguity = [128], divisibility = [16], constancy = [1], constant_value = <none>}}
  %back = arith.subi %offs16, %base : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [1], constant_value = <none>}}
  %scaled = arith.muli %r, %base : tensor<128xi32>
  return
}

// -----

// Pointer divisibility is in bytes: 16-byte aligned bases plus contiguous
// element offsets.
func.func @addptr(%a: !tile.ptr<f32> {tile.divisibility = 16 : i32},
                  %b: !tile.ptr<f16> {tile.divisibility = 16 : i32},
                  %c: !tile.ptr<f32>, %n: i32 {tile.divisibility = 16 : i32}) {
  // expected-remark @below {{contiguity = [256], divisibility = [1073741824], constancy = [1], constant_value = <none>}}
  %r = tile.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [256], constant_value = <none>}}
  %pa = tile.splat %a : !tile.ptr<f32> -> tensor<256x!tile.ptr<f32>>
  // expected-remark @below {{contiguity = [256], divisibility = [16], constancy = [1], constant_value = <none>}}
  %qa = tile.addptr %pa, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [256], constant_value = <none>}}
  %pb = tile.splat %b : !tile.ptr<f16> -> tensor<256x!tile.ptr<f16>>
  // expected-remark @below {{contiguity = [256], divisibility = [16], constancy = [1], constant_value = <none>}}
  %qb = tile.addptr %pb, %r : tensor<256x!tile.ptr<f16>>, tensor<256xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [256], constant_value = <none>}}
  %pc = tile.splat %c : !tile.ptr<f32> -> tensor<256x!tile.ptr<f32>>
  // expected-remark @below {{contiguity = [256], divisibility = [1], constancy = [1], constant_value = <none>}}
  %qc = tile.addptr %pc, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [256], constant_value = <none>}}
  %ns = tile.splat %n : i32 -> tensor<256xi32>
  // expected-remark @below {{contiguity = [256], divisibility = [16], constancy = [1], constant_value = <none>}}
  %shifted = arith.addi %r, %ns : tensor<256xi32>
  // expected-remark @below {{contiguity = [256], divisibility = [16], constancy = [1], constant_value = <none>}}
  %qs = tile.addptr %pb, %shifted : tensor<256x!tile.ptr<f16>>, tensor<256xi32>
  %v = tile.load %qa : tensor<256x!tile.ptr<f32>>
  %i = tile.load %qs : tensor<256x!tile.ptr<f16>>
  return
}

// -----

// offs < n is uniform on runs that cannot contain n: offs contiguous from a
// multiple of 16 and n a multiple of 16 give runs of 16.
func.func @cmpi_masks(%n: i32 {tile.divisibility = 16 : i32}, %m: i32) {
  // expected-remark @below {{contiguity = [1], divisibility = [1024], constancy = [1], constant_value = 1024}}
  %c1024 = arith.constant 1024 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1], constant_value = <none>}}
  %pid = tile.program_id x : i32
  // expected-remark @below {{contiguity = [1], divisibility = [1024], constancy = [1], constant_value = <none>}}
  %start = arith.muli %pid, %c1024 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [1024], constancy = [1024], constant_value = <none>}}
  %starts = tile.splat %start : i32 -> tensor<1024xi32>
  // expected-remark @below {{contiguity = [1024], divisibility = [1073741824], constancy = [1], constant_value = <none>}}
  %r = tile.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  // expected-remark @below {{contiguity = [1024], divisibility = [1024], constancy = [1], constant_value = <none>}}
  %offs = arith.addi %starts, %r : tensor<1024xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [1024], constant_value = <none>}}
  %ns = tile.splat %n : i32 -> tensor<1024xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1024], constant_value = <none>}}
  %ms = tile.splat %m : i32 -> tensor<1024xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [16], constant_value = <none>}}
  %lt = arith.cmpi slt, %offs, %ns : tensor<1024xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [16], constant_value = <none>}}
  %ge = arith.cmpi sge, %offs, %ns : tensor<1024xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [16], constant_value = <none>}}
  %gt = arith.cmpi sgt, %ns, %offs : tensor<1024xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1], constant_value = <none>}}
  %le = arith.cmpi sle, %offs, %ns : tensor<1024xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1], constant_value = <none>}}
  %eq = arith.cmpi eq, %offs, %ns : tensor<1024xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1], constant_value = <none>}}
  %unknown = arith.cmpi slt, %offs, %ms : tensor<1024xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1], constant_value = <none>}}
  %both = arith.andi %lt, %unknown : tensor<1024xi1>
  return
}

// -----

// Broadcast and expand_dims: a row-major 2-D tile of offsets.
func.func @two_dims(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32},
                    %stride: i32 {tile.divisibility = 16 : i32}) {
  // expected-remark @below {{contiguity = [64], divisibility = [1073741824], constancy = [1], constant_value = <none>}}
  %rm = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  // expected-remark @below {{contiguity = [32], divisibility = [1073741824], constancy = [1], constant_value = <none>}}
  %rn = tile.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
  // expected-remark @below {{contiguity = [64, 1], divisibility = [1073741824, 1], constancy = [1, 1], constant_value = <none>}}
  %col = tile.expand_dims %rm {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [16, 16], constancy = [64, 1], constant_value = <none>}}
  %strides = tile.splat %stride : i32 -> tensor<64x1xi32>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [16, 16], constancy = [1, 1], constant_value = <none>}}
  %rows = arith.muli %col, %strides : tensor<64x1xi32>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [16, 16], constancy = [1, 32], constant_value = <none>}}
  %rowsb = tile.broadcast %rows : tensor<64x1xi32> -> tensor<64x32xi32>
  // expected-remark @below {{contiguity = [1, 32], divisibility = [1, 1073741824], constancy = [1, 1], constant_value = <none>}}
  %row = tile.expand_dims %rn {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  // expected-remark @below {{contiguity = [1, 32], divisibility = [1, 1073741824], constancy = [64, 1], constant_value = <none>}}
  %rowb = tile.broadcast %row : tensor<1x32xi32> -> tensor<64x32xi32>
  // expected-remark @below {{contiguity = [1, 32], divisibility = [1, 16], constancy = [1, 1], constant_value = <none>}}
  %offs = arith.addi %rowsb, %rowb : tensor<64x32xi32>
  // expected-remark @below {{contiguity = [64, 1], divisibility = [1073741824, 1], constancy = [1, 32], constant_value = <none>}}
  %colb = tile.broadcast %col : tensor<64x1xi32> -> tensor<64x32xi32>
  // expected-remark @below {{contiguity = [32, 1], divisibility = [16, 1], constancy = [1, 1], constant_value = <none>}}
  %t = tile.trans %offs {order = array<i32: 1, 0>} : tensor<64x32xi32> -> tensor<32x64xi32>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [16, 16], constancy = [64, 32], constant_value = <none>}}
  %base = tile.splat %a : !tile.ptr<f16> -> tensor<64x32x!tile.ptr<f16>>
  // expected-remark @below {{contiguity = [1, 32], divisibility = [2, 16], constancy = [1, 1], constant_value = <none>}}
  %ptrs = tile.addptr %base, %offs : tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi32>
  return
}

// -----

// Loop-carried pointers: the carried value is the join of the initial value
// and every yielded one.
func.func @loop_carried(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32},
                        %k: i32) {
  // expected-remark @below {{contiguity = [1], divisibility = [1073741824], constancy = [1], constant_value = 0}}
  %c0 = arith.constant 0 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1], constant_value = 1}}
  %c1 = arith.constant 1 : i32
  // expected-remark @below {{contiguity = [64], divisibility = [1073741824], constancy = [1], constant_value = <none>}}
  %r = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [64], constant_value = <none>}}
  %base = tile.splat %a : !tile.ptr<f16> -> tensor<64x!tile.ptr<f16>>
  // expected-remark @below {{contiguity = [64], divisibility = [16], constancy = [1], constant_value = <none>}}
  %ptrs = tile.addptr %base, %r : tensor<64x!tile.ptr<f16>>, tensor<64xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [64], constancy = [64], constant_value = 64}}
  %step64 = arith.constant dense<64> : tensor<64xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [64], constant_value = 3}}
  %step3 = arith.constant dense<3> : tensor<64xi32>
  // expected-remark @below {{region arg #0: contiguity = [1], divisibility = [1], constancy = [1], constant_value = <none>}}
  // expected-remark @below {{region arg #1: contiguity = [64], divisibility = [16], constancy = [1], constant_value = <none>}}
  // expected-remark @below {{region arg #2: contiguity = [64], divisibility = [2], constancy = [1], constant_value = <none>}}
  // expected-remark @below {{result #0: contiguity = [64], divisibility = [16], constancy = [1], constant_value = <none>}}
  // expected-remark @below {{result #1: contiguity = [64], divisibility = [2], constancy = [1], constant_value = <none>}}
  %res:2 = scf.for %i = %c0 to %k step %c1
      iter_args(%p = %ptrs, %q = %ptrs) -> (tensor<64x!tile.ptr<f16>>, tensor<64x!tile.ptr<f16>>) : i32 {
    // expected-remark @below {{contiguity = [64], divisibility = [16], constancy = [1], constant_value = <none>}}
    %pn = tile.addptr %p, %step64 : tensor<64x!tile.ptr<f16>>, tensor<64xi32>
    // expected-remark @below {{contiguity = [64], divisibility = [2], constancy = [1], constant_value = <none>}}
    %qn = tile.addptr %q, %step3 : tensor<64x!tile.ptr<f16>>, tensor<64xi32>
    scf.yield %pn, %qn : tensor<64x!tile.ptr<f16>>, tensor<64x!tile.ptr<f16>>
  }
  return
}

// -----

// Division, remainder and bit masks by constants; selects; casts.
func.func @div_rem_and(%n: i32 {tile.divisibility = 16 : i32}, %c: i1) {
  // expected-remark @below {{contiguity = [64], divisibility = [1073741824], constancy = [1], constant_value = <none>}}
  %r = tile.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [8], constancy = [64], constant_value = 8}}
  %c8 = arith.constant dense<8> : tensor<64xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [64], constant_value = 7}}
  %c7 = arith.constant dense<7> : tensor<64xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [8], constancy = [64], constant_value = -8}}
  %cm8 = arith.constant dense<-8> : tensor<64xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [8], constant_value = <none>}}
  %div = arith.divsi %r, %c8 : tensor<64xi32>
  // expected-remark @below {{contiguity = [8], divisibility = [8], constancy = [1], constant_value = <none>}}
  %rem = arith.remsi %r, %c8 : tensor<64xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [64], constant_value = <none>}}
  %ns = tile.splat %n : i32 -> tensor<64xi32>
  // expected-remark @below {{contiguity = [16], divisibility = [16], constancy = [1], constant_value = <none>}}
  %wrap = arith.remsi %r, %ns : tensor<64xi32>
  // expected-remark @below {{contiguity = [8], divisibility = [8], constancy = [1], constant_value = <none>}}
  %low = arith.andi %r, %c7 : tensor<64xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [8], constancy = [8], constant_value = <none>}}
  %down = arith.andi %r, %cm8 : tensor<64xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [64], constant_value = 3}}
  %c3 = arith.constant dense<3> : tensor<64xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [8], constant_value = <none>}}
  %sh = arith.shrsi %r, %c3 : tensor<64xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1], constant_value = <none>}}
  %sel = arith.select %c, %r, %ns : tensor<64xi32>
  // expected-remark @below {{contiguity = [64], divisibility = [1073741824], constancy = [1], constant_value = <none>}}
  %wide = arith.extsi %r : tensor<64xi32> to tensor<64xi64>
  // expected-remark @below {{contiguity = [4], divisibility = [8], constancy = [1], constant_value = <none>}}
  %dense = arith.constant dense<[0, 1, 2, 3, 8, 9, 10, 11]> : tensor<8xi32>
  return
}

// -----

// scf.if joins both branches.
func.func @if_join(%c: i1, %a: i32 {tile.divisibility = 32 : i32}) {
  // expected-remark @below {{contiguity = [16], divisibility = [1073741824], constancy = [1], constant_value = <none>}}
  %r = tile.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
  // expected-remark @below {{contiguity = [16], divisibility = [32], constancy = [1], constant_value = <none>}}
  %x = scf.if %c -> (tensor<16xi32>) {
    // expected-remark @below {{contiguity = [1], divisibility = [32], constancy = [16], constant_value = <none>}}
    %s = tile.splat %a : i32 -> tensor<16xi32>
    // expected-remark @below {{contiguity = [16], divisibility = [32], constancy = [1], constant_value = <none>}}
    %y = arith.addi %r, %s : tensor<16xi32>
    scf.yield %y : tensor<16xi32>
  } else {
    scf.yield %r : tensor<16xi32>
  }
  return
}
