//===- split_sum.cpp - parts' f32 partial sums added in a fixed order -----===//
//
// out[i] = sum over s < S of parts[s * T + i] for i < T in f32, cast to
// DTYPE: the last step of the deterministic reductions (sparse_conv_wgrad's
// parts, column_sums's row chunks). Each step loads ROWS parts at once and
// adds them (a tree fixed by the config) to the running sum, so that a
// program waits on one load per ROWS parts; the parts are fixed by the
// call and the config is the kernel's only one, so the same input gives
// the same bits in every process.
//
// Grid: (cdiv(T, BLOCK)).
//
//===----------------------------------------------------------------------===//

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

static void buildSplitSum(KernelBuilder &kb) {
  int64_t block = kb.param("BLOCK"), rows = kb.param("ROWS");
  mlir::Type dtype = kb.dtype("DTYPE");
  Tensor parts = kb.arg("parts_ptr"), out = kb.arg("out_ptr");
  Tensor total = kb.arg("T"), count = kb.arg("S");
  Tensor index = kb.let("index", kb.programId(0) * block + kb.arange(0, block));
  Tensor inRange = kb.let("in_range", index < total);
  Tensor columns = kb.let("columns", kb.expandDims(index, 0));
  Tensor columnMask = kb.let("column_mask", kb.expandDims(inRange, 0));
  Tensor sum0 = kb.let("sum", kb.zeros({block}, kb.f32Type()));
  auto add = [&](Tensor step, llvm::ArrayRef<Tensor> carried) -> Tensors {
    Tensor part =
        kb.let("part", kb.expandDims(step * rows + kb.arange(0, rows), 1));
    Tensor tile = kb.let("tile", kb.load(parts + part * total + columns,
                                         (part < count) & columnMask, 0.0,
                                         tile::CacheModifier::CG));
    return {kb.let("sum", carried[0] + kb.sum(tile, 0))};
  };
  Tensors loop =
      kb.let("loop", kb.forRange(0, kb.cdiv(count, rows), 1, {sum0}, add));
  kb.store(out + index, kb.cast(loop[0], dtype), inRange);
}

TILEC_KERNEL(split_sum) {
  static const KernelDefinition kernel(
      KernelDescription("split_sum", "kernels/split_sum.cpp", __LINE__)
          .param(MetaParameter("BLOCK").powerOfTwo().byDefault(256))
          .param(MetaParameter("ROWS").powerOfTwo().byDefault(8))
          .typeParam(
              TypeParameter("DTYPE", {"f16", "bf16", "f32"}).byDefault("f32"))
          .arg(pointer("parts_ptr", "f32").divisibility(16))
          .arg(pointer("out_ptr", "DTYPE").divisibility(16))
          .arg(scalar("T", "i32").doNotSpecialize())
          .arg(scalar("S", "i32").doNotSpecialize())
          .candidate("num_warps=4")
          .key("LOG2_T", "ceil(log2(T))")
          .key("DTYPE")
          .grid({"cdiv(T, BLOCK)"})
          .require("S * T < 2147483648", "the parts' offsets are 32-bit")
          .require("S >= 1", "at least one part")
          .testSizes({{"T", 100000}, {"S", 7}}, {{"T", 777}, {"S", 19}}),
      buildSplitSum);
  return kernel;
}
