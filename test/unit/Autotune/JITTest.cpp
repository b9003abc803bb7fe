//===- JITTest.cpp - TilecJIT against the real kernels --------------------===//
//
// No GPU needed: the registry's kernels as the JIT describes them (their
// keys, strides and grids, each with a reference), and compiles
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
#include <fstream>
#include <iterator>
#include <thread>

namespace rt = tilec::rt;
namespace jit = tilec::jit;

namespace {

TEST(Describe, Matmul) {
  jit::TilecJIT compiler;
  auto description = compiler.describe("matmul");
  ASSERT_TRUE(description.ok()) << description.message();
  EXPECT_EQ(description->getName(), "matmul");
  EXPECT_EQ(description->getConfigs().size(), 18u);
  std::vector<std::string> keyNames;
  for (const tilec::AutotuneKeyEntry &entry : description->getAutotuneKey())
    keyNames.push_back(entry.name);
  EXPECT_EQ(keyNames,
            (std::vector<std::string>{"M", "N", "K", "DTYPE", "ALLOW_TF32"}));
  EXPECT_EQ(description->getGrid(),
            std::vector<std::string>{"cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)"});

  auto unknown = compiler.describe("matmull");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("unknown kernel 'matmull' (known: "),
            std::string::npos);
}

// The runtime gets the kernel's own description: nothing is converted.
TEST(Describe, IsTheKernelsOwnDescription) {
  jit::TilecJIT compiler;
  for (const tilec::kernel::KernelDefinition *kernel :
       tilec::kernel::listKernels()) {
    auto description = compiler.describe(kernel->getName());
    ASSERT_TRUE(description.ok()) << description.message();
    EXPECT_EQ(description->toJson(), kernel->getDescription().toJson());
  }
}

TEST(Describe, KeysOfTheRealKernels) {
  jit::TilecJIT compiler;
  tilec::Call call;
  call.sizes = {{"M", 4096}, {"N", 4096}, {"K", 4096}};
  EXPECT_EQ(*compiler.describe("matmul")->evaluateAutotuneKey(call),
            "M=4096,N=4096,K=4096,DTYPE=f16,ALLOW_TF32=0");
  call.sizes["M"] = 3000;
  call.types = {{"DTYPE", "f32"}};
  call.params = {{"ALLOW_TF32", 1}};
  EXPECT_EQ(*compiler.describe("gather_matmul")->evaluateAutotuneKey(call),
            "LOG2_M=12,N=4096,K=4096,DTYPE=f32,ALLOW_TF32=1");
  tilec::Call rows;
  rows.sizes = {{"n_rows", 37}, {"n_cols", 1000}};
  EXPECT_EQ(*compiler.describe("softmax")->evaluateAutotuneKey(rows),
            "BLOCK_N=1024");
  tilec::Call elements;
  elements.sizes = {{"n_elements", 100003}};
  EXPECT_EQ(*compiler.describe("vector_add")->evaluateAutotuneKey(elements),
            "LOG2_N=17");
}

