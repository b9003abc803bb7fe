//===- PipelineCacheTest.cpp - compileKernel through the stage cache ------===//
//
// Which stages hit after which option changes, that cached artifacts equal
// compiled ones, and that the default options stay uncached.
//
//===----------------------------------------------------------------------===//

#include "tilec/Pipeline/Pipeline.h"
#include "tilec/runtime/StageCache.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/SHA256.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <random>

using namespace tilec;

namespace {

class PipelineCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    registerPipelineDialects(registry);
    context = std::make_unique<mlir::MLIRContext>(registry);
    context->loadAllAvailableDialects();
    char pattern[] = "/tmp/tilec-pipeline-cache-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root = pattern;
    cacheDir = root + "/cache";
    auto ptxas = findPtxas();
    hasPtxas = bool(ptxas);
    if (!ptxas)
      llvm::consumeError(ptxas.takeError());
  }
  void TearDown() override {
    ASSERT_EQ(std::system(("rm -rf '" + root + "'").c_str()), 0);
  }

  std::unique_ptr<rt::StageCache> makeCache() {
    return std::make_unique<rt::StageCache>(
        cacheDir, nullptr, [](const std::string &message) {
          ADD_FAILURE() << "unexpected warning: " << message;
        });
  }

  // Compiles kernels/vector_add.ttir, parsed afresh (compiling lowers it).
  CompiledKernel compile(const CompileOptions &options) {
    auto module = mlir::parseSourceFile<mlir::ModuleOp>(
        TILEC_KERNELS_DIR "/vector_add.ttir", context.get());
    EXPECT_TRUE(module);
    auto compiled = compileKernel(*module, options);
    if (!compiled) {
      ADD_FAILURE() << llvm::toString(compiled.takeError());
      return CompiledKernel();
    }
    return std::move(*compiled);
  }

  CompileOptions cachedOptions() {
    CompileOptions options;
    options.cache = cache;
    options.skipCubin = !hasPtxas;
    return options;
  }

  // "hit"/"miss"/"-" per stage, joined: "hit hit miss miss miss".
  static std::string results(const CompiledKernel &kernel) {
    std::string text;
    for (const StageTiming &timing : kernel.timings)
      text += std::string(text.empty() ? "" : " ") +
              getCacheResultName(timing.cache);
    return text;
  }
  std::string expect(const std::string &mlirStages, const std::string &cubin) {
    return hasPtxas ? mlirStages + " " + cubin : mlirStages;
  }

  mlir::DialectRegistry registry;
  std::unique_ptr<mlir::MLIRContext> context;
  std::string root, cacheDir;
  bool hasPtxas = false;
  std::shared_ptr<rt::StageCache> cache;
};

TEST_F(PipelineCacheTest, DefaultOptionsAreUncached) {
  CompileOptions options;
  options.skipCubin = !hasPtxas;
  EXPECT_EQ(options.cache, nullptr);
  CompiledKernel kernel = compile(options);
  for (const StageTiming &timing : kernel.timings) {
    EXPECT_EQ(timing.cache, CacheResult::NotCached) << timing.stage;
    EXPECT_TRUE(timing.cacheKey.empty());
  }
  EXPECT_EQ(kernel.metadataJson().find("\"cache\""), std::string::npos);
}

