//===- ConfigTest.cpp - parsing, printing and resolving configs -----------===//

#include "tilec/Kernel/KernelDefinition.h"
#include "tilec/Kernel/KernelRegistry.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace tilec::kernel;

namespace {

/// The error text of a failed parse or resolve; "" when it succeeded.
std::string errorOf(llvm::Expected<Config> config) {
  if (config)
    return "";
  return llvm::toString(config.takeError());
}

TEST(ConfigTest, ParsesAndPrintsCanonically) {
  llvm::Expected<Config> config = Config::parse(
      "BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,num_warps=4,num_stages=2");
  ASSERT_TRUE(static_cast<bool>(config)) << llvm::toString(config.takeError());
  EXPECT_EQ(config->params.at("BLOCK_M"), 128);
  EXPECT_EQ(config->params.at("BLOCK_K"), 32);
  EXPECT_EQ(config->numWarps, 4);
  EXPECT_EQ(config->numStages, 2);
  EXPECT_EQ(config->str(),
            "BLOCK_K=32,BLOCK_M=128,BLOCK_N=128,num_warps=4,num_stages=2");
  llvm::Expected<Config> reparsed = Config::parse(config->str());
  ASSERT_TRUE(static_cast<bool>(reparsed));
  EXPECT_EQ(*reparsed, *config);
}

TEST(ConfigTest, AcceptsSpacesTypesAndDefaults) {
  llvm::Expected<Config> config =
      Config::parse(" BLOCK = 64 , DTYPE = f32 , num_warps = 8 ");
  ASSERT_TRUE(static_cast<bool>(config)) << llvm::toString(config.takeError());
  EXPECT_EQ(config->params.at("BLOCK"), 64);
  EXPECT_EQ(config->types.at("DTYPE"), "f32");
  EXPECT_EQ(config->numWarps, 8);
  EXPECT_EQ(config->numStages, 1);
  EXPECT_EQ(config->str(), "BLOCK=64,DTYPE=f32,num_warps=8,num_stages=1");

  llvm::Expected<Config> empty = Config::parse("");
  ASSERT_TRUE(static_cast<bool>(empty));
  EXPECT_EQ(empty->str(), "num_warps=4,num_stages=1");
}

TEST(ConfigTest, RejectsMalformedText) {
  EXPECT_NE(errorOf(Config::parse("BLOCK_M")).find("expected KEY=VALUE"),
            std::string::npos);
  EXPECT_NE(errorOf(Config::parse("BLOCK_M=")).find("has no value"),
            std::string::npos);
  EXPECT_NE(errorOf(Config::parse("=4")).find("malformed key"),
            std::string::npos);
  EXPECT_NE(errorOf(Config::parse("BLOCK-M=4")).find("malformed key"),
            std::string::npos);
  EXPECT_NE(errorOf(Config::parse("BLOCK_M=12x"))
                .find("must be an integer or a type"),
            std::string::npos);
  EXPECT_NE(errorOf(Config::parse("BLOCK_M=16,BLOCK_M=32")).find("twice"),
            std::string::npos);
  EXPECT_NE(errorOf(Config::parse("BLOCK_M=16,,num_warps=4")).find("empty"),
            std::string::npos);
  EXPECT_NE(errorOf(Config::parse("num_warps=3")).find("power of two"),
            std::string::npos);
  EXPECT_NE(errorOf(Config::parse("num_warps=64")).find("1 to 32"),
            std::string::npos);
  EXPECT_NE(errorOf(Config::parse("num_stages=0")).find("1 to 8"),
            std::string::npos);
  // The whole text is quoted, so the user sees which config was wrong.
  EXPECT_NE(errorOf(Config::parse("BLOCK_M")).find("config 'BLOCK_M'"),
            std::string::npos);
}

TEST(ConfigTest, ResolvesAgainstAKernel) {
  const KernelDefinition &matmul = getMatmulKernel();
  llvm::Expected<Config> config =
      matmul.parseConfig("BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_warps=4");
  ASSERT_TRUE(static_cast<bool>(config)) << llvm::toString(config.takeError());
  // Defaults are filled in, so equal kernels have equal configs.
  EXPECT_EQ(config->str(), "ALLOW_TF32=0,BLOCK_K=32,BLOCK_M=64,BLOCK_N=64,"
                           "DTYPE=f16,GROUP_M=8,num_warps=4,num_stages=1");

  EXPECT_NE(errorOf(matmul.parseConfig("BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,"
                                       "BLOCK_Q=4"))
                .find("unknown meta-parameter 'BLOCK_Q'"),
            std::string::npos);
  EXPECT_NE(errorOf(matmul.parseConfig("BLOCK_M=64,BLOCK_N=64"))
                .find("missing meta-parameter 'BLOCK_K'"),
            std::string::npos);
  EXPECT_NE(errorOf(matmul.parseConfig("BLOCK_M=48,BLOCK_N=64,BLOCK_K=32"))
                .find("'BLOCK_M' must be a power of two, got 48"),
            std::string::npos);
  EXPECT_NE(errorOf(matmul.parseConfig("BLOCK_M=64,BLOCK_N=64,BLOCK_K=8"))
                .find("'BLOCK_K' must be at least 16"),
            std::string::npos);
  EXPECT_NE(
      errorOf(matmul.parseConfig("BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f64"))
          .find("'DTYPE' must be one of f16, bf16, f32, got 'f64'"),
      std::string::npos);
  EXPECT_NE(
      errorOf(matmul.parseConfig("BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=16"))
          .find("'DTYPE' is a type parameter"),
      std::string::npos);
  EXPECT_NE(errorOf(matmul.parseConfig("BLOCK_M=f16,BLOCK_N=64,BLOCK_K=32"))
                .find("'BLOCK_M' takes an integer"),
            std::string::npos);
  EXPECT_NE(errorOf(matmul.parseConfig("BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,"
                                       "ALLOW_TF32=2"))
                .find("at most 1"),
            std::string::npos);
}

TEST(ConfigTest, SignatureTakesTheConfigTypes) {
  Config config;
  config.types["DTYPE"] = "f32";
  config.params = {{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}};
  auto signature = getMatmulKernel().getSignature(config);
  ASSERT_TRUE(static_cast<bool>(signature))
      << llvm::toString(signature.takeError());
  EXPECT_EQ((*signature)[0].name, "a_ptr");
  EXPECT_EQ((*signature)[0].type, "ptr<f32>");
  EXPECT_EQ((*signature)[0].divisibilityHint, 16);
  EXPECT_EQ((*signature)[3].type, "i32");
  EXPECT_EQ(getMatmulKernel().getSignature()[0].type, "ptr<DTYPE>");
}

TEST(ConfigTest, SpecializeReportsABadConfigAtTheKernel) {
  mlir::MLIRContext context;
  std::string message, location;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    message = diag.str();
    llvm::raw_string_ostream os(location);
    os << diag.getLocation();
    return mlir::success();
  });
  Config config;
  config.params = {{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 8}};
  auto module = getMatmulKernel().specialize(context, config);
  EXPECT_TRUE(mlir::failed(module));
  EXPECT_NE(message.find("kernel 'matmul': 'BLOCK_K' must be at least 16"),
            std::string::npos)
      << message;
  EXPECT_NE(location.find("kernels/matmul.cpp"), std::string::npos) << location;
}

} // namespace
