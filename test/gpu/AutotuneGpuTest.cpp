//===- AutotuneGpuTest.cpp - The autotuner and the JIT on the GPU ---------===//
//
// Tunes real kernels through the JIT, checks the winner against the float64
// reference, then starts over the way a new process does: a provider with no
// compiler must find the winner in the autotune cache and its cubin in the
// stage cache. Pins bypass tuning and persist nothing. Every test skips, with
// the driver's reason, where there is no GPU.
//
//===----------------------------------------------------------------------===//

#include "GpuSuite.h"
#include "tilec/Harness/KernelHarness.h"
#include "tilec/JIT/TilecJIT.h"
#include "tilec/Kernel/KernelRegistry.h"
#include "tilec/runtime/AutotuneCache.h"
#include "tilec/runtime/Autotuner.h"
#include "tilec/runtime/KernelProvider.h"
#include "tilec/runtime/Pack.h"
#include "tilec/runtime/StageCache.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <unistd.h>

namespace rt = tilec::rt;
namespace harness = tilec::harness;

namespace {

harness::RunRequest requestOf(const std::string &kernel,
                              std::map<std::string, int64_t> sizes,
                              std::map<std::string, std::string> types = {}) {
  harness::RunRequest request;
  request.kernel = &tilec::kernel::lookupKernel(kernel)->getDescription();
  request.call.sizes = std::move(sizes);
  request.call.types = std::move(types);
  return request;
}

// The autotuner derives the strides the call leaves out, as the harness does.
const tilec::Call &callOf(const harness::RunRequest &request) {
  return request.call;
}

class AutotuneGpuTest : public tilec::test::GpuSuite<> {
protected:
  void SetUp() override {
    GpuSuite::SetUp();
    if (IsSkipped())
      return;
    folder =
        std::make_unique<tilec::test::TemporaryFolder>("tilec-autotune-gpu");
    ASSERT_FALSE(folder->path().empty());
    directory = folder->path();
    stageCache = std::make_shared<rt::StageCache>(directory + "/cache");
    cachePath = directory + "/autotune_cache.json";
  }
  void TearDown() override { folder.reset(); }

  static rt::AutotuneOptions fastOptions() {
    rt::AutotuneOptions options;
    options.benchmark.warmupMs = 1;
    options.benchmark.budgetMs = 5;
    options.progress = rt::ProgressMode::Never;
    return options;
  }

  rt::InputsFactory inputsFor(const harness::RunRequest &request) {
    return
        [request]() -> tilec::Result<std::shared_ptr<const rt::BenchmarkInputs>> {
          auto problem = harness::buildProblem(*context, request, false);
          if (!problem)
            return problem.status();
          return std::shared_ptr<const rt::BenchmarkInputs>(
              std::move(*problem));
        };
  }

  // Runs the selected kernel on a fresh problem with a reference.
  void expectCorrect(const rt::TuneResult &result,
                     const harness::RunRequest &request) {
    auto problem = harness::buildProblem(*context, request, true);
    ASSERT_TRUE(problem.ok()) << problem.message();
    auto pack = result.kernel->makeArgPack();
    ASSERT_TRUE(pack.ok()) << pack.message();
    ASSERT_TRUE((*problem)->bind(*pack).ok());
    ASSERT_TRUE(rt::launch(*result.kernel, result.grid, *pack).ok());
    ASSERT_TRUE(context->synchronize().ok());
    auto report = (*problem)->check();
    ASSERT_TRUE(report.ok()) << report.message();
    EXPECT_TRUE(report->passed)
        << result.config.str() << ": " << report->describe();
  }

  // A compiler whose stages are cached in the test's stage cache.
  std::unique_ptr<tilec::jit::TilecJIT> stageCacheCompiler() const {
    tilec::jit::JITOptions jitOptions;
    jitOptions.cache = stageCache;
    return std::make_unique<tilec::jit::TilecJIT>(jitOptions);
  }

  // Loads the autotune cache's entry of (kernel, key) on this device,
  // applies `edit` and stores it back: an entry another build left.
  void editEntry(const std::string &kernel, const std::string &key,
                 llvm::function_ref<void(rt::AutotuneEntry &)> edit) {
    rt::AutotuneCache cache(cachePath);
    ASSERT_TRUE(cache.load().ok());
    std::string device = context->properties().name;
    rt::AutotuneEntry entry = cache.entries().at(device).at(kernel).at(key);
    edit(entry);
    if (HasFatalFailure())
      return;
    ASSERT_TRUE(cache.store(device, kernel, key, entry).ok());
  }

