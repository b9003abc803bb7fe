//===- JITTest.cpp - TilecJIT against the real kernels --------------------===//
//
// No GPU needed: descriptions of the registry's kernels, their keys and
// declared grids (against the harness's hand-written grids), and compiles
// through the runtime's KernelCompiler interface, in parallel and through the
// stage cache (those need ptxas and skip without it).
//
//===----------------------------------------------------------------------===//

#include "tilec/Harness/KernelHarness.h"
#include "tilec/JIT/TilecJIT.h"
#include "tilec/Kernel/KernelRegistry.h"
#include "tilec/Target/CubinAssembler.h"
#include "tilec/runtime/Autotuner.h"
#include "tilec/runtime/StageCache.h"

#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

namespace rt = tilec::rt;
namespace jit = tilec::jit;

namespace {

TEST(Describe, Matmul) {
  jit::TilecJIT compiler;
  auto description = compiler.describe("matmul");
  ASSERT_TRUE(description.ok()) << description.message();
  EXPECT_EQ(description->name, "matmul");
  EXPECT_EQ(description->configs.size(), 8u);
  std::vector<std::string> keyNames;
  for (const rt::AutotuneKeyDecl &entry : description->key)
    keyNames.push_back(entry.name);
  EXPECT_EQ(keyNames,
            (std::vector<std::string>{"M", "N", "K", "DTYPE", "ALLOW_TF32"}));
  EXPECT_EQ(description->grid,
            std::vector<std::string>{"cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)"});
  EXPECT_EQ(description->paramDefaults.at("GROUP_M"), 8);
  EXPECT_EQ(description->paramDefaults.at("ALLOW_TF32"), 0);
  EXPECT_EQ(description->typeDefaults.at("DTYPE"), "f16");

  auto softmax = compiler.describe("softmax");
  ASSERT_TRUE(softmax.ok());
  EXPECT_EQ(softmax->derivedParams.at("BLOCK_N"), "next_power_of_2(n_cols)");

  auto unknown = compiler.describe("matmull");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("unknown kernel 'matmull' (known: "),
            std::string::npos);
}

TEST(Describe, ConfigTextsAgreeWithTheCompiler) {
  for (const tilec::kernel::KernelDefinition *kernel :
       tilec::kernel::listKernels())
    for (const tilec::kernel::Config &config : kernel->getConfigs()) {
      rt::KernelConfig converted = jit::toRuntimeConfig(config);
      EXPECT_EQ(converted.str(), config.str());
      auto parsed = rt::KernelConfig::parse(config.str());
      ASSERT_TRUE(parsed.ok()) << parsed.message();
      EXPECT_EQ(*parsed, converted);
      EXPECT_EQ(jit::fromRuntimeConfig(*parsed), config);
    }
}

TEST(Describe, KeysOfTheRealKernels) {
  jit::TilecJIT compiler;
  rt::CallSpec call;
  call.sizes = {{"M", 4096}, {"N", 4096}, {"K", 4096}};
  EXPECT_EQ(*rt::computeAutotuneKey(*compiler.describe("matmul"), call),
            "M=4096,N=4096,K=4096,DTYPE=f16,ALLOW_TF32=0");
  call.sizes["M"] = 3000;
  call.types = {{"DTYPE", "f32"}};
  call.params = {{"ALLOW_TF32", 1}};
  EXPECT_EQ(*rt::computeAutotuneKey(*compiler.describe("gather_matmul"), call),
            "LOG2_M=12,N=4096,K=4096,DTYPE=f32,ALLOW_TF32=1");
  rt::CallSpec rows;
  rows.sizes = {{"n_rows", 37}, {"n_cols", 1000}};
  EXPECT_EQ(*rt::computeAutotuneKey(*compiler.describe("softmax"), rows),
            "BLOCK_N=1024");
  rt::CallSpec elements;
  elements.sizes = {{"n_elements", 100003}};
  EXPECT_EQ(*rt::computeAutotuneKey(*compiler.describe("vector_add"), elements),
            "LOG2_N=17");
}

