//===- BundleTest.cpp - Kernel bundles: format, checks, lookups -----------===//

#include "SampleBundle.h"

#include "tilec/runtime/Bundle.h"
#include "tilec/runtime/Crc32c.h"

#include "tilec/contract/CompileMetadata.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <unistd.h>

namespace rt = tilec::rt;
using tilec::test::compileJson;
using tilec::test::descriptionJson;
using tilec::test::sampleContents;

namespace {

std::string encodedSample() {
  return rt::KernelBundle::encode(sampleContents());
}

std::string decodeError(std::string bytes) {
  auto bundle = rt::KernelBundle::decode(std::move(bytes), "b.tilecb");
  EXPECT_FALSE(bundle);
  return bundle ? "" : bundle.message();
}

// The offset of the payload (the cubins) in an encoded bundle.
size_t payloadOffset(const std::string &bytes) {
  return bytes.size() - (1000 + 333 + 77);
}

TEST(Crc32c, KnownValues) {
  EXPECT_EQ(rt::crc32c("123456789", 9), 0xe3069283u);
  EXPECT_EQ(rt::crc32c("", 0), 0u);
  // Lengths that are not multiples of 8 take the byte-wise tail.
  std::string text(1001, 'x');
  uint32_t whole = rt::crc32c(text.data(), text.size());
  text[1000] = 'y';
  EXPECT_NE(rt::crc32c(text.data(), text.size()), whole);
}

TEST(Bundle, RoundTrips) {
  auto bundle = rt::KernelBundle::decode(encodedSample(), "b.tilecb");
  ASSERT_TRUE(bundle) << bundle.message();
  const rt::KernelBundle &b = **bundle;
  EXPECT_EQ(b.origin(), "bundle b.tilecb");
  EXPECT_EQ(b.createdAt(), "2026-12-01T12:00:00Z");
  EXPECT_EQ(b.packedBy(), "tilec test");
  ASSERT_EQ(b.cubins().size(), 3u);
  EXPECT_EQ(b.cubinBytesTotal(), 1410u);
  EXPECT_EQ(b.cubins()[1].bytes, std::string(333, 'b'));
  EXPECT_EQ(b.selections().size(), 3u);
  EXPECT_EQ(b.fileBytes(), encodedSample().size());

  const rt::BundleCubin *cubin = b.findCubin(
      "scale", "BLOCK=128,num_warps=4,num_stages=1", "n%16", "sm_80");
  ASSERT_NE(cubin, nullptr);
  EXPECT_EQ(cubin->bytes, std::string(77, 'c'));
  auto data = b.cubinData(*cubin);
  ASSERT_TRUE(data);
  EXPECT_EQ(data->size(), 77u);
  EXPECT_EQ(b.findCubin("scale", "BLOCK=128,num_warps=4,num_stages=1", "",
                        "sm_90"),
            nullptr);

  auto description = b.description("shift");
  ASSERT_TRUE(description);
  ASSERT_NE(*description, nullptr);
  EXPECT_EQ((*description)->getName(), "shift");
  auto absent = b.description("softmax");
  ASSERT_TRUE(absent);
  EXPECT_EQ(*absent, nullptr);

  // Re-encoding the manifest of what was read gives the file's manifest.
  std::string file = encodedSample();
  EXPECT_NE(file.find(b.manifestJson()), std::string::npos);
}

TEST(Bundle, SelectionPrefersTheDeviceThenTheTarget) {
  auto bundle = rt::KernelBundle::decode(encodedSample(), "b.tilecb");
  ASSERT_TRUE(bundle);
  const rt::KernelBundle &b = **bundle;
  const rt::BundleSelection *own =
      b.findSelection("NVIDIA H100", "sm_90", "scale", "LOG2_N=20|n%16");
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(own->device, "NVIDIA H100");
  EXPECT_DOUBLE_EQ(own->medianUs, 13.0);
  // Another sm_90 device takes the first selection of that target.
  const rt::BundleSelection *other =
      b.findSelection("NVIDIA GH200", "sm_90", "scale", "LOG2_N=20|n%16");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->device, "NVIDIA H200");
  EXPECT_EQ(b.findSelection("NVIDIA H200", "sm_80", "scale", "LOG2_N=20|n%16"),
            nullptr);
  EXPECT_EQ(b.findSelection("NVIDIA H200", "sm_90", "scale", "LOG2_N=21|n%16"),
            nullptr);
}

