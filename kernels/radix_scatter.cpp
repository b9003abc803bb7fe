//===- radix_scatter.cpp - the moves of one radix-sort pass ---------------===//
//
// With hist_scan the exclusive scans of radix_histogram's counts (same
// SHIFT, same grid), a row of NUM_PROGRAMS + 1 per digit (exclusive_scan
// with ROWS = 2^DIGIT_BITS: the row's last entry is the digit's total),
// program p moves its keys in order: the j-th key of digit d among the
// program's ELEMS = BLOCK * CHUNKS goes to the total of the digits below d
// plus hist_scan[d * (NUM_PROGRAMS + 1) + p] + j, with its value (the voxel
// index; with FIRST = 1 the value is the key's own position, so the first pass
// needs no index array; the maps sort voxels and row blocks with it). Equal
// digits keep their order: the sort is stable, and sorting (key, position)
// pairs is deterministic. Program p keeps its digits' next positions in its
// column of hist_scan (entries d * (NUM_PROGRAMS + 1) + p) while it moves
// its keys and puts the column back at the end (a launch again on the same
// buffers, as a timing loop makes, reads the scan); the totals column is
// only read.
//
// Grid: (cdiv(N, BLOCK * CHUNKS)).
// N sizes the grid; the live count, at most N, is read from count_ptr, so
// that one launch sequence serves every count up to N (docs/sparse-conv.md,
// "One launch sequence per size bucket").
// A program past the count returns at once (LiveCount.h).
//
//===----------------------------------------------------------------------===//

#include "LiveCount.h"

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

static void buildRadixScatter(KernelBuilder &kb) {
  int64_t block = kb.param("BLOCK"), chunks = kb.param("CHUNKS");
  int64_t digitCount = int64_t(1) << kb.param("DIGIT_BITS");
  bool first = kb.param("FIRST");
  Tensor keysIn = kb.arg("keys_in_ptr"), valsIn = kb.arg("vals_in_ptr");
  Tensor keysOut = kb.arg("keys_out_ptr"), valsOut = kb.arg("vals_out_ptr");
  Tensor histScan = kb.arg("hist_scan_ptr");
  Tensor shift = kb.arg("SHIFT");
  Tensor n = kb.let("count", kb.load(kb.arg("count_ptr")));

  ifRowLive(kb, kb.programId(0) * (block * chunks), n, [&] {
    Tensor program = kb.let("program", kb.programId(0));
    Tensor programs = kb.let("programs", kb.numPrograms(0));
    // Where the program's next key of each digit goes: the keys of smaller
    // digits (the rows' totals), then this digit's keys of earlier programs.
    Tensor row = kb.let("row", kb.arange(0, digitCount) * (programs + 1));
    Tensor totals = kb.let("totals", kb.load(histScan + row + programs));
    Tensor before = kb.let("before", kb.cumsum(totals, 0) - totals);
    Tensor start = kb.let("start", kb.load(histScan + row + program));
    Tensor next0 = kb.let("next", start + before);
    // The program's column of hist_scan (no other program reads it) becomes
    // its digits' next positions, which each key then loads by its digit:
    // a gather from memory instead of a [keys x digits] reduction across the
    // program's threads.
    kb.barrier();
    kb.store(histScan + row + program, next0);
    kb.barrier();
    Tensor lane = kb.arange(0, block);
    auto chunk = [&](Tensor c, llvm::ArrayRef<Tensor> carried) -> Tensors {
      Tensor index = kb.let("index", (program * chunks + c) * block + lane);
      Tensor inRange = kb.let("in_range", index < n);
      Tensor key = kb.let("key", kb.load(keysIn + index, inRange, 0));
      Tensor value =
          first ? index : kb.let("value", kb.load(valsIn + index, inRange, 0));
      Tensor digit = kb.let("digit", kb.binary(BinaryOpKind::ShrU, key, shift) &
                                         (digitCount - 1));
      // A key's rank among the chunk's keys of its digit: the earlier keys
      // of the same digit (keys past N count for none).
      Tensor rank = kb.let("rank", kb.binRank(digit, digitCount, inRange));
      Tensor base =
          kb.let("base", kb.load(histScan + digit * (programs + 1) + program,
                                 inRange, 0));
      Tensor target = kb.let("target", base + rank);
      kb.store(keysOut + target, key, inRange);
      kb.store(valsOut + target, value, inRange);
      if (chunks == 1)
        return {carried[0]};
      // The next chunk's keys go past this one's.
      Tensor next = carried[0] + kb.histogram(digit, digitCount, inRange);
      kb.barrier();
      kb.store(histScan + row + program, next);
      kb.barrier();
      return {next};
    };
    kb.let("loop", kb.forRange(0, chunks, 1, {next0}, chunk));
    // Put the column back once every key has loaded its base, so that a
    // launch again on the same buffers (timing loops) reads the scan.
    kb.barrier();
    kb.store(histScan + row + program, start);
  });
}

TILEC_KERNEL(radix_scatter) {
  static const KernelDefinition kernel(
      KernelDescription("radix_scatter", "kernels/radix_scatter.cpp", __LINE__)
          .param(MetaParameter("BLOCK").powerOfTwo().byDefault(256))
          .param(MetaParameter("CHUNKS").atLeast(1).byDefault(4))
          .param(MetaParameter("DIGIT_BITS").atLeast(1).atMost(8).byDefault(4))
          .param(MetaParameter("FIRST").atLeast(0).atMost(1).byDefault(0))
          .arg(pointer("keys_in_ptr", "i32").divisibility(16))
          .arg(pointer("vals_in_ptr", "i32").divisibility(16))
          .arg(pointer("keys_out_ptr", "i32").divisibility(16))
          .arg(pointer("vals_out_ptr", "i32").divisibility(16))
          .arg(pointer("hist_scan_ptr", "i32").divisibility(16))
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
          .key("FIRST")
          // N sizes the grid, the live count comes from count_ptr:
          // winners and cubins cached for N as the count do not match.
          .key("COUNT", "1")
          .grid({"cdiv(N, BLOCK * CHUNKS)"})
          .require("SHIFT >= 0", "the digit's shift is in [0, 31]")
          .require("SHIFT <= 31", "the digit's shift is in [0, 31]")
          .testSizes({{"N", 10000}, {"SHIFT", 4}}, {{"N", 777}, {"SHIFT", 28}}),
      buildRadixScatter);
  return kernel;
}