  // A select of `request` by a process with `compiler` (null: by one
  // without), the selected kernel checked: where its config came from, its
  // cubins loaded from the stage cache, its key.
  struct Selected {
    rt::ConfigSource source = rt::ConfigSource::Pinned;
    int cachedLoads = 0;
    std::string key;
  };
  Selected selectIn(const harness::RunRequest &request,
                    rt::KernelCompiler *compiler) {
    rt::KernelProvider provider(*context, compiler, stageCache);
    rt::AutotuneCache cache(cachePath);
    EXPECT_TRUE(cache.load().ok());
    rt::Autotuner tuner(provider, cache, {}, fastOptions());
    auto result =
        compiler ? tuner.select(request.kernel->getName(), callOf(request),
                                inputsFor(request))
                 : tuner.select(request.kernel->getName(), callOf(request));
    EXPECT_TRUE(result.ok()) << result.message();
    Selected selected;
    if (result.ok()) {
      expectCorrect(*result, request);
      selected.source = result->source;
      selected.cachedLoads = provider.cachedLoadCount();
      selected.key = result->key;
    }
    return selected;
  }

  static std::string readFile(const std::string &path) {
    std::ifstream in(path);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
  }

  std::unique_ptr<tilec::test::TemporaryFolder> folder;
  std::string directory;
  std::string cachePath;
  std::shared_ptr<rt::StageCache> stageCache;
};

TEST_F(AutotuneGpuTest, TunesPersistsAndReloadsWithoutACompiler) {
  harness::RunRequest request =
      requestOf("vector_add", {{"n_elements", 1000003}});
  std::string winner;
  {
    auto compiler = stageCacheCompiler();
    rt::KernelProvider provider(*context, compiler.get(), stageCache);
    rt::AutotuneCache cache(cachePath);
    ASSERT_TRUE(cache.load().ok());
    rt::Autotuner tuner(provider, cache, {}, fastOptions());
    auto result =
        tuner.select("vector_add", callOf(request), inputsFor(request));
    ASSERT_TRUE(result.ok()) << result.message();
    EXPECT_EQ(result->source, rt::ConfigSource::Tuned);
    EXPECT_EQ(result->key, "LOG2_N=20");
    ASSERT_EQ(result->timings.size(), 4u);
    for (const rt::ConfigTiming &timing : result->timings) {
      EXPECT_EQ(timing.status, "ok") << timing.config << ": " << timing.reason;
      EXPECT_GT(timing.medianUs, 0);
      EXPECT_GE(timing.repetitions, 5);
      EXPECT_GE(timing.registers, 0);
    }
    EXPECT_TRUE(result->persistWarning.empty()) << result->persistWarning;
    winner = result->config.str();
    expectCorrect(*result, request);

    // The same call again in this process: the memo, nothing rebuilt.
    auto again = tuner.select("vector_add", callOf(request));
    ASSERT_TRUE(again.ok()) << again.message();
    EXPECT_EQ(again->source, rt::ConfigSource::Cached);
    EXPECT_EQ(again->kernel, result->kernel);
  }

  // As a new process without a compiler: everything from the two caches.
  rt::KernelProvider provider(*context, /*compiler=*/nullptr, stageCache);
  rt::AutotuneCache cache(cachePath);
  ASSERT_TRUE(cache.load().ok());
  rt::Autotuner tuner(provider, cache, {}, fastOptions());
  auto result = tuner.select("vector_add", callOf(request));
  ASSERT_TRUE(result.ok()) << result.message();
  EXPECT_EQ(result->source, rt::ConfigSource::Cached);
  EXPECT_EQ(result->config.str(), winner);
  EXPECT_EQ(provider.cachedLoadCount(), 1);
  EXPECT_EQ(provider.compileCount(), 0);
  expectCorrect(*result, request);

  // A key that was never tuned cannot be served without a compiler.
  harness::RunRequest other = requestOf("vector_add", {{"n_elements", 100}});
  auto missing = tuner.select("vector_add", callOf(other));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("no compiler to tune with"),
            std::string::npos)
      << missing.message();
}

