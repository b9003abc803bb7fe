//===- WorkloadTest.cpp - The workload file and its recorder --------------===//

#include "tilec/runtime/Workload.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <array>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace rt = tilec::rt;

namespace {

class WorkloadTest : public testing::Test {
protected:
  void SetUp() override {
    char dir[] = "/tmp/tilec-workload-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    directory = dir;
    path = directory + "/sub/dir/workload.json";
  }
  void TearDown() override {
    std::string command = "rm -rf '" + directory + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
  }

  static std::string read(const std::string &file) {
    std::ifstream in(file);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
  }
  static void write(const std::string &file, const std::string &text) {
    std::ofstream(file) << text;
  }

  static rt::WorkloadCall matmul(int64_t m) {
    tilec::Call call;
    call.sizes = {{"M", m}, {"N", 4096}, {"K", 4096}};
    call.types = {{"DTYPE", "f16"}};
    call.params = {{"ALLOW_TF32", 0}};
    return rt::WorkloadCall::kernelCall("matmul", call);
  }
  static rt::WorkloadCall conv(int64_t voxels) {
    rt::ConvLayer layer;
    layer.voxels = voxels;
    layer.inChannels = 64;
    layer.outChannels = 64;
    layer.bias = true;
    return rt::WorkloadCall::convCall(layer);
  }

  // The texts of a file's calls, in order; fails the test when it does not
  // parse.
  static std::vector<std::string> callsOf(const std::string &file) {
    auto workload = rt::Workload::load(file);
    EXPECT_TRUE(workload.ok()) << workload.message();
    std::vector<std::string> texts;
    if (workload)
      for (const rt::WorkloadCall &call : workload->calls)
        texts.push_back(call.encode());
    return texts;
  }

  std::string directory;
  std::string path;
};

// The brief's example, spelled in another key order with other spacing.
constexpr const char *kExample = R"({
  "version": 1, "format": "tilec-workload",
  "calls": [
    {"sizes": {"N": 4096, "M": 4096, "K": 4096}, "kernel": "matmul",
     "params": {"ALLOW_TF32": 0}, "types": {"DTYPE": "f16"}},
    {"op": "submanifold_conv3d", "voxels": 64160, "in_channels": 64,
     "out_channels": 64, "kernel_size": 3, "dilation": 1, "dtype": "f16",
     "bias": true, "allow_tf32": false}
  ]
})";

TEST_F(WorkloadTest, ParsesKernelAndOpCalls) {
  auto workload = rt::Workload::parse(kExample, "w.json");
  ASSERT_TRUE(workload.ok()) << workload.message();
  ASSERT_EQ(workload->calls.size(), 2u);
  const rt::WorkloadCall &kernel = workload->calls[0];
  EXPECT_FALSE(kernel.isOp());
  EXPECT_EQ(kernel.kernel, "matmul");
  EXPECT_EQ(kernel.call.sizes,
            (std::map<std::string, int64_t>{{"K", 4096}, {"M", 4096}, {"N", 4096}}));
  EXPECT_EQ(kernel.call.types.at("DTYPE"), "f16");
  EXPECT_EQ(kernel.call.params.at("ALLOW_TF32"), 0);
  const rt::WorkloadCall &op = workload->calls[1];
  ASSERT_TRUE(op.isOp());
  EXPECT_TRUE(op.kernel.empty());
  EXPECT_EQ(op.conv->voxels, 64160);
  EXPECT_EQ(op.conv->inChannels, 64);
  EXPECT_EQ(op.conv->outChannels, 64);
  EXPECT_EQ(op.conv->kernelSize, (std::array<int, 3>{3, 3, 3}));
  EXPECT_EQ(op.conv->dilation, (std::array<int, 3>{1, 1, 1}));
  EXPECT_EQ(op.conv->dtype, "f16");
  EXPECT_TRUE(op.conv->bias);
  EXPECT_FALSE(op.conv->allowTf32);
  EXPECT_EQ(op.conv->xRowStride, 0);
}