// The matmuls take all six strides with no declared divisibility: a call's
// values specialize them, so a dense call gets the facts a kernel with unit
// inner strides was once declared with.
TEST(Describe, StridesAreSpecializedByTheCall) {
  jit::TilecJIT compiler;
  auto matmul = compiler.describe("matmul");
  ASSERT_TRUE(matmul.ok()) << matmul.message();
  for (const char *stride : {"stride_am", "stride_ak", "stride_bk", "stride_bn",
                             "stride_cm", "stride_cn"})
    EXPECT_EQ(matmul->getIntegerArguments().at(stride), 1) << stride;
  tilec::Call call;
  call.sizes = {{"M", 4096}, {"N", 4096}, {"K", 4096}};
  EXPECT_EQ(matmul->specializationOf(call).str(),
            "K%16,M%16,N%16,stride_am%16,stride_bk%16,stride_cm%16,"
            "stride_ak=1,stride_bn=1,stride_cn=1");
  // Sizes that are multiples of 8 and a transposed B: what the values have.
  call.sizes = {{"M", 1000},
                {"N", 1000},
                {"K", 1000},
                {"stride_bk", 1},
                {"stride_bn", 1000}};
  EXPECT_EQ(matmul->specializationOf(call).str(),
            "K%8,M%8,N%8,stride_am%8,stride_bn%8,stride_cm%8,"
            "stride_ak=1,stride_bk=1,stride_cn=1");
  // Odd and even sizes: the even ones (N = 2222 = 2 x 1111) say so.
  call.sizes = {{"M", 1111}, {"N", 2222}, {"K", 3333}};
  EXPECT_EQ(matmul->specializationOf(call).str(),
            "N%2,stride_bk%2,stride_cm%2,stride_ak=1,stride_bn=1,"
            "stride_cn=1");

  tilec::Call rows;
  rows.sizes = {{"n_rows", 4096}, {"n_cols", 1024}};
  auto softmax = compiler.describe("softmax");
  ASSERT_TRUE(softmax.ok()) << softmax.message();
  // n_rows sizes the grid only; it is not an argument of the kernel.
  std::string facts = softmax->specializationOf(rows).str();
  EXPECT_EQ(facts.find("n_rows"), std::string::npos) << facts;
}

// Adding a kernel is its file plus its reference: every kernel has both,
// test sizes, and arguments and a grid for every candidate on them.
TEST(Describe, EveryKernelHasAReferenceAndRunsOnItsTestSizes) {
  std::vector<std::string> kernels;
  for (const tilec::kernel::KernelDefinition *kernel :
       tilec::kernel::listKernels())
    kernels.push_back(kernel->getName());
  EXPECT_EQ(tilec::harness::listReferenceKernels(), kernels);
  for (const tilec::kernel::KernelDefinition *kernel :
       tilec::kernel::listKernels()) {
    const tilec::KernelDescription &description = kernel->getDescription();
    EXPECT_NE(tilec::harness::findReference(kernel->getName()), nullptr);
    for (bool tails : {false, true}) {
      tilec::harness::RunRequest request =
          tilec::harness::requestFor(description, tails);
      EXPECT_FALSE(request.call.sizes.empty()) << kernel->getName();
      ASSERT_TRUE(description.evaluateIntegerArguments(request.call).ok());
      for (const tilec::Config &candidate : description.getConfigs()) {
        auto config = description.configForCall(candidate, request.call);
        ASSERT_TRUE(config.ok()) << config.message();
        auto grid = description.evaluateGrid(*config, request.call);
        ASSERT_TRUE(grid.ok()) << grid.message();
        EXPECT_GT(grid->x, 0u) << kernel->getName() << " " << config->str();
      }
    }
  }
}

// Each reference builds its problem on the kernel's test sizes on the host,
// the float64 expectation included (the GPU suites run them against the
// kernels; a reference that cannot build its own test problem would fail
// there first): the output and every pointer argument have a tensor, and
// the expectation covers the output.
TEST(Describe, EveryReferenceBuildsItsTestProblem) {
  for (const tilec::kernel::KernelDefinition *kernel :
       tilec::kernel::listKernels()) {
    const tilec::KernelDescription &description = kernel->getDescription();
    tilec::harness::ReferenceFn reference =
        tilec::harness::findReference(kernel->getName());
    ASSERT_NE(reference, nullptr) << kernel->getName();
    for (bool tails : {false, true}) {
      SCOPED_TRACE(kernel->getName() + (tails ? " (tails)" : ""));
      tilec::harness::RunRequest request =
          tilec::harness::requestFor(description, tails);
      auto integers = description.evaluateIntegerArguments(request.call);
      ASSERT_TRUE(integers.ok()) << integers.message();
      std::map<std::string, int64_t> arguments(integers->begin(),
                                               integers->end());
      tilec::harness::Random rng(1);
      tilec::harness::ReferenceRequest referenceRequest{
          description, request.call, arguments, /*withReference=*/true, rng};
      auto problem = reference(referenceRequest);
      ASSERT_TRUE(problem.ok()) << problem.message();
      for (const tilec::ArgumentDecl &argument : description.getSignature())
        if (argument.type.rfind("ptr<", 0) == 0)
          EXPECT_TRUE(problem->tensors.count(argument.name)) << argument.name;
      auto output = problem->tensors.find(problem->output);
      ASSERT_NE(output, problem->tensors.end()) << problem->output;
      EXPECT_EQ(problem->expected.size(), output->second.size());
    }
  }
}