// An autotune entry recorded by another version of tilec (before an
// upgrade) names that version's cubin, another kernel code: a process with
// a compiler tunes the call again instead of loading it, and its entry
// replaces the old one; a process without a compiler, which cannot tell,
// still answers from it. Another build of the same version (the tilec tool
// that warmed the caches up, where the library serves) is answered from.
TEST_F(AutotuneGpuTest, AWinnerOfAnotherTilecVersionIsTunedAgain) {
  harness::RunRequest request =
      requestOf("vector_add", {{"n_elements", 100003}});
  auto compiler = stageCacheCompiler();
  std::string ours = compiler->compilerId();
  std::string version = ours.substr(0, ours.find(' '));
  ASSERT_EQ(version.rfind("tilec-", 0), 0u) << ours;
  // The entry of (vector_add, key), its compiler id checked and replaced.
  auto recordAs = [&](const std::string &key, const std::string &expected,
                      const std::string &compilerId) {
    editEntry("vector_add", key, [&](rt::AutotuneEntry &entry) {
      EXPECT_EQ(entry.compilerId, expected);
      entry.compilerId = compilerId;
    });
  };
  const std::string older = "tilec-0.0.1 llvm-22.1.8 build-id:0123456789abcdef";
  const std::string sibling =
      version + " llvm-22.1.8 build-id:0123456789abcdef";
  auto select = [&](bool withCompiler) {
    return selectIn(request, withCompiler ? compiler.get() : nullptr);
  };
  std::string key = select(/*withCompiler=*/true).key;
  ASSERT_FALSE(key.empty());
  recordAs(key, ours, older);
  Selected retuned = select(/*withCompiler=*/true);
  EXPECT_NE(retuned.source, rt::ConfigSource::Cached);
  EXPECT_EQ(retuned.cachedLoads, 0) << "loaded the older version's cubin";
  // The tuning's entry replaced the older version's.
  recordAs(key, ours, sibling);
  EXPECT_EQ(select(/*withCompiler=*/true).source, rt::ConfigSource::Cached);
  recordAs(key, sibling, older);
  EXPECT_EQ(select(/*withCompiler=*/false).source, rt::ConfigSource::Cached);
}

// A winner whose cubin takes other arguments than the kernel now declares
// (a build of this version from before an argument changed, its entry kept
// in the autotune cache) is tuned again by a process with a compiler,
// instead of failing the call on the loaded cubin's signature; a process
// without one takes the entry as it is.
TEST_F(AutotuneGpuTest, AWinnerWhoseCubinTakesOtherArgumentsIsTunedAgain) {
  harness::RunRequest request =
      requestOf("vector_add", {{"n_elements", 100003}});
  auto compiler = stageCacheCompiler();
  auto select = [&](bool withCompiler) {
    return selectIn(request, withCompiler ? compiler.get() : nullptr);
  };
  std::string key = select(/*withCompiler=*/true).key;
  ASSERT_FALSE(key.empty());
  // The entry's metadata says its cubin's first argument has another name.
  editEntry("vector_add", key, [](rt::AutotuneEntry &entry) {
    const std::string from = "\"x_ptr\"", to = "\"a_ptr\"";
    size_t at = entry.metadataJson.find(from);
    ASSERT_NE(at, std::string::npos) << entry.metadataJson;
    entry.metadataJson.replace(at, from.size(), to);
  });
  EXPECT_EQ(select(/*withCompiler=*/false).source, rt::ConfigSource::Cached);
  EXPECT_NE(select(/*withCompiler=*/true).source, rt::ConfigSource::Cached);
  // The tuning's entry replaced it: answered from again.
  EXPECT_EQ(select(/*withCompiler=*/true).source, rt::ConfigSource::Cached);
}