// A window that is not a cube (Cylinder3D's (1, 3, 3), dilated per axis) is
// written as three values per axis and read back as itself; a cube stays
// one integer, as before.
TEST_F(WorkloadTest, ANonCubicWindowRoundTrips) {
  const char *text = R"({"format": "tilec-workload", "version": 1, "calls": [
    {"op": "submanifold_conv3d", "voxels": 5000, "in_channels": 16,
     "out_channels": 32, "kernel_size": [1, 3, 3], "dilation": [1, 2, 1],
     "dtype": "f16"}]})";
  auto workload = rt::Workload::parse(text, "w.json");
  ASSERT_TRUE(workload.ok()) << workload.message();
  const rt::ConvLayer &layer = *workload->calls[0].conv;
  EXPECT_EQ(layer.kernelSize, (std::array<int, 3>{1, 3, 3}));
  EXPECT_EQ(layer.dilation, (std::array<int, 3>{1, 2, 1}));
  std::string encoded = workload->calls[0].encode();
  EXPECT_NE(encoded.find(R"("kernel_size": [1, 3, 3], "dilation": [1, 2, 1])"),
            std::string::npos)
      << encoded;
  EXPECT_NE(workload->calls[0].describe().find(" k1x3x3 d1x2x1 f16"),
            std::string::npos)
      << workload->calls[0].describe();
  auto again = rt::Workload::parse(workload->encode(), "again");
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->calls[0].conv->kernelSize, layer.kernelSize);
  EXPECT_EQ(again->calls[0].conv->dilation, layer.dilation);
}

TEST_F(WorkloadTest, EncodesCanonically) {
  auto workload = rt::Workload::parse(kExample, "w.json");
  ASSERT_TRUE(workload.ok()) << workload.message();
  EXPECT_EQ(workload->calls[0].encode(),
            R"({"kernel": "matmul", "sizes": {"K": 4096, "M": 4096, "N": 4096}, )"
            R"("types": {"DTYPE": "f16"}, "params": {"ALLOW_TF32": 0}})");
  EXPECT_EQ(workload->calls[1].encode(),
            R"({"op": "submanifold_conv3d", "voxels": 64160, "in_channels": 64, )"
            R"("out_channels": 64, "kernel_size": 3, "dilation": 1, )"
            R"("dtype": "f16", "bias": true, "allow_tf32": false})");
  std::string text = workload->encode();
  EXPECT_EQ(text, "{\"format\": \"tilec-workload\", \"version\": 1, \"calls\": [\n  " +
                      workload->calls[0].encode() + ",\n  " +
                      workload->calls[1].encode() + "\n]}\n");
  // The canonical text parses back to itself.
  auto again = rt::Workload::parse(text, "again");
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->encode(), text);
  EXPECT_EQ(rt::Workload().encode(),
            "{\"format\": \"tilec-workload\", \"version\": 1, \"calls\": []}\n");
}

TEST_F(WorkloadTest, LeftOutFieldsTakeTheirDefaultsAndEncodeTheSame) {
  auto sparse = rt::Workload::parse(
      R"({"format": "tilec-workload", "version": 1, "calls": [
           {"kernel": "softmax", "sizes": {"n_rows": 8, "n_cols": 100}},
           {"op": "submanifold_conv3d", "voxels": 10, "in_channels": 8,
            "out_channels": 16, "dtype": "bf16"},
           {"op": "submanifold_conv3d", "voxels": 10, "in_channels": 8,
            "out_channels": 16, "dtype": "bf16", "x_row_stride": 8,
            "y_row_stride": 32}]})",
      "w.json");
  ASSERT_TRUE(sparse.ok()) << sparse.message();
  EXPECT_EQ(sparse->calls[0].encode(),
            R"({"kernel": "softmax", "sizes": {"n_cols": 100, "n_rows": 8}, )"
            R"("types": {}, "params": {}})");
  EXPECT_EQ(sparse->calls[1].encode(),
            R"({"op": "submanifold_conv3d", "voxels": 10, "in_channels": 8, )"
            R"("out_channels": 16, "kernel_size": 3, "dilation": 1, )"
            R"("dtype": "bf16", "bias": false, "allow_tf32": false})");
  // A row stride equal to the channels is dense; another is kept.
  EXPECT_EQ(sparse->calls[2].conv->xRowStride, 0);
  EXPECT_EQ(sparse->calls[2].conv->yRowStride, 32);
  EXPECT_NE(sparse->calls[2].encode().find(R"("allow_tf32": false, "y_row_stride": 32})"),
            std::string::npos)
      << sparse->calls[2].encode();
  EXPECT_EQ(sparse->calls[2].encode().find("x_row_stride"), std::string::npos);
}

