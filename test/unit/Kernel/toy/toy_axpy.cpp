//===- toy_axpy.cpp - out = SCALE * x + y, added the way docs/kernels.md says
//
// A kernel file exactly as it would sit in kernels/: its body and its
// description, nothing else. ToyKernelTest builds the registry from
// kernels/*.cpp plus this file (cmake/TilecRegistry.cmake) and checks that the
// compiler, the harness and the GPU run it with no other change.
//
//===----------------------------------------------------------------------===//

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

using namespace tilec;
using namespace tilec::kernel;

static void buildToyAxpy(KernelBuilder &kb) {
  int64_t block = kb.param("BLOCK"), scale = kb.param("SCALE");
  Tensor x = kb.arg("x_ptr"), y = kb.arg("y_ptr"), out = kb.arg("out_ptr");
  Tensor n = kb.arg("n");

  Tensor offsets =
      kb.let("offsets", kb.programId(0) * block + kb.arange(0, block));
  Tensor mask = kb.let("mask", offsets < n);
  Tensor xs = kb.let("x", kb.load(x + offsets, mask));
  Tensor ys = kb.let("y", kb.load(y + offsets, mask));
  kb.store(out + offsets, xs * static_cast<double>(scale) + ys, mask);
}

TILEC_KERNEL(toy_axpy) {
  static const KernelDefinition kernel(
      KernelDescription("toy_axpy", "test/unit/Kernel/toy/toy_axpy.cpp",
                        __LINE__)
          .param(MetaParameter("BLOCK").powerOfTwo().atMost(4096))
          .param(MetaParameter("SCALE").byDefault(3))
          .arg(pointer("x_ptr", "f32").divisibility(16))
          .arg(pointer("y_ptr", "f32").divisibility(16))
          .arg(pointer("out_ptr", "f32").divisibility(16))
          .arg(scalar("n", "i32"))
          .candidate("BLOCK=256,num_warps=2")
          .candidate("BLOCK=1024,num_warps=4")
          .key("LOG2_N", "ceil(log2(n))")
          .grid({"cdiv(n, BLOCK)"})
          .testSizes({{"n", 4096}}, {{"n", 1001}}),
      buildToyAxpy);
  return kernel;
}
