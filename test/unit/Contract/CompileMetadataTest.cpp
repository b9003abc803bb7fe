//===- CompileMetadataTest.cpp - The compile json's writer and reader ----===//

#include "tilec/contract/CompileMetadata.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace {

using tilec::ArgType;
using tilec::CompileMetadata;
using tilec::Result;

// The compile json as the compiler writes it (docs/runtime.md shows it too).
const char *const kMatmulJson = R"({
  "name": "matmul", "kernel_name": "matmul_kernel", "target": "sm_90",
  "num_warps": 4, "threads_per_warp": 32, "num_stages": 3,
  "shared_bytes": 16384, "registers": 96, "spill_stores": 0, "spill_loads": 0,
  "config": {"BLOCK_M": 128, "BLOCK_N": 64, "ALLOW_TF32": true},
  "signature": [{"name": "a", "type": "ptr<f16>", "divisibility": 16},
                {"name": "b", "type": "ptr<f16>"},
                {"name": "c", "type": "ptr<f32>"},
                {"name": "M", "type": "i32", "equal_to_one": true},
                {"name": "alpha", "type": "f32"}],
  "hashes": {"ttir": "1f2e", "ptx": "9a0b"},
  "compiler_id": "tilec 0.1 llvm 22"
})";

nlohmann::json matmul() { return nlohmann::json::parse(kMatmulJson); }

std::string parseError(const nlohmann::json &document) {
  Result<CompileMetadata> md = CompileMetadata::parse(document.dump());
  EXPECT_FALSE(md.ok()) << "accepted: " << document.dump();
  return md.ok() ? std::string() : md.message();
}

TEST(CompileMetadataTest, ParsesTheCompilerOutput) {
  Result<CompileMetadata> md = CompileMetadata::parse(kMatmulJson);
  ASSERT_TRUE(md.ok()) << md.message();
  EXPECT_EQ(md->name, "matmul");
  EXPECT_EQ(md->kernelName, "matmul_kernel");
  EXPECT_EQ(md->target, "sm_90");
  EXPECT_EQ(md->numWarps, 4);
  EXPECT_EQ(md->threadsPerWarp, 32);
  EXPECT_EQ(md->blockThreads(), 128u);
  EXPECT_EQ(md->numStages, 3);
  EXPECT_EQ(md->sharedBytes, 16384u);
  EXPECT_EQ(md->registers, 96);
  EXPECT_EQ(md->spillStores, 0);
  EXPECT_EQ(md->spillLoads, 0);
  EXPECT_EQ(md->config.at("BLOCK_M"), 128);
  EXPECT_EQ(md->config.at("BLOCK_N"), 64);
  EXPECT_EQ(md->config.at("ALLOW_TF32"), 1);
  ASSERT_EQ(md->signature.size(), 5u);
  EXPECT_EQ(md->signature[0].name, "a");
  EXPECT_EQ(md->signature[0].spelling, "ptr<f16>");
  EXPECT_EQ(md->signature[0].type, ArgType::Ptr);
  EXPECT_EQ(md->signature[0].divisibility, 16);
  EXPECT_FALSE(md->signature[0].equalToOne);
  EXPECT_EQ(md->signature[1].divisibility, 1);
  EXPECT_EQ(md->signature[3].type, ArgType::I32);
  EXPECT_TRUE(md->signature[3].equalToOne);
  EXPECT_EQ(md->signature[4].type, ArgType::F32);
  EXPECT_EQ(md->hashes.at("ttir"), "1f2e");
  EXPECT_EQ(md->compilerId, "tilec 0.1 llvm 22");
}

TEST(CompileMetadataTest, OptionalFieldsMayBeAbsent) {
  nlohmann::json document = matmul();
  for (const char *key : {"registers", "spill_stores", "spill_loads", "config",
                          "hashes", "compiler_id"})
    document.erase(key);
  document["a_field_from_a_newer_compiler"] = {1, 2, 3};
  Result<CompileMetadata> md = CompileMetadata::parse(document.dump());
  ASSERT_TRUE(md.ok()) << md.message();
  EXPECT_FALSE(md->registers.has_value());
  EXPECT_TRUE(md->config.empty());
  EXPECT_TRUE(md->compilerId.empty());
}

TEST(CompileMetadataTest, NamesEachMissingRequiredField) {
  for (const char *key :
       {"name", "kernel_name", "target", "num_warps", "threads_per_warp",
        "num_stages", "shared_bytes", "signature"}) {
    nlohmann::json document = matmul();
    document.erase(key);
    EXPECT_EQ(parseError(document),
              std::string("kernel metadata: field '") + key + "' is missing");
  }
}

