//===- ConfigTest.cpp - The one config parser and its canonical text ------===//

#include "tilec/contract/Config.h"

#include <gtest/gtest.h>

using tilec::Config;

namespace {

/// The error text of a failed parse; "" when it succeeded.
std::string errorOf(const std::string &text) {
  tilec::Result<Config> config = Config::parse(text);
  return config.ok() ? "" : config.message();
}

TEST(ConfigTest, ParsesAndPrintsCanonically) {
  auto config = Config::parse(
      "BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,num_warps=4,num_stages=2");
  ASSERT_TRUE(config.ok()) << config.message();
  EXPECT_EQ(config->params.at("BLOCK_M"), 128);
  EXPECT_EQ(config->params.at("BLOCK_K"), 32);
  EXPECT_EQ(config->numWarps, 4);
  EXPECT_EQ(config->numStages, 2);
  EXPECT_EQ(config->str(),
            "BLOCK_K=32,BLOCK_M=128,BLOCK_N=128,num_warps=4,num_stages=2");
  auto reparsed = Config::parse(config->str());
  ASSERT_TRUE(reparsed.ok());
  EXPECT_EQ(*reparsed, *config);
}

TEST(ConfigTest, AcceptsSpacesTypesAndDefaults) {
  auto config = Config::parse(" BLOCK = 64 , DTYPE = f32 , num_warps = 8 ");
  ASSERT_TRUE(config.ok()) << config.message();
  EXPECT_EQ(config->params.at("BLOCK"), 64);
  EXPECT_EQ(config->types.at("DTYPE"), "f32");
  EXPECT_EQ(config->numWarps, 8);
  EXPECT_EQ(config->numStages, 1);
  EXPECT_EQ(config->str(), "BLOCK=64,DTYPE=f32,num_warps=8,num_stages=1");
  EXPECT_EQ(Config::parse("")->str(), "num_warps=4,num_stages=1");
}

// Blocks an SM must hold: in the text only where they are not 1, so that
// configs (and the cache keys and winners named by their text) from before
// the field existed read the same.
TEST(ConfigTest, MinBlocksPerSMAppearsWhereNotOne) {
  auto two = Config::parse("BLOCK=64,min_blocks_per_sm=2,num_warps=8");
  ASSERT_TRUE(two.ok()) << two.message();
  EXPECT_EQ(two->minBlocksPerSM, 2);
  EXPECT_EQ(two->str(),
            "BLOCK=64,num_warps=8,num_stages=1,min_blocks_per_sm=2");
  EXPECT_EQ(*Config::parse(two->str()), *two);
  auto one = Config::parse("BLOCK=64,min_blocks_per_sm=1,num_warps=8");
  ASSERT_TRUE(one.ok()) << one.message();
  EXPECT_EQ(one->str(), "BLOCK=64,num_warps=8,num_stages=1");
  EXPECT_EQ(*one, *Config::parse("BLOCK=64,num_warps=8"));
  EXPECT_NE(*one, *two);
}

TEST(ConfigTest, RejectsMalformedText) {
  EXPECT_NE(errorOf("BLOCK_M").find("expected KEY=VALUE"), std::string::npos);
  EXPECT_NE(errorOf("BLOCK_M=").find("has no value"), std::string::npos);
  EXPECT_NE(errorOf("=4").find("malformed key"), std::string::npos);
  EXPECT_NE(errorOf("BLOCK-M=4").find("malformed key"), std::string::npos);
  EXPECT_NE(errorOf("BLOCK_M=12x").find("must be an integer or a type"),
            std::string::npos);
  EXPECT_NE(errorOf("A=1.5").find("must be an integer or a type"),
            std::string::npos);
  EXPECT_NE(errorOf("BLOCK_M=16,BLOCK_M=32").find("twice"), std::string::npos);
  EXPECT_NE(errorOf("BLOCK_M=16,,num_warps=4").find("stray ','"),
            std::string::npos);
  EXPECT_NE(errorOf("num_warps=3").find("power of two"), std::string::npos);
  EXPECT_NE(errorOf("num_warps=64").find("1 to 32"), std::string::npos);
  EXPECT_NE(errorOf("num_stages=0").find("1 to 8"), std::string::npos);
  EXPECT_NE(errorOf("min_blocks_per_sm=0").find("1 to 32"), std::string::npos);
  EXPECT_NE(errorOf("min_blocks_per_sm=33").find("1 to 32"), std::string::npos);
  EXPECT_NE(errorOf("min_blocks_per_sm=f16").find("1 to 32"),
            std::string::npos);
  // Spaces are allowed around names, values and commas (above); a line
  // break or a tab is a pasting mistake.
  EXPECT_NE(errorOf("BLOCK_M=64,num_warps=4\n").find("line break at offset 22"),
            std::string::npos);
  EXPECT_NE(errorOf("BLOCK_M=\t64").find("tab or line break"),
            std::string::npos);
  // The whole text is quoted, so the user sees which config was wrong.
  EXPECT_NE(errorOf("BLOCK_M").find("config 'BLOCK_M'"), std::string::npos);
}

// The compiler and the runtime once parsed configs separately and disagreed
// on names like fp8; there is one parser now, and it knows the scalar types.
TEST(ConfigTest, TypeValuesAreScalarTypeNames) {
  for (const char *type : {"i1", "i8", "i16", "i32", "i64", "f16", "bf16",
                           "f32", "f64"}) {
    auto config = Config::parse(std::string("DTYPE=") + type);
    ASSERT_TRUE(config.ok()) << type << ": " << config.message();
    EXPECT_EQ(config->types.at("DTYPE"), type);
  }
  EXPECT_NE(errorOf("DTYPE=fp8").find("must be an integer or a type"),
            std::string::npos);
  EXPECT_TRUE(tilec::isIntegerTypeName("i32"));
  EXPECT_FALSE(tilec::isIntegerTypeName("f32"));
}

} // namespace
