//===- KernelInterpretedTest.cpp - every kernel case, interpreted ---------===//
//
// The cases KernelGpuTest runs on the GPU (test/KernelCases.h), run here by
// the interpreter on the CPU against the same float64 references: every
// kernel's algorithm, masks and index arithmetic are checked in CI, where
// there is no GPU. Cases of more than kMaxFlops floating-point operations
// (the large matmuls) are left to the GPU.
//
//===----------------------------------------------------------------------===//

#include "KernelCases.h"

#include "tilec/Interpreter/InterpretedRun.h"
#include "tilec/Kernel/KernelRegistry.h"
#include "tilec/Pipeline/Pipeline.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

namespace {

// About a second of the interpreter's dot loop on the build machine.
constexpr double kMaxFlops = 1.5e9;

class KernelInterpretedTest
    : public testing::TestWithParam<tilec::test::KernelCase> {};

TEST_P(KernelInterpretedTest, MatchesFloat64Reference) {
  const tilec::test::KernelCase &param = GetParam();
  const auto *definition = tilec::kernel::lookupKernel(param.kernel);
  ASSERT_NE(definition, nullptr);
  const tilec::KernelDescription &description = definition->getDescription();
  auto request = tilec::test::requestOf(param, description);
  ASSERT_TRUE(request.ok()) << request.message();
  auto flops = description.evaluateFlops(request->call);
  ASSERT_TRUE(flops.ok()) << flops.message();
  if (*flops > kMaxFlops)
    GTEST_SKIP() << *flops << " FLOP: left to the GPU's run";

  mlir::DialectRegistry registry;
  tilec::registerPipelineDialects(registry);
  mlir::MLIRContext context(registry);
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return mlir::success();
  });
  // Seed 2 launches a kernel the tuner times (one with more than one
  // candidate) twice on the same buffers first, as the tuner's repetitions
  // do: its second output must be right too.
  for (uint32_t seed : {1u, 2u}) {
    request->seed = seed;
    request->launches =
        seed == 2 && description.getConfigs().size() > 1 ? 2 : 1;
    auto report =
        tilec::interp::interpretAndCheck(context, *definition, *request);
    ASSERT_TRUE(report.ok()) << report.message() << "\n" << diagnostics;
    EXPECT_TRUE(report->passed)
        << "seed " << seed << ": " << report->describe();
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelInterpretedTest,
                         testing::ValuesIn(tilec::test::kernelCases()),
                         tilec::test::caseName);

} // namespace