TEST(CompileMetadataTest, NamesWronglyTypedFields) {
  struct Case {
    const char *pointer; // a json pointer into the document
    nlohmann::json value;
    const char *message;
  };
  const Case cases[] = {
      {"/num_warps", "4",
       "field 'num_warps' must be an integer, got string \"4\""},
      {"/num_warps", 4.0,
       "field 'num_warps' must be an integer, got number "
       "4.0"},
      {"/num_warps", 0, "field 'num_warps' must be in [1, 32], got 0"},
      {"/num_warps", 64, "field 'num_warps' must be in [1, 32], got 64"},
      {"/threads_per_warp", 64,
       "field 'threads_per_warp' must be in [32, 32], got 64"},
      {"/shared_bytes", -1,
       "field 'shared_bytes' must be in [0, 4294967295], got -1"},
      {"/kernel_name", 7,
       "field 'kernel_name' must be a string, got integer 7"},
      {"/kernel_name", "", "field 'kernel_name' must not be empty"},
      {"/target", "compute_90",
       "field 'target' must name a GPU architecture "
       "like \"sm_90\", got \"compute_90\""},
      {"/registers", "many",
       "field 'registers' must be an integer, got string \"many\""},
      {"/spill_loads", -3,
       "field 'spill_loads' must be in [0, 2147483647], got -3"},
      {"/signature", "a,b",
       "field 'signature' must be an array, got string "
       "\"a,b\""},
      {"/signature/1", "ptr<f16>",
       "field 'signature[1]' must be an object, got string \"ptr<f16>\""},
      {"/signature/1/type", "q32",
       "field 'signature[1].type' unknown argument type 'q32' (expected "
       "ptr<...>, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32 or "
       "f64)"},
      {"/signature/0/divisibility", 12,
       "field 'signature[0].divisibility' must be a positive power of two, "
       "got 12"},
      {"/signature/0/divisibility", "16",
       "field 'signature[0].divisibility' must be an integer, got string "
       "\"16\""},
      {"/signature/3/equal_to_one", 1,
       "field 'signature[3].equal_to_one' must be a boolean, got integer 1"},
      {"/signature/2/equal_to_one", true,
       "field 'signature[2].equal_to_one' is set on a non-integer argument"},
      {"/signature/4/divisibility", 16,
       "field 'signature[4].divisibility' is set on a floating-point "
       "argument"},
      {"/signature/3/divisibility", 16,
       "field 'signature[3].equal_to_one' contradicts the divisibility 16"},
      {"/signature/2/name", nullptr,
       "field 'signature[2].name' must be a string, got null"},
      {"/config/BLOCK_M", "128",
       "field 'config.BLOCK_M' must be an integer or a boolean, got string "
       "\"128\""},
      {"/config", nlohmann::json::array(),
       "field 'config' must be an object, got array []"},
      {"/hashes/ttir", 12,
       "field 'hashes.ttir' must be a string, got integer "
       "12"},
      {"/compiler_id", false,
       "field 'compiler_id' must be a string, got boolean false"},
  };
  for (const Case &c : cases) {
    nlohmann::json document = matmul();
    document[nlohmann::json::json_pointer(c.pointer)] = c.value;
    EXPECT_EQ(parseError(document),
              std::string("kernel metadata: ") + c.message)
        << "at " << c.pointer;
  }
}

TEST(CompileMetadataTest, ReportsTheFieldOfAMissingSignatureName) {
  nlohmann::json document = matmul();
  document["signature"][0].erase("name");
  EXPECT_EQ(parseError(document),
            "kernel metadata: field 'signature[0].name' is missing");
}

TEST(CompileMetadataTest, ReportsWhereTheJsonIsBroken) {
  Result<CompileMetadata> md =
      CompileMetadata::parse("{\"name\": \"matmul\",\n \"num_warps\": }");
  ASSERT_FALSE(md.ok());
  EXPECT_EQ(md.message().rfind("kernel metadata: invalid json: "
                               "[json.exception.parse_error.101] parse error "
                               "at line 2, column 15",
                               0),
            0u)
      << md.message();

  md = CompileMetadata::parse("[1, 2]");
  ASSERT_FALSE(md.ok());
  EXPECT_EQ(md.message(),
            "kernel metadata: expected a json object, got array [1,2]");

  md = CompileMetadata::parse("");
  ASSERT_FALSE(md.ok());
  EXPECT_NE(md.message().find("invalid json"), std::string::npos);
}

// What the writer writes, the reader reads back field for field.
TEST(CompileMetadataTest, WriterAndReaderRoundTrip) {
  Result<CompileMetadata> md = CompileMetadata::parse(kMatmulJson);
  ASSERT_TRUE(md.ok()) << md.message();
  md->stackFrameBytes = 8;
  md->compileMs = {{"ttir", 1.5}, {"cubin", 40.25}};
  md->cache["cubin"] = {"0123abcd", "miss"};
  std::string written = md->toJson();
  Result<CompileMetadata> again = CompileMetadata::parse(written);
  ASSERT_TRUE(again.ok()) << again.message() << "\n" << written;
  EXPECT_EQ(again->toJson(), written);
  EXPECT_EQ(again->cubinKey(), "0123abcd");
  EXPECT_EQ(again->stackFrameBytes, 8);
  EXPECT_DOUBLE_EQ(again->compileMs.at("cubin"), 40.25);
  EXPECT_EQ(again->signature[3].equalToOne, true);
  EXPECT_EQ(again->signature[0].divisibility, 16);
  EXPECT_EQ(again->config.at("ALLOW_TF32"), 1);

  // Optional fields stay absent rather than being written as zeros.
  CompileMetadata bare;
  bare.name = bare.kernelName = "k";
  bare.target = "sm_90";
  bare.numWarps = 1;
  std::string text = bare.toJson();
  EXPECT_EQ(text.find("registers"), std::string::npos) << text;
  EXPECT_EQ(text.find("\"cache\""), std::string::npos) << text;
  ASSERT_TRUE(CompileMetadata::parse(text).ok());
  EXPECT_EQ(bare.cubinKey(), "");
}

} // namespace
