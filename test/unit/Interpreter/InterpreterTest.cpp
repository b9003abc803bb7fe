//===- InterpreterTest.cpp - the interpreter's ops and diagnostics --------===//
//
// Small kernels in the tile dialect, run on host buffers: what each op
// computes (program ids over the grid, masks, pointer arithmetic, integer
// wrap, f16 rounding, dot with row groups, reduce and scan, atomics), and
// the errors a wrong kernel gets (out of bounds, misaligned, a program that
// never finishes, an op the interpreter does not run), each at its op with
// the program and the lane.
//
//===----------------------------------------------------------------------===//

#include "tilec/Interpreter/Interpreter.h"
#include "tilec/Pipeline/Pipeline.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace {

using tilec::interp::interpretKernel;
using tilec::interp::KernelMemory;

class InterpreterTest : public testing::Test {
protected:
  InterpreterTest() : context(makeRegistry()) {
    handler = std::make_unique<mlir::ScopedDiagnosticHandler>(
        &context, [this](mlir::Diagnostic &d) {
          // "line:column: message" of the op the error is at.
          if (auto at = llvm::dyn_cast<mlir::FileLineColLoc>(d.getLocation()))
            diagnostics += std::to_string(at.getLine()) + ":" +
                           std::to_string(at.getColumn()) + ": ";
          diagnostics += d.str() + "\n";
          return mlir::success();
        });
  }
  static mlir::DialectRegistry makeRegistry() {
    mlir::DialectRegistry registry;
    tilec::registerPipelineDialects(registry);
    return registry;
  }

  /// Parses `source` and runs it; false (diagnostics kept) on failure.
  bool run(const std::string &source, std::array<int64_t, 3> grid,
           std::vector<int64_t> arguments) {
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    if (!module) {
      ADD_FAILURE() << "does not parse:\n" << diagnostics;
      return false;
    }
    return mlir::succeeded(interpretKernel(*module, grid, arguments, memory));
  }

  template <typename T> int64_t add(const char *name, std::vector<T> &data) {
    return static_cast<int64_t>(
        memory.add(name, reinterpret_cast<uint8_t *>(data.data()),
                   data.size() * sizeof(T)));
  }

  mlir::MLIRContext context;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler;
  std::string diagnostics;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  KernelMemory memory;
};

// out[pid * 4 + i] = in[pid * 4 + i] * 3 + pid for the lanes below n.
constexpr const char *kScale = R"mlir(
func.func @scale(%in: !tile.ptr<i32>, %out: !tile.ptr<i32>, %n: i32) attributes {tile.kernel} {
  %pid = tile.program_id x : i32
  %c4 = arith.constant 4 : i32
  %base = arith.muli %pid, %c4 : i32
  %r = tile.make_range {start = 0 : i32, end = 4 : i32} : tensor<4xi32>
  %b = tile.splat %base : i32 -> tensor<4xi32>
  %offs = arith.addi %b, %r : tensor<4xi32>
  %nn = tile.splat %n : i32 -> tensor<4xi32>
  %mask = arith.cmpi slt, %offs, %nn : tensor<4xi32>
  %pin = tile.splat %in : !tile.ptr<i32> -> tensor<4x!tile.ptr<i32>>
  %pi = tile.addptr %pin, %offs : tensor<4x!tile.ptr<i32>>, tensor<4xi32>
  %x = tile.load %pi, %mask : tensor<4x!tile.ptr<i32>>
  %three = arith.constant dense<3> : tensor<4xi32>
  %y = arith.muli %x, %three : tensor<4xi32>
  %p = tile.splat %pid : i32 -> tensor<4xi32>
  %z = arith.addi %y, %p : tensor<4xi32>
  %pout = tile.splat %out : !tile.ptr<i32> -> tensor<4x!tile.ptr<i32>>
  %po = tile.addptr %pout, %offs : tensor<4x!tile.ptr<i32>>, tensor<4xi32>
  tile.store %po, %z, %mask : tensor<4x!tile.ptr<i32>>
  return
}
)mlir";

TEST_F(InterpreterTest, ProgramsCoverTheGridWithMaskedTails) {
  std::vector<int32_t> in = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  std::vector<int32_t> out(12, -7);
  int64_t a = add("in", in), b = add("out", out);
  ASSERT_TRUE(run(kScale, {3, 1, 1}, {a, b, 10})) << diagnostics;
  std::vector<int32_t> expected = {3, 6, 9, 12, 16, 19, 22, 25, 29, 32, -7, -7};
  EXPECT_EQ(out, expected);
}

