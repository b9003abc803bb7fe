//===- CubinAssembler.h - PTX -> cubin --------------------------*- C++ -*-===//
//
// The cubin stage of tilec: assemble PTX into a cubin with NVIDIA's ptxas (a
// subprocess) or, optionally, with nvJitLink loaded at run time, and read the
// resource usage that `ptxas -v` reports for a kernel.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_TARGET_CUBINASSEMBLER_H
#define TILEC_TARGET_CUBINASSEMBLER_H

#include "tilec/Support/OptionFields.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace tilec {

/// Resource usage of one kernel as reported by `ptxas -v`. Fields that the
/// report does not mention stay 0 (CUDA 13's ptxas, for example, no longer
/// prints constant bank sizes).
struct CubinInfo {
  unsigned registers = 0;
  unsigned barriers = 0;
  uint64_t sharedStaticBytes = 0;
  uint64_t spillStoreBytes = 0;
  uint64_t spillLoadBytes = 0;
  uint64_t stackFrameBytes = 0;
  /// Sum over all `cmem[N]` banks.
  uint64_t constBytes = 0;
  /// 1 when ptxas serialized the kernel's wgmma instructions (its C7520
  /// "Potential Performance Loss" note): each waits for the one before.
  unsigned wgmmaSerialized = 0;
};

enum class CubinBackend {
  /// Run the ptxas executable (the reference; gives a rerunnable command).
  Ptxas,
  /// Call libnvJitLink.so.13 in process, loaded with dlopen.
  NvJitLink,
};

struct CubinOptions {
  /// Passed as --gpu-name (ptxas) or -arch (nvJitLink).
  std::string chip = "sm_90";
  /// 0..3, passed as -O<n>.
  unsigned optLevel = 3;
  /// Extra ptxas flags, e.g. "-lineinfo", "--maxrregcount=128". With
  /// nvJitLink they are forwarded as -Xptxas=<flag>.
  std::vector<std::string> extraFlags;
  /// Kernel whose resource usage goes into CubinResult::info. Empty: the
  /// first `.visible .entry` of the PTX (none: info stays zero).
  std::string kernelName;
  CubinBackend backend = CubinBackend::Ptxas;
  /// ptxas executable. Empty: the environment variable TILEC_PTXAS, else the
  /// ptxas found at configure time, else `ptxas` on PATH.
  std::string ptxasPath;
  /// Kill ptxas after this many seconds; 0 waits forever.
  unsigned timeoutSeconds = 0;

  /// Every field, with the stages whose cache keys hold it.
  static constexpr auto fields();
};

/// The output of `<ptxas> --version`, which names the toolkit build, for the
/// ptxas that assembleCubin would run (see findPtxas); empty when that ptxas
/// cannot be found or run, or the backend is nvJitLink, which has no version
/// to identify it by. Run once per ptxas per process.
std::string getPtxasIdentity(const CubinOptions &options);

constexpr auto CubinOptions::fields() {
  return std::make_tuple(
      keyedField("chip", &CubinOptions::chip, Stage::Cubin),
      keyedField("opt_level", &CubinOptions::optLevel, Stage::Cubin),
      keyedField("extra_flags", &CubinOptions::extraFlags, Stage::Cubin),
      // Selects the kernel whose resource usage the entry's meta holds.
      keyedField("kernel_name", &CubinOptions::kernelName, Stage::Cubin),
      keyedField("backend", &CubinOptions::backend, Stage::Cubin),
      derivedField("ptxas", &CubinOptions::ptxasPath, Stage::Cubin,
                   &getPtxasIdentity),
      excludedField("timeout_seconds", &CubinOptions::timeoutSeconds,
                    "a ptxas that runs out of time fails the stage, one that "
                    "finishes makes the same cubin"));
}
static_assert(
    listsEveryFieldOnce<CubinOptions>(),
    "CubinOptions::fields() must name every field of CubinOptions once");

struct CubinResult {
  /// The ELF image.
  std::string cubin;
  CubinInfo info;
  /// The kernel that `info` describes.
  std::string kernelName;
  /// What ptxas (or nvJitLink's info log) printed.
  std::string log;
};

/// Assembles `ptx` into a cubin. On a ptxas failure the error holds ptxas'
/// output and a line `repro: <command>` that reruns it on a PTX file kept on
/// disk.
llvm::Expected<CubinResult> assembleCubin(llvm::StringRef ptx,
                                          const CubinOptions &options);

/// Resolves the ptxas executable: `explicitPath` if not empty, else
/// $TILEC_PTXAS, else the configure-time default, else `ptxas` on PATH.
llvm::Expected<std::string> findPtxas(llvm::StringRef explicitPath = "");

/// Parses the report of `ptxas -v` (or nvJitLink -verbose) for `kernelName`,
/// or for the only entry function when `kernelName` is empty. Pure: it only
/// looks at `log`.
llvm::Expected<CubinInfo> parsePtxasInfo(llvm::StringRef log,
                                         llvm::StringRef kernelName = "");

/// Quotes `args` for a POSIX shell, separated by spaces.
std::string formatCommandLine(const std::vector<std::string> &args);

} // namespace tilec

#endif // TILEC_TARGET_CUBINASSEMBLER_H
