//===- CompileMetadataTest.cpp - The compile json's writer and reader ----===//

#include "TensorMapSample.h"

#include "tilec/contract/CompileMetadata.h"
#include "tilec/contract/JsonError.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

// `tensorMapSample()`: CompileMetadata::toCpp of TensorMapSample.h's json,
// written at build time by tilec-write-metadata-cpp.
#include "TensorMapSample.inc"

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

// A config's blocks an SM: in the json where they are not 1, read back, and
// refused past what an SM holds.
TEST(CompileMetadataTest, MinBlocksPerSMRoundTripsWhereNotOne) {
  Result<CompileMetadata> md = CompileMetadata::parse(kMatmulJson);
  ASSERT_TRUE(md.ok()) << md.message();
  EXPECT_EQ(md->minBlocksPerSM, 1);
  md->minBlocksPerSM = 2;
  std::string written = md->toJson();
  EXPECT_NE(written.find("\"min_blocks_per_sm\": 2"), std::string::npos)
      << written;
  Result<CompileMetadata> again = CompileMetadata::parse(written);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->minBlocksPerSM, 2);
  nlohmann::json document = matmul();
  document["min_blocks_per_sm"] = 0;
  EXPECT_NE(parseError(document).find("min_blocks_per_sm"), std::string::npos);
  document["min_blocks_per_sm"] = 33;
  EXPECT_NE(parseError(document).find("min_blocks_per_sm"), std::string::npos);
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
       "like \"sm_90\" (or \"interp\"), got \"compute_90\""},
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
  EXPECT_EQ(text.find("min_blocks_per_sm"), std::string::npos) << text;
  EXPECT_EQ(text.find("\"cache\""), std::string::npos) << text;
  ASSERT_TRUE(CompileMetadata::parse(text).ok());
  EXPECT_EQ(bare.cubinKey(), "");
}

nlohmann::json tensorMapSampleJson() {
  return nlohmann::json::parse(tilec::test::kTensorMapSampleJson);
}

TEST(CompileMetadataTest, ReadsTensorMaps) {
  Result<CompileMetadata> md =
      CompileMetadata::parse(tilec::test::kTensorMapSampleJson);
  ASSERT_TRUE(md.ok()) << md.message();
  ASSERT_EQ(md->tensorMaps.size(), 2u);
  const tilec::TensorMapParam &a = md->tensorMaps[0];
  EXPECT_EQ(a.base, "a_ptr");
  EXPECT_EQ(a.rows, "M");
  EXPECT_EQ(a.cols, "K");
  EXPECT_EQ(a.rowStride, "stride_am");
  EXPECT_EQ(a.element, "f16");
  EXPECT_EQ(a.boxRows, 128u);
  EXPECT_EQ(a.boxCols, 64u);
  EXPECT_EQ(a.swizzleBytes, 128u);
  const tilec::TensorMapParam &b = md->tensorMaps[1];
  EXPECT_EQ(b.base, "b_ptr");
  EXPECT_EQ(b.rowStride, "stride_bk");
  EXPECT_EQ(b.element, "bf16");
  EXPECT_EQ(b.boxCols, 32u);
  EXPECT_EQ(b.swizzleBytes, 0u);
}

// The maps are written after the signature, in their order, and read back
// to the same json.
TEST(CompileMetadataTest, TensorMapsRoundTrip) {
  Result<CompileMetadata> md =
      CompileMetadata::parse(tilec::test::kTensorMapSampleJson);
  ASSERT_TRUE(md.ok()) << md.message();
  std::string written = md->toJson();
  nlohmann::json document = nlohmann::json::parse(written);
  EXPECT_EQ(document["tensor_maps"], tensorMapSampleJson()["tensor_maps"]);
  nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(written);
  std::vector<std::string> keys;
  for (auto it = ordered.begin(); it != ordered.end(); ++it)
    keys.push_back(it.key());
  auto signature = std::find(keys.begin(), keys.end(), "signature");
  ASSERT_NE(signature, keys.end());
  ASSERT_NE(signature + 1, keys.end());
  EXPECT_EQ(*(signature + 1), "tensor_maps") << written;
  std::vector<std::string> mapKeys;
  for (auto it = ordered["tensor_maps"][0].begin();
       it != ordered["tensor_maps"][0].end(); ++it)
    mapKeys.push_back(it.key());
  EXPECT_EQ(mapKeys, (std::vector<std::string>{
                         "base", "rows", "cols", "row_stride", "element",
                         "box_rows", "box_cols", "swizzle"}));

  Result<CompileMetadata> again = CompileMetadata::parse(written);
  ASSERT_TRUE(again.ok()) << again.message() << "\n" << written;
  EXPECT_EQ(again->toJson(), written);
  ASSERT_EQ(again->tensorMaps.size(), 2u);
  EXPECT_EQ(again->tensorMaps[1].rows, "K");
  EXPECT_EQ(again->tensorMaps[1].boxRows, 64u);
}

