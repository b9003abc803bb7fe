// RUN: tilec-opt %s -split-input-file -verify-diagnostics

func.func @range_empty() -> tensor<0xi32> {
  // expected-error @+1 {{end (4) must be greater than start (4)}}
  %r = tile.make_range {start = 4 : i32, end = 4 : i32} : tensor<0xi32>
  return %r : tensor<0xi32>
}

// -----

func.func @range_size() -> tensor<64xi32> {
  // expected-error @+1 {{result has 64 elements but the range [0, 128) has 128}}
  %r = tile.make_range {start = 0 : i32, end = 128 : i32} : tensor<64xi32>
  return %r : tensor<64xi32>
}

// -----

func.func @range_type() -> tensor<128xi64> {
  // expected-error @+1 {{result elements must be i32, got 'i64'}}
  %r = tile.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi64>
  return %r : tensor<128xi64>
}

// -----

func.func @splat_type(%x: f16) -> tensor<4xf32> {
  // expected-error @+1 {{result element type matches the scalar}}
  %s = tile.splat %x : f16 -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

func.func @splat_dynamic(%x: f32) -> tensor<?xf32> {
  // expected-error @+1 {{must be statically shaped tensor}}
  %s = tile.splat %x : f32 -> tensor<?xf32>
  return %s : tensor<?xf32>
}

// -----

func.func @broadcast_dim(%x: tensor<2x128xf32>) -> tensor<64x128xf32> {
  // expected-error @+1 {{dimension 0 of the source (2) must be 1 or equal the result's (64)}}
  %b = tile.broadcast %x : tensor<2x128xf32> -> tensor<64x128xf32>
  return %b : tensor<64x128xf32>
}

// -----

func.func @broadcast_rank(%x: tensor<128xf32>) -> tensor<64x128xf32> {
  // expected-error @+1 {{source rank 1 differs from result rank 2}}
  %b = tile.broadcast %x : tensor<128xf32> -> tensor<64x128xf32>
  return %b : tensor<64x128xf32>
}

// -----

func.func @broadcast_elem(%x: tensor<1x128xf32>) -> tensor<64x128xf16> {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %b = tile.broadcast %x : tensor<1x128xf32> -> tensor<64x128xf16>
  return %b : tensor<64x128xf16>
}

// -----

func.func @expand_axis(%x: tensor<128xi32>) -> tensor<128x1xi32> {
  // expected-error @+1 {{axis 2 is out of range [0, 1]}}
  %e = tile.expand_dims %x {axis = 2 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  return %e : tensor<128x1xi32>
}

// -----

func.func @expand_shape(%x: tensor<128xi32>) -> tensor<128x1xi32> {
  // expected-error @+1 {{result shape 128x1 must be 1x128}}
  %e = tile.expand_dims %x {axis = 0 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  return %e : tensor<128x1xi32>
}

// -----

func.func @reshape_size(%x: tensor<4x32xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{source has 128 elements but the result has 64}}
  %r = tile.reshape %x : tensor<4x32xf32> -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

func.func @trans_perm(%x: tensor<4x32xf32>) -> tensor<32x4xf32> {
  // expected-error @+1 {{order must be a permutation of [0, 2), got dimension 1}}
  %t = tile.trans %x {order = array<i32: 1, 1>} : tensor<4x32xf32> -> tensor<32x4xf32>
  return %t : tensor<32x4xf32>
}

// -----

func.func @trans_shape(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  // expected-error @+1 {{result shape 4x32 must be 32x4}}
  %t = tile.trans %x {order = array<i32: 1, 0>} : tensor<4x32xf32> -> tensor<4x32xf32>
  return %t : tensor<4x32xf32>
}

// -----

func.func @trans_rank(%x: tensor<4x32xf32>) -> tensor<32x4xf32> {
  // expected-error @+1 {{order has 3 entries but the source has rank 2}}
  %t = tile.trans %x {order = array<i32: 1, 0, 2>} : tensor<4x32xf32> -> tensor<32x4xf32>
  return %t : tensor<32x4xf32>
}

// -----

func.func @addptr_shape(%p: tensor<128x!tile.ptr<f32>>, %o: tensor<64xi32>) {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape and base type}}
  %q = tile.addptr %p, %o : tensor<128x!tile.ptr<f32>>, tensor<64xi32>
  return
}

// -----

func.func @addptr_offset(%p: !tile.ptr<f32>, %o: f32) {
  // expected-error @+1 {{operand #1 must be signless integer or tensor of integers}}
  %q = tile.addptr %p, %o : !tile.ptr<f32>, f32
  return
}

// -----

func.func @load_other_without_mask(%p: !tile.ptr<f32>, %o: f32) {
  // expected-error @+1 {{'other' requires a mask}}
  %v = "tile.load"(%p, %o) {operandSegmentSizes = array<i32: 1, 0, 1>} : (!tile.ptr<f32>, f32) -> f32
  return
}

// -----

func.func @load_mask_shape(%p: tensor<128x!tile.ptr<f32>>, %m: tensor<64xi1>) {
  // expected-error @+1 {{mask is i1 with the shape of ptr}}
  %v = "tile.load"(%p, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<128x!tile.ptr<f32>>, tensor<64xi1>) -> tensor<128xf32>
  return
}

// -----

func.func @load_result_type(%p: tensor<128x!tile.ptr<f32>>) {
  // expected-error @+1 {{result type matches the pointee type of ptr}}
  %v = "tile.load"(%p) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<128x!tile.ptr<f32>>) -> tensor<128xf16>
  return
}