// The description names the integer arguments with their declared
// divisibility: what a call's specialization may speak of.
TEST(Describe, IntegerArguments) {
  jit::TilecJIT compiler;
  auto matmul = compiler.describe("matmul");
  ASSERT_TRUE(matmul.ok()) << matmul.message();
  EXPECT_EQ(matmul->integerArguments,
            (std::map<std::string, int64_t>{{"K", 1},
                                            {"M", 1},
                                            {"N", 1},
                                            {"stride_am", 16},
                                            {"stride_bk", 16},
                                            {"stride_cm", 16}}));
  rt::CallSpec call;
  call.sizes = {{"n_rows", 4096}, {"n_cols", 1024}};
  auto softmax = compiler.describe("softmax");
  ASSERT_TRUE(softmax.ok()) << softmax.message();
  // n_rows sizes the grid only; it is not an argument of the kernel.
  std::string facts = rt::specializeCall(*softmax, call).str();
  EXPECT_EQ(facts.find("n_rows"), std::string::npos) << facts;
}

// The autotuner launches on the declared grid, `tilec run` on the harness's:
// they must agree for every candidate and every problem shape.
TEST(Describe, DeclaredGridsMatchTheHarness) {
  jit::TilecJIT compiler;
  for (const std::string &kernel : tilec::harness::listHarnessKernels()) {
    auto description = compiler.describe(kernel);
    ASSERT_TRUE(description.ok()) << description.message();
    for (const auto &sizes : {tilec::harness::defaultSizes(kernel),
                              tilec::harness::tailSizes(kernel)}) {
      rt::CallSpec call;
      call.sizes = sizes;
      for (const rt::KernelConfig &candidate : description->configs) {
        auto config = rt::specializeConfig(*description, candidate, call);
        ASSERT_TRUE(config.ok()) << config.message();
        auto declared = rt::evaluateGrid(*description, *config, call);
        ASSERT_TRUE(declared.ok()) << declared.message();
        auto harness =
            tilec::harness::harnessGrid(kernel, config->params, sizes);
        ASSERT_TRUE(harness.ok()) << harness.message();
        EXPECT_EQ(declared->x, harness->x) << kernel << " " << config->str();
        EXPECT_EQ(declared->y, harness->y) << kernel << " " << config->str();
        EXPECT_EQ(declared->z, harness->z) << kernel << " " << config->str();
      }
    }
  }
}

TEST(Harness, ProblemFlops) {
  EXPECT_DOUBLE_EQ(tilec::harness::problemFlops(
                       "matmul", {{"M", 4096}, {"N", 4096}, {"K", 4096}}),
                   2.0 * 4096 * 4096 * 4096);
  EXPECT_EQ(tilec::harness::problemFlops("vector_add", {{"n_elements", 10}}),
            0);
}

bool havePtxas(std::string &why) {
  auto ptxas = tilec::findPtxas();
  if (!ptxas) {
    why = llvm::toString(ptxas.takeError());
    return false;
  }
  return true;
}

nlohmann::json metadataOf(const rt::CompiledArtifact &artifact) {
  return nlohmann::json::parse(artifact.metadataJson, nullptr, false);
}

TEST(Compile, ErrorsNameTheKernelAndConfig) {
  jit::TilecJIT compiler;
  auto unknown = compiler.compile("nope", {}, "sm_90", {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("unknown kernel 'nope'"), std::string::npos);
  auto badConfig = rt::KernelConfig::parse("BLOCK_M=48,BLOCK_N=64,BLOCK_K=32");
  auto bad = compiler.compile("matmul", *badConfig, "sm_90", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("BLOCK_M"), std::string::npos) << bad.message();
}

// Candidates compile on a thread pool: compiles of different configs at once
// must give what one at a time gives.
TEST(Compile, ParallelCompilesMatchSequentialOnes) {
  std::string why;
  if (!havePtxas(why))
    GTEST_SKIP() << why;
  jit::TilecJIT compiler;
  std::vector<std::pair<std::string, std::string>> jobs = {
      {"vector_add", "BLOCK=1024,num_warps=4"},
      {"vector_add", "BLOCK=2048,num_warps=8"},
      {"softmax", "BLOCK_N=1024,num_warps=4"},
      {"matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_warps=4,num_stages=2"}};
  std::vector<rt::Result<rt::CompiledArtifact>> parallel(
      jobs.size(), rt::Status::error("not run"));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < jobs.size(); ++i)
    threads.emplace_back([&, i] {
      parallel[i] = compiler.compile(
          jobs[i].first, *rt::KernelConfig::parse(jobs[i].second), "sm_90", {});
    });
  for (std::thread &thread : threads)
    thread.join();
  for (size_t i = 0; i < jobs.size(); ++i) {
    ASSERT_TRUE(parallel[i].ok()) << parallel[i].message();
    auto sequential = compiler.compile(
        jobs[i].first, *rt::KernelConfig::parse(jobs[i].second), "sm_90", {});
    ASSERT_TRUE(sequential.ok()) << sequential.message();
    auto a = metadataOf(*parallel[i]), b = metadataOf(*sequential);
    EXPECT_EQ(a["hashes"]["ptx"], b["hashes"]["ptx"]) << jobs[i].second;
    EXPECT_EQ(parallel[i]->cubin, sequential->cubin) << jobs[i].second;
    auto metadata = rt::KernelMetadata::parse(parallel[i]->metadataJson);
    ASSERT_TRUE(metadata.ok()) << metadata.message();
    EXPECT_EQ(metadata->name, jobs[i].first);
  }
}

