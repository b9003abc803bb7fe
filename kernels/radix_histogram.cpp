//===- radix_histogram.cpp - digit counts of one radix-sort pass ----------===//
//
// The stable LSD radix sort that orders the sparse convolution's rows by
// their neighbour bitmask, and its row blocks by their count of offsets
// (docs/sparse-conv.md), takes DIGIT_BITS bits per pass:
// this kernel counts, per program, how many of its ELEMS = BLOCK * CHUNKS
// keys have each digit (key >> SHIFT) & (2^DIGIT_BITS - 1), and writes the
// count of digit d of program p to hist[d * NUM_PROGRAMS + p]. Exclusive
// scans of hist's rows (exclusive_scan, a program per digit) then give
// every (digit, program) its first output position past the smaller
// digits, in the order a stable sort needs; radix_scatter moves the keys.
//
// Grid: (cdiv(N, BLOCK * CHUNKS)).
// N sizes the grid; the live count, at most N, is read from count_ptr, so
// that one launch sequence serves every count up to N (docs/sparse-conv.md,
// "One launch sequence per size bucket").
// A program's loop runs over its live chunks only, so one past the count
// stores zeros at once (LiveCount.h).
//
//===----------------------------------------------------------------------===//

#include "LiveCount.h"

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

static void buildRadixHistogram(KernelBuilder &kb) {
  int64_t block = kb.param("BLOCK"), chunks = kb.param("CHUNKS");
  int64_t digitCount = int64_t(1) << kb.param("DIGIT_BITS");
  Tensor keys = kb.arg("keys_ptr"), hist = kb.arg("hist_ptr");
  Tensor shift = kb.arg("SHIFT");
  Tensor n = kb.let("count", kb.load(kb.arg("count_ptr")));

  Tensor program = kb.let("program", kb.programId(0));
  Tensor programs = kb.let("programs", kb.numPrograms(0));
  Tensor counts0 = kb.let("counts", kb.zeros({digitCount}, kb.i32Type()));
  auto chunk = [&](Tensor c, llvm::ArrayRef<Tensor> carried) -> Tensors {
    Tensor index =
        kb.let("index", (program * chunks + c) * block + kb.arange(0, block));
    Tensor inRange = kb.let("in_range", index < n);
    Tensor key = kb.let("key", kb.load(keys + index, inRange, 0));
    Tensor digit = kb.let("digit", kb.binary(BinaryOpKind::ShrU, key, shift) &
                                       (digitCount - 1));
    return {carried[0] + kb.histogram(digit, digitCount, inRange)};
  };
  Tensors loop =
      kb.let("loop",
             kb.forRange(
                 0, liveTrips(kb, program * (block * chunks), n, block, chunks),
                 1, {counts0}, chunk));
  kb.store(hist + kb.arange(0, digitCount) * programs + program, loop[0]);
}

TILEC_KERNEL(radix_histogram) {
  static const KernelDefinition kernel(
      KernelDescription("radix_histogram", "kernels/radix_histogram.cpp",
                        __LINE__)
          .param(MetaParameter("BLOCK").powerOfTwo().byDefault(256))
          .param(MetaParameter("CHUNKS").atLeast(1).byDefault(4))
          .param(MetaParameter("DIGIT_BITS").atLeast(1).atMost(8).byDefault(4))
          .arg(pointer("keys_ptr", "i32").divisibility(16))
          .arg(pointer("hist_ptr", "i32").divisibility(16))
          .arg(pointer("count_ptr", "i32"))
          .arg(scalar("N", "i32").doNotSpecialize())
          .arg(scalar("SHIFT", "i32"))
          .candidate("num_warps=4")
          .key("LOG2_N", "ceil(log2(N))")
          // The caller sizes the digit counts by BLOCK * CHUNKS keys a
          // program: a stored winner must have the call's.
          .key("BLOCK")
          .key("CHUNKS")
          .key("DIGIT_BITS")
          // N sizes the grid, the live count comes from count_ptr:
          // winners and cubins cached for N as the count do not match.
          .key("COUNT", "1")
          .grid({"cdiv(N, BLOCK * CHUNKS)"})
          .require("SHIFT >= 0", "the digit's shift is in [0, 31]")
          .require("SHIFT <= 31", "the digit's shift is in [0, 31]")
          .testSizes({{"N", 10000}, {"SHIFT", 4}}, {{"N", 777}, {"SHIFT", 28}}),
      buildRadixHistogram);
  return kernel;
}