TEST_F(WorkloadTest, EqualCallsHaveEqualTextsAndContainsUsesThem) {
  rt::Workload workload;
  EXPECT_TRUE(workload.add(matmul(4096)));
  EXPECT_FALSE(workload.add(matmul(4096)));
  EXPECT_TRUE(workload.add(matmul(2048)));
  EXPECT_TRUE(workload.add(conv(100)));
  EXPECT_FALSE(workload.add(conv(100)));
  EXPECT_EQ(workload.calls.size(), 3u);
  EXPECT_TRUE(workload.contains(conv(100)));
  EXPECT_FALSE(workload.contains(conv(101)));
  rt::ConvLayer strided = *conv(100).conv;
  strided.xRowStride = 64; // = in_channels: the same layer
  EXPECT_EQ(rt::WorkloadCall::convCall(strided).encode(), conv(100).encode());
}

TEST_F(WorkloadTest, NamesAreEscapedSoThatTheTextStaysJson) {
  tilec::Call call;
  call.sizes = {{"a\"b\\c\n", 1}};
  rt::WorkloadCall odd = rt::WorkloadCall::kernelCall("k\xff", call);
  std::string text = odd.encode();
  nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << text;
  EXPECT_EQ(json["sizes"].begin().key(), "a\"b\\c\n");
}

// A name the file spells in UTF-8 (or as \u escapes of non-ASCII code
// points) is written back as UTF-8: the canonical text parses to the same
// names and encodes to the same text (a byte-by-byte escape of each UTF-8
// byte had read back as other characters; found by the WorkloadFuzzer).
TEST_F(WorkloadTest, NonAsciiNamesRoundTripThroughTheCanonicalText) {
  std::string file = R"({"format": "tilec-workload", "version": 1, "calls": [
      {"kernel": "radix_scatter", "sizes": {"N": 15192, "SHI\u00ab": 0,
                                            "\u00e9\u4e2d\ud83d\ude00": 1}}]})";
  tilec::Result<rt::Workload> parsed = rt::Workload::parse(file, "w.json");
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  std::string text = parsed->encode();
  EXPECT_NE(text.find("SHI\xc2\xab"), std::string::npos) << text;
  EXPECT_NE(text.find("\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80"),
            std::string::npos)
      << text;
  tilec::Result<rt::Workload> again = rt::Workload::parse(text, "w.json");
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->encode(), text);
}

TEST_F(WorkloadTest, Describe) {
  EXPECT_EQ(matmul(4096).describe(),
            "matmul K=4096,M=4096,N=4096 DTYPE=f16 ALLOW_TF32=0");
  EXPECT_EQ(conv(64160).describe(), "submanifold_conv3d N=64160 64->64 k3 d1 f16 bias");
  rt::ConvLayer layer = *conv(5).conv;
  layer.dtype = "f32";
  layer.allowTf32 = true;
  layer.bias = false;
  layer.yRowStride = 80;
  EXPECT_EQ(rt::WorkloadCall::convCall(layer).describe(),
            "submanifold_conv3d N=5 64->64 k3 d1 f32 tf32 y_row_stride=80");
  EXPECT_EQ(rt::WorkloadCall::kernelCall("vector_add", {}).describe(), "vector_add");
}

