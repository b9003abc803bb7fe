//===- PackTest.cpp - which winners `tilec pack` puts in a bundle ---------===//
//
// packBundle over an autotune cache without a GPU: a compiler that only
// describes and "compiles" (bytes, no codegen) stands in for the JIT.
//
//===----------------------------------------------------------------------===//

#include "SampleBundle.h"

#include "tilec/runtime/AutotuneCache.h"
#include "tilec/runtime/Pack.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

namespace rt = tilec::rt;

namespace {

/// The kernel "scale" as it is now: its autotune key gained OUTPUTS, as a
/// kernel does when its arguments change under the same configs.
class ScaleCompiler : public rt::KernelCompiler {
public:
  tilec::Result<rt::CompiledArtifact>
  compile(const std::string &kernel, const tilec::Config &config,
          const std::string &target, const tilec::Specialization &) override {
    rt::CompiledArtifact artifact;
    artifact.cubin = "\x7f"
                     "ELF current " +
                     kernel + " " + config.str();
    auto metadata =
        tilec::CompileMetadata::parse(tilec::test::compileJson(kernel, target));
    if (!metadata)
      return metadata.status();
    artifact.metadata = *metadata;
    return artifact;
  }
  tilec::Result<tilec::KernelDescription>
  describe(const std::string &kernel) override {
    return tilec::KernelDescription(kernel, "kernels/scale.cpp", 1)
        .param(tilec::MetaParameter("BLOCK").powerOfTwo())
        .arg(tilec::pointer("x", "f32"))
        .arg(tilec::scalar("n", "i32"))
        .candidate("BLOCK=128,num_warps=4")
        .key("LOG2_N", "ceil(log2(n))")
        .key("OUTPUTS", "2")
        .grid({"cdiv(n, BLOCK)"});
  }
};

rt::AutotuneEntry winner(const std::string &config) {
  rt::AutotuneEntry entry;
  entry.config = config;
  rt::ConfigTiming timing;
  timing.config = config;
  timing.medianUs = 10;
  entry.timings = {timing};
  entry.target = "sm_90";
  return entry;
}

TEST(PackTest, WinnersOfAKeyThatPredatesTheKernelAreLeftOut) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("tilec-pack-test-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  rt::AutotuneCache cache((dir / "autotune.json").string());
  const std::string config = "BLOCK=128,num_warps=4,num_stages=1";
  // Tuned before the key gained OUTPUTS, then again after: the same config,
  // so that a bundle keyed by config would hand the first one's cubin to
  // the second's calls.
  ASSERT_TRUE(
      cache.store("NVIDIA H200", "scale", "LOG2_N=14|n%16", winner(config))
          .ok());
  ASSERT_TRUE(cache
                  .store("NVIDIA H200", "scale", "LOG2_N=14,OUTPUTS=2|n%16",
                         winner(config))
                  .ok());
  ScaleCompiler compiler;
  rt::PackOptions options;
  auto packed = rt::packBundle(cache, nullptr, &compiler, options);
  ASSERT_TRUE(packed.ok()) << packed.message();
  ASSERT_EQ(packed->winners.size(), 1u);
  EXPECT_EQ(packed->winners[0].key, "LOG2_N=14,OUTPUTS=2|n%16");
  EXPECT_EQ(packed->winners[0].source, "recompiled");
  ASSERT_EQ(packed->stale.size(), 1u);
  EXPECT_EQ(packed->stale[0].key, "LOG2_N=14|n%16");
  EXPECT_EQ(packed->contents.cubins.size(), 1u);
  ASSERT_EQ(packed->contents.selections.size(), 1u);

  // Only stale winners: nothing to pack, and the error says why.
  rt::AutotuneCache staleOnly((dir / "stale.json").string());
  ASSERT_TRUE(
      staleOnly.store("NVIDIA H200", "scale", "LOG2_N=14|n%16", winner(config))
          .ok());
  auto none = rt::packBundle(staleOnly, nullptr, &compiler, options);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.message().find("1 left out: their keys predate"),
            std::string::npos)
      << none.message();
  std::filesystem::remove_all(dir);
}

} // namespace
