//===- KernelGpuTest.cpp - every kernel, compiled and run on the GPU ------===//
//
// For each kernel in kernels/: several configs, sizes that do and do not
// divide the blocks, f16 and f32 where the kernel has a dtype. Outputs are
// poisoned before each run and compared with a float64 reference.
//
//===----------------------------------------------------------------------===//

#include "tilec/Harness/KernelHarness.h"
#include "tilec/Kernel/KernelRegistry.h"
#include "tilec/Pipeline/Pipeline.h"
#include "tilec/runtime/KernelMetadata.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

namespace {

struct GpuCase {
  std::string kernel;
  std::string config;
  bool tailSizes;
};

// Readable case descriptions in test logs instead of raw bytes.
void PrintTo(const GpuCase &gpuCase, std::ostream *os) {
  *os << gpuCase.kernel << " " << gpuCase.config
      << (gpuCase.tailSizes ? " (tail sizes)" : " (even sizes)");
}

std::string caseName(const testing::TestParamInfo<GpuCase> &info) {
  std::string name = info.param.kernel + "_" + info.param.config +
                     (info.param.tailSizes ? "_tail" : "_even");
  for (char &c : name)
    if (!isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name;
}

class KernelGpuTest : public testing::TestWithParam<GpuCase> {
protected:
  static void SetUpTestSuite() {
    auto created = tilec::rt::Context::create();
    if (created)
      context = new tilec::rt::Context(std::move(*created));
    else
      skipReason = created.message();
  }
  static void TearDownTestSuite() {
    delete context;
    context = nullptr;
  }
  static tilec::rt::Context *context;
  static std::string skipReason;
};

tilec::rt::Context *KernelGpuTest::context = nullptr;
std::string KernelGpuTest::skipReason;

TEST_P(KernelGpuTest, MatchesFloat64Reference) {
  if (!context)
    GTEST_SKIP() << skipReason;
  const GpuCase &param = GetParam();
  const auto *definition = tilec::kernel::lookupKernel(param.kernel);
  ASSERT_NE(definition, nullptr);
  auto config = definition->parseConfig(param.config);
  ASSERT_TRUE(static_cast<bool>(config)) << llvm::toString(config.takeError());

  mlir::DialectRegistry registry;
  tilec::registerPipelineDialects(registry);
  mlir::MLIRContext mlirContext(registry);
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&mlirContext, [&](mlir::Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return mlir::success();
  });
  tilec::harness::RunRequest request;
  request.kernel = param.kernel;
  request.params = config->params;
  request.types = config->types;
  request.sizes = param.tailSizes ? tilec::harness::tailSizes(param.kernel)
                                  : tilec::harness::defaultSizes(param.kernel);
  if (param.kernel == "softmax")
    request.sizes["n_cols"] = std::min<int64_t>(request.sizes["n_cols"],
                                                config->params.at("BLOCK_N"));
  // Specialized for the values the launch passes, as the runtime's JIT does:
  // the default sizes are multiples of 16 (vector loads, masks per vector),
  // the tails are not.
  auto values = tilec::harness::integerArguments(request);
  ASSERT_TRUE(values.ok()) << values.message();
  auto module = definition->specialize(
      mlirContext, *config,
      definition->applicableFacts(tilec::kernel::ArgumentFacts::derive(
          std::map<std::string, int64_t>(values->begin(), values->end()))));
  ASSERT_TRUE(mlir::succeeded(module)) << diagnostics;
  tilec::CompileOptions options;
  options.numWarps = config->numWarps;
  options.config = config->params;
  auto compiled = tilec::compileKernel(**module, options);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError()) << diagnostics;

  auto metadata = tilec::rt::KernelMetadata::parse(compiled->metadataJson());
  ASSERT_TRUE(metadata.ok()) << metadata.message();
  auto loaded = tilec::rt::Module::loadCubin(*context, compiled->cubin.data(),
                                             compiled->cubin.size());
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  auto kernel = tilec::rt::Kernel::create(*context, *loaded, *metadata);
  ASSERT_TRUE(kernel.ok()) << kernel.message();

  for (uint32_t seed : {1u, 2u}) {
    request.seed = seed;
    auto report = tilec::harness::runAndCheck(*context, *kernel, request);
    ASSERT_TRUE(report.ok()) << report.message();
    EXPECT_TRUE(report->passed) << report->describe();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, KernelGpuTest,
    testing::Values(
        GpuCase{"vector_add", "BLOCK=1024", false},
        GpuCase{"vector_add", "BLOCK=1024", true},
        GpuCase{"vector_add", "BLOCK=256,num_warps=2", true},
        GpuCase{"softmax", "BLOCK_N=1024", false},
        GpuCase{"softmax", "BLOCK_N=1024", true},
        GpuCase{"softmax", "BLOCK_N=128,num_warps=1", true},
        GpuCase{"matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16", false},
        GpuCase{"matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16", true},
        GpuCase{"matmul", "BLOCK_M=32,BLOCK_N=64,BLOCK_K=16,DTYPE=f32", true},
        GpuCase{"matmul", "BLOCK_M=128,BLOCK_N=64,BLOCK_K=32,DTYPE=bf16",
                false},
        GpuCase{"matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=bf16", true},
        GpuCase{"matmul",
                "BLOCK_M=64,BLOCK_N=32,BLOCK_K=32,DTYPE=f32,num_warps=8",
                false},
        GpuCase{"gather_matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16",
                false},
        GpuCase{"gather_matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16",
                true},
        GpuCase{"gather_matmul", "BLOCK_M=32,BLOCK_N=32,BLOCK_K=16,DTYPE=f32",
                true},
        GpuCase{"gather_matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=bf16",
                true}),
    caseName);

} // namespace