// Every error, with the message it gives: the file, the entry, the field.
TEST_F(WorkloadTest, ErrorsNameTheFileTheEntryAndTheField) {
  auto entry = [](const std::string &call) {
    return R"({"format": "tilec-workload", "version": 1, "calls": [)" + call +
           "]}";
  };
  auto op = [&](const std::string &fields) {
    return entry(R"({"op": "submanifold_conv3d", "voxels": 100, "in_channels": 8, )"
                 R"("out_channels": 8, "dtype": "f16")" +
                 fields + "}");
  };
  auto kernel = [&](const std::string &fields) {
    return entry(R"({"kernel": "matmul")" + fields + "}");
  };
  struct Case {
    std::string text;
    std::string message;
  };
  const Case cases[] = {
      {"{ not json",
       "workload w.json: not valid JSON: parse error at line 1, column 4: "
       "syntax error while parsing object key - invalid literal; "
       "last read: '{ no'; expected string literal"},
      {"{\"format\": \"tilec-workload\",\n \"version\": 1,",
       "workload w.json: not valid JSON: parse error at line 2, column 15: "
       "syntax error while parsing object key - unexpected end of input; "
       "expected string literal"},
      {" \n", "workload w.json: the file is empty (a workload is {\"format\": "
              "\"tilec-workload\", \"version\": 1, \"calls\": [...]})"},
      {"[]",
       "workload w.json: must hold a JSON object ({\"format\": "
       "\"tilec-workload\", \"version\": 1, \"calls\": [...]}), got an array"},
      {R"({"version": 1, "calls": []})",
       "workload w.json: 'format' must be \"tilec-workload\", got nothing"},
      {R"({"format": "tilec-cache", "version": 1, "calls": []})",
       "workload w.json: 'format' must be \"tilec-workload\", got "
       "\"tilec-cache\""},
      {R"({"format": 1, "version": 1, "calls": []})",
       "workload w.json: 'format' must be \"tilec-workload\", got an integer"},
      {R"({"format": "tilec-workload", "calls": []})",
       "workload w.json: 'version' must be 1 (the version this tilec reads), "
       "got nothing"},
      {R"({"format": "tilec-workload", "version": 2, "calls": []})",
       "workload w.json: 'version' must be 1 (the version this tilec reads), "
       "got 2"},
      {R"({"format": "tilec-workload", "version": "1", "calls": []})",
       "workload w.json: 'version' must be 1 (the version this tilec reads), "
       "got a string"},
      {R"({"format": "tilec-workload", "version": 1, "calls": [], "device": 0})",
       "workload w.json: unknown field 'device' (a workload has format, "
       "version, calls)"},
      {R"({"format": "tilec-workload", "version": 1})",
       "workload w.json: 'calls' must be an array, got nothing"},
      {R"({"format": "tilec-workload", "version": 1, "calls": {}})",
       "workload w.json: 'calls' must be an array, got an object"},
      {entry("[]"),
       "workload w.json: calls[0]: an entry must be an object, got an array"},
      {entry(R"({"sizes": {}})"),
       "workload w.json: calls[0]: an entry needs 'kernel' (a kernel call) or "
       "'op' (an op call)"},
      {entry(R"({"kernel": "matmul", "op": "submanifold_conv3d"})"),
       "workload w.json: calls[0]: an entry is a kernel call ('kernel') or an "
       "op call ('op'), not both"},
      // Kernel calls.
      {kernel(R"(, "size": {})"),
       "workload w.json: calls[0]: unknown field 'size' (a kernel call has "
       "kernel, sizes, types, params)"},
      {entry(R"({"kernel": ""})"), "workload w.json: calls[0]: 'kernel' must "
                                   "be a non-empty string, got an empty one"},
      {entry(R"({"kernel": null})"), "workload w.json: calls[0]: 'kernel' must "
                                     "be a non-empty string, got a null"},
      {kernel(R"(, "sizes": [1])"),
       "workload w.json: calls[0]: 'sizes' must be an object of names to "
       "integers, got an array"},
      {kernel(R"(, "sizes": {"M": "4096"})"),
       "workload w.json: calls[0]: sizes 'M' must be an integer, got a string"},
      {kernel(R"(, "sizes": {"M": 1.5})"),
       "workload w.json: calls[0]: sizes 'M' must be an integer, got 1.5"},
      {kernel(R"(, "sizes": {"M": 18446744073709551615})"),
       "workload w.json: calls[0]: sizes 'M' must be an integer, got "
       "18446744073709551615"},
      {kernel(R"(, "sizes": {"": 1})"),
       "workload w.json: calls[0]: 'sizes' has an empty name"},
      {kernel(R"(, "types": "f16")"),
       "workload w.json: calls[0]: 'types' must be an object of names to "
       "scalar types, got a string"},
      {kernel(R"(, "types": {"DTYPE": "half"})"),
       "workload w.json: calls[0]: types 'DTYPE' must be a scalar type (i1, "
       "i8, i16, i32, "
       "i64, f16, bf16, f32, f64), got 'half'"},
      {kernel(R"(, "types": {"DTYPE": 16})"),
       "workload w.json: calls[0]: types 'DTYPE' must be a scalar type (i1, "
       "i8, i16, i32, "
       "i64, f16, bf16, f32, f64), got an integer"},
      {kernel(R"(, "types": {"": "f16"})"),
       "workload w.json: calls[0]: 'types' has an empty name"},
      {kernel(R"(, "params": {"ALLOW_TF32": true})"),
       "workload w.json: calls[0]: params 'ALLOW_TF32' must be an integer, got "
       "a boolean"},
      // Op calls.
      {entry(R"({"op": "conv2d"})"), "workload w.json: calls[0]: unknown op "
                                     "'conv2d' (known: submanifold_conv3d)"},
      {entry(R"({"op": 3})"), "workload w.json: calls[0]: 'op' must be a "
                              "non-empty string, got an integer"},
      {op(R"(, "voxel": 1)"), "workload w.json: calls[0]: unknown field "
                              "'voxel' (an op call has op, voxels, "
                              "in_channels, out_channels, kernel_size, "
                              "dilation, dtype, bias, allow_tf32, "
                              "x_row_stride, y_row_stride)"},
      {entry(
           R"({"op": "submanifold_conv3d", "in_channels": 8, "out_channels": 8, "dtype": "f16"})"),
       "workload w.json: calls[0]: an op call needs 'voxels'"},
      {entry(
           R"({"op": "submanifold_conv3d", "voxels": 1, "out_channels": 8, "dtype": "f16"})"),
       "workload w.json: calls[0]: an op call needs 'in_channels'"},
      {entry(
           R"({"op": "submanifold_conv3d", "voxels": 1, "in_channels": 8, "dtype": "f16"})"),
       "workload w.json: calls[0]: an op call needs 'out_channels'"},
      {entry(
           R"({"op": "submanifold_conv3d", "voxels": 1, "in_channels": 8, "out_channels": 8})"),
       "workload w.json: calls[0]: an op call needs 'dtype'"},
      {entry(
           R"({"op": "submanifold_conv3d", "voxels": 0, "in_channels": 8, "out_channels": 8, "dtype": "f16"})"),
       "workload w.json: calls[0]: 'voxels' must be a positive integer, got 0"},
      {entry(
           R"({"op": "submanifold_conv3d", "voxels": -5, "in_channels": 8, "out_channels": 8, "dtype": "f16"})"),
       "workload w.json: calls[0]: 'voxels' must be a positive integer, got "
       "-5"},
      {entry(
           R"({"op": "submanifold_conv3d", "voxels": 2.5, "in_channels": 8, "out_channels": 8, "dtype": "f16"})"),
       "workload w.json: calls[0]: 'voxels' must be a positive integer, got "
       "2.5"},
      {entry(
           R"({"op": "submanifold_conv3d", "voxels": "many", "in_channels": 8, "out_channels": 8, "dtype": "f16"})"),
       "workload w.json: calls[0]: 'voxels' must be a positive integer, got a "
       "string"},
      {entry(
           R"({"op": "submanifold_conv3d", "voxels": 2147483648, "in_channels": 8, "out_channels": 8, "dtype": "f16"})"),
       "workload w.json: calls[0]: 'voxels' must be a positive integer, got "
       "2147483648"},
      {entry(
           R"({"op": "submanifold_conv3d", "voxels": 18446744073709551615, "in_channels": 8, "out_channels": 8, "dtype": "f16"})"),
       "workload w.json: calls[0]: 'voxels' must be a positive integer, got "
       "18446744073709551615"},
      {entry(
           R"({"op": "submanifold_conv3d", "voxels": 1, "in_channels": 0, "out_channels": 8, "dtype": "f16"})"),
       "workload w.json: calls[0]: 'in_channels' must be a positive integer, "
       "got 0"},
      {entry(
           R"({"op": "submanifold_conv3d", "voxels": 1, "in_channels": 8, "out_channels": -1, "dtype": "f16"})"),
       "workload w.json: calls[0]: 'out_channels' must be a positive integer, "
       "got -1"},
      {op(R"(, "kernel_size": 4)"),
       "workload w.json: calls[0]: 'kernel_size' must be odd, 1 to 7, got 4"},
      {op(R"(, "kernel_size": 9)"),
       "workload w.json: calls[0]: 'kernel_size' must be odd, 1 to 7, got 9"},
      {op(R"(, "dilation": 0)"), "workload w.json: calls[0]: 'dilation' must "
                                 "be a positive integer, got 0"},
      {op(R"(, "kernel_size": [1, 3])"),
       "workload w.json: calls[0]: 'kernel_size' must be an integer or a list "
       "of three, got a list of 2"},
      {op(R"(, "kernel_size": [1, 3, 4])"),
       "workload w.json: calls[0]: 'kernel_size[2]' must be odd, 1 to 7, got "
       "4"},
      {op(R"(, "kernel_size": [1, "3", 3])"),
       "workload w.json: calls[0]: 'kernel_size[1]' must be odd, 1 to 7, got a "
       "string"},
      // The window before the row strides, as the format lists them.
      {op(R"(, "x_row_stride": 0, "kernel_size": 9)"),
       "workload w.json: calls[0]: 'kernel_size' must be odd, 1 to 7, got 9"},
      {op(R"(, "dilation": [1, 2, 0])"),
       "workload w.json: calls[0]: 'dilation[2]' must be a positive integer, "
       "got 0"},
      {entry(
           R"({"op": "submanifold_conv3d", "voxels": 1, "in_channels": 8, "out_channels": 8, "dtype": "f64"})"),
       "workload w.json: calls[0]: 'dtype' must be f16, bf16 or f32, got "
       "'f64'"},
      {entry(
           R"({"op": "submanifold_conv3d", "voxels": 1, "in_channels": 8, "out_channels": 8, "dtype": 16})"),
       "workload w.json: calls[0]: 'dtype' must be a non-empty string, got an "
       "integer"},
      {op(R"(, "bias": "yes")"),
       "workload w.json: calls[0]: 'bias' must be true or false, got a string"},
      {op(R"(, "allow_tf32": 1)"), "workload w.json: calls[0]: 'allow_tf32' "
                                   "must be true or false, got an integer"},
      {op(R"(, "allow_tf32": true)"), "workload w.json: calls[0]: 'allow_tf32' "
                                      "applies to f32 only, the dtype is f16"},
      {op(R"(, "x_row_stride": 4)"),
       "workload w.json: calls[0]: 'x_row_stride' must be at least "
       "'in_channels' (8), got 4"},
      {op(R"(, "y_row_stride": 7)"),
       "workload w.json: calls[0]: 'y_row_stride' must be at least "
       "'out_channels' (8), got 7"},
      {op(R"(, "x_row_stride": 0)"),
       "workload w.json: calls[0]: 'x_row_stride' must be a positive integer, "
       "got 0"},
  };
  for (const Case &c : cases) {
    auto parsed = rt::Workload::parse(c.text, "w.json");
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_EQ(parsed.message(), c.message) << c.text;
  }
  // The index is the entry's own.
  auto third = rt::Workload::parse(
      R"({"format": "tilec-workload", "version": 1, "calls": [
           {"kernel": "a"}, {"kernel": "b"}, {"kernel": "c"},
           {"op": "submanifold_conv3d", "voxels": 0, "in_channels": 8,
            "out_channels": 8, "dtype": "f16"}]})",
      "w.json");
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.message(),
            "workload w.json: calls[3]: 'voxels' must be a positive integer, got 0");
}