// Tunes a few calls, packs their winners, then runs every call as a deployed
// program does: no compiler, no stage cache, no autotune cache, the bundle
// alone.
TEST_F(AutotuneGpuTest, ABundleServesEveryWinnerAlone) {
  std::vector<harness::RunRequest> requests = {
      requestOf("vector_add", {{"n_elements", 1000003}}),
      requestOf("vector_add", {{"n_elements", 4096}}),
      requestOf("matmul", {{"M", 320}, {"N", 256}, {"K", 192}},
                {{"DTYPE", "f16"}}),
      requestOf("matmul", {{"M", 203}, {"N", 176}, {"K", 208}},
                {{"DTYPE", "bf16"}})};
  std::vector<std::string> winners;
  {
    auto compiler = stageCacheCompiler();
    rt::KernelProvider provider(*context, compiler.get(), stageCache);
    rt::AutotuneCache cache(cachePath);
    ASSERT_TRUE(cache.load().ok());
    rt::Autotuner tuner(provider, cache, {}, fastOptions());
    for (const harness::RunRequest &request : requests) {
      auto result = tuner.select(request.kernel->getName(), callOf(request),
                                 inputsFor(request));
      ASSERT_TRUE(result.ok()) << result.message();
      winners.push_back(result->config.str());
    }
  }
  rt::AutotuneCache tuned(cachePath);
  ASSERT_TRUE(tuned.load().ok());
  auto packed = rt::packBundle(tuned, stageCache.get(), nullptr, {});
  ASSERT_TRUE(packed.ok()) << packed.message();
  EXPECT_EQ(packed->winners.size(), requests.size());
  auto bundle = rt::KernelBundle::decode(
      rt::KernelBundle::encode(packed->contents), "tuned.bundle");
  ASSERT_TRUE(bundle.ok()) << bundle.message();

  rt::KernelProvider provider(*context, /*compiler=*/nullptr);
  ASSERT_TRUE(provider.setBundle(*bundle, rt::BundlePolicy::Strict).ok());
  rt::AutotuneCache none(directory + "/never-written.json");
  rt::Autotuner tuner(provider, none, {}, fastOptions());
  for (size_t i = 0; i < requests.size(); ++i) {
    SCOPED_TRACE(requests[i].kernel->getName());
    auto result =
        tuner.select(requests[i].kernel->getName(), callOf(requests[i]));
    ASSERT_TRUE(result.ok()) << result.message();
    EXPECT_EQ(result->source, rt::ConfigSource::Bundled);
    EXPECT_EQ(result->config.str(), winners[i]);
    EXPECT_GT(result->medianUs, 0);
    expectCorrect(*result, requests[i]);
    // Again in this process: the memo, which still says where it came from.
    auto again =
        tuner.select(requests[i].kernel->getName(), callOf(requests[i]));
    ASSERT_TRUE(again.ok()) << again.message();
    EXPECT_EQ(again->source, rt::ConfigSource::Bundled);
    EXPECT_EQ(again->medianUs, result->medianUs);
  }
  EXPECT_EQ(provider.compileCount(), 0);
  EXPECT_EQ(provider.cachedLoadCount(), 0);
  EXPECT_EQ(provider.bundleLoadCount(), int(requests.size()));
  EXPECT_NE(::access((directory + "/never-written.json").c_str(), F_OK), 0);

  // A call the bundle lacks is an error naming the kernel and the key.
  harness::RunRequest other = requestOf("vector_add", {{"n_elements", 100}});
  auto missing = tuner.select("vector_add", callOf(other));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("no winner for vector_add LOG2_N=7"),
            std::string::npos)
      << missing.message();
  EXPECT_NE(missing.message().find("bundle tuned.bundle"), std::string::npos);
  // So is a config it lacks, asked for directly.
  auto config = tilec::Config::parse("BLOCK=128,num_warps=1");
  ASSERT_TRUE(config.ok());
  auto direct = provider.get("vector_add", *config);
  ASSERT_FALSE(direct.ok());
  EXPECT_NE(direct.message().find("is not in bundle tuned.bundle"),
            std::string::npos)
      << direct.message();

  // With the fallback allowed and a compiler linked, it is tuned instead.
  auto compiler = stageCacheCompiler();
  rt::KernelProvider fallback(*context, compiler.get(), stageCache);
  ASSERT_TRUE(fallback.setBundle(*bundle, rt::BundlePolicy::FallBack).ok());
  rt::AutotuneCache fresh(directory + "/fallback.json");
  rt::Autotuner fallbackTuner(fallback, fresh, {}, fastOptions());
  auto tuned100 =
      fallbackTuner.select("vector_add", callOf(other), inputsFor(other));
  ASSERT_TRUE(tuned100.ok()) << tuned100.message();
  EXPECT_EQ(tuned100->source, rt::ConfigSource::Tuned);
  expectCorrect(*tuned100, other);
}

