//===- ExpressionTest.cpp - Key, grid and config evaluation ---------------===//

#include "tilec/runtime/Autotuner.h"
#include "tilec/runtime/KernelCompiler.h"

#include <gtest/gtest.h>

namespace rt = tilec::rt;

namespace {

int64_t eval(const std::string &expression,
             const std::map<std::string, int64_t> &names = {}) {
  rt::Result<int64_t> value = rt::evaluateExpression(expression, names);
  EXPECT_TRUE(value.ok()) << expression << ": " << value.message();
  return value.ok() ? *value : -1;
}

std::string evalError(const std::string &expression,
                      const std::map<std::string, int64_t> &names = {}) {
  rt::Result<int64_t> value = rt::evaluateExpression(expression, names);
  EXPECT_FALSE(value.ok()) << expression << " evaluated to " << *value;
  return value.ok() ? "" : value.message();
}

TEST(Expression, Arithmetic) {
  EXPECT_EQ(eval("1 + 2 * 3"), 7);
  EXPECT_EQ(eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(eval("-7 // 2"), -4); // floor division, as in Python
  EXPECT_EQ(eval("7 // 2"), 3);
  EXPECT_EQ(eval("-7 % 3"), 2);
  EXPECT_EQ(eval("10 / 4 * 2"), 5); // real division, integral result
  EXPECT_EQ(eval("M - N", {{"M", 3}, {"N", 5}}), -2);
}

TEST(Expression, Functions) {
  EXPECT_EQ(eval("cdiv(1000, 64)"), 16);
  EXPECT_EQ(eval("cdiv(1024, 64)"), 16);
  EXPECT_EQ(eval("cdiv(1025, 64)"), 17);
  EXPECT_EQ(eval("min(3, 9) + max(3, 9)"), 12);
  EXPECT_EQ(eval("next_power_of_2(1000)"), 1024);
  EXPECT_EQ(eval("next_power_of_2(1024)"), 1024);
  EXPECT_EQ(eval("next_power_of_2(1)"), 1);
  EXPECT_EQ(eval("floor(log2(1000))"), 9);
}

TEST(Expression, CeilLog2IsExactForPowersOfTwo) {
  for (int64_t shift = 0; shift < 40; ++shift) {
    int64_t m = int64_t(1) << shift;
    EXPECT_EQ(eval("ceil(log2(M))", {{"M", m}}), shift) << m;
    if (m > 2) {
      EXPECT_EQ(eval("ceil(log2(M))", {{"M", m + 1}}), shift + 1) << m + 1;
      EXPECT_EQ(eval("ceil(log2(M))", {{"M", m - 1}}), shift) << m - 1;
    }
  }
}

TEST(Expression, GridOfMatmul) {
  std::map<std::string, int64_t> names = {
      {"M", 203}, {"N", 176}, {"BLOCK_M", 64}, {"BLOCK_N", 32}};
  EXPECT_EQ(eval("cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)", names), 4 * 6);
}

TEST(Expression, Errors) {
  EXPECT_NE(evalError("cdiv(M, 4)").find("no value for 'M'"),
            std::string::npos);
  EXPECT_NE(evalError("frob(3)").find("unknown function 'frob'"),
            std::string::npos);
  EXPECT_NE(evalError("log2(1000)").find("not an integer"), std::string::npos);
  EXPECT_NE(evalError("4 // 0").find("division by zero"), std::string::npos);
  EXPECT_NE(evalError("cdiv(4)").find("takes 2 argument"), std::string::npos);
  EXPECT_NE(evalError("(1 + 2").find("missing ')'"), std::string::npos);
  EXPECT_NE(evalError("1 +").find("unexpected end"), std::string::npos);
  EXPECT_NE(evalError("1 2").find("unexpected '2'"), std::string::npos);
  EXPECT_NE(evalError("log2(0)").find("positive"), std::string::npos);
  EXPECT_NE(evalError("9223372036854775807 + 1").find("overflow"),
            std::string::npos);
  // Every error quotes the expression.
  EXPECT_NE(evalError("1 +").find("'1 +'"), std::string::npos);
}

// The declarations of kernels/matmul.cpp, gather_matmul.cpp and softmax.cpp,
// written out (the JIT test checks the real ones).
rt::KernelDescription matmulLike() {
  rt::KernelDescription kernel;
  kernel.name = "matmul";
  kernel.key = {
      {"M", ""}, {"N", ""}, {"K", ""}, {"DTYPE", ""}, {"ALLOW_TF32", ""}};
  kernel.grid = {"cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)"};
  kernel.paramDefaults = {{"GROUP_M", 8}, {"ALLOW_TF32", 0}};
  kernel.typeDefaults = {{"DTYPE", "f16"}};
  return kernel;
}

rt::KernelDescription softmaxLike() {
  rt::KernelDescription kernel;
  kernel.name = "softmax";
  kernel.key = {{"BLOCK_N", "next_power_of_2(n_cols)"}};
  kernel.grid = {"n_rows"};
  kernel.paramDefaults = {{"BLOCK_N", 1024}};
  kernel.derivedParams = {{"BLOCK_N", "next_power_of_2(n_cols)"}};
  return kernel;
}

TEST(AutotuneKey, PlainEntriesTakeCallValuesThenDefaults) {
  rt::CallSpec call;
  call.sizes = {{"M", 4096}, {"N", 4096}, {"K", 4096}};
  auto key = rt::computeAutotuneKey(matmulLike(), call);
  ASSERT_TRUE(key.ok()) << key.message();
  EXPECT_EQ(*key, "M=4096,N=4096,K=4096,DTYPE=f16,ALLOW_TF32=0");

  call.types = {{"DTYPE", "f32"}};
  call.params = {{"ALLOW_TF32", 1}};
  key = rt::computeAutotuneKey(matmulLike(), call);
  ASSERT_TRUE(key.ok()) << key.message();
  EXPECT_EQ(*key, "M=4096,N=4096,K=4096,DTYPE=f32,ALLOW_TF32=1");
}

// Only integer arguments specialize; "= 1" does not apply to an argument
// declared divisible; the text is canonical.
TEST(Specialization, OfACall) {
  rt::KernelDescription kernel = matmulLike();
  kernel.integerArguments = {
      {"M", 1}, {"N", 1}, {"K", 1}, {"stride_am", 16}, {"stride_bk", 16}};
  rt::CallSpec call;
  call.sizes = {{"M", 4096}, {"N", 1},         {"K", 100},
                {"R", 32},   {"stride_am", 1}, {"stride_bk", 64}};
  rt::Specialization specialization = rt::specializeCall(kernel, call);
  // stride_bk%16 is what the declaration promises already.
  EXPECT_EQ(specialization.str(), "M%16,N=1");
  // A kernel described without its arguments (an older autotune cache)
  // specializes nothing.
  EXPECT_TRUE(rt::specializeCall(matmulLike(), call).empty());
  EXPECT_EQ(rt::Specialization::derive({{"a", 32}, {"b", 1}, {"c", 7}}).str(),
            "a%16,b=1");
}

TEST(AutotuneKey, DerivedEntries) {
  rt::KernelDescription gather = matmulLike();
  gather.key = {
      {"LOG2_M", "ceil(log2(M))"}, {"N", ""}, {"K", ""}, {"DTYPE", ""}};
  rt::CallSpec call;
  call.sizes = {{"M", 3000}, {"N", 128}, {"K", 256}};
  auto key = rt::computeAutotuneKey(gather, call);
  ASSERT_TRUE(key.ok()) << key.message();
  EXPECT_EQ(*key, "LOG2_M=12,N=128,K=256,DTYPE=f16");
  // Shapes in one power-of-two bucket share the key, hence the tuning.
  call.sizes["M"] = 4096;
  EXPECT_EQ(*rt::computeAutotuneKey(gather, call),
            "LOG2_M=12,N=128,K=256,DTYPE=f16");
  call.sizes["M"] = 4097;
  EXPECT_EQ(*rt::computeAutotuneKey(gather, call),
            "LOG2_M=13,N=128,K=256,DTYPE=f16");

  rt::CallSpec rows;
  rows.sizes = {{"n_rows", 37}, {"n_cols", 1000}};
  EXPECT_EQ(*rt::computeAutotuneKey(softmaxLike(), rows), "BLOCK_N=1024");
}

TEST(AutotuneKey, MissingValueSaysWhichAndHow) {
  rt::CallSpec call;
  call.sizes = {{"M", 4096}, {"N", 4096}};
  auto key = rt::computeAutotuneKey(matmulLike(), call);
  ASSERT_FALSE(key.ok());
  EXPECT_NE(key.message().find("autotune key 'K' of matmul has no value"),
            std::string::npos)
      << key.message();
}

TEST(SpecializeConfig, CallTypesParamsAndDerivedParameters) {
  auto candidate =
      rt::KernelConfig::parse("BLOCK_M=64,BLOCK_N=32,BLOCK_K=32,num_warps=2");
  ASSERT_TRUE(candidate.ok());
  rt::CallSpec call;
  call.types = {{"DTYPE", "f32"}};
  call.params = {{"ALLOW_TF32", 1}};
  auto config = rt::specializeConfig(matmulLike(), *candidate, call);
  ASSERT_TRUE(config.ok()) << config.message();
  EXPECT_EQ(config->str(), "ALLOW_TF32=1,BLOCK_K=32,BLOCK_M=64,BLOCK_N=32,"
                           "DTYPE=f32,GROUP_M=8,num_warps=2,num_stages=1");

  call.params = {{"BLOCK_Q", 1}};
  auto unknown = rt::specializeConfig(matmulLike(), *candidate, call);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("no meta-parameter 'BLOCK_Q'"),
            std::string::npos);

  rt::CallSpec rows;
  rows.sizes = {{"n_rows", 4}, {"n_cols", 3000}};
  auto softmax = rt::specializeConfig(
      softmaxLike(), *rt::KernelConfig::parse("BLOCK_N=1024,num_warps=8"),
      rows);
  ASSERT_TRUE(softmax.ok()) << softmax.message();
  EXPECT_EQ(softmax->params.at("BLOCK_N"), 4096);
}

TEST(Grid, EvaluatesEachAxis) {
  rt::KernelDescription kernel = matmulLike();
  rt::CallSpec call;
  call.sizes = {{"M", 203}, {"N", 176}, {"K", 208}};
  auto config = rt::KernelConfig::parse("BLOCK_M=64,BLOCK_N=32");
  auto grid = rt::evaluateGrid(kernel, *config, call);
  ASSERT_TRUE(grid.ok()) << grid.message();
  EXPECT_EQ(grid->x, 24u);
  EXPECT_EQ(grid->y, 1u);
  EXPECT_EQ(grid->z, 1u);

  kernel.grid = {"cdiv(M, BLOCK_M)", "cdiv(N, BLOCK_N)"};
  grid = rt::evaluateGrid(kernel, *config, call);
  ASSERT_TRUE(grid.ok());
  EXPECT_EQ(grid->x, 4u);
  EXPECT_EQ(grid->y, 6u);

  kernel.grid = {"cdiv(M, BLOCK_Q)"};
  grid = rt::evaluateGrid(kernel, *config, call);
  ASSERT_FALSE(grid.ok());
  EXPECT_NE(grid.message().find("grid of matmul"), std::string::npos);
  EXPECT_NE(grid.message().find("no value for 'BLOCK_Q'"), std::string::npos);
}

TEST(KernelConfig, CanonicalTextRoundTrips) {
  auto config = rt::KernelConfig::parse(
      "num_stages=3, BLOCK_N=64,DTYPE=f16,BLOCK_M=128,num_warps=8");
  ASSERT_TRUE(config.ok()) << config.message();
  EXPECT_EQ(config->str(),
            "BLOCK_M=128,BLOCK_N=64,DTYPE=f16,num_warps=8,num_stages=3");
  auto again = rt::KernelConfig::parse(config->str());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *config);
  EXPECT_EQ(rt::KernelConfig::parse("")->str(), "num_warps=4,num_stages=1");
}

TEST(KernelConfig, Errors) {
  EXPECT_NE(rt::KernelConfig::parse("num_warps=3")
                .message()
                .find("num_warps must be a power of two"),
            std::string::npos);
  EXPECT_NE(rt::KernelConfig::parse("num_stages=0")
                .message()
                .find("num_stages must be"),
            std::string::npos);
  EXPECT_NE(rt::KernelConfig::parse("A=1,,B=2").message().find("stray ','"),
            std::string::npos);
  EXPECT_NE(rt::KernelConfig::parse("A=1,A=2").message().find("given twice"),
            std::string::npos);
  EXPECT_NE(rt::KernelConfig::parse("A").message().find("KEY=VALUE"),
            std::string::npos);
  EXPECT_NE(rt::KernelConfig::parse("A=1.5").message().find(
                "neither an integer nor a type name"),
            std::string::npos);
}

} // namespace
