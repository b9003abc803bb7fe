//===- TilecJIT.h - The compiler behind the runtime's interface -*- C++ -*-===//
//
// Implements rt::KernelCompiler (runtime/include/tilec/runtime/
// KernelCompiler.h) with tilec's pipeline: a kernel from the registry
// (kernels/) is specialized to the config and compiled through every stage to
// a cubin, through the stage cache when one is given. A program that links
// this library and the runtime compiles kernels on first use.
//
// Thread-safe: every compile gets its own MLIRContext (with MLIR's own
// threading off, since the callers already compile configs in parallel) and
// its own LLVMContext inside compileKernel; the stage cache locks itself.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_JIT_TILECJIT_H
#define TILEC_JIT_TILECJIT_H

#include "tilec/Kernel/KernelDefinition.h"
#include "tilec/Pipeline/Pipeline.h"
#include "tilec/runtime/KernelCompiler.h"

#include "mlir/IR/DialectRegistry.h"

#include <memory>
#include <string>

namespace tilec::rt {
class StageCache;
} // namespace tilec::rt

namespace tilec::jit {

struct JITOptions {
  /// The stage cache; null compiles every stage and touches no disk.
  std::shared_ptr<rt::StageCache> cache;
  /// Code generation and ptxas options; their chip is set from the target.
  PTXOptions ptx;
  CubinOptions cubin;
};

class TilecJIT final : public rt::KernelCompiler {
public:
  explicit TilecJIT(JITOptions options = {});
  ~TilecJIT() override;

  tilec::Result<rt::CompiledArtifact>
  compile(const std::string &kernel, const tilec::Config &config,
          const std::string &target,
          const tilec::Specialization &specialization) override;
  tilec::Result<tilec::KernelDescription>
  describe(const std::string &kernel) override;
  /// getCompilerId() (tilec/Pipeline/Pipeline.h).
  std::string compilerId() const override;

  /// compile() with everything the pipeline produced (stage timings and
  /// cache results, every artifact), for tools.
  llvm::Expected<CompiledKernel>
  compileKernelByName(const std::string &kernel, const tilec::Config &config,
                      const std::string &target,
                      const tilec::Specialization &specialization = {});

  const JITOptions &options() const { return options_; }

private:
  JITOptions options_;
  mlir::DialectRegistry registry_;
};

/// A session's compiler (rt::SessionOptions::compiler): a TilecJIT with
/// `options` over the session's stage cache.
rt::CompilerFactory compilerFactory(JITOptions options = {});

} // namespace tilec::jit

#endif // TILEC_JIT_TILECJIT_H