// What a process without a compiler relies on: the compile json names the
// cubin's stage-cache key, and the cache returns that cubin.
TEST(Compile, CompileJsonNamesTheCachedCubin) {
  std::string why;
  if (!havePtxas(why))
    GTEST_SKIP() << why;
  char dir[] = "/tmp/tilec-jit-cache-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  jit::JITOptions options;
  options.cache = std::make_shared<rt::StageCache>(dir);
  jit::TilecJIT compiler(options);
  auto config = rt::KernelConfig::parse("BLOCK=1024,num_warps=4");
  auto first = compiler.compile("vector_add", *config, "sm_90", {});
  ASSERT_TRUE(first.ok()) << first.message();
  auto json = metadataOf(*first);
  ASSERT_TRUE(json["cache"]["cubin"]["key"].is_string()) << json.dump(2);
  EXPECT_EQ(json["cache"]["cubin"]["result"], "miss");
  std::string key = json["cache"]["cubin"]["key"];
  auto cached = options.cache->lookup("cubin", key);
  ASSERT_TRUE(cached.has_value());
  EXPECT_EQ(cached->payload, first->cubin);

  auto second = compiler.compile("vector_add", *config, "sm_90", {});
  ASSERT_TRUE(second.ok()) << second.message();
  EXPECT_EQ(metadataOf(*second)["cache"]["cubin"]["result"], "hit");
  EXPECT_EQ(second->cubin, first->cubin);
  ASSERT_EQ(std::system(("rm -rf '" + std::string(dir) + "'").c_str()), 0);
}

// A call's specialization reaches the compiled kernel: its json records the
// facts that apply (integer arguments; no "equal to 1" for an argument the
// kernel declares divisible), names that are not arguments are ignored.
TEST(Compile, SpecializationReachesTheKernel) {
  std::string why;
  if (!havePtxas(why))
    GTEST_SKIP() << why;
  jit::TilecJIT compiler;
  auto config = rt::KernelConfig::parse("BLOCK_M=64,BLOCK_N=64,BLOCK_K=32");
  ASSERT_TRUE(config.ok()) << config.message();
  rt::Specialization specialization = rt::Specialization::derive(
      {{"M", 1}, {"N", 100}, {"K", 4096}, {"stride_bk", 1}, {"R", 32}});
  EXPECT_EQ(specialization.str(), "K%16,R%16,M=1,stride_bk=1");
  auto artifact = compiler.compile("matmul", *config, "sm_90", specialization);
  ASSERT_TRUE(artifact.ok()) << artifact.message();
  std::map<std::string, nlohmann::json> signature;
  nlohmann::json json = metadataOf(*artifact);
  for (const nlohmann::json &arg : json["signature"])
    signature[arg["name"].get<std::string>()] = arg;
  ASSERT_EQ(signature.size(), 9u) << json.dump(2);
  EXPECT_EQ(signature["K"].value("divisibility", 1), 16);
  EXPECT_TRUE(signature["M"].value("equal_to_one", false));
  EXPECT_EQ(signature["N"].value("divisibility", 1), 1);
  EXPECT_FALSE(signature["N"].contains("equal_to_one"));
  // Declared divisible by 16: the fact "= 1" does not apply.
  EXPECT_EQ(signature["stride_bk"].value("divisibility", 1), 16);
  EXPECT_FALSE(signature["stride_bk"].contains("equal_to_one"));

  auto plain = compiler.compile("matmul", *config, "sm_90", {});
  ASSERT_TRUE(plain.ok()) << plain.message();
  EXPECT_NE(plain->cubin, artifact->cubin);
}

} // namespace