TEST(Bundle, TargetCheckNamesWhatTheBundleHolds) {
  auto bundle = rt::KernelBundle::decode(encodedSample(), "b.tilecb");
  ASSERT_TRUE(bundle);
  EXPECT_TRUE((*bundle)->checkTarget("sm_90").ok());
  tilec::Status status = (*bundle)->checkTarget("sm_100");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "bundle b.tilecb holds cubins for sm_90, sm_80, this device is "
            "sm_100 (pack the workload on a GPU of this kind)");
}

TEST(Bundle, TruncatedAndTrailingBytesAreRefused) {
  std::string bytes = encodedSample();
  EXPECT_NE(decodeError(bytes.substr(0, bytes.size() - 1)).find("(truncated)"),
            std::string::npos);
  // Cut inside the header line: no header line at all.
  EXPECT_NE(decodeError(bytes.substr(0, 20)).find("no 'tilec-bundle' header"),
            std::string::npos);
  EXPECT_NE(decodeError(bytes + "x").find("(trailing bytes)"),
            std::string::npos);
  EXPECT_EQ(decodeError(""), "bundle b.tilecb: not a tilec bundle (no "
                             "'tilec-bundle' header line)");
  EXPECT_NE(decodeError("tilec-bundle 2 0 0 x\n").find("format version 2"),
            std::string::npos);
  EXPECT_NE(decodeError("tilec-bundle 1 zero\n").find("does not read"),
            std::string::npos);
}

TEST(Bundle, AFlippedByteAnywhereIsRefused) {
  std::string bytes = encodedSample();
  size_t payload = payloadOffset(bytes);
  // In the manifest: its CRC-32C.
  std::string manifest = bytes;
  manifest[payload - 10] ^= 1;
  EXPECT_NE(decodeError(manifest).find("CRC-32C does not match"),
            std::string::npos);
  // In each cubin: its CRC-32C, named.
  for (size_t at : {payload, payload + 1000 + 5, bytes.size() - 1}) {
    std::string cubin = bytes;
    cubin[at] ^= 0x40;
    std::string error = decodeError(cubin);
    EXPECT_NE(error.find("has CRC-32C"), std::string::npos) << error;
    EXPECT_NE(error.find("(the file is corrupt)"), std::string::npos);
  }
  std::string error = decodeError([&] {
    std::string cubin = bytes;
    cubin[payload + 1000] ^= 1;
    return cubin;
  }());
  EXPECT_NE(error.find("cubins[1] (shift BLOCK=256,num_warps=4,num_stages=1 "
                       "[n%16] sm_90)"),
            std::string::npos)
      << error;
}

// A manifest edited consistently (its CRC-32C rewritten) that no longer
// matches its cubins.
std::string crcText(const std::string &text) {
  char buffer[16];
  std::snprintf(buffer, sizeof(buffer), "%08x",
                rt::crc32c(text.data(), text.size()));
  return buffer;
}

std::string withManifest(const rt::KernelBundle::Contents &contents,
                         std::string (*edit)(std::string),
                         const std::string &extraPayload = "") {
  std::string bytes = rt::KernelBundle::encode(contents);
  size_t newline = bytes.find('\n');
  size_t payload = payloadOffset(bytes);
  std::string manifest =
      edit(bytes.substr(newline + 1, payload - newline - 1));
  std::string rest = bytes.substr(payload) + extraPayload;
  return std::string("tilec-bundle 1 ") +
         std::to_string(manifest.size()) + " " + std::to_string(rest.size()) +
         " " + crcText(manifest) + "\n" + manifest + rest;
}