TEST_F(WorkloadTest, LoadNamesAMissingFile) {
  auto missing = rt::Workload::load(directory + "/none.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.message(), "workload: " + directory +
                                   "/none.json: cannot open: No such file or directory");
  write(directory + "/bad.json", "[1]");
  auto bad = rt::Workload::load(directory + "/bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message().rfind("workload " + directory + "/bad.json: must hold", 0), 0u)
      << bad.message();
}

//===----------------------------------------------------------------------===//
// Appending
//===----------------------------------------------------------------------===//

TEST_F(WorkloadTest, AppendCreatesTheFileAndAddsOnlyNewCalls) {
  ASSERT_TRUE(rt::appendToWorkloadFile(path, {matmul(1), conv(10)}).ok());
  EXPECT_EQ(callsOf(path),
            (std::vector<std::string>{matmul(1).encode(), conv(10).encode()}));
  // Listed calls are not added again; new ones go at the end, in order.
  ASSERT_TRUE(
      rt::appendToWorkloadFile(path, {conv(10), matmul(2), matmul(1), matmul(2)}).ok());
  EXPECT_EQ(callsOf(path), (std::vector<std::string>{matmul(1).encode(), conv(10).encode(),
                                                     matmul(2).encode()}));
  rt::Workload expected;
  expected.calls = {matmul(1), conv(10), matmul(2)};
  EXPECT_EQ(read(path), expected.encode());
  // Nothing new: the file is left as it is.
  std::string before = read(path);
  ASSERT_TRUE(rt::appendToWorkloadFile(path, {matmul(2)}).ok());
  EXPECT_EQ(read(path), before);
}

TEST_F(WorkloadTest, AppendMatchesCallsByTheirCanonicalText) {
  std::string hand = directory + "/hand.json";
  write(hand, R"({"calls": [{"types": {"DTYPE": "f16"}, "kernel": "matmul",
                             "params": {"ALLOW_TF32": 0},
                             "sizes": {"N": 4096, "K": 4096, "M": 1}}],
                  "version": 1, "format": "tilec-workload"})");
  ASSERT_TRUE(rt::appendToWorkloadFile(hand, {matmul(1)}).ok());
  EXPECT_EQ(callsOf(hand), (std::vector<std::string>{matmul(1).encode()}));
  // An empty file is an empty workload.
  std::string empty = directory + "/empty.json";
  write(empty, "");
  ASSERT_TRUE(rt::appendToWorkloadFile(empty, {conv(3)}).ok());
  EXPECT_EQ(callsOf(empty), (std::vector<std::string>{conv(3).encode()}));
}

