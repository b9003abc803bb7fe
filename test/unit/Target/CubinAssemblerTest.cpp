//===- CubinAssemblerTest.cpp - cubin stage -------------------------------===//

#include "tilec/Target/CubinAssembler.h"
#include "TestKernels.h"
#include "tilec/Target/PTXEmitter.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>

using namespace tilec;

namespace {

std::string errorText(llvm::Error error) {
  return llvm::toString(std::move(error));
}

/// Skips the current test when no ptxas can be found.
#define SKIP_WITHOUT_PTXAS()                                                   \
  do {                                                                         \
    auto found = findPtxas();                                                  \
    if (!found)                                                                \
      GTEST_SKIP() << "no ptxas: " << errorText(found.takeError());            \
  } while (false)

std::string compileExpKernel(const PTXOptions &options = PTXOptions()) {
  mlir::MLIRContext ctx;
  auto module = test::parse(ctx, test::kExpKernel);
  if (!module)
    return "";
  auto result = compileToPTX(*module, options);
  if (!result) {
    ADD_FAILURE() << errorText(result.takeError());
    return "";
  }
  return result->ptx;
}

bool isElf(llvm::StringRef image) {
  return image.starts_with("\x7f"
                           "ELF");
}

//===----------------------------------------------------------------------===//
// The -v parser on captured output
//===----------------------------------------------------------------------===//

// `ptxas -v --gpu-name=sm_90 -O3 --maxrregcount=32` (CUDA 13.0, V13.0.88) on
// nvcc's PTX for three kernels and a __noinline__ device function.
constexpr const char *kPtxas13Log =
    "ptxas info    : Overriding maximum register limit 256 for "
    "'_Z12const_kernelPf' with  32 of maxrregcount option\n"
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function '_Z12const_kernelPf' for "
    "'sm_90'\n"
    "ptxas info    : Function properties for _Z12const_kernelPf\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 8 registers, used 0 barriers\n"
    "ptxas info    : Compile time = 2.662 ms\n"
    "ptxas info    : Compiling entry function '_Z12spill_kernelPfS_i' for "
    "'sm_90'\n"
    "ptxas info    : Function properties for _Z12spill_kernelPfS_i\n"
    "    304 bytes stack frame, 568 bytes spill stores, 620 bytes spill "
    "loads\n"
    "ptxas info    : Used 32 registers, used 0 barriers, 304 bytes "
    "cumulative stack size\n"
    "ptxas info    : Compile time = 15.326 ms\n"
    "ptxas info    : Compiling entry function '_Z11smem_kernelPfS_i' for "
    "'sm_90'\n"
    "ptxas info    : Function properties for _Z11smem_kernelPfS_i\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 29 registers, used 1 barriers, 4608 bytes smem\n"
    "ptxas info    : Compile time = 8.229 ms\n"
    "ptxas info    : Function properties for _Z6helperPfi\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";

// nvJitLink 13.0 info log (-verbose) for the same PTX without maxrregcount:
// ptxas' report, then the post-link properties.
constexpr const char *kNvJitLinkLog =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Function properties for _Z6helperPfi\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes "
    "spill loads\n"
    "ptxas info    : Compile time = 19.501 ms\n"
    "ptxas info    : Compiling entry function '_Z11smem_kernelPfS_i' for "
    "'sm_90'\n"
    "ptxas info    : Function properties for _Z11smem_kernelPfS_i\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes "
    "spill loads\n"
    "ptxas info    : Used 24 registers, used 1 barriers, 4608 bytes smem\n"
    "ptxas info    : Compile time = 3.025 ms\n"
    "info    : 0 bytes gmem, 1024 bytes cmem[3]\n"
    "info    : Function properties for '_Z11smem_kernelPfS_i':\n"
    "info    : used 59 registers, used 1 barriers, 0 stack, 5632 bytes smem, "
    "548 bytes cmem[0], 0 bytes lmem\n";

TEST(PtxasInfoParser, Ptxas13Report) {
  auto spill = parsePtxasInfo(kPtxas13Log, "_Z12spill_kernelPfS_i");
  ASSERT_TRUE(!!spill) << errorText(spill.takeError());
  EXPECT_EQ(spill->registers, 32u);
  EXPECT_EQ(spill->stackFrameBytes, 304u);
  EXPECT_EQ(spill->spillStoreBytes, 568u);
  EXPECT_EQ(spill->spillLoadBytes, 620u);
  EXPECT_EQ(spill->sharedStaticBytes, 0u);

  auto smem = parsePtxasInfo(kPtxas13Log, "_Z11smem_kernelPfS_i");
  ASSERT_TRUE(!!smem) << errorText(smem.takeError());
  EXPECT_EQ(smem->registers, 29u);
  EXPECT_EQ(smem->barriers, 1u);
  EXPECT_EQ(smem->sharedStaticBytes, 4608u);
  EXPECT_EQ(smem->spillStoreBytes, 0u);

  auto small = parsePtxasInfo(kPtxas13Log, "_Z12const_kernelPf");
  ASSERT_TRUE(!!small) << errorText(small.takeError());
  EXPECT_EQ(small->registers, 8u);
}

// ptxas 13.0 on a kernel whose wgmma sat behind a branch on loaded data:
// the notes come before the function's block and name it.
constexpr const char *kSerializedWgmmaLog =
    "ptxas info    : (C7519) warpgroup.arrive is injected in around line 760 "
    "by compiler to allow use of registers in GMMA in function "
    "'sparse_conv_fwd'\n"
    "ptxas info    : (C7520) Potential Performance Loss: wgmma.mma_async "
    "instructions are serialized due to program dependence on "
    "compiler-inserted WG.AR in divergent path in the function "
    "'sparse_conv_fwd'\n"
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'sparse_conv_fwd' for "
    "'sm_90a'\n"
    "ptxas info    : Function properties for sparse_conv_fwd\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 216 registers, used 1 barriers\n"
    "ptxas info    : Compile time = 97.606 ms\n";

TEST(PtxasInfoParser, SerializedWgmma) {
  auto conv = parsePtxasInfo(kSerializedWgmmaLog, "sparse_conv_fwd");
  ASSERT_TRUE(!!conv) << errorText(conv.takeError());
  EXPECT_EQ(conv->wgmmaSerialized, 1u);
  EXPECT_EQ(conv->registers, 216u);
  // The note alone (C7519, an injected arrive) is not a serialization.
  std::string injectedOnly = kSerializedWgmmaLog;
  injectedOnly.erase(injectedOnly.find("ptxas info    : (C7520)"),
                     injectedOnly.find("ptxas info    : 0 bytes gmem") -
                         injectedOnly.find("ptxas info    : (C7520)"));
  auto fine = parsePtxasInfo(injectedOnly, "sparse_conv_fwd");
  ASSERT_TRUE(!!fine) << errorText(fine.takeError());
  EXPECT_EQ(fine->wgmmaSerialized, 0u);
  auto other = parsePtxasInfo(kPtxas13Log, "_Z12const_kernelPf");
  ASSERT_TRUE(!!other) << errorText(other.takeError());
  EXPECT_EQ(other->wgmmaSerialized, 0u);
}

TEST(PtxasInfoParser, NamesTheKernelsItFound) {
  // Three kernels and no name: ambiguous.
  auto any = parsePtxasInfo(kPtxas13Log);
  ASSERT_FALSE(!!any);
  std::string message = errorText(any.takeError());
  EXPECT_NE(message.find("describes 3 kernels (_Z12const_kernelPf, "
                         "_Z12spill_kernelPfS_i, _Z11smem_kernelPfS_i)"),
            std::string::npos)
      << message;

  // A device function has a frame but no register report: not a kernel.
  auto helper = parsePtxasInfo(kPtxas13Log, "_Z6helperPfi");
  ASSERT_FALSE(!!helper);
  message = errorText(helper.takeError());
  EXPECT_NE(message.find("no resource usage for kernel '_Z6helperPfi'"),
            std::string::npos)
      << message;
}

TEST(PtxasInfoParser, NvJitLinkPostLinkNumbersWin) {
  auto info = parsePtxasInfo(kNvJitLinkLog);
  ASSERT_TRUE(!!info) << errorText(info.takeError());
  EXPECT_EQ(info->registers, 59u);
  EXPECT_EQ(info->barriers, 1u);
  EXPECT_EQ(info->sharedStaticBytes, 5632u);
  EXPECT_EQ(info->constBytes, 548u);
  EXPECT_EQ(info->stackFrameBytes, 0u);
}

TEST(PtxasInfoParser, OlderFormatWithCmem) {
  // The layout of CUDA 11/12 ptxas, which also listed constant banks (typed
  // from that format, not captured: CUDA 13 is the only toolkit here).
  constexpr const char *log =
      "ptxas info    : Compiling entry function 'k' for 'sm_80'\n"
      "ptxas info    : Function properties for k\n"
      "    16 bytes stack frame, 12 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Used 40 registers, 384 bytes cmem[0], 16 bytes "
      "cmem[2], 8 bytes smem\n";
  auto info = parsePtxasInfo(log, "k");
  ASSERT_TRUE(!!info) << errorText(info.takeError());
  EXPECT_EQ(info->registers, 40u);
  EXPECT_EQ(info->constBytes, 400u);
  EXPECT_EQ(info->sharedStaticBytes, 8u);
  EXPECT_EQ(info->stackFrameBytes, 16u);
  EXPECT_EQ(info->spillStoreBytes, 12u);
  EXPECT_EQ(info->spillLoadBytes, 8u);
}

TEST(PtxasInfoParser, MalformedLine) {
  auto info = parsePtxasInfo("ptxas info    : Compiling entry function 'k' "
                             "for 'sm_90'\n"
                             "ptxas info    : Used many registers\n",
                             "k");
  ASSERT_FALSE(!!info);
  EXPECT_NE(errorText(info.takeError())
                .find("cannot parse the ptxas resource "
                      "line"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// ptxas
//===----------------------------------------------------------------------===//

TEST(CubinAssembler, ExpKernelToCubin) {
  SKIP_WITHOUT_PTXAS();
  std::string ptx = compileExpKernel();
  ASSERT_FALSE(ptx.empty());
  auto result = assembleCubin(ptx, CubinOptions());
  ASSERT_TRUE(!!result) << errorText(result.takeError());
  EXPECT_TRUE(isElf(result->cubin));
  EXPECT_EQ(result->kernelName, "k");
  EXPECT_GT(result->info.registers, 0u) << result->log;
  EXPECT_EQ(result->info.spillStoreBytes, 0u);
  EXPECT_NE(result->log.find("Compiling entry function 'k' for 'sm_90'"),
            std::string::npos)
      << result->log;
}

TEST(CubinAssembler, Sm90aAndSm80) {
  SKIP_WITHOUT_PTXAS();
  for (const char *chip : {"sm_90a", "sm_80"}) {
    PTXOptions ptxOptions;
    ptxOptions.chip = chip;
    std::string ptx = compileExpKernel(ptxOptions);
    ASSERT_FALSE(ptx.empty());
    CubinOptions options;
    options.chip = chip;
    options.extraFlags = {"-lineinfo"};
    auto result = assembleCubin(ptx, options);
    ASSERT_TRUE(!!result) << chip << ": " << errorText(result.takeError());
    EXPECT_TRUE(isElf(result->cubin));
    EXPECT_GT(result->info.registers, 0u);
  }
}

TEST(CubinAssembler, MissingPtxasNamesTheVariable) {
  CubinOptions options;
  options.ptxasPath = "/nonexistent/bin/ptxas";
  auto result = assembleCubin(".version 9.0\n", options);
  ASSERT_FALSE(!!result);
  std::string message = errorText(result.takeError());
  std::cout << message << "\n";
  EXPECT_NE(message.find("'/nonexistent/bin/ptxas'"), std::string::npos)
      << message;
  EXPECT_NE(message.find("TILEC_PTXAS"), std::string::npos) << message;

  // The same through the environment variable.
  const char *saved = std::getenv("TILEC_PTXAS");
  std::string savedValue = saved ? saved : "";
  setenv("TILEC_PTXAS", "/nonexistent/env/ptxas", 1);
  auto fromEnv = assembleCubin(".version 9.0\n", CubinOptions());
  if (saved)
    setenv("TILEC_PTXAS", savedValue.c_str(), 1);
  else
    unsetenv("TILEC_PTXAS");
  ASSERT_FALSE(!!fromEnv);
  message = errorText(fromEnv.takeError());
  std::cout << message << "\n";
  EXPECT_NE(message.find("TILEC_PTXAS='/nonexistent/env/ptxas' is not an "
                         "executable file"),
            std::string::npos)
      << message;
}

TEST(CubinAssembler, BadPtxGivesRepro) {
  SKIP_WITHOUT_PTXAS();
  std::string ptx = compileExpKernel();
  ASSERT_FALSE(ptx.empty());
  // An instruction type that does not exist.
  size_t at = ptx.find("fma.rn.f32");
  ASSERT_NE(at, std::string::npos);
  ptx.replace(at, 10, "fma.rn.f33");

  auto result = assembleCubin(ptx, CubinOptions());
  ASSERT_FALSE(!!result);
  std::string message = errorText(result.takeError());
  std::cout << message << "\n";
  EXPECT_NE(message.find("ptxas failed (exit code 255)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("Unknown modifier '.f33'"), std::string::npos)
      << message;
  size_t repro = message.find("\nrepro: ");
  ASSERT_NE(repro, std::string::npos) << message;

  // The PTX named in the command was kept; remove it again.
  llvm::StringRef command = llvm::StringRef(message).substr(repro + 8);
  EXPECT_NE(command.find(" -v --gpu-name=sm_90 -O3 "), llvm::StringRef::npos);
  llvm::StringRef ptxPath = command.split(" -O3 ").second.split(' ').first;
  EXPECT_TRUE(ptxPath.ends_with("kernel.ptx")) << command.str();
  EXPECT_TRUE(llvm::sys::fs::exists(ptxPath)) << ptxPath.str();
  llvm::sys::fs::remove_directories(llvm::sys::path::parent_path(ptxPath));
}

TEST(CubinAssembler, HungPtxasTimesOut) {
  // A stand-in for a ptxas that never finishes.
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tilec-fake-ptxas", dir));
  llvm::SmallString<128> script(dir);
  llvm::sys::path::append(script, "ptxas");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(script, ec);
    ASSERT_FALSE(ec);
    os << "#!/bin/sh\nexec sleep 30\n";
  }
  llvm::sys::fs::setPermissions(script, llvm::sys::fs::all_exe |
                                            llvm::sys::fs::owner_read |
                                            llvm::sys::fs::owner_write);
  CubinOptions options;
  options.ptxasPath = std::string(script);
  options.timeoutSeconds = 1;
  auto result = assembleCubin(".version 9.0\n", options);
  llvm::sys::fs::remove_directories(dir);
  ASSERT_FALSE(!!result);
  std::string message = errorText(result.takeError());
  EXPECT_NE(message.find("ptxas failed (terminated: "), std::string::npos)
      << message;
  EXPECT_NE(message.find("\nrepro: "), std::string::npos) << message;
  size_t repro = message.find("\nrepro: ");
  if (repro != std::string::npos) {
    llvm::StringRef ptxPath = llvm::StringRef(message)
                                  .substr(repro)
                                  .split(" -O3 ")
                                  .second.split(' ')
                                  .first;
    llvm::sys::fs::remove_directories(llvm::sys::path::parent_path(ptxPath));
  }
}

//===----------------------------------------------------------------------===//
// nvJitLink
//===----------------------------------------------------------------------===//

/// True for the errors that mean nvJitLink cannot be used here at all.
bool nvJitLinkUnavailable(llvm::StringRef message) {
  return message.contains("cannot load libnvJitLink") ||
         message.contains("nvJitLink is not available");
}

TEST(CubinAssembler, NvJitLink) {
  std::string ptx = compileExpKernel();
  ASSERT_FALSE(ptx.empty());
  CubinOptions options;
  options.backend = CubinBackend::NvJitLink;
  auto result = assembleCubin(ptx, options);
  if (!result) {
    std::string message = errorText(result.takeError());
    if (nvJitLinkUnavailable(message))
      GTEST_SKIP() << message;
    FAIL() << message;
  }
  EXPECT_TRUE(isElf(result->cubin));
  EXPECT_EQ(result->kernelName, "k");
  EXPECT_GT(result->info.registers, 0u) << result->log;
}

TEST(CubinAssembler, NvJitLinkBadPtx) {
  std::string ptx = compileExpKernel();
  ASSERT_FALSE(ptx.empty());
  size_t at = ptx.find("fma.rn.f32");
  ASSERT_NE(at, std::string::npos);
  ptx.replace(at, 10, "fma.rn.f33");
  CubinOptions options;
  options.backend = CubinBackend::NvJitLink;
  auto result = assembleCubin(ptx, options);
  ASSERT_FALSE(!!result);
  std::string message = errorText(result.takeError());
  if (nvJitLinkUnavailable(message))
    GTEST_SKIP() << message;
  std::cout << message << "\n";
  EXPECT_NE(message.find("Unknown modifier '.f33'"), std::string::npos)
      << message;
  size_t repro = message.find("\nrepro: ");
  ASSERT_NE(repro, std::string::npos) << message;
  llvm::StringRef ptxPath = llvm::StringRef(message)
                                .substr(repro)
                                .split(" -O3 ")
                                .second.split(' ')
                                .first;
  llvm::sys::fs::remove_directories(llvm::sys::path::parent_path(ptxPath));
}

//===----------------------------------------------------------------------===//
// Timing (run with --gtest_also_run_disabled_tests)
//===----------------------------------------------------------------------===//

/// Median over `runs` calls; the first (cold) call is reported in `first`.
template <typename Fn>
double medianMs(int runs, Fn fn, double *first = nullptr) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count());
  }
  if (first)
    *first = times.front();
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

TEST(CubinAssembler, DISABLED_Timing) {
  SKIP_WITHOUT_PTXAS();
  constexpr int kRuns = 15;
  mlir::MLIRContext ctx;
  auto module = test::parse(ctx, test::kExpKernel);
  ASSERT_TRUE(module);
  auto mad = test::parse(ctx, test::kMadKernel);
  ASSERT_TRUE(mad);
  std::string ptx;

  double toPtxFirst = 0;
  double toPtxExp = medianMs(
      kRuns,
      [&] {
        auto result = compileToPTX(*module, PTXOptions());
        ASSERT_TRUE(!!result);
        ptx = result->ptx;
      },
      &toPtxFirst);
  double toPtxMad = medianMs(kRuns, [&] {
    auto result = compileToPTX(*mad, PTXOptions());
    ASSERT_TRUE(!!result);
  });
  double ptxas = medianMs(kRuns, [&] {
    auto result = assembleCubin(ptx, CubinOptions());
    ASSERT_TRUE(!!result);
  });
  CubinOptions jit;
  jit.backend = CubinBackend::NvJitLink;
  double nvJitLinkFirst = -1;
  double nvJitLink = -1;
  bool jitAvailable = true;
  nvJitLink = medianMs(
      kRuns,
      [&] {
        auto result = assembleCubin(ptx, jit);
        if (!result) {
          jitAvailable = false;
          llvm::consumeError(result.takeError());
        }
      },
      &nvJitLinkFirst);
  std::cout << "median of " << kRuns << " runs, ms:\n"
            << "  MLIR -> LLVM IR -> passes -> PTX, with libdevice expf: "
            << toPtxExp << " (first call " << toPtxFirst << ")\n"
            << "  MLIR -> LLVM IR -> passes -> PTX, no libdevice:        "
            << toPtxMad << "\n"
            << "  PTX -> cubin, ptxas subprocess:                    " << ptxas
            << "\n"
            << "  PTX -> cubin, nvJitLink in process:                ";
  if (jitAvailable)
    std::cout << nvJitLink << " (first call, with dlopen " << nvJitLinkFirst
              << ")\n";
  else
    std::cout << "unavailable\n";
}

} // namespace