TEST_F(PipelineCacheTest, WarmCompileHitsEveryStageWithEqualArtifacts) {
  CompileOptions uncached;
  uncached.skipCubin = !hasPtxas;
  CompiledKernel reference = compile(uncached);

  cache = makeCache();
  CompiledKernel cold = compile(cachedOptions());
  EXPECT_EQ(results(cold), expect("miss miss miss miss", "miss"));
  CompiledKernel warm = compile(cachedOptions());
  EXPECT_EQ(results(warm), expect("hit hit hit hit", "hit"));

  for (const CompiledKernel *kernel : {&cold, &warm}) {
    EXPECT_EQ(kernel->ttir, reference.ttir);
    EXPECT_EQ(kernel->ttgir, reference.ttgir);
    EXPECT_EQ(kernel->llir, reference.llir);
    EXPECT_EQ(kernel->ptx, reference.ptx);
    EXPECT_EQ(kernel->cubin, reference.cubin);
    EXPECT_EQ(kernel->sharedBytes, reference.sharedBytes);
    EXPECT_EQ(kernel->cubinInfo.registers, reference.cubinInfo.registers);
    EXPECT_EQ(kernel->cubinInfo.spillStoreBytes,
              reference.cubinInfo.spillStoreBytes);
    EXPECT_EQ(kernel->signature.size(), reference.signature.size());
  }
  for (size_t i = 0; i < warm.timings.size(); ++i)
    EXPECT_EQ(warm.timings[i].cacheKey, cold.timings[i].cacheKey);
  EXPECT_NE(warm.metadataJson().find("\"result\": \"hit\""), std::string::npos);
  EXPECT_EQ(cache->counters("ttir").hits, 1u);
  EXPECT_EQ(cache->counters("ttir").stores, 1u);
}

// A late option reuses the early stages.
TEST_F(PipelineCacheTest, OptionChangesRecomputeOnlyLaterStages) {
  cache = makeCache();
  compile(cachedOptions());

  CompileOptions warps = cachedOptions();
  warps.numWarps = 8;
  EXPECT_EQ(results(compile(warps)), expect("hit miss miss miss", "miss"));
  EXPECT_EQ(results(compile(warps)), expect("hit hit hit hit", "hit"));

  // num_stages keys the ttgir; here it does not change its text, so the
  // llir is found again under the unchanged ttgir hash.
  CompileOptions stages = cachedOptions();
  stages.numStages = 3;
  EXPECT_EQ(results(compile(stages)), expect("hit miss hit hit", "hit"));

  CompileOptions contraction = cachedOptions();
  contraction.ptx.fastFPContraction = false;
  EXPECT_EQ(results(compile(contraction)), expect("hit hit miss miss", "miss"));

  // The LLVM pass pipeline keys the llir; naming the default explicitly is
  // the same pipeline, so the same key.
  CompileOptions explicitDefault = cachedOptions();
  explicitDefault.ptx.llvmPasses = kKernelPassPipeline;
  EXPECT_EQ(results(compile(explicitDefault)), expect("hit hit hit hit", "hit"));
  CompileOptions o3 = cachedOptions();
  o3.ptx.llvmPasses = "default<O3>";
  CompiledKernel withO3 = compile(o3);
  EXPECT_EQ(results(withO3).substr(0, 13), "hit hit miss ");

  if (!hasPtxas)
    return;
  CompileOptions flags = cachedOptions();
  flags.cubin.extraFlags = {"-lineinfo"};
  CompiledKernel lineinfo = compile(flags);
  EXPECT_EQ(results(lineinfo), "hit hit hit hit miss");
  EXPECT_EQ(results(compile(flags)), "hit hit hit hit hit");
  CompileOptions ptxasO1 = cachedOptions();
  ptxasO1.cubin.optLevel = 1;
  EXPECT_EQ(results(compile(ptxasO1)), "hit hit hit hit miss");
}

// After a hit, a stage that misses runs on the cached text of the stage
// before it, parsed back: a cold ttgir after a cached ttir, a cold ptx after a
// cached llir.
TEST_F(PipelineCacheTest, MissAfterHitContinuesFromCachedText) {
  cache = makeCache();
  CompiledKernel first = compile(cachedOptions());
  ASSERT_TRUE(cache->clear().ok());
  cache->store("ttir", first.timings[0].cacheKey, first.ttir);
  cache->store("llir", first.timings[2].cacheKey, first.llir,
               R"({"shared_bytes":0})");
  CompiledKernel second = compile(cachedOptions());
  EXPECT_EQ(results(second), expect("hit miss hit miss", "miss"));
  EXPECT_EQ(second.ttgir, first.ttgir);
  EXPECT_EQ(second.ptx, first.ptx);
  EXPECT_EQ(second.cubin, first.cubin);
}