// -----

func.func @load_not_ptr(%p: tensor<128xi64>) {
  // expected-error @+1 {{operand #0 must be tile pointer or tensor of tile pointers}}
  %v = "tile.load"(%p) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<128xi64>) -> tensor<128xf32>
  return
}

// -----

func.func @store_value_type(%p: tensor<128x!tile.ptr<f32>>, %v: tensor<128xf16>) {
  // expected-error @+1 {{value type matches the pointee type of ptr}}
  "tile.store"(%p, %v) : (tensor<128x!tile.ptr<f32>>, tensor<128xf16>) -> ()
  return
}

// -----

func.func @store_mask_type(%p: tensor<128x!tile.ptr<f32>>, %v: tensor<128xf32>, %m: tensor<128xi32>) {
  // expected-error @+1 {{operand #2 must be 1-bit signless integer or tensor of i1}}
  "tile.store"(%p, %v, %m) : (tensor<128x!tile.ptr<f32>>, tensor<128xf32>, tensor<128xi32>) -> ()
  return
}

// -----

func.func @store_mask_shape(%p: tensor<128x!tile.ptr<f32>>, %v: tensor<128xf32>, %m: tensor<64xi1>) {
  // expected-error @+1 {{mask is i1 with the shape of ptr}}
  "tile.store"(%p, %v, %m) : (tensor<128x!tile.ptr<f32>>, tensor<128xf32>, tensor<64xi1>) -> ()
  return
}

// -----

func.func @dot_k(%a: tensor<64x32xf16>, %b: tensor<16x16xf16>, %c: tensor<64x16xf32>) {
  // expected-error @+1 {{K of a (32) differs from K of b (16)}}
  %d = tile.dot %a, %b, %c : tensor<64x32xf16> * tensor<16x16xf16> -> tensor<64x16xf32>
  return
}

// -----

func.func @dot_rank(%a: tensor<64xf16>, %b: tensor<64x16xf16>, %c: tensor<64x16xf32>) {
  // expected-error @+1 {{operands must be 2-D, got ranks 1, 2 and 2}}
  %d = tile.dot %a, %b, %c : tensor<64xf16> * tensor<64x16xf16> -> tensor<64x16xf32>
  return
}

// -----

func.func @dot_acc_shape(%a: tensor<64x32xf16>, %b: tensor<32x16xf16>, %c: tensor<64x32xf32>) {
  // expected-error @+1 {{accumulator shape 64x32 must be 64x16}}
  %d = tile.dot %a, %b, %c : tensor<64x32xf16> * tensor<32x16xf16> -> tensor<64x32xf32>
  return
}

// -----

func.func @dot_elem(%a: tensor<64x32xf16>, %b: tensor<32x16xbf16>, %c: tensor<64x16xf32>) {
  // expected-error @+1 {{a and b element types differ: 'f16' vs 'bf16'}}
  %d = tile.dot %a, %b, %c : tensor<64x32xf16> * tensor<32x16xbf16> -> tensor<64x16xf32>
  return
}

// -----