TEST_F(AutotuneGpuTest, MatmulWinnersAreCorrect) {
  auto compiler = stageCacheCompiler();
  rt::KernelProvider provider(*context, compiler.get(), stageCache);
  rt::AutotuneCache cache(cachePath);
  ASSERT_TRUE(cache.load().ok());
  rt::Autotuner tuner(provider, cache, {}, fastOptions());
  for (const char *dtype : {"f16", "f32"}) {
    harness::RunRequest request = requestOf(
        "matmul", {{"M", 320}, {"N", 256}, {"K", 192}}, {{"DTYPE", dtype}});
    auto result = tuner.select("matmul", callOf(request), inputsFor(request));
    ASSERT_TRUE(result.ok()) << result.message();
    EXPECT_EQ(result->source, rt::ConfigSource::Tuned);
    EXPECT_EQ(result->config.types.at("DTYPE"), dtype);
    // The sizes and row strides are multiples of 16, the inner strides 1:
    // the key and the kernel say so.
    EXPECT_EQ(result->key.substr(result->key.find('|')),
              "|K%16,M%16,N%16,stride_am%16,stride_bk%16,stride_cm%16,"
              "stride_ak=1,stride_bn=1,stride_cn=1")
        << result->key;
    for (const tilec::KernelArg &arg : result->kernel->metadata().signature)
      if (arg.name == "K")
        EXPECT_EQ(arg.divisibility, 16);
    EXPECT_GT(result->flops, 0);
    int ran = 0;
    for (const rt::ConfigTiming &timing : result->timings)
      ran += timing.status == "ok";
    EXPECT_GT(ran, 0);
    expectCorrect(*result, request);
  }
  rt::AutotuneCache reread(cachePath);
  ASSERT_TRUE(reread.load().ok());
  EXPECT_EQ(reread.entries().at(context->properties().name).at("matmul").size(),
            2u);
}

// With more candidates than the screening keeps, every candidate is timed
// briefly, the fastest two again in full, and the winner is one of those
// two; the others are recorded "screened" with their short measurement.
TEST_F(AutotuneGpuTest, ScreeningTimesOnlyTheFastestInFull) {
  tilec::jit::TilecJIT compiler;
  rt::KernelProvider provider(*context, &compiler);
  rt::AutotuneCache cache(cachePath);
  rt::AutotuneOptions options = fastOptions();
  options.screening.keep = 2;
  options.screening.budgetMs = 1;
  options.screening.within = 10; // keep the fastest two, however far
  rt::Autotuner tuner(provider, cache, {}, options);
  harness::RunRequest request =
      requestOf("matmul", {{"M", 320}, {"N", 256}, {"K", 192}});
  auto result = tuner.select("matmul", callOf(request), inputsFor(request));
  ASSERT_TRUE(result.ok()) << result.message();
  int full = 0, screened = 0;
  for (const rt::ConfigTiming &timing : result->timings) {
    if (timing.status == "ok") {
      ++full;
    } else if (timing.status == "screened") {
      ++screened;
      EXPECT_GT(timing.medianUs, 0) << timing.config;
      EXPECT_NE(timing.reason.find("the fastest on the screening budget"),
                std::string::npos)
          << timing.reason;
    }
  }
  ASSERT_GT(screened, 0) << "matmul has more than two candidates";
  EXPECT_EQ(full, 2);
  EXPECT_EQ(result->timings[result->winnerIndex].status, "ok");
  expectCorrect(*result, request);
  // The cache keeps the screened candidates' short measurements.
  rt::AutotuneCache reread(cachePath);
  ASSERT_TRUE(reread.load().ok());
  const rt::AutotuneEntry &entry = reread.entries()
                                       .at(context->properties().name)
                                       .at("matmul")
                                       .begin()
                                       ->second;
  int rereadScreened = 0;
  for (const rt::ConfigTiming &timing : entry.timings)
    if (timing.status == "screened" && timing.medianUs > 0)
      ++rereadScreened;
  EXPECT_EQ(rereadScreened, screened);
}

