//===- PTXEmitterTest.cpp - llir and ptx stages ---------------------------===//

#include "tilec/Target/PTXEmitter.h"
#include "TestKernels.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

#include "gtest/gtest.h"

#include <thread>
#include <vector>

using namespace tilec;

namespace {

std::string errorText(llvm::Error error) {
  return llvm::toString(std::move(error));
}

TEST(PTXEmitter, TranslatesKernelAndLinksLibdevice) {
  mlir::MLIRContext ctx;
  auto module = test::parse(ctx, test::kExpKernel);
  ASSERT_TRUE(module);

  llvm::LLVMContext llvmCtx;
  auto llvmModule = translateToLLVMIR(*module, llvmCtx);
  ASSERT_TRUE(!!llvmModule) << errorText(llvmModule.takeError());
  std::string raw = printLLVMIR(**llvmModule);
  EXPECT_NE(raw.find("define ptx_kernel void @k("), std::string::npos) << raw;
  EXPECT_NE(raw.find("declare float @__nv_expf(float)"), std::string::npos);

  PTXOptions options;
  ASSERT_FALSE(!!optimizeLLVMModule(**llvmModule, options));
  std::string llir = printLLVMIR(**llvmModule);
  EXPECT_NE(llir.find("target triple = \"nvptx64-nvidia-cuda\""),
            std::string::npos);
  // libdevice's expf was linked, internalized and inlined: no call is left.
  EXPECT_EQ(llir.find("@__nv_expf"), std::string::npos) << llir;
  EXPECT_NE(llir.find("define ptx_kernel void @k("), std::string::npos);

  auto ptx = emitPTX(**llvmModule, options);
  ASSERT_TRUE(!!ptx) << errorText(ptx.takeError());
  EXPECT_NE(ptx->find(".target sm_90"), std::string::npos) << *ptx;
  EXPECT_NE(ptx->find(".version 9.0"), std::string::npos);
  EXPECT_NE(ptx->find(".visible .entry k("), std::string::npos);
  EXPECT_NE(ptx->find("fma.rn.f32"), std::string::npos);
  EXPECT_EQ(ptx->find("__nv_expf"), std::string::npos);
  EXPECT_EQ(getPTXKernelNames(*ptx), (llvm::SmallVector<std::string, 1>{"k"}));
}

TEST(PTXEmitter, FastContractionMakesFma) {
  mlir::MLIRContext ctx;
  auto module = test::parse(ctx, test::kMadKernel);
  ASSERT_TRUE(module);

  auto fast = compileToPTX(*module, PTXOptions());
  ASSERT_TRUE(!!fast) << errorText(fast.takeError());
  EXPECT_NE(fast->ptx.find("fma.rn.f32"), std::string::npos) << fast->ptx;
  EXPECT_EQ(fast->ptx.find("mul.rn.f32"), std::string::npos);
  EXPECT_EQ(fast->kernelNames, (llvm::SmallVector<std::string, 1>{"mad"}));
  EXPECT_NE(fast->llir.find("define ptx_kernel void @mad("), std::string::npos);

  // LLVM's default (Standard) keeps the multiply and the add apart.
  PTXOptions standard;
  standard.fastFPContraction = false;
  auto separate = compileToPTX(*module, standard);
  ASSERT_TRUE(!!separate) << errorText(separate.takeError());
  EXPECT_EQ(separate->ptx.find("fma.rn.f32"), std::string::npos)
      << separate->ptx;
  EXPECT_NE(separate->ptx.find("mul.rn.f32"), std::string::npos);
}

TEST(PTXEmitter, OtherChips) {
  mlir::MLIRContext ctx;
  auto module = test::parse(ctx, test::kExpKernel);
  ASSERT_TRUE(module);
  for (const char *chip : {"sm_80", "sm_90a"}) {
    PTXOptions options;
    options.chip = chip;
    auto result = compileToPTX(*module, options);
    ASSERT_TRUE(!!result) << chip << ": " << errorText(result.takeError());
    EXPECT_NE(result->ptx.find(std::string(".target ") + chip),
              std::string::npos)
        << result->ptx;
  }
}

TEST(PTXEmitter, TranslatingTwiceInOneContext) {
  mlir::MLIRContext ctx;
  auto module = test::parse(ctx, test::kMadKernel);
  ASSERT_TRUE(module);
  for (int i = 0; i < 2; ++i) {
    llvm::LLVMContext llvmCtx;
    auto llvmModule = translateToLLVMIR(*module, llvmCtx);
    ASSERT_TRUE(!!llvmModule) << errorText(llvmModule.takeError());
  }
}

TEST(PTXEmitter, ConcurrentCompiles) {
  // One MLIR context per thread, as a parallel autotuner would do; the NVPTX
  // target is initialized once underneath.
  std::vector<std::string> ptx(4);
  std::vector<std::string> errors(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ptx.size(); ++i)
    threads.emplace_back([&, i] {
      mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
      auto module = test::parse(ctx, test::kExpKernel);
      if (!module) {
        errors[i] = "parse failed";
        return;
      }
      auto result = compileToPTX(*module, PTXOptions());
      if (result)
        ptx[i] = result->ptx;
      else
        errors[i] = errorText(result.takeError());
    });
  for (std::thread &thread : threads)
    thread.join();
  for (size_t i = 0; i < ptx.size(); ++i) {
    EXPECT_EQ(errors[i], "");
    EXPECT_EQ(ptx[i], ptx[0]);
  }
  EXPECT_NE(ptx[0].find(".visible .entry k("), std::string::npos);
}

TEST(PTXEmitter, LibdeviceOnlyWhenUsed) {
  mlir::MLIRContext ctx;
  auto module = test::parse(ctx, test::kMadKernel);
  ASSERT_TRUE(module);
  PTXOptions options;
  options.libdevicePath = "/nonexistent/libdevice.10.bc";
  auto result = compileToPTX(*module, options);
  EXPECT_TRUE(!!result) << errorText(result.takeError());
}

TEST(PTXEmitter, MissingLibdeviceIsAnError) {
  mlir::MLIRContext ctx;
  auto module = test::parse(ctx, test::kExpKernel);
  ASSERT_TRUE(module);
  PTXOptions options;
  options.libdevicePath = "/nonexistent/libdevice.10.bc";
  auto result = compileToPTX(*module, options);
  ASSERT_FALSE(!!result);
  std::string message = errorText(result.takeError());
  EXPECT_NE(message.find("libdevice not found at "
                         "'/nonexistent/libdevice.10.bc'"),
            std::string::npos)
      << message;
}

TEST(PTXEmitter, EmitWithoutLibdeviceIsAnError) {
  mlir::MLIRContext ctx;
  auto module = test::parse(ctx, test::kExpKernel);
  ASSERT_TRUE(module);
  llvm::LLVMContext llvmCtx;
  auto llvmModule = translateToLLVMIR(*module, llvmCtx);
  ASSERT_TRUE(!!llvmModule) << errorText(llvmModule.takeError());
  auto ptx = emitPTX(**llvmModule, PTXOptions());
  ASSERT_FALSE(!!ptx);
  std::string message = errorText(ptx.takeError());
  EXPECT_NE(message.find("'__nv_expf' is called but not defined"),
            std::string::npos)
      << message;
}

TEST(PTXEmitter, UnknownChipAndFeature) {
  mlir::MLIRContext ctx;
  auto module = test::parse(ctx, test::kMadKernel);
  ASSERT_TRUE(module);
  PTXOptions badChip;
  badChip.chip = "sm_999";
  auto result = compileToPTX(*module, badChip);
  ASSERT_FALSE(!!result);
  EXPECT_NE(errorText(result.takeError()).find("unknown NVPTX chip 'sm_999'"),
            std::string::npos);

  PTXOptions badFeature;
  badFeature.features = "+ptx999";
  result = compileToPTX(*module, badFeature);
  ASSERT_FALSE(!!result);
  EXPECT_NE(
      errorText(result.takeError()).find("unknown NVPTX feature '+ptx999'"),
      std::string::npos);
}

TEST(PTXEmitter, UntranslatableOpIsAnError) {
  mlir::MLIRContext ctx;
  ctx.allowUnregisteredDialects();
  auto module = test::parse(ctx, R"mlir(
    module {
      llvm.func @f() {
        "test.opaque"() : () -> ()
        llvm.return
      }
    })mlir");
  ASSERT_TRUE(module);
  llvm::LLVMContext llvmCtx;
  auto llvmModule = translateToLLVMIR(*module, llvmCtx);
  ASSERT_FALSE(!!llvmModule);
  std::string message = errorText(llvmModule.takeError());
  EXPECT_NE(message.find("cannot translate the MLIR module to LLVM IR"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("test.opaque"), std::string::npos) << message;
}

} // namespace

// The default pipeline and Triton's default<O3> both inline libdevice and
// contract to fma; any `opt -passes=` text is accepted.
TEST(PTXEmitter, ChosenLLVMPipelines) {
  for (const char *passes : {"", "default<O3>", "default<O1>",
                             "nvvm-reflect,cgscc(inline),globaldce"}) {
    mlir::MLIRContext ctx;
    auto module = test::parse(ctx, test::kExpKernel);
    ASSERT_TRUE(module);
    PTXOptions options;
    options.llvmPasses = passes;
    auto result = compileToPTX(*module, options);
    ASSERT_TRUE(!!result) << passes << ": " << errorText(result.takeError());
    EXPECT_EQ(result->llir.find("call float @__nv_expf"), std::string::npos)
        << passes;
    EXPECT_NE(result->ptx.find(".visible .entry k("), std::string::npos)
        << passes;
  }
}

TEST(PTXEmitter, BadLLVMPipelineIsAnError) {
  mlir::MLIRContext ctx;
  auto module = test::parse(ctx, test::kMadKernel);
  ASSERT_TRUE(module);
  PTXOptions options;
  options.llvmPasses = "function(no-such-pass)";
  auto result = compileToPTX(*module, options);
  ASSERT_FALSE(!!result);
  std::string message = errorText(result.takeError());
  EXPECT_NE(message.find("bad LLVM pass pipeline 'function(no-such-pass)'"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("no-such-pass"), std::string::npos) << message;
}

// libdevice branches on __nvvm_reflect("__CUDA_ARCH"): every pipeline resolves
// it to the target's SM version (the NVPTX pipeline-start passes), not 0.
TEST(PTXEmitter, ReflectSeesTheTargetArchitecture) {
  static constexpr const char *kReflect = R"(
@arch = private constant [12 x i8] c"__CUDA_ARCH\00"
declare i32 @__nvvm_reflect(ptr)
define ptx_kernel void @k(ptr addrspace(1) %out) {
  %v = call i32 @__nvvm_reflect(ptr @arch)
  store i32 %v, ptr addrspace(1) %out
  ret void
}
)";
  for (const char *passes : {"", "default<O3>"}) {
    llvm::LLVMContext llvmCtx;
    llvm::SMDiagnostic diagnostic;
    std::unique_ptr<llvm::Module> module =
        llvm::parseAssemblyString(kReflect, diagnostic, llvmCtx);
    ASSERT_TRUE(module) << diagnostic.getMessage().str();
    PTXOptions options;
    options.llvmPasses = passes;
    ASSERT_FALSE(!!optimizeLLVMModule(*module, options));
    std::string llir = printLLVMIR(*module);
    EXPECT_NE(llir.find("store i32 900"), std::string::npos)
        << passes << ":\n" << llir;
  }
}
