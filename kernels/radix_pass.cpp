//===- radix_pass.cpp - one pass of a one-sweep radix sort ----------------===//
//
// A stable LSD radix sort pass in one launch (the one-sweep sort: a
// decoupled look-back instead of a launch that scans the programs' digit
// counts between one that counts and one that moves). Program order is a
// ticket, taken with an atomic add on ticket_ptr, not the program id:
// the program with ticket t moves keys [t * BLOCK, (t + 1) * BLOCK), and
// every program it waits for took its ticket earlier, so it is running and
// never waits for t: the look-back always finishes, whatever order the GPU
// starts programs in.
//
// Program t counts its keys of each digit d ((key >> SHIFT) & (2^DIGIT_BITS
// - 1)) and publishes the counts at once in status[t * 2^DIGIT_BITS + d]:
// an i64 word, the count in its low 32 bits, in its high 32 bits the pass's
// tag (SHIFT + 1) << 2 and a flag, 1 for "this program's count" and 2 for
// "the count of every key up to this program's last". It then looks back
// over the programs before it, LOOKBACK at a time, adding counts until
// each digit meets a word of flag 2 (a word of another pass's tag, or
// zero, is not published yet: the digit reads it again), publishes its own
// flag 2 word, and moves each key to totals' exclusive sum at its digit
// (totals: every key's count of each digit, radix_digit_totals) plus the
// keys of its digit before the program plus its rank among the program's
// keys of that digit. Equal digits keep their order: the sort is stable.
// Each pass of a sort has its own tag, so one zeroed status buffer serves
// all of a sort's passes; starts_ptr is scratch (a row of 2^DIGIT_BITS
// words a program, through which each key gathers its digit's start).
// ticket_ptr must be zero before the launch (a launch again on the same
// buffers takes tickets past the keys and moves none).
//
// Grid: (cdiv(N, BLOCK)).
// N sizes the grid; the live count, at most N, is read from count_ptr, so
// that one launch sequence serves every count up to N (docs/sparse-conv.md,
// "One launch sequence per size bucket").
// A program whose ticket is past the count returns at once.
//
//===----------------------------------------------------------------------===//

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