TEST_F(InterpreterTest, AnAccessPastABufferIsAnErrorAtItsOpAndLane) {
  std::vector<int32_t> in(10, 1), out(10, 0);
  int64_t a = add("in", in), b = add("out", out);
  // n = 12 lets program 2's lanes 2 and 3 read past `in`'s 10 elements.
  EXPECT_FALSE(run(kScale, {3, 1, 1}, {a, b, 12}));
  EXPECT_NE(diagnostics.find("program (2, 0, 0): lane 2: byte 40 of 'in' "
                             "(40 bytes) is out of bounds"),
            std::string::npos)
      << diagnostics;
  // At the load (the kernel's 13th line).
  EXPECT_EQ(diagnostics.rfind("13:", 0), 0u) << diagnostics;
}

TEST_F(InterpreterTest, AMisalignedOrForeignPointerIsAnError) {
  std::vector<int32_t> in(12, 1), out(12, 0);
  int64_t a = add("in", in), b = add("out", out);
  EXPECT_FALSE(run(kScale, {1, 1, 1}, {a + 2, b, 4}));
  EXPECT_NE(diagnostics.find("is not aligned to the 4-byte element"),
            std::string::npos)
      << diagnostics;
  diagnostics.clear();
  EXPECT_FALSE(run(kScale, {1, 1, 1}, {12345, b, 4}));
  EXPECT_NE(diagnostics.find("is in no buffer"), std::string::npos)
      << diagnostics;
}

TEST_F(InterpreterTest, IntegersWrapAndFloatsRoundToTheirFormat) {
  const char *source = R"mlir(
func.func @k(%p: !tile.ptr<i8>, %q: !tile.ptr<f16>, %x: f32) attributes {tile.kernel} {
  %a = arith.constant 100 : i8
  %b = arith.addi %a, %a : i8
  tile.store %p, %b : !tile.ptr<i8>
  %h = arith.truncf %x : f32 to f16
  %one = arith.constant 1.0 : f16
  %s = arith.addf %h, %one : f16
  tile.store %q, %s : !tile.ptr<f16>
  return
}
)mlir";
  std::vector<int8_t> bytes(1, 0);
  std::vector<uint16_t> halves(1, 0);
  int64_t p = add("p", bytes), q = add("q", halves);
  // 2049 (an f32 argument's bits) is not an f16: it rounds to 2048, and
  // 2048 + 1 to 2048 again (ties to even).
  float value = 2049.0f;
  int32_t bits;
  std::memcpy(&bits, &value, 4);
  ASSERT_TRUE(run(source, {1, 1, 1}, {p, q, bits})) << diagnostics;
  EXPECT_EQ(bytes[0], -56);     // 200 wraps to -56
  EXPECT_EQ(halves[0], 0x6800); // 2048.0 in f16
}

TEST_F(InterpreterTest, ConversionsRoundOnceAndSaturateAsTheLowering) {
  // 1 + 2^-11 + 2^-40 lies just above the midpoint of two f16 values:
  // rounded once it is 0x3c01, through an f32 first 0x3c00. +inf to i64
  // saturates (cvt.rzi), and 200.0 to i8 is a 16-bit result's low byte.
  const char *source = R"mlir(
func.func @k(%h: !tile.ptr<f16>, %w: !tile.ptr<i64>, %b: !tile.ptr<i8>) attributes {tile.kernel} {
  %x = arith.constant 0x3FF0020000001000 : f64
  %y = arith.truncf %x : f64 to f16
  tile.store %h, %y : !tile.ptr<f16>
  %inf = arith.constant 0x7F800000 : f32
  %big = arith.fptosi %inf : f32 to i64
  tile.store %w, %big : !tile.ptr<i64>
  %v = arith.constant 200.0 : f32
  %byte = arith.fptosi %v : f32 to i8
  tile.store %b, %byte : !tile.ptr<i8>
  return
}
)mlir";
  std::vector<uint16_t> half(1, 0);
  std::vector<int64_t> wide(1, 0);
  std::vector<int8_t> byte(1, 0);
  int64_t h = add("h", half), w = add("w", wide), b = add("b", byte);
  ASSERT_TRUE(run(source, {1, 1, 1}, {h, w, b})) << diagnostics;
  EXPECT_EQ(half[0], 0x3c01);
  EXPECT_EQ(wide[0], INT64_MAX);
  EXPECT_EQ(byte[0], -56);
}

