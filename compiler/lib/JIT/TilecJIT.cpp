//===- TilecJIT.cpp - The compiler behind the runtime's interface ---------===//

#include "tilec/JIT/TilecJIT.h"

#include "tilec/Kernel/KernelRegistry.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

namespace tilec::jit {

TilecJIT::TilecJIT(JITOptions options) : options_(std::move(options)) {
  registerPipelineDialects(registry_);
}

TilecJIT::~TilecJIT() = default;

rt::CompilerFactory compilerFactory(JITOptions options) {
  return
      [options = std::move(options)](std::shared_ptr<rt::StageCache> stageCache)
          -> std::unique_ptr<rt::KernelCompiler> {
        JITOptions withCache = options;
        withCache.cache = std::move(stageCache);
        return std::make_unique<TilecJIT>(std::move(withCache));
      };
}

/// `error`, whose message may point at diagnostics printed above it, with
/// the diagnostics the handler caught: the first error's message
/// (`firstError`) takes the pointer's place (a tuner's one-line reason then
/// says why), and all of them follow on their own lines.
static llvm::Error withDiagnostics(llvm::Error error,
                                   const std::string &diagnostics,
                                   const std::string &firstError) {
  if (diagnostics.empty())
    return error;
  return mapErrorMessage(std::move(error), [&](std::string message) {
    if (size_t at = message.find(kSeeDiagnostics.str());
        at != std::string::npos && !firstError.empty())
      message.replace(at, kSeeDiagnostics.size(), firstError);
    return message + "\n" + diagnostics;
  });
}

llvm::Expected<CompiledKernel>
TilecJIT::compileKernelByName(const std::string &name,
                              const tilec::Config &config,
                              const std::string &target,
                              const tilec::Specialization &specialization) {
  const kernel::KernelDefinition *definition = kernel::lookupKernel(name);
  if (!definition)
    return llvm::createStringError("unknown kernel '" + name + "' (known: " +
                                   kernel::knownKernelNames() + ")");
  const KernelDescription &description = definition->getDescription();
  Result<Config> resolved = description.resolveConfig(config);
  if (!resolved)
    return llvm::createStringError(resolved.message());

  // One context per compile: contexts are not shared between threads here,
  // and MLIR's own thread pool is off because the autotuner already runs one
  // compile per core.
  mlir::MLIRContext context(registry_, mlir::MLIRContext::Threading::DISABLED);
  kernel::KernelDefinition::loadDialects(context);
  std::string diagnostics, firstError;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    if (firstError.empty() && d.getSeverity() == mlir::DiagnosticSeverity::Error)
      firstError = d.str();
    llvm::raw_string_ostream os(diagnostics);
    os << d.getLocation() << ": " << d.str() << "\n";
    for (const mlir::Diagnostic &note : d.getNotes())
      os << "  note: " << note.str() << "\n";
    return mlir::success();
  });
  auto module = definition->specialize(
      context, *resolved,
      specialization.restrictedTo(description.getIntegerArguments()));
  if (mlir::failed(module))
    return llvm::createStringError("cannot specialize " + name + " to " +
                                   resolved->str() + ":\n" + diagnostics);

  CompileOptions options;
  options.setConfig(*resolved);
  options.target = target;
  options.ptx = options_.ptx;
  options.cubin = options_.cubin;
  options.cache = options_.cache;
  applyDebugEnvironment(options);
  llvm::Expected<CompiledKernel> compiled = compileKernel(**module, options);
  if (!compiled)
    return withDiagnostics(compiled.takeError(), diagnostics, firstError);
  return compiled;
}

tilec::Result<rt::CompiledArtifact>
TilecJIT::compile(const std::string &kernel, const tilec::Config &config,
                  const std::string &target,
                  const tilec::Specialization &specialization) {
  llvm::Expected<CompiledKernel> compiled =
      compileKernelByName(kernel, config, target, specialization);
  if (!compiled) {
    llvm::Error error = compiled.takeError();
    ErrorKind kind = ErrorKind::Unspecified;
    std::string message;
    llvm::handleAllErrors(
        std::move(error), [&](const llvm::ErrorInfoBase &info) {
          if (info.convertToErrorCode() == blockResourcesExceeded())
            kind = ErrorKind::Resources;
          message += info.message();
        });
    return tilec::Status::error(kind, message);
  }
  if (compiled->cubin.empty())
    return tilec::Status::error("the compile of " + kernel + " produced no cubin");
  rt::CompiledArtifact artifact;
  // The json hashes the cubin: write it before the cubin moves out.
  artifact.metadata = compiled->metadata();
  artifact.cubin = std::move(compiled->cubin);
  return artifact;
}

tilec::Result<tilec::KernelDescription>
TilecJIT::describe(const std::string &kernel) {
  const kernel::KernelDefinition *definition = kernel::lookupKernel(kernel);
  if (!definition)
    return Status::error("unknown kernel '" + kernel + "' (known: " +
                         kernel::knownKernelNames() + ")");
  return definition->getDescription();
}

std::string TilecJIT::compilerId() const { return getCompilerId(); }

} // namespace tilec::jit
