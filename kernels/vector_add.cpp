//===- vector_add.cpp - out = x + y, elementwise --------------------------===//
//
// The smallest kernel: each program adds one BLOCK of f32 elements; the last
// block is masked when n_elements is not a multiple of BLOCK.
// Grid: cdiv(n_elements, BLOCK).
//
//===----------------------------------------------------------------------===//

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

static void buildVectorAdd(KernelBuilder &kb) {
  int64_t block = kb.param("BLOCK");
  Tensor x = kb.arg("x_ptr"), y = kb.arg("y_ptr"), out = kb.arg("out_ptr");
  Tensor n = kb.arg("n_elements");

  Tensor pid = kb.let("pid", kb.programId(0));
  Tensor offsets = kb.let("offsets", pid * block + kb.arange(0, block));
  Tensor mask = kb.let("mask", offsets < n);
  Tensor xs = kb.let("x", kb.load(x + offsets, mask));
  Tensor ys = kb.let("y", kb.load(y + offsets, mask));
  kb.store(out + offsets, xs + ys, mask);
}

TILEC_KERNEL(vector_add) {
  static const KernelDefinition kernel(
      KernelDescription("vector_add", "kernels/vector_add.cpp", __LINE__)
          .param(MetaParameter("BLOCK").powerOfTwo().atMost(
              65536, "one program's registers"))
          .arg(pointer("x_ptr", "f32").divisibility(16))
          .arg(pointer("y_ptr", "f32").divisibility(16))
          .arg(pointer("out_ptr", "f32").divisibility(16))
          .arg(scalar("n_elements", "i32"))
          .candidate("BLOCK=1024,num_warps=4")
          .candidate("BLOCK=2048,num_warps=8")
          .candidate("BLOCK=4096,num_warps=8")
          .candidate("BLOCK=512,num_warps=4")
          .key("LOG2_N", "ceil(log2(n_elements))")
          .grid({"cdiv(n_elements, BLOCK)"})
          .testSizes({{"n_elements", 1 << 20}}, {{"n_elements", 100003}}),
      buildVectorAdd);
  return kernel;
}