// An entry whose meta the pipeline cannot use is recomputed, not trusted.
TEST_F(PipelineCacheTest, UnusableMetaIsAMiss) {
  cache = makeCache();
  CompiledKernel first = compile(cachedOptions());
  cache->store("llir", first.timings[2].cacheKey, first.llir, "not json");
  EXPECT_EQ(results(compile(cachedOptions())),
            expect("hit hit miss hit", "hit"));
}

// A flipped byte in the cached cubin is caught and the cubin rebuilt.
TEST_F(PipelineCacheTest, CorruptCubinIsRebuilt) {
  if (!hasPtxas)
    GTEST_SKIP() << "no ptxas";
  cache = makeCache();
  CompiledKernel first = compile(cachedOptions());
  std::string path =
      cacheDir + "/" +
      rt::StageCache::entryPath("cubin", first.timings[4].cacheKey);
  FILE *file = std::fopen(path.c_str(), "r+b");
  ASSERT_NE(file, nullptr);
  std::fseek(file, -100, SEEK_END);
  int byte = std::fgetc(file);
  std::fseek(file, -100, SEEK_END);
  std::fputc(byte ^ 0x20, file);
  std::fclose(file);
  // The discard warns through the cache's handler; use a quiet one here.
  std::vector<std::string> warnings;
  cache = std::make_shared<rt::StageCache>(
      cacheDir, nullptr,
      [&](const std::string &message) { warnings.push_back(message); });
  CompiledKernel second = compile(cachedOptions());
  EXPECT_EQ(results(second), "hit hit hit hit miss");
  EXPECT_EQ(second.cubin, first.cubin);
  EXPECT_EQ(cache->counters("cubin").corrupt, 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("checksum mismatch"), std::string::npos);
  EXPECT_EQ(results(compile(cachedOptions())), "hit hit hit hit hit");
}

// Without a ptxas to identify, the cubin stage runs uncached and fails with
// ptxas' own error instead of hitting a cubin made by another ptxas.
TEST_F(PipelineCacheTest, UnknownPtxasIsNotCached) {
  if (!hasPtxas)
    GTEST_SKIP() << "no ptxas";
  cache = makeCache();
  compile(cachedOptions());
  CompileOptions options = cachedOptions();
  options.cubin.ptxasPath = root + "/no-ptxas";
  auto module = mlir::parseSourceFile<mlir::ModuleOp>(
      TILEC_KERNELS_DIR "/vector_add.ttir", context.get());
  ASSERT_TRUE(module);
  auto compiled = compileKernel(*module, options);
  ASSERT_FALSE(compiled);
  EXPECT_NE(llvm::toString(compiled.takeError()).find("no-ptxas"),
            std::string::npos);
}

TEST(CompilerId, NamesTheBinary) {
  std::string id = getCompilerId();
  EXPECT_EQ(id.rfind("tilec-" TILEC_VERSION " llvm-", 0), 0u) << id;
  EXPECT_TRUE(id.find(" build-id:") != std::string::npos ||
              id.find(" sha256:") != std::string::npos)
      << id;
  EXPECT_EQ(getCompilerId(), id);
}

// The runtime's SHA-256 (no LLVM) agrees with LLVM's.
TEST(Sha256, MatchesLLVM) {
  std::mt19937 random(7);
  for (size_t size : {0u, 1u, 55u, 56u, 63u, 64u, 65u, 1000u, 1u << 20}) {
    std::string data(size, '\0');
    for (char &c : data)
      c = char(random());
    std::array<uint8_t, 32> expected =
        llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(
            reinterpret_cast<const uint8_t *>(data.data()), data.size()));
    EXPECT_EQ(rt::Sha256::hash(data), expected) << size << " bytes";
    EXPECT_EQ(hashText(data), rt::toHex(expected));
  }
}

} // namespace
