//===- ReferenceTest.cpp - the float64 references, checked by hand --------===//
//
// The matmul and sparse-convolution references compute their rows on
// several threads from decoded copies of the inputs; each must equal, bit
// for bit, the plain loop over the host tensors it returns. The block lists'
// two outputs agree, and an integer output's poison is checked.
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

#include "tilec/Harness/KernelHarness.h"
#include "tilec/Harness/Reference.h"
#include "tilec/Kernel/KernelRegistry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>

namespace {

using namespace tilec;
using namespace tilec::harness;

struct Built {
  std::map<std::string, int64_t> arguments;
  ReferenceProblem problem;
};

/// The reference of `kernel` for its default sizes overridden by `sizes`.
Built buildReference(const std::string &kernel,
                     const std::map<std::string, int64_t> &sizes,
                     const std::map<std::string, std::string> &types,
                     const std::map<std::string, int64_t> &params) {
  const kernel::KernelDefinition *definition = kernel::lookupKernel(kernel);
  EXPECT_NE(definition, nullptr);
  const KernelDescription &description = definition->getDescription();
  RunRequest request = requestFor(description);
  for (const auto &[name, value] : sizes)
    request.call.sizes[name] = value;
  request.call.types = types;
  request.call.params = params;
  auto values = description.evaluateIntegerArguments(request.call);
  EXPECT_TRUE(values.ok()) << values.message();
  Built built;
  built.arguments = {values->begin(), values->end()};
  Random rng(7);
  ReferenceRequest inputs{description, request.call, built.arguments, true,
                          rng};
  auto problem = findReference(kernel)(inputs);
  EXPECT_TRUE(problem.ok()) << problem.message();
  built.problem = std::move(*problem);
  return built;
}

TEST(ReferenceTest, RowRangesCoverEveryRowOnce) {
  for (int64_t count : {0, 1, 2, 3, 17, 1000}) {
    std::vector<std::atomic<int>> seen(count);
    forEachRowRange(count, [&](int64_t begin, int64_t end) {
      ASSERT_LE(0, begin);
      ASSERT_LE(begin, end);
      ASSERT_LE(end, count);
      for (int64_t i = begin; i < end; ++i)
        ++seen[i];
    });
    for (int64_t i = 0; i < count; ++i)
      EXPECT_EQ(seen[i].load(), 1) << count << " rows, row " << i;
  }
}

// Padded strides in every matrix, bf16, sizes that do not divide a thread
// count.
TEST(ReferenceTest, MatmulIsThePlainLoop) {
  Built built = buildReference("matmul",
                               {{"M", 37},
                                {"N", 29},
                                {"K", 23},
                                {"stride_am", 31},
                                {"stride_bk", 41},
                                {"stride_cm", 33}},
                               {{"DTYPE", "bf16"}}, {});
  const auto &args = built.arguments;
  const HostTensor &a = built.problem.tensors.at("a_ptr");
  const HostTensor &b = built.problem.tensors.at("b_ptr");
  const std::vector<double> &expected = built.problem.expected;
  int64_t m = args.at("M"), n = args.at("N"), k = args.at("K");
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t kk = 0; kk < k; ++kk)
        sum += a.get(i * args.at("stride_am") + kk * args.at("stride_ak")) *
               b.get(kk * args.at("stride_bk") + j * args.at("stride_bn"));
      ASSERT_EQ(expected[i * args.at("stride_cm") + j * args.at("stride_cn")],
                sum)
          << i << ", " << j;
    }
  // The padding between C's rows stays poisoned.
  EXPECT_TRUE(std::isnan(expected[n * args.at("stride_cn")]));
}

TEST(ReferenceTest, SparseConvolutionIsThePlainLoop) {
  int64_t n = 300, ci = 12, co = 10, v = 27;
  Built built = buildReference(
      "sparse_conv_fwd",
      {{"N", n}, {"CI", ci}, {"CO", co}, {"V", v}, {"stride_y", co + 3}},
      {{"DTYPE", "f16"}}, {{"BLOCK_M", 64}, {"HAS_BIAS", 1}});
  const HostTensor &x = built.problem.tensors.at("x_ptr");
  const HostTensor &w = built.problem.tensors.at("w_ptr");
  const HostTensor &bias = built.problem.tensors.at("bias_ptr");
  auto maps = buildHostMaps(testCloud(n), 3, 1, 64);
  ASSERT_TRUE(maps.ok()) << maps.message();
  int64_t strideX = built.arguments.at("stride_x");
  int64_t pairs = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t o = 0; o < co; ++o) {
      double sum = bias.get(o);
      for (int64_t kk = 0; kk < v; ++kk) {
        int32_t source = maps->nb[i * v + kk];
        if (source < 0)
          continue;
        pairs += o == 0;
        for (int64_t c = 0; c < ci; ++c)
          sum += x.get(source * strideX + c) * w.get((o * v + kk) * ci + c);
      }
      ASSERT_EQ(built.problem.expected[i * (co + 3) + o], sum)
          << i << ", " << o;
    }
  EXPECT_GT(pairs, n); // neighbours beyond each voxel itself
  EXPECT_TRUE(std::isnan(built.problem.expected[co]));
}