TEST_F(InterpreterTest, SumsRoundInTheirFormatAndIntegerDotsWrap) {
  // An f16 sum that overflows on the way is not the exact 0 of its
  // elements; i32 products wrap as the GPU's muli does.
  const char *source = R"mlir(
func.func @k(%s: !tile.ptr<f16>, %d: !tile.ptr<i32>) attributes {tile.kernel} {
  %x = arith.constant dense<[6.0e4, 6.0e4, -6.0e4, -6.0e4]> : tensor<4xf16>
  %sum = tile.reduce add %x {axis = 0 : i32} : tensor<4xf16> -> f16
  tile.store %s, %sum : !tile.ptr<f16>
  %a = arith.constant dense<2147483647> : tensor<1x2xi32>
  %b = arith.constant dense<2147483647> : tensor<2x1xi32>
  %c = arith.constant dense<0> : tensor<1x1xi32>
  %p = tile.dot %a, %b, %c : tensor<1x2xi32> * tensor<2x1xi32> -> tensor<1x1xi32>
  %q = tile.reshape %p : tensor<1x1xi32> -> tensor<1xi32>
  %ds = tile.splat %d : !tile.ptr<i32> -> tensor<1x!tile.ptr<i32>>
  tile.store %ds, %q : tensor<1x!tile.ptr<i32>>
  return
}
)mlir";
  std::vector<uint16_t> sum(1, 0);
  std::vector<int32_t> dot(1, 0);
  int64_t s = add("s", sum), d = add("d", dot);
  ASSERT_TRUE(run(source, {1, 1, 1}, {s, d})) << diagnostics;
  EXPECT_EQ(sum[0] & 0x7c00, 0x7c00) << std::hex << sum[0]; // inf or NaN
  EXPECT_EQ(dot[0], 2); // (2^31 - 1)^2 = 1 mod 2^32, twice
}

TEST_F(InterpreterTest, MaxAndMinOrderMinusZeroBelowPlusZero) {
  // As llvm.maximum/minimum do, in arith and in reductions alike.
  const char *source = R"mlir(
func.func @k(%out: !tile.ptr<f32>) attributes {tile.kernel} {
  %z = arith.constant dense<[-0.0, 0.0]> : tensor<2xf32>
  %mx = tile.reduce max %z {axis = 0 : i32} : tensor<2xf32> -> f32
  %mn = tile.reduce min %z {axis = 0 : i32} : tensor<2xf32> -> f32
  %n = arith.constant -0.0 : f32
  %p = arith.constant 0.0 : f32
  %amx = arith.maximumf %n, %p : f32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %o1 = tile.addptr %out, %c1 : !tile.ptr<f32>, i32
  %o2 = tile.addptr %out, %c2 : !tile.ptr<f32>, i32
  tile.store %out, %mx : !tile.ptr<f32>
  tile.store %o1, %mn : !tile.ptr<f32>
  tile.store %o2, %amx : !tile.ptr<f32>
  return
}
)mlir";
  std::vector<float> out(3, 7.0f);
  int64_t o = add("out", out);
  ASSERT_TRUE(run(source, {1, 1, 1}, {o})) << diagnostics;
  EXPECT_FALSE(std::signbit(out[0])); // max: +0
  EXPECT_TRUE(std::signbit(out[1]));  // min: -0
  EXPECT_FALSE(std::signbit(out[2]));
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 0.0f);
}