// A kernel without maps writes no "tensor_maps", so its json is what it was
// before maps existed; an empty list reads as no maps.
TEST(CompileMetadataTest, NoTensorMapsKeepTheJsonAsItWas) {
  Result<CompileMetadata> md = CompileMetadata::parse(kMatmulJson);
  ASSERT_TRUE(md.ok()) << md.message();
  EXPECT_TRUE(md->tensorMaps.empty());
  std::string written = md->toJson();
  EXPECT_EQ(written.find("tensor_maps"), std::string::npos) << written;

  nlohmann::json document = tensorMapSampleJson();
  Result<CompileMetadata> withMaps = CompileMetadata::parse(document.dump());
  ASSERT_TRUE(withMaps.ok()) << withMaps.message();
  withMaps->tensorMaps.clear();
  document.erase("tensor_maps");
  Result<CompileMetadata> without = CompileMetadata::parse(document.dump());
  ASSERT_TRUE(without.ok()) << without.message();
  EXPECT_EQ(withMaps->toJson(), without->toJson());

  document["tensor_maps"] = nlohmann::json::array();
  Result<CompileMetadata> empty = CompileMetadata::parse(document.dump());
  ASSERT_TRUE(empty.ok()) << empty.message();
  EXPECT_TRUE(empty->tensorMaps.empty());
  EXPECT_EQ(empty->toJson(), without->toJson());
}

TEST(CompileMetadataTest, NamesTheBrokenFieldOfATensorMap) {
  struct Case {
    const char *pointer; // a json pointer into the document
    nlohmann::json value;
    const char *message;
  };
  const Case cases[] = {
      {"/tensor_maps", "a_ptr",
       "field 'tensor_maps' must be an array, got string \"a_ptr\""},
      {"/tensor_maps/1", 7,
       "field 'tensor_maps[1]' must be an object, got integer 7"},
      {"/tensor_maps/0/base", "a",
       "field 'tensor_maps[0].base' names 'a', which is not an argument of "
       "the kernel"},
      {"/tensor_maps/0/base", "M",
       "field 'tensor_maps[0].base' names 'M' (i32), which is not a pointer "
       "argument"},
      {"/tensor_maps/0/rows", "Q",
       "field 'tensor_maps[0].rows' names 'Q', which is not an argument of "
       "the kernel"},
      {"/tensor_maps/0/rows", "a_ptr",
       "field 'tensor_maps[0].rows' names 'a_ptr' (ptr<f16>), which is not "
       "an integer argument"},
      {"/tensor_maps/1/cols", "alpha",
       "field 'tensor_maps[1].cols' names 'alpha' (f32), which is not an "
       "integer argument"},
      {"/tensor_maps/0/row_stride", "stride_ak",
       "field 'tensor_maps[0].row_stride' names 'stride_ak', which is not an "
       "argument of the kernel"},
      {"/tensor_maps/0/row_stride", 64,
       "field 'tensor_maps[0].row_stride' must be a string, got integer 64"},
      {"/tensor_maps/0/rows", "",
       "field 'tensor_maps[0].rows' must not be empty"},
      {"/tensor_maps/0/element", "f64",
       "field 'tensor_maps[0].element' must be \"f16\", \"bf16\" or \"f32\", "
       "got \"f64\""},
      {"/tensor_maps/0/element", "ptr<f16>",
       "field 'tensor_maps[0].element' must be \"f16\", \"bf16\" or \"f32\", "
       "got \"ptr<f16>\""},
      {"/tensor_maps/0/box_rows", 0,
       "field 'tensor_maps[0].box_rows' must be in [1, 256], got 0"},
      {"/tensor_maps/1/box_cols", 257,
       "field 'tensor_maps[1].box_cols' must be in [1, 256], got 257"},
      {"/tensor_maps/0/box_cols", -1,
       "field 'tensor_maps[0].box_cols' must be in [0, 4294967295], got -1"},
      {"/tensor_maps/0/box_rows", "128",
       "field 'tensor_maps[0].box_rows' must be an integer, got string "
       "\"128\""},
      {"/tensor_maps/0/swizzle", 16,
       "field 'tensor_maps[0].swizzle' must be 0, 32, 64 or 128, got 16"},
      {"/tensor_maps/0/swizzle", 256,
       "field 'tensor_maps[0].swizzle' must be 0, 32, 64 or 128, got 256"},
  };
  for (const Case &c : cases) {
    nlohmann::json document = tensorMapSampleJson();
    document[nlohmann::json::json_pointer(c.pointer)] = c.value;
    EXPECT_EQ(parseError(document),
              std::string("kernel metadata: ") + c.message)
        << "at " << c.pointer;
  }
  for (const char *key : {"base", "rows", "cols", "row_stride", "element",
                          "box_rows", "box_cols", "swizzle"}) {
    nlohmann::json document = tensorMapSampleJson();
    document["tensor_maps"][1].erase(key);
    EXPECT_EQ(parseError(document), std::string("kernel metadata: field "
                                                "'tensor_maps[1].") +
                                        key + "' is missing");
  }
}

