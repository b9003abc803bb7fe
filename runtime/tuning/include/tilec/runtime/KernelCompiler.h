//===- KernelCompiler.h - The compiler behind the runtime -------*- C++ -*-===//
//
// Part of tilec_tuning, the tuning library.
//
// The runtime never links LLVM or MLIR. When a program needs a kernel for a
// config that is not compiled yet, it asks a KernelCompiler: an interface the
// runtime declares and the compiler library implements (tilec::jit::TilecJIT
// in include/tilec/JIT/TilecJIT.h). A program that links both compiles on
// first use; one that links only the runtime runs what is cached or bundled
// and reports a clear error for anything else.
//
// Configs and kernel descriptions are the kernel contract's
// (tilec/contract/): the compiler hands its description over as it is.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_KERNELCOMPILER_H
#define TILEC_RUNTIME_KERNELCOMPILER_H

#include "tilec/contract/CompileMetadata.h"
#include "tilec/contract/Config.h"
#include "tilec/contract/KernelDescription.h"
#include "tilec/contract/Specialization.h"
#include "tilec/contract/Status.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tilec::rt {

// What a compile hands to the runtime in the same process: the image to
// load and its compile metadata as data (the ptxas report and, when the
// compiler used a stage cache, each stage's cache key), never JSON text
// parsed back; metadata.toJson() is what goes to a cache or a bundle.
struct CompiledArtifact {
  std::string cubin;
  CompileMetadata metadata;
  // Wall time of the compile that made it, when the KernelProvider ran it
  // (0: not measured).
  double compileMs = 0;
};

// What names one compile: the kernel, its config and the specialization,
// as the provider's memo of loaded kernels and its compiles queued ahead key
// them.
std::string compileKey(const std::string &kernel, const Config &config,
                       const Specialization &specialization);

class KernelCompiler {
public:
  virtual ~KernelCompiler();

  // Compiles `kernel` for `config` (resolved by the compiler: missing
  // parameters take their defaults) for `target` ("sm_90"), specialized for
  // `specialization`. Must be safe to call from several threads at once: the
  // autotuner compiles its candidates in parallel.
  virtual Result<CompiledArtifact>
  compile(const std::string &kernel, const Config &config,
          const std::string &target,
          const Specialization &specialization) = 0;

  // The kernel's candidate configs, autotune key and grid.
  virtual Result<KernelDescription> describe(const std::string &kernel) = 0;

  // Who compiles: the compile json's compiler_id of what compile() makes
  // (tilec's version, LLVM's, the build-ids of their code), or empty when
  // unknown. An autotune cache entry of another tilec version is not
  // answered from (Autotuner): its cubin is that version's kernel code.
  virtual std::string compilerId() const { return ""; }
};

class StageCache;

// Makes a compiler over a stage cache (null: none), as a Session does with
// its own (SessionOptions::compiler); jit::compilerFactory() makes the JIT.
using CompilerFactory = std::function<std::unique_ptr<KernelCompiler>(
    std::shared_ptr<StageCache> stageCache)>;

} // namespace tilec::rt

#endif // TILEC_RUNTIME_KERNELCOMPILER_H