TEST_F(WorkloadTest, AFileThatDoesNotParseIsMovedAside) {
  std::string file = directory + "/w.json";
  for (const char *contents :
       {"{ not json", R"({"format": "tilec-workload", "version": 3, "calls": []})"}) {
    write(file, contents);
    std::vector<std::string> warnings;
    ASSERT_TRUE(rt::appendToWorkloadFile(file, {matmul(7)}, &warnings).ok());
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("workload " + file + ": "), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("; moved to " + file +
                               ".corrupt and started a new workload file"),
              std::string::npos)
        << warnings[0];
    EXPECT_EQ(read(file + ".corrupt"), contents);
    EXPECT_EQ(callsOf(file), (std::vector<std::string>{matmul(7).encode()}));
  }
}

TEST_F(WorkloadTest, AppendIntoAnUnwritablePlaceNamesIt) {
  std::string blocker = directory + "/file";
  write(blocker, "x");
  tilec::Status status = rt::appendToWorkloadFile(blocker + "/w.json", {matmul(1)});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind("cannot record into the workload file " + blocker +
                                       "/w.json: ",
                                   0),
            0u)
      << status.message();
}

// Processes recording at once keep each other's calls, and a reader never
// sees a file that does not parse.
TEST_F(WorkloadTest, ConcurrentAppendsFromEightProcessesAllSurvive) {
  constexpr int kProcesses = 8;
  constexpr int kCallsPerProcess = 6;
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(gate[1]);
      char byte;
      (void)::read(gate[0], &byte, 1);
      int failures = 0;
      for (int k = 0; k < kCallsPerProcess; ++k) {
        rt::WorkloadCall call =
            k % 2 ? matmul(1000 * p + k) : conv(1000 * p + k + 1);
        // Each call twice, and one every process shares.
        if (!rt::appendToWorkloadFile(path, {call, matmul(999999)}).ok() ||
            !rt::appendToWorkloadFile(path, {call}).ok())
          ++failures;
        if (!rt::Workload::load(path).ok())
          ++failures;
      }
      ::_exit(failures);
    }
    children.push_back(pid);
  }
  ::close(gate[0]);
  ::close(gate[1]); // opens the gate
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "a child failed to append or read";
  }
  std::vector<std::string> texts = callsOf(path);
  EXPECT_EQ(texts.size(), size_t(kProcesses * kCallsPerProcess + 1));
  std::set<std::string> distinct(texts.begin(), texts.end());
  EXPECT_EQ(distinct.size(), texts.size()) << "a call is listed twice";
  for (int p = 0; p < kProcesses; ++p)
    for (int k = 0; k < kCallsPerProcess; ++k) {
      rt::WorkloadCall call =
          k % 2 ? matmul(1000 * p + k) : conv(1000 * p + k + 1);
      EXPECT_EQ(distinct.count(call.encode()), 1u) << call.describe() << " was lost";
    }
  std::string leftovers = "ls '" + directory + "/sub/dir' | grep -c tmp";
  FILE *pipe = ::popen(leftovers.c_str(), "r");
  char count[16] = {};
  ASSERT_NE(std::fgets(count, sizeof(count), pipe), nullptr);
  ::pclose(pipe);
  EXPECT_EQ(std::string(count), "0\n");
}

