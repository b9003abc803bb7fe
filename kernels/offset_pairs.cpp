//===- offset_pairs.cpp - each offset's (voxel, neighbour) pairs, listed --===//
//
// For each offset v, the pairs of its sorted rows r with a neighbour there,
// in row order: pair_in[p] = nbt[v * N + r] (the neighbour) and
// pair_out[p] = order[r] (the voxel around it), p from pair_start[v] on,
// where scan is the exclusive_scan of offset_pair_counts (V * chunks + 1
// sums, chunks = cdiv(N, BLOCK), the same BLOCK) and pair_start[v] =
// scan[v * chunks] for v <= V. sparse_conv_wgrad reduces over these lists.
//
// Grid: (V * cdiv(N, BLOCK)), program v * chunks + c for chunk c of offset v.
//
//===----------------------------------------------------------------------===//

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

static void buildOffsetPairs(KernelBuilder &kb) {
  int64_t block = kb.param("BLOCK");
  Tensor nbt = kb.arg("nbt_ptr"), order = kb.arg("order_ptr");
  Tensor scan = kb.arg("scan_ptr"), pairStart = kb.arg("pair_start_ptr");
  Tensor pairIn = kb.arg("pair_in_ptr"), pairOut = kb.arg("pair_out_ptr");
  Tensor n = kb.arg("N"), v = kb.arg("V");
  Tensor pid = kb.let("pid", kb.programId(0));
  Tensor chunks = kb.let("chunks", kb.cdiv(n, block));
  Tensor offset = kb.let("offset", pid / chunks);
  Tensor chunk = kb.let("chunk", pid - offset * chunks);
  Tensor row = kb.let("row", chunk * block + kb.arange(0, block));
  Tensor inRange = kb.let("in_range", row < n);
  Tensor nb = kb.let("nb", kb.load(nbt + offset * n + row, inRange, -1));
  Tensor has = kb.let("has", nb != -1);
  Tensor count = kb.let("count", kb.cast(has, kb.i32Type()));
  Tensor base = kb.let("base", kb.load(scan + pid));
  Tensor slot = kb.let("slot", base + kb.cumsum(count, 0) - count);
  Tensor voxel = kb.let("voxel", kb.load(order + row, has, 0));
  kb.store(pairIn + slot, nb, has);
  kb.store(pairOut + slot, voxel, has);
  kb.store(pairStart + offset, base, chunk == 0);
  kb.store(pairStart + v, base + kb.sum(count, 0), pid == v * chunks - 1);
}

TILEC_KERNEL(offset_pairs) {
  static const KernelDefinition kernel(
      KernelDescription("offset_pairs", "kernels/offset_pairs.cpp", __LINE__)
          .param(MetaParameter("BLOCK").powerOfTwo().byDefault(1024))
          .arg(pointer("nbt_ptr", "i32").divisibility(16))
          .arg(pointer("order_ptr", "i32").divisibility(16))
          .arg(pointer("scan_ptr", "i32").divisibility(16))
          .arg(pointer("pair_start_ptr", "i32").divisibility(16))
          .arg(pointer("pair_in_ptr", "i32").divisibility(16))
          .arg(pointer("pair_out_ptr", "i32").divisibility(16))
          .arg(scalar("N", "i32").doNotSpecialize())
          .arg(scalar("V", "i32"))
          .candidate("num_warps=4")
          .key("LOG2_N", "ceil(log2(N))")
          .key("V")
          .grid({"V * cdiv(N, BLOCK)"})
          .require("N * V < 2147483648", "the map's offsets are 32-bit")
          .testSizes({{"N", 3000}, {"V", 27}}, {{"N", 777}, {"V", 125}}),
      buildOffsetPairs);
  return kernel;
}
