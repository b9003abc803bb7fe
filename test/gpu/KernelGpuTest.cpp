//===- KernelGpuTest.cpp - every kernel, compiled and run on the GPU ------===//
//
// For each kernel in kernels/: several configs, sizes that do and do not
// divide the blocks, every dtype, and for the matmuls odd shapes, padded and
// odd row strides and transposed operands (a transposed B is K-contiguous:
// the ldmatrix path without .trans). Outputs are poisoned before each run and
// compared with a float64 reference.
//
//===----------------------------------------------------------------------===//

#include "GpuSuite.h"
#include "KernelCases.h"
#include "tilec/Dialect/Tile/IR/Tile.h"
#include "tilec/Harness/KernelHarness.h"
#include "tilec/Kernel/KernelRegistry.h"
#include "tilec/Pipeline/Pipeline.h"
#include "tilec/contract/CompileMetadata.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

namespace {

class KernelGpuTest : public tilec::test::GpuSuite<
                          testing::TestWithParam<tilec::test::KernelCase>> {};

TEST_P(KernelGpuTest, MatchesFloat64Reference) {
  const tilec::test::KernelCase &param = GetParam();
  const auto *definition = tilec::kernel::lookupKernel(param.kernel);
  ASSERT_NE(definition, nullptr);
  const tilec::KernelDescription &description = definition->getDescription();
  auto built = tilec::test::requestOf(param, description);
  ASSERT_TRUE(built.ok()) << built.message();
  tilec::harness::RunRequest request = *built;
  const tilec::Config *config = &request.config;

  mlir::DialectRegistry registry;
  tilec::registerPipelineDialects(registry);
  mlir::MLIRContext mlirContext(registry);
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&mlirContext, [&](mlir::Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return mlir::success();
  });
  // Specialized for the values the launch passes, as the runtime's JIT does:
  // the default sizes are multiples of 16 (vector loads, masks per vector),
  // the tails and odd strides are not.
  auto module = definition->specialize(
      mlirContext, *config, description.specializationOf(request.call));
  ASSERT_TRUE(mlir::succeeded(module)) << diagnostics;
  // The device's own target first (sm_90a on Hopper: wgmma, TMA). A kernel
  // with a dot also runs compiled for the plain sm_XX its cubins run on
  // where that differs (mma.sync, cp.async: the engine of every GPU before
  // Hopper), with one seed: both engines are checked on this GPU.
  const tilec::rt::DeviceProperties &device = context->properties();
  std::vector<std::string> targets = {device.compileTarget()};
  bool hasDot = false;
  (*module)->walk([&](tilec::tile::DotOp) { hasDot = true; });
  if (hasDot && device.smName() != device.compileTarget())
    targets.push_back(device.smName());
  for (const std::string &target : targets) {
    SCOPED_TRACE("target " + target);
    // Compiling lowers the module in place: each target compiles a copy.
    mlir::OwningOpRef<mlir::ModuleOp> specialized((*module)->clone());
    tilec::CompileOptions options;
    options.setConfig(*config);
    options.target = target;
    auto compiled = tilec::compileKernel(*specialized, options);
    ASSERT_TRUE(static_cast<bool>(compiled))
        << llvm::toString(compiled.takeError()) << diagnostics;

    auto metadata = tilec::CompileMetadata::parse(compiled->metadataJson());
    ASSERT_TRUE(metadata.ok()) << metadata.message();
    EXPECT_EQ(metadata->target, target);
    bool tmaTarget = target == "sm_90a";
    EXPECT_EQ(!metadata->tensorMaps.empty(), param.copiesWithTma && tmaTarget)
        << metadata->tensorMaps.size() << " tensor maps";
    auto loaded = tilec::rt::Module::loadCubin(*context, compiled->cubin.data(),
                                               compiled->cubin.size());
    ASSERT_TRUE(loaded.ok()) << loaded.message();
    auto kernel = tilec::rt::Kernel::create(*context, *loaded, *metadata);
    ASSERT_TRUE(kernel.ok()) << kernel.message();

    bool primary = target == targets.front();
    for (uint32_t seed :
         primary ? std::vector<uint32_t>{1, 2} : std::vector<uint32_t>{1}) {
      request.seed = seed;
      auto report = tilec::harness::runAndCheck(*context, *kernel, request);
      ASSERT_TRUE(report.ok()) << report.message();
      EXPECT_TRUE(report->passed) << report->describe();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelGpuTest,
                         testing::ValuesIn(tilec::test::kernelCases()),
                         tilec::test::caseName);

} // namespace
