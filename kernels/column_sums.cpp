//===- column_sums.cpp - a matrix's column sums over fixed row chunks -----===//
//
// parts[s * C + c] = sum of y[r, c] over the rows r of chunk s (rows
// [s * ROWS_PER_PART, (s + 1) * ROWS_PER_PART) below N), in f32, each
// chunk's rows added in BLOCK_R-row tiles in order: the bias gradient's
// first step (db = the column sums of dY), split_sum adds the chunks in
// order. The chunks are fixed by the call, not the config: the same dY
// gives the same bits in every process.
//
// Grid: (cdiv(N, ROWS_PER_PART) * cdiv(C, BLOCK_C)).
//
//===----------------------------------------------------------------------===//

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

static void buildColumnSums(KernelBuilder &kb) {
  int64_t blockR = kb.param("BLOCK_R"), blockC = kb.param("BLOCK_C");
  Tensor y = kb.arg("y_ptr"), parts = kb.arg("parts_ptr");
  Tensor n = kb.arg("N"), c = kb.arg("C"), stride = kb.arg("stride_y");
  Tensor rowsPerPart = kb.arg("ROWS_PER_PART");
  Tensor pid = kb.let("pid", kb.programId(0));
  Tensor tilesC = kb.let("tiles_c", kb.cdiv(c, blockC));
  Tensor part = kb.let("part", pid / tilesC);
  Tensor tileC = kb.let("tile_c", pid - part * tilesC);
  Tensor cols = kb.let("cols", tileC * blockC + kb.arange(0, blockC));
  Tensor colMask = kb.let("col_mask", cols < c);
  Tensor first = kb.let("first", part * rowsPerPart);
  Tensor last = kb.let("last", kb.minimum(first + rowsPerPart, n));
  Tensor steps = kb.let("steps", kb.cdiv(last - first, blockR));
  Tensor sum0 = kb.let("sum", kb.zeros({blockC}, kb.f32Type()));
  auto add = [&](Tensor s, llvm::ArrayRef<Tensor> carried) -> Tensors {
    Tensor rows = kb.let("rows", first + s * blockR + kb.arange(0, blockR));
    Tensor mask = kb.let("mask", kb.expandDims(rows < last, 1) &
                                     kb.expandDims(colMask, 0));
    Tensor tile = kb.let("tile", kb.load(y + kb.expandDims(rows, 1) * stride +
                                             kb.expandDims(cols, 0),
                                         mask, 0.0));
    return {kb.let("sum", carried[0] + kb.sum(kb.cast(tile, kb.f32Type()), 0))};
  };
  Tensors loop = kb.let("loop", kb.forRange(0, steps, 1, {sum0}, add));
  kb.store(parts + part * c + cols, loop[0], colMask);
}

TILEC_KERNEL(column_sums) {
  static const KernelDefinition kernel(
      KernelDescription("column_sums", "kernels/column_sums.cpp", __LINE__)
          .param(MetaParameter("BLOCK_R").powerOfTwo().byDefault(32))
          .param(MetaParameter("BLOCK_C").powerOfTwo().byDefault(64))
          .typeParam(
              TypeParameter("DTYPE", {"f16", "bf16", "f32"}).byDefault("f16"))
          .arg(pointer("y_ptr", "DTYPE").divisibility(16))
          .arg(pointer("parts_ptr", "f32").divisibility(16))
          .arg(scalar("N", "i32").doNotSpecialize())
          .arg(scalar("C", "i32"))
          .arg(scalar("ROWS_PER_PART", "i32").doNotSpecialize())
          .arg(scalar("stride_y", "i32").byDefault("C"))
          .candidate("num_warps=4")
          .key("LOG2_N", "ceil(log2(N))")
          .key("C")
          .key("DTYPE")
          .grid({"cdiv(N, ROWS_PER_PART) * cdiv(C, BLOCK_C)"})
          .require("(N - 1) * stride_y + C < 2147483648",
                   "Y's element offsets are 32-bit")
          .require("ROWS_PER_PART >= 1", "a part holds rows")
          .require("stride_y >= C", "rows of Y do not overlap")
          .testSizes({{"N", 10000}, {"C", 128}, {"ROWS_PER_PART", 4096}},
                     {{"N", 777}, {"C", 17}, {"ROWS_PER_PART", 100}}),
      buildColumnSums);
  return kernel;
}
