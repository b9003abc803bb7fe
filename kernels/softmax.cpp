//===- softmax.cpp - numerically stable softmax of each row ---------------===//
//
// One program per row: the whole row is loaded as one block of BLOCK_N >=
// n_cols columns, the columns past n_cols read -inf so that they add nothing
// to the sum, and the row maximum is subtracted before exp for stability.
// Grid: n_rows.
//
//===----------------------------------------------------------------------===//

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelRegistry.h"

#include <cmath>

using namespace tilec;
using namespace tilec::kernel;

static void buildSoftmax(KernelBuilder &kb) {
  int64_t blockN = kb.param("BLOCK_N");
  Tensor output = kb.arg("output_ptr"), input = kb.arg("input_ptr");
  Tensor inputRowStride = kb.arg("input_row_stride");
  Tensor outputRowStride = kb.arg("output_row_stride");
  Tensor nCols = kb.arg("n_cols");

  Tensor row = kb.let("row", kb.programId(0));
  Tensor cols = kb.let("cols", kb.arange(0, blockN));
  Tensor mask = kb.let("mask", cols < nCols);
  Tensor x = kb.let(
      "x", kb.load(input + row * inputRowStride + cols, mask, -INFINITY));
  Tensor shifted = kb.let("shifted", x - kb.max(x, 0));
  Tensor numerator = kb.let("numerator", kb.exp(shifted));
  Tensor denominator = kb.let("denominator", kb.sum(numerator, 0));
  Tensor y = kb.let("y", numerator / denominator);
  kb.store(output + row * outputRowStride + cols, y, mask);
}

TILEC_KERNEL(softmax) {
  static const KernelDefinition kernel(
      KernelDescription("softmax", "kernels/softmax.cpp", __LINE__)
          .param(MetaParameter("BLOCK_N")
                     .powerOfTwo()
                     .atMost(32768, "a row must fit one program's registers")
                     .byDefault(1024)
                     .derivedAs("next_power_of_2(n_cols)"))
          .arg(pointer("output_ptr", "f32").divisibility(16))
          .arg(pointer("input_ptr", "f32").divisibility(16))
          // Dense rows unless the call says otherwise.
          .arg(scalar("input_row_stride", "i32").byDefault("n_cols"))
          .arg(scalar("output_row_stride", "i32").byDefault("n_cols"))
          .arg(scalar("n_cols", "i32"))
          .candidate("num_warps=4")
          .candidate("num_warps=8")
          .candidate("num_warps=16")
          .key("BLOCK_N", "next_power_of_2(n_cols)")
          .grid({"n_rows"})
          .require("BLOCK_N >= n_cols", "one program holds a whole row")
          .require("(n_rows - 1) * input_row_stride + n_cols < 2147483648",
                   "element offsets are 32-bit")
          .require("(n_rows - 1) * output_row_stride + n_cols < 2147483648",
                   "element offsets are 32-bit")
          .testSizes({{"n_rows", 1024}, {"n_cols", 1024}},
                     {{"n_rows", 37}, {"n_cols", 1000}}),
      buildSoftmax);
  return kernel;
}
