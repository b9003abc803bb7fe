//===- split_sum.cpp - parts' f32 partial sums added in a fixed order -----===//
//
// out[i] = sum over s = 0, 1, ..., S - 1 of parts[s * T + i] for i < T, in
// that order in f32, then cast to DTYPE: the last step of the deterministic
// reductions (sparse_conv_wgrad's parts, column_sums's row chunks), whose
// parts are fixed by the call, so the same input gives the same bits in
// every process.
//
// Grid: (cdiv(T, BLOCK)).
//
//===----------------------------------------------------------------------===//

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

static void buildSplitSum(KernelBuilder &kb) {
  int64_t block = kb.param("BLOCK");
  mlir::Type dtype = kb.dtype("DTYPE");
  Tensor parts = kb.arg("parts_ptr"), out = kb.arg("out_ptr");
  Tensor total = kb.arg("T"), count = kb.arg("S");
  Tensor index = kb.let("index", kb.programId(0) * block + kb.arange(0, block));
  Tensor inRange = kb.let("in_range", index < total);
  Tensor sum0 = kb.let("sum", kb.zeros({block}, kb.f32Type()));
  auto add = [&](Tensor s, llvm::ArrayRef<Tensor> carried) -> Tensors {
    Tensor part = kb.let("part", kb.load(parts + s * total + index, inRange,
                                         0.0, tile::CacheModifier::CG));
    return {kb.let("sum", carried[0] + part)};
  };
  Tensors loop = kb.let("loop", kb.forRange(0, count, 1, {sum0}, add));
  kb.store(out + index, kb.cast(loop[0], dtype), inRange);
}

TILEC_KERNEL(split_sum) {
  static const KernelDefinition kernel(
      KernelDescription("split_sum", "kernels/split_sum.cpp", __LINE__)
          .param(MetaParameter("BLOCK").powerOfTwo().byDefault(1024))
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
          .testSizes({{"T", 100000}, {"S", 7}}, {{"T", 777}, {"S", 1}}),
      buildSplitSum);
  return kernel;
}
