//===- radix_digit_totals.cpp - every pass's digit totals of a radix sort -===//
//
// The one-sweep radix sort (radix_pass.cpp) moves the keys of a pass in one
// launch; before its first pass, this kernel counts over all N keys how
// many have each digit of every pass: totals[p * 2^DIGIT_BITS + d] += the
// keys whose digit p, (key >> p * DIGIT_BITS) & (2^DIGIT_BITS - 1), is d,
// for p < PASSES. A key's digits do not change as the passes move it, so
// one launch before the first pass serves every pass. Program (i, p)
// counts digit p of BLOCK * CHUNKS keys and adds its non-zero counts with
// atomic adds (totals is zeroed first by the caller): programs of a
// thousand keys keep the adds to one counter few where every key has the
// same digit. The passes are a size, not a parameter, so that one cubin
// serves sorts of any number of passes.
//
// Grid: (cdiv(N, BLOCK * CHUNKS), PASSES).
// N sizes the grid; the live count, at most N, is read from count_ptr, so
// that one launch sequence serves every count up to N (docs/sparse-conv.md,
// "One launch sequence per size bucket").
// A program's loop runs over its live chunks only (LiveCount.h).
//
//===----------------------------------------------------------------------===//

#include "LiveCount.h"

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

static void buildRadixDigitTotals(KernelBuilder &kb) {
  int64_t block = kb.param("BLOCK"), chunks = kb.param("CHUNKS");
  int64_t digitBits = kb.param("DIGIT_BITS");
  int64_t digitCount = int64_t(1) << digitBits;
  Tensor keys = kb.arg("keys_ptr"), totals = kb.arg("totals_ptr");
  Tensor n = kb.let("count", kb.load(kb.arg("count_ptr")));

  Tensor program = kb.let("program", kb.programId(0));
  Tensor pass = kb.let("pass", kb.programId(1));
  Tensor shift = kb.let("shift", pass * digitBits);
  Tensor digitRow = kb.let("digit_row", kb.arange(0, digitCount));
  Tensor digits = kb.let("digits", kb.expandDims(digitRow, 0));
  Tensor counts0 = kb.let("counts", kb.zeros({digitCount}, kb.i32Type()));
  auto chunk = [&](Tensor c, llvm::ArrayRef<Tensor> carried) -> Tensors {
    Tensor index =
        kb.let("index", (program * chunks + c) * block + kb.arange(0, block));
    Tensor inRange = kb.let("in_range", index < n);
    Tensor key = kb.let("key", kb.load(keys + index, inRange, 0));
    Tensor digit = kb.let("digit", kb.binary(BinaryOpKind::ShrU, key, shift) &
                                       (digitCount - 1));
    Tensor onehot = kb.let("onehot", (kb.expandDims(digit, 1) == digits) &
                                         kb.expandDims(inRange, 1));
    return {carried[0] + kb.sum(kb.cast(onehot, kb.i32Type()), 0)};
  };
  Tensor counts =
      kb.let("loop",
             kb.forRange(
                 0, liveTrips(kb, program * (block * chunks), n, block, chunks),
                 1, {counts0}, chunk))[0];
  kb.atomicRmw(tile::AtomicRMWKind::Add, totals + pass * digitCount + digitRow,
               counts, counts != 0);
}

TILEC_KERNEL(radix_digit_totals) {
  static const KernelDefinition kernel(
      KernelDescription("radix_digit_totals", "kernels/radix_digit_totals.cpp",
                        __LINE__)
          .param(MetaParameter("BLOCK").powerOfTwo().byDefault(128))
          .param(MetaParameter("CHUNKS").atLeast(1).byDefault(8))
          .param(MetaParameter("DIGIT_BITS").atLeast(1).atMost(8).byDefault(7))
          .arg(pointer("keys_ptr", "i32").divisibility(16))
          .arg(pointer("totals_ptr", "i32").divisibility(16))
          .arg(pointer("count_ptr", "i32"))
          .arg(scalar("N", "i32").doNotSpecialize())
          .arg(scalar("PASSES", "i32").doNotSpecialize())
          .candidate("num_warps=4")
          .key("LOG2_N", "ceil(log2(N))")
          // The caller sizes the totals by the digits.
          .key("DIGIT_BITS")
          // N sizes the grid, the live count comes from count_ptr.
          .key("COUNT", "1")
          .grid({"cdiv(N, BLOCK * CHUNKS)", "PASSES"})
          .require("(PASSES - 1) * DIGIT_BITS <= 31",
                   "every pass's digit starts inside the 32-bit key")
          .testSizes({{"N", 10000}, {"PASSES", 4}},
                     {{"N", 777}, {"PASSES", 5}}),
      buildRadixDigitTotals);
  return kernel;
}
