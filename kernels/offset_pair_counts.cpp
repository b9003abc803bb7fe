//===- offset_pair_counts.cpp - each offset's pairs, counted by row chunk -===//
//
// counts[v * chunks + c] is the number of sorted rows r of chunk c (rows
// [c * BLOCK, (c + 1) * BLOCK) below N) with a neighbour at offset v:
// nbt[v * N + r] != -1, chunks = cdiv(N, BLOCK). Their prefix sums
// (exclusive_scan) place each offset's pairs for offset_pairs.
//
// Grid: (V * cdiv(N, BLOCK)).
//
//===----------------------------------------------------------------------===//

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

static void buildOffsetPairCounts(KernelBuilder &kb) {
  int64_t block = kb.param("BLOCK");
  Tensor nbt = kb.arg("nbt_ptr"), counts = kb.arg("counts_ptr");
  Tensor n = kb.arg("N");
  Tensor pid = kb.let("pid", kb.programId(0));
  Tensor chunks = kb.let("chunks", kb.cdiv(n, block));
  Tensor offset = kb.let("offset", pid / chunks);
  Tensor chunk = kb.let("chunk", pid - offset * chunks);
  Tensor row = kb.let("row", chunk * block + kb.arange(0, block));
  Tensor inRange = kb.let("in_range", row < n);
  Tensor nb = kb.let("nb", kb.load(nbt + offset * n + row, inRange, -1));
  Tensor has = kb.let("has", kb.cast(nb != -1, kb.i32Type()));
  kb.store(counts + pid, kb.sum(has, 0));
}

TILEC_KERNEL(offset_pair_counts) {
  static const KernelDefinition kernel(
      KernelDescription("offset_pair_counts", "kernels/offset_pair_counts.cpp",
                        __LINE__)
          .param(MetaParameter("BLOCK").powerOfTwo().byDefault(1024))
          .arg(pointer("nbt_ptr", "i32").divisibility(16))
          .arg(pointer("counts_ptr", "i32").divisibility(16))
          .arg(scalar("N", "i32").doNotSpecialize())
          .arg(scalar("V", "i32"))
          .candidate("num_warps=4")
          .key("LOG2_N", "ceil(log2(N))")
          .key("V")
          .grid({"V * cdiv(N, BLOCK)"})
          .require("N * V < 2147483648", "the map's offsets are 32-bit")
          .testSizes({{"N", 3000}, {"V", 27}}, {{"N", 777}, {"V", 125}}),
      buildOffsetPairCounts);
  return kernel;
}