// A strided convolution's calls (V = 8 offsets of a 2^3 kernel, X of NI
// rows) and a non-cubic window's get references too (random maps of their
// shape where no oracle's map is): what `tilec warmup` tunes a recorded
// layer's calls on and `tilec-replay` checks them against.
TEST(Describe, ReferencesOfStridedConvolutionCalls) {
  struct Case {
    const char *kernel;
    std::map<std::string, int64_t> sizes;
  };
  for (const Case &c :
       {Case{"sparse_conv_fwd",
             {{"N", 2000}, {"NI", 5000}, {"V", 8}, {"CI", 32}, {"CO", 48}}},
        Case{"sparse_conv_fwd",
             {{"N", 3000}, {"V", 3}, {"CI", 16}, {"CO", 16}}},
        Case{"neighbour_keys", {{"N", 3000}, {"KX", 2}, {"KY", 2}, {"KZ", 2}}},
        Case{"neighbour_keys", {{"N", 3000}, {"KX", 1}, {"KY", 3}, {"KZ", 3}}},
        Case{"voxel_neighbours",
             {{"N", 3000},
              {"LOG2_T", 13},
              {"KX", 3},
              {"KY", 1},
              {"KZ", 5},
              {"DX", 1},
              {"DY", 1},
              {"DZ", 2}}},
        Case{"block_offsets", {{"N", 3000}, {"V", 8}}},
        Case{"sparse_conv_wgrad",
             {{"N", 3000},
              {"V", 8},
              {"CI", 32},
              {"CO", 32},
              {"SPLITS", 2},
              {"SPLIT_PAIRS", 2000}}}}) {
    SCOPED_TRACE(c.kernel);
    const tilec::KernelDescription &description =
        tilec::kernel::lookupKernel(c.kernel)->getDescription();
    tilec::Call call;
    call.sizes = c.sizes;
    if (std::string(c.kernel) == "sparse_conv_fwd")
      call.params = {{"BLOCK_M", 64}};
    auto integers = description.evaluateIntegerArguments(call);
    ASSERT_TRUE(integers.ok()) << integers.message();
    std::map<std::string, int64_t> arguments(integers->begin(),
                                             integers->end());
    tilec::harness::Random rng(3);
    tilec::harness::ReferenceRequest request{description, call, arguments,
                                             /*withReference=*/true, rng};
    auto problem = tilec::harness::findReference(c.kernel)(request);
    ASSERT_TRUE(problem.ok()) << problem.message();
    auto output = problem->tensors.find(problem->output);
    ASSERT_NE(output, problem->tensors.end());
    EXPECT_EQ(problem->expected.size(), output->second.size());
    if (c.sizes.count("NI"))
      EXPECT_EQ(problem->tensors.at("x_ptr").size(),
                size_t((c.sizes.at("NI") - 1) * 32 + 32));
  }
}

TEST(Describe, Flops) {
  jit::TilecJIT compiler;
  tilec::Call call;
  call.sizes = {{"M", 4096}, {"N", 4096}, {"K", 4096}};
  EXPECT_DOUBLE_EQ(*compiler.describe("matmul")->evaluateFlops(call),
                   2.0 * 4096 * 4096 * 4096);
  tilec::Call elements;
  elements.sizes = {{"n_elements", 10}};
  EXPECT_EQ(*compiler.describe("vector_add")->evaluateFlops(elements), 0);
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
  return nlohmann::json::parse(artifact.metadata.toJson(), nullptr, false);
}