// Replaces the first `from` after `anchor`.
std::string replaceFirst(std::string text, const std::string &from,
                         const std::string &to,
                         const std::string &anchor = "") {
  size_t at = text.find(from, anchor.empty() ? 0 : text.find(anchor));
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  return text;
}

TEST(Bundle, AManifestThatDoesNotMatchItsCubinsIsRefused) {
  rt::KernelBundle::Contents contents = sampleContents();
  // A selection whose config is not its cubin's.
  std::string error = decodeError(withManifest(contents, [](std::string m) {
    return replaceFirst(m, "\"config\": \"BLOCK=128,num_warps=4,num_stages=1\"",
                        "\"config\": \"BLOCK=512,num_warps=4,num_stages=1\"",
                        "\"selections\"");
  }));
  EXPECT_NE(error.find("selections[0] (scale LOG2_N=20|n%16) selects "
                       "BLOCK=512,num_warps=4,num_stages=1, its cubin is of "
                       "BLOCK=128"),
            std::string::npos)
      << error;
  // A payload with bytes no cubin accounts for.
  error = decodeError(withManifest(
      contents, [](std::string m) { return m; }, "unused"));
  EXPECT_NE(error.find("the cubins take 1410 bytes of the 1416-byte payload"),
            std::string::npos)
      << error;
  // Overlapping cubins.
  error = decodeError(withManifest(contents, [](std::string m) {
    return replaceFirst(m, "\"offset\": 1000", "\"offset\": 999");
  }));
  EXPECT_NE(error.find("cubins[1] spans bytes 999..1332"), std::string::npos)
      << error;
  // A selection of a cubin that does not exist.
  error = decodeError(withManifest(contents, [](std::string m) {
    return replaceFirst(m, "\"cubin\": 1", "\"cubin\": 7");
  }));
  EXPECT_NE(error.find("selections[2] names cubin 7 of 3"), std::string::npos)
      << error;
  // A missing and a mistyped field, named by path.
  error = decodeError(withManifest(contents, [](std::string m) {
    return replaceFirst(m, "\"target\": \"sm_80\",", "");
  }));
  EXPECT_NE(error.find("cubins[2].target is missing"), std::string::npos)
      << error;
  error = decodeError(withManifest(contents, [](std::string m) {
    return replaceFirst(m, "\"median_us\": 12.5", "\"median_us\": \"fast\"");
  }));
  EXPECT_NE(error.find("selections[0].median_us must be a number"),
            std::string::npos)
      << error;
}

// A manifest nested 100,000 deep (its CRC-32C right) overflowed the JSON
// parser's stack; it is refused with where it nests too deep.
TEST(Bundle, ADeeplyNestedManifestIsRefused) {
  rt::KernelBundle::Contents contents = sampleContents();
  std::string error = decodeError(withManifest(contents, [](std::string m) {
    return replaceFirst(m, "\"median_us\": 12.5",
                        "\"median_us\": " + std::string(100000, '[') +
                            std::string(100000, ']'));
  }));
  EXPECT_NE(error.find("the manifest nests deeper than 512 arrays and "
                       "objects at line"),
            std::string::npos)
      << error;
}

TEST(Bundle, CompileJsonMustDescribeItsCubin) {
  rt::KernelBundle::Contents contents = sampleContents();
  contents.cubins[1].metadataJson = compileJson("scale", "sm_90");
  std::string error = decodeError(rt::KernelBundle::encode(contents));
  EXPECT_NE(error.find("cubins[1] (shift BLOCK=256,num_warps=4,num_stages=1 "
                       "[n%16] sm_90): the compile json is of kernel 'scale'"),
            std::string::npos)
      << error;
  contents = sampleContents();
  contents.cubins[0].metadataJson = compileJson("scale", "sm_80");
  error = decodeError(rt::KernelBundle::encode(contents));
  EXPECT_NE(error.find("the compile json is for sm_80"), std::string::npos)
      << error;
}