TEST_F(WorkloadTest, ACallAWorkloadCannotListIsNotWritten) {
  rt::WorkloadCall empty = conv(0);
  EXPECT_EQ(empty.validate().message(), "'voxels' must be a positive integer, got 0");
  EXPECT_TRUE(conv(1).validate().ok());
  EXPECT_EQ(rt::WorkloadCall::kernelCall("", {}).validate().message(),
            "'kernel' must be a non-empty string, got an empty one");
  tilec::Call half;
  half.types = {{"DTYPE", "half"}};
  EXPECT_NE(rt::WorkloadCall::kernelCall("matmul", half).validate().message().find(
                "got 'half'"),
            std::string::npos);
  tilec::Status status = rt::appendToWorkloadFile(path, {matmul(1), empty});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "cannot record into the workload file " + path +
                                  ": submanifold_conv3d N=0 64->64 k3 d1 f16 bias: "
                                  "'voxels' must be a positive integer, got 0");
  EXPECT_FALSE(std::ifstream(path).good()) << "nothing is written";
}

//===----------------------------------------------------------------------===//
// The recorder
//===----------------------------------------------------------------------===//

TEST_F(WorkloadTest, RecorderAppendsEachDistinctCallOnce) {
  rt::WorkloadRecorder recorder(path);
  EXPECT_TRUE(recorder.enabled());
  tilec::Call call = matmul(5).call;
  recorder.recordKernelCall("matmul", call);
  recorder.recordConvLayer(*conv(9).conv);
  // Repeats are found in the process's set: the file is not touched again.
  std::string before = read(path);
  ASSERT_EQ(::unlink(path.c_str()), 0);
  recorder.recordKernelCall("matmul", call);
  recorder.record(conv(9));
  EXPECT_FALSE(std::ifstream(path).good());
  write(path, before);
  recorder.recordKernelCall("softmax", call);
  EXPECT_EQ(callsOf(path),
            (std::vector<std::string>{matmul(5).encode(), conv(9).encode(),
                                      rt::WorkloadCall::kernelCall("softmax", call).encode()}));
}