TEST(Compile, ErrorsNameTheKernelAndConfig) {
  jit::TilecJIT compiler;
  auto unknown = compiler.compile("nope", {}, "sm_90", {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("unknown kernel 'nope'"), std::string::npos);
  auto badConfig = tilec::Config::parse("BLOCK_M=48,BLOCK_N=64,BLOCK_K=32");
  auto bad = compiler.compile("matmul", *badConfig, "sm_90", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("BLOCK_M"), std::string::npos) << bad.message();
  EXPECT_NE(bad.status().kind(), tilec::ErrorKind::Resources);
}

// A config whose rings need more shared memory than the target has stops at
// the ttgir stage, before ptxas (none is needed here), as a Resources error
// that the tuner prunes; the message names the bytes and the limit.
TEST(Compile, ConfigPastSharedMemoryIsAResourcesError) {
  jit::TilecJIT compiler;
  // Five stages of 256x64 and 64x256 f16 tiles, 320 KB, and the TMA ring's
  // five 8-byte mbarriers; sm_90a has 227 KB.
  auto config = tilec::Config::parse("BLOCK_M=256,BLOCK_N=256,BLOCK_K=64,"
                                     "DTYPE=f16,num_warps=8,num_stages=5");
  ASSERT_TRUE(config.ok()) << config.message();
  // Aligned rows: the loads become copies into rings.
  tilec::Specialization aligned =
      tilec::Specialization::derive({{"M", 4096},
                                     {"N", 4096},
                                     {"K", 4096},
                                     {"stride_am", 4096},
                                     {"stride_ak", 1},
                                     {"stride_bk", 4096},
                                     {"stride_bn", 1},
                                     {"stride_cm", 4096},
                                     {"stride_cn", 1}});
  auto artifact = compiler.compile("matmul", *config, "sm_90a", aligned);
  ASSERT_FALSE(artifact.ok());
  EXPECT_EQ(artifact.status().kind(), tilec::ErrorKind::Resources)
      << artifact.message();
  EXPECT_NE(artifact.message().find("stage ttgir failed"), std::string::npos)
      << artifact.message();
  EXPECT_NE(artifact.message().find("needs 327720 B of shared memory in all; "
                                    "a block on sm_90a has at most 232448 B"),
            std::string::npos)
      << artifact.message();
  // The first line says why (a tuner's table shows it), and no longer
  // points at diagnostics that were never printed.
  std::string firstLine =
      artifact.message().substr(0, artifact.message().find('\n'));
  EXPECT_NE(firstLine.find("stage ttgir failed: "), std::string::npos)
      << firstLine;
  EXPECT_NE(firstLine.find("B of shared memory"), std::string::npos)
      << firstLine;
  EXPECT_EQ(artifact.message().find("diagnostics above"), std::string::npos)
      << artifact.message();
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
  std::vector<tilec::Result<rt::CompiledArtifact>> parallel(
      jobs.size(), tilec::Status::error("not run"));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < jobs.size(); ++i)
    threads.emplace_back([&, i] {
      parallel[i] = compiler.compile(
          jobs[i].first, *tilec::Config::parse(jobs[i].second), "sm_90", {});
    });
  for (std::thread &thread : threads)
    thread.join();
  for (size_t i = 0; i < jobs.size(); ++i) {
    ASSERT_TRUE(parallel[i].ok()) << parallel[i].message();
    auto sequential = compiler.compile(
        jobs[i].first, *tilec::Config::parse(jobs[i].second), "sm_90", {});
    ASSERT_TRUE(sequential.ok()) << sequential.message();
    auto a = metadataOf(*parallel[i]), b = metadataOf(*sequential);
    EXPECT_EQ(a["hashes"]["ptx"], b["hashes"]["ptx"]) << jobs[i].second;
    EXPECT_EQ(parallel[i]->cubin, sequential->cubin) << jobs[i].second;
    EXPECT_EQ(parallel[i]->metadata.name, jobs[i].first);
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
  auto config = tilec::Config::parse("BLOCK=1024,num_warps=4");
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
// facts that apply (integer arguments, strides included: a unit stride is a
// constant), names that are not arguments are ignored.
TEST(Compile, SpecializationReachesTheKernel) {
  std::string why;
  if (!havePtxas(why))
    GTEST_SKIP() << why;
  jit::TilecJIT compiler;
  auto config = tilec::Config::parse("BLOCK_M=64,BLOCK_N=64,BLOCK_K=32");
  ASSERT_TRUE(config.ok()) << config.message();
  tilec::Specialization specialization = tilec::Specialization::derive(
      {{"M", 1}, {"N", 100}, {"K", 4096}, {"stride_bk", 1}, {"R", 32}});
  EXPECT_EQ(specialization.str(), "K%16,R%16,M=1,stride_bk=1");
  auto artifact = compiler.compile("matmul", *config, "sm_90", specialization);
  ASSERT_TRUE(artifact.ok()) << artifact.message();
  std::map<std::string, nlohmann::json> signature;
  nlohmann::json json = metadataOf(*artifact);
  for (const nlohmann::json &arg : json["signature"])
    signature[arg["name"].get<std::string>()] = arg;
  ASSERT_EQ(signature.size(), 12u) << json.dump(2);
  EXPECT_EQ(signature["K"].value("divisibility", 1), 16);
  EXPECT_TRUE(signature["M"].value("equal_to_one", false));
  EXPECT_EQ(signature["N"].value("divisibility", 1), 1);
  EXPECT_FALSE(signature["N"].contains("equal_to_one"));
  // No divisibility is declared on the strides: the call's "= 1" applies.
  EXPECT_TRUE(signature["stride_bk"].value("equal_to_one", false));
  EXPECT_EQ(signature["stride_am"].value("divisibility", 1), 1);
  EXPECT_FALSE(signature["stride_am"].contains("equal_to_one"));
  // A pointer keeps its declared alignment.
  EXPECT_EQ(signature["a_ptr"].value("divisibility", 1), 16);

  auto plain = compiler.compile("matmul", *config, "sm_90", {});
  ASSERT_TRUE(plain.ok()) << plain.message();
  EXPECT_NE(plain->cubin, artifact->cubin);
}

} // namespace

// TILEC_DUMP_DIR reaches the compiles of the JIT (what tune, warmup, run and
// Python compile through): every stage under <kernel>-<id>, also when the
// stage cache served the stages.
TEST(Compile, DumpDirectoryFromTheEnvironment) {
  std::string why;
  if (!havePtxas(why))
    GTEST_SKIP() << why;
  char dir[] = "/tmp/tilec-jit-dump-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string dump = std::string(dir) + "/dump";
  ASSERT_EQ(::setenv("TILEC_DUMP_DIR", dump.c_str(), 1), 0);
  jit::JITOptions options;
  options.cache = std::make_shared<rt::StageCache>(std::string(dir) + "/cache");
  jit::TilecJIT compiler(options);
  auto config = tilec::Config::parse("BLOCK=1024,num_warps=4");
  for (int run = 0; run < 2; ++run) {
    auto compiled = compiler.compile("vector_add", *config, "sm_90", {});
    ASSERT_TRUE(compiled.ok()) << compiled.message();
  }
  ::unsetenv("TILEC_DUMP_DIR");
  std::string listing = dump + "/listing";
  ASSERT_EQ(std::system(("ls " + dump + "/vector_add-*/ > " + listing).c_str()),
            0);
  std::ifstream in(listing);
  std::string files((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  EXPECT_EQ(files, "vector_add.cubin\nvector_add.json\nvector_add.llir\n"
                   "vector_add.ptx\nvector_add.ttgir\nvector_add.ttir\n");
  ASSERT_EQ(std::system(("rm -rf '" + std::string(dir) + "'").c_str()), 0);
}
