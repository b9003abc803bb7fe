//===- exclusive_scan.cpp - prefix sums of an i32 vector ------------------===//
//
// out[0] = 0 and out[i + 1] = in[0] + ... + in[i] for i < N: one program
// walks the vector in tiles of BLOCK, scanning each tile (tile.scan) and
// carrying the running total, so the sums are exact and run in one order.
// With ROWS > 1, in holds ROWS vectors of N one after another and program r
// scans the r-th into out[r * (N + 1) ...] (N + 1 sums each, the last its
// total): the radix sort's digit counts are a row per digit, scanned side
// by side instead of one program walking them all.
// The sparse convolution's maps use it for the radix sorts' digit counts
// (of the rows and of the row blocks) and for the row blocks' offset counts
// (their start positions).
// Sums past 2^31 wrap; the callers' counts stay far below.
//
// Grid: (ROWS).
//
//===----------------------------------------------------------------------===//

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

static void buildExclusiveScan(KernelBuilder &kb) {
  int64_t block = kb.param("BLOCK");
  Tensor n = kb.arg("N");
  Tensor row = kb.let("row", kb.programId(0));
  Tensor in = kb.arg("in_ptr") + row * n;
  Tensor out = kb.arg("out_ptr") + row * (n + 1);

  kb.store(out, kb.constant(0, kb.i32Type()));
  Tensor tiles = kb.let("tiles", kb.cdiv(n, block));
  Tensor total0 = kb.let("total", kb.constant(0, kb.i32Type()));
  auto tile = [&](Tensor t, llvm::ArrayRef<Tensor> carried) -> Tensors {
    Tensor index = kb.let("index", t * block + kb.arange(0, block));
    Tensor inRange = kb.let("in_range", index < n);
    Tensor x = kb.let("x", kb.load(in + index, inRange, 0));
    Tensor sums = kb.let("sums", kb.cumsum(x, 0) + carried[0]);
    kb.store(out + index + 1, sums, inRange);
    return {carried[0] + kb.sum(x, 0)};
  };
  kb.let("loop", kb.forRange(0, tiles, 1, {total0}, tile));
}

TILEC_KERNEL(exclusive_scan) {
  static const KernelDefinition kernel(
      KernelDescription("exclusive_scan", "kernels/exclusive_scan.cpp",
                        __LINE__)
          .param(MetaParameter("BLOCK").powerOfTwo().byDefault(1024))
          .arg(pointer("in_ptr", "i32").divisibility(16))
          .arg(pointer("out_ptr", "i32").divisibility(16))
          .arg(scalar("N", "i32").doNotSpecialize())
          .arg(scalar("ROWS", "i32").doNotSpecialize().byDefault("1"))
          .candidate("num_warps=8")
          .key("LOG2_N", "ceil(log2(N))")
          .grid({"ROWS"})
          .require("ROWS >= 1", "at least one vector")
          .require("ROWS * (N + 1) < 2147483648",
                   "the sums' offsets are 32-bit")
          .testSizes({{"N", 65536}}, {{"N", 977}, {"ROWS", 128}}),
      buildExclusiveScan);
  return kernel;
}