TEST_F(InterpreterTest, DotSkipsRowGroupsThatAreClearAndReduceAndScanCombine) {
  const char *source = R"mlir(
func.func @k(%out: !tile.ptr<f32>, %sums: !tile.ptr<i32>) attributes {tile.kernel} {
  %a = arith.constant dense<1.0> : tensor<4x2xf16>
  %b = arith.constant dense<2.0> : tensor<2x2xf16>
  %c = arith.constant dense<0.5> : tensor<4x2xf32>
  %g = arith.constant 2 : i32
  %d = tile.dot %a, %b, %c row_groups(%g) {rowsPerGroup = 2 : i32} : tensor<4x2xf16> * tensor<2x2xf16> -> tensor<4x2xf32>
  %r = tile.make_range {start = 0 : i32, end = 8 : i32} : tensor<8xi32>
  %rr = tile.reshape %d : tensor<4x2xf32> -> tensor<8xf32>
  %po = tile.splat %out : !tile.ptr<f32> -> tensor<8x!tile.ptr<f32>>
  %pp = tile.addptr %po, %r : tensor<8x!tile.ptr<f32>>, tensor<8xi32>
  tile.store %pp, %rr : tensor<8x!tile.ptr<f32>>
  %m = tile.reshape %r : tensor<8xi32> -> tensor<2x4xi32>
  %s = tile.scan add %m {axis = 1 : i32, reverse = true} : tensor<2x4xi32>
  %t = tile.reduce max %s {axis = 1 : i32} : tensor<2x4xi32> -> tensor<2xi32>
  %two = tile.make_range {start = 0 : i32, end = 2 : i32} : tensor<2xi32>
  %ps = tile.splat %sums : !tile.ptr<i32> -> tensor<2x!tile.ptr<i32>>
  %pt = tile.addptr %ps, %two : tensor<2x!tile.ptr<i32>>, tensor<2xi32>
  tile.store %pt, %t : tensor<2x!tile.ptr<i32>>
  return
}
)mlir";
  std::vector<float> out(8, -1);
  std::vector<int32_t> sums(2, -1);
  int64_t o = add("out", out), s = add("sums", sums);
  ASSERT_TRUE(run(source, {1, 1, 1}, {o, s})) << diagnostics;
  // Group 0 (rows 0-1) is clear: c alone; group 1: 0.5 + 2 * (1 * 2).
  std::vector<float> expected = {0.5, 0.5, 0.5, 0.5, 4.5, 4.5, 4.5, 4.5};
  EXPECT_EQ(out, expected);
  // Reverse scans of 0..3 and 4..7: their largest are 6 and 22.
  EXPECT_EQ(sums, (std::vector<int32_t>{6, 22}));
}

TEST_F(InterpreterTest, HistogramAndBinRankCountInElementOrder) {
  const char *source = R"mlir(
func.func @k(%in: !tile.ptr<i32>, %counts: !tile.ptr<i32>, %ranks: !tile.ptr<i32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 8 : i32} : tensor<8xi32>
  %pi = tile.splat %in : !tile.ptr<i32> -> tensor<8x!tile.ptr<i32>>
  %pa = tile.addptr %pi, %r : tensor<8x!tile.ptr<i32>>, tensor<8xi32>
  %x = tile.load %pa : tensor<8x!tile.ptr<i32>>
  %six = arith.constant dense<6> : tensor<8xi32>
  %m = arith.cmpi ne, %r, %six : tensor<8xi32>
  %h = tile.histogram %x, %m : tensor<8xi32> -> tensor<4xi32>
  %four = tile.make_range {start = 0 : i32, end = 4 : i32} : tensor<4xi32>
  %pc = tile.splat %counts : !tile.ptr<i32> -> tensor<4x!tile.ptr<i32>>
  %pb = tile.addptr %pc, %four : tensor<4x!tile.ptr<i32>>, tensor<4xi32>
  tile.store %pb, %h : tensor<4x!tile.ptr<i32>>
  %k = tile.bin_rank %x, %m {bins = 4 : i32} : tensor<8xi32>
  %pr = tile.splat %ranks : !tile.ptr<i32> -> tensor<8x!tile.ptr<i32>>
  %pk = tile.addptr %pr, %r : tensor<8x!tile.ptr<i32>>, tensor<8xi32>
  tile.store %pk, %k : tensor<8x!tile.ptr<i32>>
  return
}
)mlir";
  // Element 6 is masked off; -1 and 4 fall outside the 4 bins.
  std::vector<int32_t> in = {2, 0, 2, -1, 2, 4, 0, 3}, counts(4, -9),
                       ranks(8, -9);
  int64_t i = add("in", in), c = add("counts", counts), r = add("ranks", ranks);
  ASSERT_TRUE(run(source, {1, 1, 1}, {i, c, r})) << diagnostics;
  EXPECT_EQ(counts, (std::vector<int32_t>{1, 0, 3, 1}));
  EXPECT_EQ(ranks, (std::vector<int32_t>{0, 0, 1, 0, 2, 0, 0, 0}));
}