// The JIT, counting its compiles.
class CountingCompiler final : public rt::KernelCompiler {
public:
  tilec::Result<rt::CompiledArtifact>
  compile(const std::string &kernel, const tilec::Config &config,
          const std::string &target,
          const tilec::Specialization &specialization) override {
    ++compiles;
    return jit.compile(kernel, config, target, specialization);
  }
  tilec::Result<tilec::KernelDescription>
  describe(const std::string &kernel) override {
    return jit.describe(kernel);
  }
  tilec::jit::TilecJIT jit;
  std::atomic<int> compiles{0};
};

// Two tunings whose candidates were queued ahead: each candidate compiles
// once, on the provider's workers or by its tuning, never twice.
TEST_F(AutotuneGpuTest, CompilesQueuedAheadServeTheTunings) {
  CountingCompiler compiler;
  rt::KernelProvider provider(*context, &compiler);
  rt::AutotuneCache cache(cachePath);
  rt::Autotuner tuner(provider, cache, {}, fastOptions());
  std::vector<harness::RunRequest> requests;
  std::vector<std::pair<std::string, tilec::Call>> calls;
  for (const char *dtype : {"f16", "f32"}) {
    requests.push_back(requestOf("matmul", {{"M", 200}, {"N", 136}, {"K", 72}},
                                 {{"DTYPE", dtype}}));
    calls.emplace_back("matmul", callOf(requests.back()));
  }
  size_t queued = tuner.compileAhead(calls);
  EXPECT_GT(queued, 2u);
  EXPECT_EQ(tuner.compileAhead(calls), 0u) << "queued already";
  for (const harness::RunRequest &request : requests) {
    auto result = tuner.select("matmul", callOf(request), inputsFor(request));
    ASSERT_TRUE(result.ok()) << result.message();
    EXPECT_EQ(result->source, rt::ConfigSource::Tuned);
    expectCorrect(*result, request);
  }
  EXPECT_EQ(compiler.compiles.load(), int(queued));
  EXPECT_EQ(tuner.compileAhead(calls), 0u) << "chosen: nothing to tune";
}

// A second key whose candidates compile to the same cubins as the first's
// (the same specialization) tunes on the kernels the first loaded: nothing
// is compiled or loaded again, and its winner is right.
TEST_F(AutotuneGpuTest, ASecondKeyTunesOnTheKernelsTheFirstLoaded) {
  CountingCompiler compiler;
  rt::KernelProvider provider(*context, &compiler);
  rt::AutotuneCache cache(cachePath);
  rt::Autotuner tuner(provider, cache, {}, fastOptions());
  harness::RunRequest first =
      requestOf("matmul", {{"M", 320}, {"N", 256}, {"K", 192}});
  harness::RunRequest second =
      requestOf("matmul", {{"M", 640}, {"N", 256}, {"K", 192}});
  auto tuned = tuner.select("matmul", callOf(first), inputsFor(first));
  ASSERT_TRUE(tuned.ok()) << tuned.message();
  int compiles = compiler.compiles.load();
  EXPECT_GT(compiles, 1);
  auto again = tuner.select("matmul", callOf(second), inputsFor(second));
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->source, rt::ConfigSource::Tuned);
  EXPECT_NE(again->key, tuned->key);
  EXPECT_EQ(compiler.compiles.load(), compiles) << "the second key compiled";
  expectCorrect(*again, second);
}

TEST_F(AutotuneGpuTest, SoftmaxDerivesBlockN) {
  tilec::jit::TilecJIT compiler;
  rt::KernelProvider provider(*context, &compiler);
  rt::AutotuneCache cache(cachePath);
  rt::Autotuner tuner(provider, cache, {}, fastOptions());
  harness::RunRequest request =
      requestOf("softmax", {{"n_rows", 37}, {"n_cols", 1000}});
  auto result = tuner.select("softmax", callOf(request), inputsFor(request));
  ASSERT_TRUE(result.ok()) << result.message();
  EXPECT_EQ(result->config.params.at("BLOCK_N"), 1024);
  EXPECT_EQ(result->grid.x, 37u);
  expectCorrect(*result, request);
}