namespace {

// The flags of a status word's high half.
constexpr int64_t kCountOfProgram = 1, kCountUpToProgram = 2;

struct Lookback {
  Tensor status, tag, digits;
  int64_t digitCount, window;
};

// A status word: `count` (i32, [D]) with the tag and `flag` above it.
Tensor statusWord(KernelBuilder &kb, const Lookback &lb, Tensor count,
                  Operand flag) {
  Tensor high = kb.let("high", kb.cast((lb.tag << 2) | flag, kb.i64Type()));
  return kb.let("word",
                (high << 32) | (kb.cast(count, kb.i64Type()) & 0xFFFFFFFFll));
}

// The count of each digit's keys before program `ticket`'s: windows of
// lb.window earlier programs, nearest first, until each digit met a word
// counting every key up to its program.
Tensor countBefore(KernelBuilder &kb, const Lookback &lb, Tensor ticket) {
  Tensor firstProgram = kb.let("first_program", ticket == 0);
  Tensor prefix0 = kb.zeros({lb.digitCount}, kb.i32Type());
  Tensor pos0 =
      kb.let("pos", kb.full({lb.digitCount}, ticket - 1, kb.i32Type()));
  Tensor done0 = kb.let("done", kb.full({lb.digitCount},
                                        kb.cast(firstProgram, kb.i32Type()),
                                        kb.i32Type()));
  // Before the first program: a word counting no keys, complete.
  Tensor start = kb.let(
      "start", statusWord(kb, lb, kb.zeros({lb.digitCount}, kb.i32Type()),
                          kCountUpToProgram));
  Tensor w = kb.let("w", kb.expandDims(kb.arange(0, lb.window), 1)); // [W, 1]
  auto open = [&](llvm::ArrayRef<Tensor> carried) {
    return kb.max(kb.cast(carried[2] == 0, kb.i32Type()), 0) != 0;
  };
  auto step = [&](llvm::ArrayRef<Tensor> carried) -> Tensors {
    Tensor prefix = carried[0], pos = carried[1], done = carried[2];
    Tensor row = kb.let("row", kb.expandDims(pos, 0) - w); // [W, D]
    Tensor wanted = kb.let("wanted", (row >= 0) & kb.expandDims(done == 0, 0));
    Tensor words = kb.let(
        "words",
        kb.loadVolatile(lb.status + row * lb.digitCount + lb.digits, wanted,
                        kb.broadcastTo(kb.expandDims(start, 0),
                                       {lb.window, lb.digitCount})));
    Tensor high =
        kb.let("high",
               kb.cast(kb.binary(BinaryOpKind::ShrU, words, 32), kb.i32Type()));
    Tensor current =
        kb.let("current", kb.binary(BinaryOpKind::ShrU, high, 2) == lb.tag);
    Tensor ofProgram =
        kb.let("of_program", current & ((high & 3) == kCountOfProgram));
    Tensor upTo = kb.let("up_to", current & ((high & 3) == kCountUpToProgram));
    Tensor count = kb.let("count", kb.cast(words & 0xFFFFFFFFll, kb.i32Type()));
    // The nearest word that does not count its program alone: one counting
    // up to its program ends the digit's look-back, one not published yet
    // is read again next step (the window moves to it).
    Tensor stop = kb.let("stop", kb.min(kb.where(ofProgram, lb.window, w), 0));
    Tensor stopRow = kb.let("stop_row", kb.expandDims(stop, 0));
    Tensor ended = kb.let("ended", (w == stopRow) & upTo);
    Tensor added =
        kb.let("added", kb.sum(kb.where((w < stopRow) | ended, count, 0), 0));
    Tensor found = kb.let("found", kb.max(kb.cast(ended, kb.i32Type()), 0));
    return {prefix + added, pos - stop, done | found};
  };
  Tensors loop =
      kb.let("lookback", kb.whileLoop({prefix0, pos0, done0}, open, step));
  return loop[0];
}

} // namespace