TEST_F(InterpreterTest, AtomicsUpdateLaneByLaneAndYieldTheOldValues) {
  const char *source = R"mlir(
func.func @k(%count: !tile.ptr<i32>, %old: !tile.ptr<i32>, %slot: !tile.ptr<i32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 4 : i32} : tensor<4xi32>
  %one = arith.constant dense<1> : tensor<4xi32>
  %pc = tile.splat %count : !tile.ptr<i32> -> tensor<4x!tile.ptr<i32>>
  %prev = tile.atomic_rmw add, %pc, %one : tensor<4x!tile.ptr<i32>>
  %po = tile.splat %old : !tile.ptr<i32> -> tensor<4x!tile.ptr<i32>>
  %pp = tile.addptr %po, %r : tensor<4x!tile.ptr<i32>>, tensor<4xi32>
  tile.store %pp, %prev : tensor<4x!tile.ptr<i32>>
  %empty = arith.constant -1 : i32
  %key = arith.constant 42 : i32
  %was = tile.atomic_cas %slot, %empty, %key : !tile.ptr<i32>
  return
}
)mlir";
  std::vector<int32_t> count(1, 10), old(8, 0), slot(1, -1);
  int64_t c = add("count", count), o = add("old", old), s = add("slot", slot);
  ASSERT_TRUE(run(source, {2, 1, 1}, {c, o, s})) << diagnostics;
  EXPECT_EQ(count[0], 18);
  // The second program's lanes overwrote the first's: 14 to 17.
  EXPECT_EQ(std::vector<int32_t>(old.begin(), old.begin() + 4),
            (std::vector<int32_t>{14, 15, 16, 17}));
  EXPECT_EQ(slot[0], 42);
}

TEST_F(InterpreterTest, AProgramWaitingForALaterOneStopsWithAnError) {
  const char *source = R"mlir(
func.func @k(%flag: !tile.ptr<i32>) attributes {tile.kernel} {
  %zero = arith.constant 0 : i32
  %r = scf.while (%arg = %zero) : (i32) -> i32 {
    %v = tile.load %flag : !tile.ptr<i32>
    %wait = arith.cmpi eq, %v, %zero : i32
    scf.condition(%wait) %v : i32
  } do {
  ^bb0(%x: i32):
    scf.yield %x : i32
  }
  return
}
)mlir";
  std::vector<int32_t> flag(1, 0);
  int64_t f = add("flag", flag);
  module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  ASSERT_TRUE(module) << diagnostics;
  tilec::interp::InterpretOptions options;
  options.maxLoopIterations = 1000;
  EXPECT_TRUE(
      mlir::failed(interpretKernel(*module, {1, 1, 1}, {f}, memory, options)));
  EXPECT_NE(diagnostics.find("program (0, 0, 0): the loop ran 1000 "
                             "iterations without finishing"),
            std::string::npos)
      << diagnostics;
}

TEST_F(InterpreterTest, WorkPastItsBoundsIsAnError) {
  // A million short iterations; a tensor larger than the bound.
  const char *source = R"mlir(
func.func @k(%p: !tile.ptr<i32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %n = arith.constant 1000000 : i32
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%a = %c0) -> (i32) : i32 {
    %b = arith.addi %a, %i : i32
    scf.yield %b : i32
  }
  tile.store %p, %s : !tile.ptr<i32>
  return
}
)mlir";
  std::vector<int32_t> p(1, 0);
  int64_t a = add("p", p);
  module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  ASSERT_TRUE(module) << diagnostics;
  tilec::interp::InterpretOptions options;
  options.maxWork = 100000;
  EXPECT_TRUE(
      mlir::failed(interpretKernel(*module, {1, 1, 1}, {a}, memory, options)));
  EXPECT_NE(diagnostics.find("the run did more than 100000 element "
                             "operations"),
            std::string::npos)
      << diagnostics;
  diagnostics.clear();
  const char *wide = R"mlir(
func.func @k(%p: !tile.ptr<i32>) attributes {tile.kernel} {
  %r = tile.make_range {start = 0 : i32, end = 65536 : i32} : tensor<65536xi32>
  return
}
)mlir";
  module = mlir::parseSourceString<mlir::ModuleOp>(wide, &context);
  ASSERT_TRUE(module) << diagnostics;
  options.maxTensorElements = 4096;
  EXPECT_TRUE(
      mlir::failed(interpretKernel(*module, {1, 1, 1}, {a}, memory, options)));
  EXPECT_NE(diagnostics.find("a result of 'tensor<65536xi32>' is more than "
                             "the interpreter holds (4096 elements)"),
            std::string::npos)
      << diagnostics;
}

TEST_F(InterpreterTest, AnOpItDoesNotRunIsNamed) {
  const char *source = R"mlir(
func.func @k(%p: !tile.ptr<i32>) attributes {tile.kernel} {
  %a = arith.constant 7 : i32
  %b = arith.constant 2 : i32
  %c:2 = "arith.addui_extended"(%a, %b) : (i32, i32) -> (i32, i1)
  return
}
)mlir";
  std::vector<int32_t> p(1, 0);
  int64_t a = add("p", p);
  EXPECT_FALSE(run(source, {1, 1, 1}, {a}));
  EXPECT_NE(diagnostics.find("the interpreter does not run "
                             "'arith.addui_extended'"),
            std::string::npos)
      << diagnostics;
}

} // namespace
