//===- RunCommand.cpp - tilec run -----------------------------------------===//
//
// Compiles a kernel from kernels/ for a config, runs it on random inputs of
// the given sizes, and checks it against a float64 CPU reference.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "tilec/Harness/KernelHarness.h"
#include "tilec/Interpreter/InterpretedRun.h"
#include "tilec/Kernel/KernelRegistry.h"
#include "tilec/Pipeline/Pipeline.h"
#include "tilec/contract/CompileMetadata.h"
#include "tilec/contract/InterpreterDevice.h"
#include "tilec/runtime/Environment.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SourceMgr.h"

namespace cl = llvm::cl;

namespace tilec::tool {

cl::SubCommand runCommand("run",
                          "Compile a kernel, run it on random inputs and "
                          "check it against a float64 CPU reference");

static cl::OptionCategory category("tilec run options");
static cl::opt<std::string> kernelName("kernel", cl::desc("Kernel name"),
                                       cl::Required, cl::sub(runCommand),
                                       cl::cat(category));
static cl::opt<std::string>
    configText("config", cl::desc("Config (see tilec compile --list)"),
               cl::init(""), cl::sub(runCommand), cl::cat(category));
static cl::opt<std::string>
    sizesText("sizes", cl::desc("Problem sizes, e.g. M=203,N=176,K=208"),
              cl::init(""), cl::sub(runCommand), cl::cat(category));
static cl::opt<int> repetitions("reps",
                                cl::desc("Timed repetitions (0: no timing)"),
                                cl::init(20), cl::sub(runCommand),
                                cl::cat(category));
static cl::opt<std::string>
    targetName("target",
               cl::desc("Compile for this target instead of the device's own "
                        "(sm_90a on Hopper; sm_90 runs there too, without "
                        "wgmma and TMA)"),
               cl::init(""), cl::sub(runCommand), cl::cat(category));
static cl::opt<unsigned> seed("seed", cl::desc("Random seed"), cl::init(1),
                              cl::sub(runCommand), cl::cat(category));
static cl::opt<int> launches(
    "launches",
    cl::desc("Launch this many times on the same buffers before the check "
             "(2: the output a tuner's repeated timing runs see)"),
    cl::init(1), cl::sub(runCommand), cl::cat(category));
static cl::opt<bool> interpret(
    "interpret",
    cl::desc("Run the kernel's ttir on the CPU interpreter instead of the GPU "
             "(no GPU needed; also TILEC_INTERPRET=1; docs/interpreter.md)"),
    cl::init(false), cl::sub(runCommand), cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "tilec run: error: " << message << "\n";
  return 1;
}

// "<kernel> <config> <sizes> (<where>)" and the report; 0 when it passed.
static int printReport(const harness::RunRequest &request,
                       const std::string &where,
                       const harness::RunReport &report) {
  llvm::outs() << kernelName << " " << request.config.str() << " ";
  for (const auto &[name, value] : request.call.sizes)
    llvm::outs() << name << "=" << value << " ";
  llvm::outs() << "(" << where << ")\n  " << report.describe() << "\n";
  return report.passed ? 0 : 1;
}

int runRun() {
  const kernel::KernelDefinition *definition = kernel::lookupKernel(kernelName);
  if (!definition)
    return fail("unknown kernel '" + kernelName +
                "' (known: " + kernel::knownKernelNames() + ")");
  const KernelDescription &description = definition->getDescription();
  auto parsed = tilec::Config::parse(configText);
  if (!parsed)
    return fail(parsed.message());
  harness::RunRequest request = harness::requestFor(description);
  // The config's types and parameters are the call's (DTYPE, ALLOW_TF32).
  request.call.types = parsed->types;
  request.call.params = parsed->params;
  request.seed = seed;
  request.timingRepetitions = repetitions;
  if (launches < 1)
    return fail("--launches must be at least 1");
  request.launches = launches;
  if (!sizesText.empty()) {
    auto sizes = harness::parseSizes(sizesText);
    if (!sizes)
      return fail(sizes.message());
    for (const auto &[name, value] : *sizes)
      request.call.sizes[name] = value;
  }

  // As the autotuner does: parameters the kernel derives from the call
  // (softmax's BLOCK_N) are derived unless the config sets them.
  auto config = description.configForCall(*parsed, request.call);
  if (!config)
    return fail(config.message());
  request.config = *config;
  request.call.params = config->params;

  mlir::DialectRegistry registry;
  registerPipelineDialects(registry);
  mlir::MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  // TILEC_INTERPRET=1 as Triton's TRITON_INTERPRET=1.
  if (interpret || rt::readEnvironment().interpret) {
    auto report = interp::interpretAndCheck(context, *definition, request);
    if (!report)
      return fail(report.message());
    return printReport(request, "interpreted", *report);
  }

  // The device first: the kernel compiles for its target, as the runtime's
  // JIT does.
  auto gpu = rt::Context::create();
  if (!gpu)
    return fail(gpu.message());

  // Specialized for the values the launch passes, as the runtime's JIT does.
  auto module = definition->specialize(
      context, *config, description.specializationOf(request.call));
  if (mlir::failed(module))
    return fail("cannot specialize " + kernelName + " to " + config->str());
  CompileOptions options;
  options.setConfig(*config);
  options.target = targetName.empty() ? gpu->properties().compileTarget()
                                      : std::string(targetName);
  auto compiled = compileKernel(**module, options);
  if (!compiled)
    return fail(llvm::toString(compiled.takeError()));

  auto metadata = tilec::CompileMetadata::parse(compiled->metadataJson());
  if (!metadata)
    return fail(metadata.message());
  auto loaded = rt::Module::loadCubin(*gpu, compiled->cubin.data(),
                                      compiled->cubin.size());
  if (!loaded)
    return fail(loaded.message());
  auto kernel = rt::Kernel::create(*gpu, *loaded, *metadata);
  if (!kernel)
    return fail(kernel.message());
  auto report = harness::runAndCheck(*gpu, *kernel, request);
  if (!report)
    return fail(report.message());
  if (options.target == kInterpreterTarget)
    return printReport(request, "on the interpreter device", *report);
  return printReport(
      request,
      options.target + ", " + std::to_string(compiled->cubinInfo.registers) +
          " regs, " + std::to_string(compiled->sharedBytes) + " B smem",
      *report);
}

} // namespace tilec::tool