// The same rules, for callers that build maps in code (the runtime's
// ArgPack): the broken field's json key and the problem.
TEST(CompileMetadataTest, ResolvesTensorMapsInTheSignature) {
  Result<CompileMetadata> md =
      CompileMetadata::parse(tilec::test::kTensorMapSampleJson);
  ASSERT_TRUE(md.ok()) << md.message();
  Result<tilec::ResolvedTensorMap> a =
      tilec::resolveTensorMap(md->tensorMaps[0], md->signature);
  ASSERT_TRUE(a.ok()) << a.message();
  EXPECT_EQ(a->base, 0u);
  EXPECT_EQ(a->rows, 3u);
  EXPECT_EQ(a->cols, 5u);
  EXPECT_EQ(a->rowStride, 6u);
  EXPECT_EQ(a->element, ArgType::F16);
  Result<tilec::ResolvedTensorMap> b =
      tilec::resolveTensorMap(md->tensorMaps[1], md->signature);
  ASSERT_TRUE(b.ok()) << b.message();
  EXPECT_EQ(b->rowStride, 7u);
  EXPECT_EQ(b->element, ArgType::BF16);

  tilec::TensorMapParam broken = md->tensorMaps[0];
  broken.boxCols = 0;
  const char *key = nullptr;
  Result<tilec::ResolvedTensorMap> refused =
      tilec::resolveTensorMap(broken, md->signature, &key);
  ASSERT_FALSE(refused.ok());
  EXPECT_STREQ(key, "box_cols");
  EXPECT_EQ(refused.message(), "must be in [1, 256], got 0");
  broken = md->tensorMaps[0];
  broken.element = "f32";
  EXPECT_TRUE(tilec::resolveTensorMap(broken, md->signature).ok());
  EXPECT_FALSE(tilec::resolveTensorMap(broken, {}).ok());
}

// toCpp's code (compiled in above) builds the object the json reads to.
TEST(CompileMetadataTest, GeneratedCppBuildsTheJsonsObject) {
  Result<CompileMetadata> md =
      CompileMetadata::parse(tilec::test::kTensorMapSampleJson);
  ASSERT_TRUE(md.ok()) << md.message();
  const CompileMetadata &built = ::tensorMapSample();
  ASSERT_EQ(built.tensorMaps.size(), 2u);
  EXPECT_EQ(built.tensorMaps[1].element, "bf16");
  EXPECT_TRUE(built.wgmmaSerialized);
  EXPECT_EQ(built.toJson(), md->toJson());
}

} // namespace

namespace {

// Nesting is measured outside strings, and a text nested past the bound is
// an error where it crashed the parser (100,000 levels).
TEST(JsonNesting, IsMeasuredOutsideStringsAndBounded) {
  EXPECT_EQ(tilec::jsonNestingError("{\"a\": [[1], {\"b\": [2]}]}", 4), "");
  EXPECT_EQ(tilec::jsonNestingError("{\"a\": [[1], {\"b\": [2]}]}", 3),
            "nests deeper than 3 arrays and objects at line 1, column 19");
  EXPECT_EQ(tilec::jsonNestingError("{\"a\": \"[[[[[[\\\"[[[[\"}", 1), "");
  EXPECT_EQ(tilec::jsonNestingError("{\"a\":\n [[[1]]]}", 3),
            "nests deeper than 3 arrays and objects at line 2, column 4");
  std::string deep =
      "{\"name\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  auto parsed = tilec::CompileMetadata::parse(deep);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.message().find("nests deeper than 512"), std::string::npos)
      << parsed.message();
}

} // namespace