TEST_F(WorkloadTest, RecorderSkipsACallAWorkloadCannotListAndGoesOn) {
  rt::WorkloadRecorder recorder(path);
  testing::internal::CaptureStderr();
  recorder.recordKernelCall("", {});
  recorder.recordKernelCall("", {}); // warned about once
  recorder.record(matmul(1));
  std::string errors = testing::internal::GetCapturedStderr();
  EXPECT_EQ(errors, "tilec: warning: not recording  in " + path +
                        ": 'kernel' must be a non-empty string, got an empty one\n");
  EXPECT_TRUE(recorder.enabled());
  EXPECT_EQ(callsOf(path), (std::vector<std::string>{matmul(1).encode()}));
}

TEST_F(WorkloadTest, RecorderWithoutAPathRecordsNothing) {
  rt::WorkloadRecorder recorder("");
  EXPECT_FALSE(recorder.enabled());
  recorder.record(matmul(1)); // nothing to check but that it returns
}

TEST_F(WorkloadTest, AFailedRecordWarnsOnceAndTurnsRecordingOff) {
  std::string blocker = directory + "/file";
  write(blocker, "x");
  rt::WorkloadRecorder recorder(blocker + "/w.json");
  testing::internal::CaptureStderr();
  recorder.record(matmul(1));
  recorder.record(matmul(2));
  std::string errors = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(recorder.enabled());
  EXPECT_EQ(errors.rfind("tilec: warning: cannot record into the workload file " +
                             blocker + "/w.json: ",
                         0),
            0u)
      << errors;
  EXPECT_NE(errors.find("; no more calls are recorded in this process "
                        "(TILEC_RECORD_WORKLOAD)\n"),
            std::string::npos)
      << errors;
  EXPECT_EQ(std::count(errors.begin(), errors.end(), '\n'), 1) << errors;
}

TEST_F(WorkloadTest, RecorderWarnsWhenItMovesACorruptFileAside) {
  write(directory + "/w.json", "{");
  rt::WorkloadRecorder recorder(directory + "/w.json");
  testing::internal::CaptureStderr();
  recorder.record(matmul(1));
  std::string errors = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(recorder.enabled());
  EXPECT_NE(errors.find("tilec: warning: workload " + directory + "/w.json: not valid JSON"),
            std::string::npos)
      << errors;
  EXPECT_EQ(callsOf(directory + "/w.json"), (std::vector<std::string>{matmul(1).encode()}));
}

// The process's recorder reads TILEC_RECORD_WORKLOAD once, at its first use:
// in a child, so that this process's recorder stays unread.
TEST_F(WorkloadTest, TheProcessRecorderReadsTheEnvironmentOnce) {
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv("TILEC_RECORD_WORKLOAD", path.c_str(), 1);
    rt::WorkloadRecorder &recorder = rt::WorkloadRecorder::process();
    ::setenv("TILEC_RECORD_WORKLOAD", (path + ".other").c_str(), 1);
    bool same = &rt::WorkloadRecorder::process() == &recorder &&
                recorder.path() == path && recorder.enabled();
    recorder.recordKernelCall("matmul", matmul(3).call);
    ::_exit(same ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(callsOf(path), (std::vector<std::string>{matmul(3).encode()}));

  pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::unsetenv("TILEC_RECORD_WORKLOAD");
    ::_exit(rt::WorkloadRecorder::process().enabled() ? 1 : 0);
  }
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "recording without TILEC_RECORD_WORKLOAD";
}

} // namespace
