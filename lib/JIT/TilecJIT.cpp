//===- TilecJIT.cpp - The compiler behind the runtime's interface ---------===//

#include "tilec/JIT/TilecJIT.h"

#include "tilec/Kernel/KernelRegistry.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

namespace tilec::jit {

rt::KernelConfig toRuntimeConfig(const kernel::Config &config) {
  rt::KernelConfig result;
  result.params = config.params;
  result.types = config.types;
  result.numWarps = config.numWarps;
  result.numStages = config.numStages;
  return result;
}

kernel::Config fromRuntimeConfig(const rt::KernelConfig &config) {
  kernel::Config result;
  result.params = config.params;
  result.types = config.types;
  result.numWarps = config.numWarps;
  result.numStages = config.numStages;
  return result;
}

rt::KernelDescription describeKernel(const kernel::KernelDefinition &kernel) {
  rt::KernelDescription description;
  description.name = kernel.getName().str();
  for (const kernel::Config &config : kernel.getConfigs())
    description.configs.push_back(toRuntimeConfig(config));
  for (const kernel::AutotuneKeyEntry &entry : kernel.getAutotuneKey())
    description.key.push_back({entry.name, entry.derivation});
  description.grid.assign(kernel.getGrid().begin(), kernel.getGrid().end());
  for (const kernel::MetaParameter &param : kernel.getMetaParameters()) {
    if (param.defaultValue)
      description.paramDefaults[param.name] = *param.defaultValue;
    if (!param.derivation.empty())
      description.derivedParams[param.name] = param.derivation;
  }
  for (const kernel::TypeParameter &param : kernel.getTypeParameters())
    if (param.defaultValue)
      description.typeDefaults[param.name] = *param.defaultValue;
  description.integerArguments = kernel.getIntegerArguments();
  return description;
}

static std::string knownKernels() {
  std::string names;
  for (const kernel::KernelDefinition *definition : kernel::listKernels())
    names += (names.empty() ? "" : ", ") + definition->getName().str();
  return names;
}

TilecJIT::TilecJIT(JITOptions options) : options_(std::move(options)) {
  registerPipelineDialects(registry_);
}

TilecJIT::~TilecJIT() = default;

llvm::Expected<CompiledKernel>
TilecJIT::compileKernelByName(const std::string &name,
                              const rt::KernelConfig &config,
                              const std::string &target,
                              const rt::Specialization &specialization) {
  const kernel::KernelDefinition *definition = kernel::lookupKernel(name);
  if (!definition)
    return llvm::createStringError("unknown kernel '" + name +
                                   "' (known: " + knownKernels() + ")");
  llvm::Expected<kernel::Config> resolved =
      definition->resolveConfig(fromRuntimeConfig(config));
  if (!resolved)
    return resolved.takeError();

  // One context per compile: contexts are not shared between threads here,
  // and MLIR's own thread pool is off because the autotuner already runs one
  // compile per core.
  mlir::MLIRContext context(registry_, mlir::MLIRContext::Threading::DISABLED);
  kernel::KernelDefinition::loadDialects(context);
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    llvm::raw_string_ostream os(diagnostics);
    os << d.getLocation() << ": " << d.str() << "\n";
    for (const mlir::Diagnostic &note : d.getNotes())
      os << "  note: " << note.str() << "\n";
    return mlir::success();
  });
  auto module = definition->specialize(
      context, *resolved, definition->applicableFacts(specialization));
  if (mlir::failed(module))
    return llvm::createStringError("cannot specialize " + name + " to " +
                                   resolved->str() + ":\n" + diagnostics);

  CompileOptions options;
  options.numWarps = resolved->numWarps;
  options.numStages = resolved->numStages;
  options.target = target;
  options.config = resolved->params;
  options.ptx = options_.ptx;
  options.cubin = options_.cubin;
  options.cache = options_.cache;
  llvm::Expected<CompiledKernel> compiled = compileKernel(**module, options);
  if (!compiled)
    return llvm::createStringError(llvm::toString(compiled.takeError()) +
                                   (diagnostics.empty() ? "" : "\n") +
                                   diagnostics);
  return compiled;
}

rt::Result<rt::CompiledArtifact>
TilecJIT::compile(const std::string &kernel, const rt::KernelConfig &config,
                  const std::string &target,
                  const rt::Specialization &specialization) {
  llvm::Expected<CompiledKernel> compiled =
      compileKernelByName(kernel, config, target, specialization);
  if (!compiled)
    return rt::Status::error(llvm::toString(compiled.takeError()));
  if (compiled->cubin.empty())
    return rt::Status::error("the compile of " + kernel + " produced no cubin");
  rt::CompiledArtifact artifact;
  // The json hashes the cubin: write it before the cubin moves out.
  artifact.metadataJson = compiled->metadataJson();
  artifact.cubin = std::move(compiled->cubin);
  return artifact;
}

rt::Result<rt::KernelDescription>
TilecJIT::describe(const std::string &kernel) {
  const kernel::KernelDefinition *definition = kernel::lookupKernel(kernel);
  if (!definition)
    return rt::Status::error("unknown kernel '" + kernel +
                             "' (known: " + knownKernels() + ")");
  return describeKernel(*definition);
}

} // namespace tilec::jit