TEST(Bundle, DuplicatesAndUndescribedKernelsAreRefused) {
  rt::KernelBundle::Contents contents = sampleContents();
  contents.cubins[2].target = "sm_90";
  contents.cubins[2].metadataJson = compileJson("scale", "sm_90");
  EXPECT_NE(decodeError(rt::KernelBundle::encode(contents))
                .find("two cubins of scale BLOCK=128"),
            std::string::npos);
  contents = sampleContents();
  contents.kernels.pop_back();
  EXPECT_NE(decodeError(rt::KernelBundle::encode(contents))
                .find("cubins[1] is of kernel 'shift', which the bundle does "
                      "not describe"),
            std::string::npos);
  contents = sampleContents();
  contents.selections[1].device = "NVIDIA H200";
  EXPECT_NE(decodeError(rt::KernelBundle::encode(contents))
                .find("two selections of scale LOG2_N=20|n%16 on NVIDIA H200"),
            std::string::npos);
}

TEST(Bundle, OpenNamesTheFile) {
  auto missing = rt::KernelBundle::open("/nonexistent/b.tilecb");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("/nonexistent/b.tilecb"), std::string::npos);
  char path[] = "/tmp/tilec-bundle-test-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path, std::ios::binary) << encodedSample();
  auto bundle = rt::KernelBundle::open(path);
  EXPECT_TRUE(bundle) << bundle.message();
  std::remove(path);
}

TEST(Bundle, EmbeddedTableChecksEachCubinBeforeHandingItOut) {
  static unsigned char good[] = {1, 2, 3, 4, 5};
  static unsigned char bad[] = {9, 9, 9};
  std::string description = descriptionJson("scale");
  std::string metadata = compileJson("scale", "sm_90");
  // Without compiled-in objects (null accessors) the jsons are parsed.
  tilec_embedded_kernel kernels[] = {{"scale", description.c_str(), nullptr}};
  tilec_embedded_cubin cubins[] = {
      {"scale", "BLOCK=128,num_warps=4,num_stages=1", "", "sm_90", "",
       metadata.c_str(), nullptr, good, sizeof(good),
       rt::crc32c(good, sizeof(good))},
      {"scale", "BLOCK=256,num_warps=4,num_stages=1", "", "sm_90", "",
       metadata.c_str(), nullptr, bad, sizeof(bad), 0x12345678u}};
  tilec_embedded_selection selections[] = {
      {"NVIDIA H200", "sm_90", "scale", "LOG2_N=20", 0, 4.5}};
  tilec_embedded_bundle table = {TILEC_EMBEDDED_BUNDLE_VERSION,
                                 "demo",
                                 "2026-12-01T12:00:00Z",
                                 "tilec test",
                                 kernels,
                                 1,
                                 cubins,
                                 2,
                                 selections,
                                 1};
  auto bundle = rt::KernelBundle::fromEmbedded(table);
  ASSERT_TRUE(bundle) << bundle.message();
  EXPECT_EQ((*bundle)->origin(), "embedded bundle demo");
  EXPECT_EQ((*bundle)->fileBytes(), 0u);
  const rt::BundleSelection *selection =
      (*bundle)->findSelection("NVIDIA H200", "sm_90", "scale", "LOG2_N=20");
  ASSERT_NE(selection, nullptr);
  auto data = (*bundle)->cubinData((*bundle)->cubins()[selection->cubin]);
  ASSERT_TRUE(data) << data.message();
  EXPECT_EQ(data->size(), 5u);
  auto corrupt = (*bundle)->cubinData((*bundle)->cubins()[1]);
  ASSERT_FALSE(corrupt);
  EXPECT_NE(corrupt.message().find("the table says 12345678 (corrupt)"),
            std::string::npos)
      << corrupt.message();

  table.layout_version = 99;
  auto stale = rt::KernelBundle::fromEmbedded(table);
  ASSERT_FALSE(stale);
  EXPECT_NE(stale.message().find("regenerate it"), std::string::npos);
  table.layout_version = TILEC_EMBEDDED_BUNDLE_VERSION;
  selections[0].cubin = 5;
  EXPECT_FALSE(rt::KernelBundle::fromEmbedded(table));
}

} // namespace