// block_offsets writes each block's count and its list at b * V in one
// launch; a problem has one output, so its reference expects the lists (the
// entries past a count poisoned) or, with CHECK_COUNTS=1, the counts, and
// the two agree.
TEST(ReferenceTest, BlockListsSitAtAStrideOfVBesideTheirCounts) {
  int64_t n = 300, v = 27;
  Built lists = buildReference("block_offsets", {{"N", n}, {"V", v}}, {},
                               {{"BLOCK_M", 64}});
  Built counts =
      buildReference("block_offsets", {{"N", n}, {"V", v}, {"CHECK_COUNTS", 1}},
                     {}, {{"BLOCK_M", 64}});
  EXPECT_EQ(lists.problem.output, "blk_off_ptr");
  EXPECT_EQ(counts.problem.output, "blk_count_ptr");
  int64_t blocks = (n + 63) / 64;
  ASSERT_EQ(static_cast<int64_t>(counts.problem.expected.size()), blocks);
  ASSERT_EQ(static_cast<int64_t>(lists.problem.expected.size()), blocks * v);
  for (int64_t b = 0; b < blocks; ++b) {
    double count = counts.problem.expected[b];
    EXPECT_GT(count, 0) << b; // each voxel is its own centre
    int64_t previous = -1;
    for (int64_t k = 0; k < v; ++k) {
      double entry = lists.problem.expected[b * v + k];
      if (k >= count) {
        EXPECT_TRUE(std::isnan(entry)) << b << ", " << k;
        continue;
      }
      int64_t offset = static_cast<int64_t>(entry) & 0xFFFF;
      EXPECT_GT(offset, previous) << b << ", " << k; // ascending
      EXPECT_GT(static_cast<int64_t>(entry) >> 16, 0) << b << ", " << k;
      previous = offset;
    }
  }
}

// Below the grid's rows, the live count cuts a block's list to its live
// rows and gives each block past it the count V + 1, which the block sort
// puts after every live block.
TEST(ReferenceTest, BlocksPastTheLiveCountSortAfterTheLiveOnes) {
  int64_t n = 300, v = 27, live = 100;
  Built all =
      buildReference("block_offsets", {{"N", n}, {"V", v}, {"CHECK_COUNTS", 1}},
                     {}, {{"BLOCK_M", 64}});
  Built cut =
      buildReference("block_offsets",
                     {{"N", n}, {"V", v}, {"CHECK_COUNTS", 1}, {"LIVE", live}},
                     {}, {{"BLOCK_M", 64}});
  ASSERT_EQ(cut.problem.expected.size(), all.problem.expected.size());
  EXPECT_EQ(cut.problem.expected[0], all.problem.expected[0]); // 64 live rows
  EXPECT_GT(cut.problem.expected[1], 0);                       // 36 live rows
  EXPECT_LE(cut.problem.expected[1], all.problem.expected[1]);
  for (size_t b = 2; b < cut.problem.expected.size(); ++b)
    EXPECT_EQ(cut.problem.expected[b], v + 1) << b;
}

// An integer output's poison (all bits set) reads as -1: an element the
// kernel must not write passes as -1 and fails as anything else.
TEST(ReferenceTest, AnIntegerOutputStaysPoisonedAsMinusOne) {
  HostTensor result(ElementFormat::I32, 2);
  result.set(0, 5);
  result.set(1, -1);
  std::vector<double> expected = {5, NAN};
  EXPECT_TRUE(compareOutput(result, expected, Tolerance{}).passed);
  result.set(1, 0);
  EXPECT_FALSE(compareOutput(result, expected, Tolerance{}).passed);
}

} // namespace