static void buildRadixPass(KernelBuilder &kb) {
  int64_t block = kb.param("BLOCK");
  int64_t digitCount = int64_t(1) << kb.param("DIGIT_BITS");
  bool first = kb.param("FIRST");
  Tensor keysIn = kb.arg("keys_in_ptr"), valsIn = kb.arg("vals_in_ptr");
  Tensor keysOut = kb.arg("keys_out_ptr"), valsOut = kb.arg("vals_out_ptr");
  Tensor totals = kb.arg("totals_ptr"), starts = kb.arg("starts_ptr");
  Tensor shift = kb.arg("SHIFT");
  Tensor n = kb.let("count", kb.load(kb.arg("count_ptr")));
  Tensor ticket = kb.let("ticket", kb.atomicRmw(tile::AtomicRMWKind::Add,
                                                kb.arg("ticket_ptr"), 1));

  kb.ifThen(ticket * block < n, [&] {
    Tensor digitRow = kb.let("digit_row", kb.arange(0, digitCount));
    Lookback lb{kb.arg("status_ptr"), kb.let("tag", shift + 1),
                kb.let("digits", kb.expandDims(digitRow, 0)), digitCount,
                kb.param("LOOKBACK")};
    Tensor lane = kb.arange(0, block);
    Tensor index = kb.let("index", ticket * block + lane);
    Tensor inRange = kb.let("in_range", index < n);
    Tensor key = kb.let("key", kb.load(keysIn + index, inRange, 0));
    Tensor value =
        first ? index : kb.let("value", kb.load(valsIn + index, inRange, 0));
    Tensor digit = kb.let("digit", kb.binary(BinaryOpKind::ShrU, key, shift) &
                                       (digitCount - 1));
    Tensor onehot = kb.let("onehot", (kb.expandDims(digit, 1) == lb.digits) &
                                         kb.expandDims(inRange, 1));
    Tensor local = kb.let("local", kb.sum(kb.cast(onehot, kb.i32Type()), 0));
    Tensor own = kb.let("own", lb.status + ticket * digitCount + digitRow);
    kb.store(own,
             statusWord(kb, lb, local, kb.cast(ticket == 0, kb.i32Type()) + 1));
    Tensor before = kb.let("before", countBefore(kb, lb, ticket));
    kb.store(own, statusWord(kb, lb, before + local, kCountUpToProgram));

    // Where the program's first key of each digit goes: the keys of smaller
    // digits, then this digit's keys of earlier programs; each key gathers
    // its digit's from the program's row of starts.
    Tensor total = kb.let("total", kb.load(totals + digitRow));
    Tensor startRow = kb.let("start_row", starts + ticket * digitCount);
    kb.store(startRow + digitRow, kb.cumsum(total, 0) - total + before);
    kb.barrier();
    Tensor base = kb.let("base", kb.load(startRow + digit, inRange, 0));
    // A key's rank among the program's keys of its digit: the earlier keys
    // of the same digit (keys past N come last and count for none). The
    // tile is [j, i]: a thread holds a column, so the sum over j stays in it.
    Tensor earlier =
        kb.let("earlier", kb.expandDims(lane, 1) < kb.expandDims(lane, 0));
    Tensor same = kb.let(
        "same", (kb.expandDims(digit, 1) == kb.expandDims(digit, 0)) & earlier);
    Tensor rank = kb.let("rank", kb.sum(kb.cast(same, kb.i32Type()), 0));
    Tensor target = kb.let("target", base + rank);
    kb.store(keysOut + target, key, inRange);
    kb.store(valsOut + target, value, inRange);
  });
}

TILEC_KERNEL(radix_pass) {
  static const KernelDefinition kernel(
      KernelDescription("radix_pass", "kernels/radix_pass.cpp", __LINE__)
          .param(MetaParameter("BLOCK").powerOfTwo().byDefault(128))
          .param(MetaParameter("DIGIT_BITS").atLeast(1).atMost(8).byDefault(7))
          .param(MetaParameter("FIRST").atLeast(0).atMost(1).byDefault(0))
          .param(MetaParameter("LOOKBACK").powerOfTwo().byDefault(16))
          .arg(pointer("keys_in_ptr", "i32").divisibility(16))
          .arg(pointer("vals_in_ptr", "i32").divisibility(16))
          .arg(pointer("keys_out_ptr", "i32").divisibility(16))
          .arg(pointer("vals_out_ptr", "i32").divisibility(16))
          .arg(pointer("totals_ptr", "i32").divisibility(16))
          .arg(pointer("status_ptr", "i64").divisibility(16))
          .arg(pointer("starts_ptr", "i32").divisibility(16))
          .arg(pointer("ticket_ptr", "i32"))
          .arg(pointer("count_ptr", "i32"))
          .arg(scalar("N", "i32").doNotSpecialize())
          .arg(scalar("SHIFT", "i32"))
          .candidate("num_warps=4")
          .key("LOG2_N", "ceil(log2(N))")
          // The caller sizes the status words and starts by BLOCK keys a
          // program and DIGIT_BITS: a stored winner must have the call's.
          .key("BLOCK")
          .key("DIGIT_BITS")
          .key("FIRST")
          // N sizes the grid, the live count comes from count_ptr.
          .key("COUNT", "1")
          .grid({"cdiv(N, BLOCK)"})
          .require("SHIFT >= 0", "the digit's shift is in [0, 31]")
          .require("SHIFT <= 31", "the digit's shift is in [0, 31]")
          .testSizes({{"N", 10000}, {"SHIFT", 4}}, {{"N", 777}, {"SHIFT", 28}}),
      buildRadixPass);
  return kernel;
}
