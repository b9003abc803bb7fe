//===- EmbeddedBundleTest.cpp - A bundle compiled into the program --------===//
//
// The sample bundle was written to a file at build time and compiled in by
// tilec_embed_bundle (cmake/TilecBundle.cmake, `tilec bundle emit-cpp`): the
// table must be the file's bundle, field for field and byte for byte, and the
// generated per-kernel lookups must find what KernelBundle::findSelection
// finds.
//
//===----------------------------------------------------------------------===//

#include "sample_bundle.h"

#include "tilec/runtime/Bundle.h"

#include <gtest/gtest.h>

namespace rt = tilec::rt;

namespace {

TEST(EmbeddedBundle, IsTheFilesBundle) {
  auto file = rt::KernelBundle::open(TILEC_SAMPLE_BUNDLE_PATH);
  ASSERT_TRUE(file) << file.message();
  auto embedded = rt::KernelBundle::fromEmbedded(*sample_bundle_bundle());
  ASSERT_TRUE(embedded) << embedded.message();
  EXPECT_EQ((*embedded)->origin(), "embedded bundle sample_bundle");
  EXPECT_EQ((*embedded)->createdAt(), (*file)->createdAt());
  EXPECT_EQ((*embedded)->packedBy(), (*file)->packedBy());
  EXPECT_EQ((*embedded)->manifestJson(), (*file)->manifestJson());
  ASSERT_EQ((*embedded)->cubins().size(), (*file)->cubins().size());
  for (size_t i = 0; i < (*file)->cubins().size(); ++i) {
    auto data = (*embedded)->cubinData((*embedded)->cubins()[i]);
    ASSERT_TRUE(data) << data.message();
    EXPECT_EQ(*data, (*file)->cubins()[i].bytes);
    // The driver wants cubin images aligned.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data->data()) % 64, 0u);
  }
}

// The descriptions and compile jsons compiled in are the objects their
// jsons read to, and the bundle hands them out rather than parsing.
TEST(EmbeddedBundle, CompiledInObjectsAreTheJsons) {
  const tilec_embedded_bundle &table = *sample_bundle_bundle();
  auto embedded = rt::KernelBundle::fromEmbedded(table);
  ASSERT_TRUE(embedded) << embedded.message();
  for (unsigned i = 0; i < table.kernel_count; ++i) {
    const tilec_embedded_kernel &entry = table.kernels[i];
    ASSERT_NE(entry.description, nullptr) << entry.name;
    auto parsed = tilec::KernelDescription::fromJson(entry.description_json);
    ASSERT_TRUE(parsed) << parsed.message();
    auto handed = (*embedded)->description(entry.name);
    ASSERT_TRUE(handed) << handed.message();
    EXPECT_EQ(static_cast<const void *>(*handed), entry.description());
    EXPECT_EQ((*handed)->toJson(), parsed->toJson()) << entry.name;
  }
  for (unsigned i = 0; i < table.cubin_count; ++i) {
    const tilec_embedded_cubin &entry = table.cubins[i];
    ASSERT_NE(entry.metadata, nullptr);
    auto parsed = tilec::CompileMetadata::parse(entry.metadata_json);
    ASSERT_TRUE(parsed) << parsed.message();
    const rt::BundleCubin &cubin = (*embedded)->cubins()[i];
    ASSERT_EQ(static_cast<const void *>(cubin.metadata), entry.metadata());
    EXPECT_EQ(cubin.metadata->toJson(), parsed->toJson()) << i;
  }
  // The sample's "shift" has every optional part, so all of them went
  // through the generated code.
  auto shift = (*embedded)->description("shift");
  ASSERT_TRUE(shift);
  EXPECT_EQ((*shift)->getRequirements().size(), 1u);
  EXPECT_EQ((*shift)->getConfigs().size(), 2u);
  EXPECT_EQ((*embedded)->cubins()[1].metadata->cache.at("ptx").result,
            "remote hit");
}

TEST(EmbeddedBundle, GeneratedLookupsFindTheWinners) {
  const tilec_embedded_selection *own =
      sample_bundle_find_scale("NVIDIA H100", "LOG2_N=20|n%16");
  ASSERT_NE(own, nullptr);
  EXPECT_STREQ(own->device, "NVIDIA H100");
  EXPECT_DOUBLE_EQ(own->median_us, 13.0);
  // Another device gets the first of that key in the bundle's order, as
  // KernelBundle::findSelection gives it.
  const tilec_embedded_selection *other =
      sample_bundle_find_scale("NVIDIA GH200", "LOG2_N=20|n%16");
  ASSERT_NE(other, nullptr);
  EXPECT_STREQ(other->device, "NVIDIA H200");
  auto embedded = rt::KernelBundle::fromEmbedded(*sample_bundle_bundle());
  ASSERT_TRUE(embedded);
  EXPECT_EQ((*embedded)
                ->findSelection("NVIDIA GH200", "sm_90", "scale",
                                "LOG2_N=20|n%16")
                ->device,
            other->device);
  EXPECT_EQ(sample_bundle_find_scale("NVIDIA H200", "LOG2_N=21|n%16"), nullptr);
  // Each kernel searches its own winners only.
  EXPECT_EQ(sample_bundle_find_shift("NVIDIA H200", "LOG2_N=20|n%16"), nullptr);
  const tilec_embedded_selection *shift =
      sample_bundle_find_shift("NVIDIA H200", "LOG2_N=10|n%16");
  ASSERT_NE(shift, nullptr);
  EXPECT_STREQ(sample_bundle_bundle()->cubins[shift->cubin].kernel, "shift");
}

} // namespace