TEST_F(AutotuneGpuTest, PinnedConfigSkipsTuningAndPersistsNothing) {
  tilec::jit::TilecJIT compiler;
  rt::KernelProvider provider(*context, &compiler);
  rt::AutotuneCache cache(cachePath);
  auto pins = rt::PinnedConfigs::parseSpec(
      "matmul=BLOCK_M=32,BLOCK_N=64,BLOCK_K=32,num_warps=2,num_stages=1");
  ASSERT_TRUE(pins.ok());
  rt::Autotuner tuner(provider, cache, *pins, fastOptions());
  harness::RunRequest request =
      requestOf("matmul", {{"M", 203}, {"N", 176}, {"K", 208}});
  bool inputsBuilt = false;
  auto result = tuner.select(
      "matmul", callOf(request),
      [&]() -> tilec::Result<std::shared_ptr<const rt::BenchmarkInputs>> {
        inputsBuilt = true;
        return tilec::Status::error("a pinned config must not benchmark");
      });
  ASSERT_TRUE(result.ok()) << result.message();
  EXPECT_EQ(result->source, rt::ConfigSource::Pinned);
  EXPECT_EQ(result->config.params.at("BLOCK_M"), 32);
  EXPECT_EQ(result->config.types.at("DTYPE"), "f16");
  EXPECT_FALSE(inputsBuilt);
  EXPECT_EQ(readFile(cachePath), "");
  expectCorrect(*result, request);
}

TEST_F(AutotuneGpuTest, RepetitionsStopAtTheTargetError) {
  // The same candidates timed to the budget's cap (targetError 0) and to a
  // median error of 0.5%: the second takes fewer repetitions where the
  // kernel's time is steady, at least minReps, and lands near the first.
  // 2^25 elements: about 0.1 ms a launch, far above the events'
  // resolution, so that the spread is the kernel's.
  harness::RunRequest request =
      requestOf("vector_add", {{"n_elements", int64_t(1) << 25}});
  auto compiler = stageCacheCompiler();
  rt::KernelProvider provider(*context, compiler.get(), stageCache);
  rt::AutotuneCache cache(cachePath);
  ASSERT_TRUE(cache.load().ok());
  auto timingsWith = [&](double targetError) {
    rt::AutotuneOptions options = fastOptions();
    options.benchmark.budgetMs = 40;
    options.benchmark.targetError = targetError;
    options.screening.keep = 0;
    options.force = true;
    options.persist = false;
    rt::Autotuner tuner(provider, cache, {}, options);
    auto result =
        tuner.select("vector_add", callOf(request), inputsFor(request));
    EXPECT_TRUE(result.ok()) << result.message();
    return result.ok() ? result->timings : std::vector<rt::ConfigTiming>{};
  };
  std::vector<rt::ConfigTiming> capped = timingsWith(0);
  std::vector<rt::ConfigTiming> precise = timingsWith(0.005);
  ASSERT_EQ(capped.size(), precise.size());
  int fewer = 0;
  for (size_t i = 0; i < capped.size(); ++i) {
    SCOPED_TRACE(capped[i].config);
    ASSERT_EQ(capped[i].status, "ok") << capped[i].reason;
    ASSERT_EQ(precise[i].status, "ok") << precise[i].reason;
    EXPECT_EQ(capped[i].repetitions, rt::BenchmarkOptions().maxReps);
    EXPECT_GE(precise[i].repetitions, rt::kRepetitionBatch);
    EXPECT_LE(precise[i].repetitions, capped[i].repetitions);
    fewer += precise[i].repetitions < capped[i].repetitions;
    EXPECT_NEAR(precise[i].medianUs / capped[i].medianUs, 1.0, 0.1)
        << precise[i].medianUs << " us against " << capped[i].medianUs;
  }
  EXPECT_GT(fewer, 0);
}

TEST_F(AutotuneGpuTest, BenchmarkerFlushesTwiceTheL2) {
  auto benchmarker = rt::Benchmarker::create(*context);
  ASSERT_TRUE(benchmarker.ok()) << benchmarker.message();
  int l2 = context->properties().l2CacheBytes;
  if (l2 > 0) {
    EXPECT_EQ(benchmarker->flushBytes(), 2 * static_cast<size_t>(l2));
  }
}

} // namespace