func.func @dot_tf32_f16(%a: tensor<64x32xf16>, %b: tensor<32x16xf16>, %c: tensor<64x16xf32>) {
  // expected-error @+1 {{inputPrecision tf32 applies to f32 inputs only, got 'f16'}}
  %d = tile.dot %a, %b, %c {inputPrecision = #tile.precision<tf32>} : tensor<64x32xf16> * tensor<32x16xf16> -> tensor<64x16xf32>
  return
}

// -----

func.func @dot_acc_kind(%a: tensor<64x32xf16>, %b: tensor<32x16xf16>, %c: tensor<64x16xi32>) {
  // expected-error @+1 {{accumulator 'i32' must be float for float inputs}}
  %d = tile.dot %a, %b, %c : tensor<64x32xf16> * tensor<32x16xf16> -> tensor<64x16xi32>
  return
}

// -----

func.func @reduce_axis(%x: tensor<64x16xf32>) {
  // expected-error @+1 {{axis 2 is out of range [0, 2)}}
  %r = tile.reduce add %x {axis = 2 : i32} : tensor<64x16xf32> -> tensor<64xf32>
  return
}

// -----

func.func @reduce_shape(%x: tensor<64x16xf32>) {
  // expected-error @+1 {{result must be a tensor<64xf32>, got 'tensor<16xf32>'}}
  %r = tile.reduce add %x {axis = 1 : i32} : tensor<64x16xf32> -> tensor<16xf32>
  return
}

// -----

func.func @reduce_scalar(%x: tensor<64xf32>) {
  // expected-error @+1 {{reducing a 1-D tensor yields 'f32', got 'f16'}}
  %r = tile.reduce add %x {axis = 0 : i32} : tensor<64xf32> -> f16
  return
}

// -----

func.func @reduce_bitwise_float(%x: tensor<64xf32>) {
  // expected-error @+1 {{reduction 'xor' needs integer elements, got 'f32'}}
  %r = tile.reduce xor %x {axis = 0 : i32} : tensor<64xf32> -> f32
  return
}

// -----

func.func @bitcast_width(%x: tensor<4xf32>) {
  // expected-error @+1 {{bit widths differ: 'f32' has 32 bits, 'i16' has 16}}
  %b = tile.bitcast %x : tensor<4xf32> -> tensor<4xi16>
  return
}

// -----

func.func @bitcast_ptr_int(%p: !tile.ptr<f32>) {
  // expected-error @+1 {{cannot bitcast between a pointer and a number}}
  %b = tile.bitcast %p : !tile.ptr<f32> -> i64
  return
}

// -----

func.func @int_to_ptr_width(%x: i32) {
  // expected-error @+1 {{source must hold i64, got 'i32'}}
  %p = tile.int_to_ptr %x : i32 -> !tile.ptr<f32>
  return
}

// -----

func.func @ptr_to_int_width(%p: !tile.ptr<f32>) {
  // expected-error @+1 {{result must hold i64, got 'i32'}}
  %x = tile.ptr_to_int %p : !tile.ptr<f32> -> i32
  return
}

// -----

// expected-error @+1 {{pointee type must be an integer, a float or a pointer, got 'tensor<4xf32>'}}
func.func @bad_pointee(%p: !tile.ptr<tensor<4xf32>>) {
  return
}

// -----

func.func @program_axis() {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'axis' [x, y, z]}}
  %0 = tile.program_id w : i32
  return
}

// -----

// expected-error @+1 {{kernel must not return values, it returns 1}}
func.func @kernel_result() -> i32 attributes {tile.kernel} {
  %c = arith.constant 0 : i32
  return %c : i32
}

// -----

// A kernel written in generic form without its name: func.func's verifier
// says so (the dialect's verifier, which runs first, read the missing name
// and crashed; found by TtirFuzzer).
// expected-error @+1 {{'func.func' op requires attribute 'sym_name'}}
"func.func"() <{function_type = (!tile.ptr<f32>) -> (), syi_name = "k"}> ({
^bb0(%arg0: !tile.ptr<f32>):
  "func.return"() : () -> ()
}) {tile.kernel} : () -> ()

// -----

// Nor its type.
// expected-error @+1 {{'func.func' op requires attribute 'function_type'}}
"func.func"() <{sym_name = "k"}> ({
  "func.return"() : () -> ()
}) {tile.kernel} : () -> ()

// -----

// A declaration's argument has no block argument: its declared type is
// checked (the verifier read the empty body's first block and crashed).
// expected-error @+1 {{'tile.divisibility' on argument #0 of type 'f32': only integers and pointers have a divisibility}}
func.func private @declared(f32 {tile.divisibility = 16 : i32})

// -----

func.func private @declared_pointer(!tile.ptr<f32> {tile.divisibility = 16 : i32}, i32 {tile.equal_to_one})

// -----

// expected-error @+1 {{kernel name 'a.b-c' is not a PTX identifier (a letter or '_', then letters, digits, '_' or '$')}}
func.func @"a.b-c"() attributes {tile.kernel} {
  return
}

// -----

// expected-error @+1 {{kernel name '9lives' is not a PTX identifier}}
func.func @"9lives"() attributes {tile.kernel} {
  return
}

// -----

// A name that is one: '_' first, '$' inside.
func.func @_ok$1() attributes {tile.kernel} {
  return
}

// -----

// expected-error @+1 {{kernel argument #0 must be a scalar or a !tile.ptr, got 'tensor<4xf32>'}}
func.func @kernel_tensor_arg(%t: tensor<4xf32>) attributes {tile.kernel} {
  return
}

// -----

// expected-error @+1 {{'tile.divisibility' of argument #0 must be a positive power of two, got 12 : i32}}
func.func @divisibility(%n: i32 {tile.divisibility = 12 : i32}) attributes {tile.kernel} {
  return
}

// -----

// expected-error @+1 {{'tile.divisibility' on argument #0 of type 'f32': only integers and pointers have a divisibility}}
func.func @divisibility_float(%x: f32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  return
}

// -----

// expected-error @+1 {{'tile.equal_to_one' on argument #0 of type '!tile.ptr<f32>': only integers can equal 1}}
func.func @equal_to_one_pointer(%p: !tile.ptr<f32> {tile.equal_to_one}) attributes {tile.kernel} {
  return
}

// -----

// expected-error @+1 {{'tile.equal_to_one' of argument #0 must be a unit attribute}}
func.func @equal_to_one_value(%n: i32 {tile.equal_to_one = 1 : i32}) attributes {tile.kernel} {
  return
}

// -----

// expected-error @+1 {{unknown tile dialect attribute 'tile.kernal'}}
func.func @typo() attributes {tile.kernal} {
  return
}

// -----

func.func @dot_row_groups_without_size(%a: tensor<128x32xf16>, %b: tensor<32x64xf16>, %c: tensor<128x64xf32>, %g: i32) {
  // expected-error @+1 {{row_groups and rowsPerGroup go together, got row_groups only}}
  %d = tile.dot %a, %b, %c row_groups(%g) : tensor<128x32xf16> * tensor<32x64xf16> -> tensor<128x64xf32>
  return
}

// -----

func.func @dot_row_groups_size(%a: tensor<128x32xf16>, %b: tensor<32x64xf16>, %c: tensor<128x64xf32>, %g: i32) {
  // expected-error @+1 {{rowsPerGroup must be a power of two, got 48}}
  %d = tile.dot %a, %b, %c row_groups(%g) {rowsPerGroup = 48 : i32} : tensor<128x32xf16> * tensor<32x64xf16> -> tensor<128x64xf32>
  return
}

// -----

func.func @dot_row_groups_count(%a: tensor<128x32xf16>, %b: tensor<32x64xf16>, %c: tensor<128x64xf32>, %g: i32) {
  // expected-error @+1 {{128 rows in groups of 2 make more than the 32 groups of an i32}}
  %d = tile.dot %a, %b, %c row_groups(%g) {rowsPerGroup = 2 : i32} : tensor<128x32xf16> * tensor<32x64xf16> -> tensor<128x64xf32>
  return
}

// -----

func.func @load_tile_rank(%a: !tile.ptr<f16>, %i: i32) -> tensor<64xf16> {
  // expected-error @+1 {{loads a 2-D block, got 'tensor<64xf16>'}}
  %t = tile.load_tile %a[%i, %i] shape [%i, %i] strides [%i, %i] : !tile.ptr<f16> -> tensor<64xf16>
  return %t : tensor<64xf16>
}

// -----

func.func @load_tile_element(%a: !tile.ptr<f16>, %i: i32) -> tensor<64x32xf32> {
  // expected-error @+1 {{result elements 'f32' differ from the array's 'f16'}}
  %t = tile.load_tile %a[%i, %i] shape [%i, %i] strides [%i, %i] : !tile.ptr<f16> -> tensor<64x32xf32>
  return %t : tensor<64x32xf32>
}
