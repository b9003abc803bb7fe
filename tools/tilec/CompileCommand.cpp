//===- CompileCommand.cpp - tilec compile ---------------------------------===//

#include "Commands.h"

#include "tilec/Conversion/Passes.h"
#include "tilec/Dialect/TileGPU/Transforms/Passes.h"
#include "tilec/Kernel/KernelRegistry.h"
#include "tilec/Pipeline/Pipeline.h"
#include "tilec/runtime/Environment.h"
#include "tilec/runtime/RemoteCache.h"
#include "tilec/runtime/StageCache.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <thread>
#include <vector>

namespace cl = llvm::cl;

namespace tilec::tool {

cl::SubCommand compileCommand("compile",
                              "Run a kernel through every stage to a cubin");

static cl::OptionCategory category("tilec compile options");
static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<input.ttir | .llir | .ptx>"),
                                      cl::init(""), cl::sub(compileCommand),
                                      cl::cat(category));
static cl::opt<std::string>
    kernelName("kernel", cl::desc("A kernel from kernels/ (see --list)"),
               cl::init(""), cl::sub(compileCommand), cl::cat(category));
static cl::opt<std::string> configText(
    "config",
    cl::desc("Meta-parameters, num_warps, num_stages: "
             "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_warps=4"),
    cl::init(""), cl::sub(compileCommand), cl::cat(category));
static cl::opt<std::string> argValues(
    "arg-values",
    cl::desc("Integer argument values the launch will pass "
             "(M=4096,N=4096,K=4096): values divisible by 16 or equal to 1 "
             "specialize the kernel, as Triton's JIT does; arguments left "
             "out take their declared defaults where those are determined "
             "(the strides of dense matrices)"),
    cl::init(""), cl::sub(compileCommand), cl::cat(category));
static cl::opt<bool> listKernels("list", cl::desc("List the kernels"),
                                 cl::sub(compileCommand), cl::cat(category));
static cl::opt<bool> allConfigs(
    "all-configs",
    cl::desc("Compile every config the kernel declares (its tuning space), "
             "one after another in this process, and print each stage's "
             "time per config and the median"),
    cl::sub(compileCommand), cl::cat(category));
static cl::opt<unsigned> compileJobs(
    "jobs",
    cl::desc("With --all-configs: compile on this many threads at once, "
             "each with its own MLIRContext, as a tuner's compile pool does, "
             "and print the batch's wall time (default 1: one after another)"),
    cl::init(1), cl::sub(compileCommand), cl::cat(category));
static cl::opt<std::string>
    dumpDir("dump-dir", cl::desc("Write <name>.{ttir,ttgir,llir,ptx,cubin,json}"),
            cl::init(""), cl::sub(compileCommand), cl::cat(category));
static cl::opt<bool> printTimings("timings",
                                  cl::desc("Print the time of each stage"),
                                  cl::sub(compileCommand), cl::cat(category));
static cl::opt<std::string> target("target", cl::desc("GPU architecture"),
                                   cl::init("sm_90"), cl::sub(compileCommand),
                                   cl::cat(category));
static cl::opt<unsigned>
    numWarps("num-warps", cl::desc("Warps per CTA for a .ttir input"),
             cl::init(4), cl::sub(compileCommand), cl::cat(category));
static cl::opt<std::string> llvmPasses(
    "llvm-passes",
    cl::desc("LLVM IR pass pipeline of the llir stage, in opt -passes= "
             "syntax (default: tilec's kernel pipeline; 'default<O3>' is "
             "Triton's)"),
    cl::init(""), cl::sub(compileCommand), cl::cat(category));
static cl::opt<bool> noCubin("no-cubin", cl::desc("Stop after PTX"),
                             cl::sub(compileCommand), cl::cat(category));
static cl::opt<bool> noCache("no-cache",
                             cl::desc("Compile every stage; do not read or "
                                      "write the stage cache"),
                             cl::sub(compileCommand), cl::cat(category));
static cl::opt<std::string>
    cacheDir("cache-dir",
             cl::desc("The stage cache (default: $TILEC_CACHE_DIR, else "
                      "~/.tilec/cache; see docs/cache.md)"),
             cl::init(""), cl::sub(compileCommand), cl::cat(category));

void registerCompilePassOptions() {
  static llvm::cl::OptionCategory passCategory(
      "MLIR pass instrumentation (each stage's passes; a stage the cache "
      "serves runs none: add --no-cache)");
  std::set<cl::Option *> before;
  for (const auto &[name, option] :
       cl::getRegisteredOptions(cl::SubCommand::getTopLevel()))
    before.insert(option);
  // The passes the stages run, first, so that --mlir-print-ir-after=<pass>
  // and its kin find their names (their parsers list the registry as it is
  // when they are made).
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  registerTilecConversionPasses();
  tilegpu::registerTileGPUTransformsPasses();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  std::set<cl::Option *> added;
  for (const auto &[name, option] :
       cl::getRegisteredOptions(cl::SubCommand::getTopLevel()))
    if (!before.count(option))
      added.insert(option);
  // Moved from the top level, where the LLVM libraries' hundreds of
  // options are hidden, to the compile subcommand.
  for (cl::Option *option : added) {
    option->removeArgument();
    option->Subs.clear();
    option->addSubCommand(compileCommand);
    option->addCategory(passCategory);
    option->addArgument();
  }
}

static int fail(const llvm::Twine &message) {
  llvm::errs() << "tilec compile: error: " << message << "\n";
  return 1;
}

/// Writes `contents` to `path` through a temporary file renamed into place,
/// so a reader never sees half an artifact.
static bool writeArtifact(llvm::StringRef path, llvm::StringRef contents) {
  std::error_code error;
  auto file = std::make_unique<llvm::ToolOutputFile>(path, error,
                                                     llvm::sys::fs::OF_None);
  if (error) {
    llvm::errs() << "tilec compile: error: cannot write " << path << ": "
                 << error.message() << "\n";
    return false;
  }
  file->os() << contents;
  file->os().flush();
  if (file->os().has_error()) {
    llvm::errs() << "tilec compile: error: writing " << path
                 << " failed: " << file->os().error().message() << "\n";
    file->os().clear_error();
    return false;
  }
  file->keep();
  return true;
}

/// Compiles each declared config of `definition` and prints a table of
/// stage times: the measurement of a tuner's compile phase. With one job the
/// configs run one after another, so that the times do not share the cores;
/// with more, `jobs` threads take the configs in turn, each compile in a
/// context of its own (as TilecJIT's), and the batch's wall time says how
/// the compiles scale.
static int compileAllConfigs(const mlir::DialectRegistry &registry,
                             const kernel::KernelDefinition &definition,
                             const Specialization &facts,
                             CompileOptions options, unsigned jobs) {
  static const char *const kStages[] = {"ttir", "ttgir", "llir", "ptx",
                                        "cubin"};
  const std::vector<tilec::Config> &configs =
      definition.getDescription().getConfigs();
  std::vector<llvm::Expected<CompiledKernel>> results;
  for (size_t i = 0; i < configs.size(); ++i)
    results.emplace_back(llvm::createStringError("not compiled"));
  // Pass instrumentation (--mlir-timing, IR printing) writes to one stream:
  // it stays with a single job.
  if (jobs > 1)
    options.configurePasses = nullptr;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < configs.size(); i = next++) {
      mlir::MLIRContext context(registry,
                                mlir::MLIRContext::Threading::DISABLED);
      kernel::KernelDefinition::loadDialects(context);
      auto specialized = definition.specialize(context, configs[i], facts);
      CompileOptions with = options;
      with.setConfig(configs[i]);
      llvm::consumeError(results[i].takeError());
      results[i] = mlir::failed(specialized)
                       ? llvm::createStringError("cannot specialize " +
                                                 definition.getName())
                       : compileKernel(**specialized, with);
    }
  };
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < std::max(1u, jobs); ++t)
    threads.emplace_back(work);
  work();
  for (std::thread &thread : threads)
    thread.join();
  double wallMs = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - start)
                      .count();

  std::map<std::string, std::vector<double>> times;
  std::vector<double> withoutPtxas, totals;
  for (const char *stage : kStages)
    llvm::outs() << llvm::format("%8s", stage);
  llvm::outs() << "  no-ptxas  config (ms)\n";
  int failures = 0;
  for (size_t i = 0; i < configs.size(); ++i) {
    if (!results[i]) {
      llvm::errs() << "tilec compile: error: " << configs[i].str() << ": "
                   << llvm::toString(results[i].takeError()) << "\n";
      ++failures;
      continue;
    }
    double sum = 0;
    for (const char *stage : kStages) {
      double ms = 0;
      for (const StageTiming &timing : results[i]->timings)
        if (timing.stage == stage)
          ms = timing.milliseconds;
      times[stage].push_back(ms);
      if (llvm::StringRef(stage) != "cubin")
        sum += ms;
      llvm::outs() << llvm::format("%8.2f", ms);
    }
    withoutPtxas.push_back(sum);
    totals.push_back(sum + times["cubin"].back());
    llvm::outs() << llvm::format("  %8.2f  ", sum) << configs[i].str() << "\n";
  }
  if (failures)
    return 1;
  auto median = [](std::vector<double> values) {
    std::sort(values.begin(), values.end());
    size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  };
  for (const char *stage : kStages)
    llvm::outs() << llvm::format("%8.2f", median(times[stage]));
  llvm::outs() << llvm::format("  %8.2f  median of %zu\n",
                               median(withoutPtxas), withoutPtxas.size());
  double sum = std::accumulate(totals.begin(), totals.end(), 0.0);
  llvm::outs() << llvm::format(
      "%zu configs on %u thread%s: %.1f ms wall, %.1f ms of compiles "
      "(%.2fx)\n",
      configs.size(), std::max(1u, jobs), jobs > 1 ? "s" : "", wallMs, sum,
      sum / wallMs);
  return 0;
}

int runCompile() {
  mlir::DialectRegistry registry;
  registerPipelineDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // One kernel at a time; IR printing needs a single thread.
  context.disableMultithreading();
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  if (listKernels) {
    for (const kernel::KernelDefinition *definition : kernel::listKernels()) {
      const KernelDescription &description = definition->getDescription();
      llvm::outs() << description.getName() << "  ("
                   << description.getSourceFile() << ")\n";
      for (const tilec::Config &config : description.getConfigs())
        llvm::outs() << "    " << config.str() << "\n";
    }
    return 0;
  }

  CompileOptions options;
  options.target = target;
  options.numWarps = numWarps;
  options.skipCubin = noCubin;
  options.ptx.llvmPasses = llvmPasses;
  // TILEC_DUMP_DIR and TILEC_OVERRIDE_DIR (docs/environment.md).
  applyDebugEnvironment(options);
  options.configurePasses = [](mlir::PassManager &pm) {
    (void)mlir::applyPassManagerCLOptions(pm);
    mlir::applyDefaultTimingPassManagerCLOptions(pm);
  };
  if (!noCache)
    options.cache = std::make_shared<rt::StageCache>(
        cacheDir.empty() ? rt::readEnvironment().stageCacheDirectory()
                         : cacheDir,
        rt::RemoteCache::fromEnvironment(), [](const std::string &message) {
          llvm::errs() << "tilec compile: warning: " << message << "\n";
        });
  mlir::OwningOpRef<mlir::ModuleOp> module;
  // An .llir or .ptx input: its stage and text.
  std::optional<Stage> artifactStage;
  std::string artifactText;
  if (!kernelName.empty()) {
    if (!inputFile.empty())
      return fail("give either an input file or --kernel, not both");
    const kernel::KernelDefinition *definition =
        kernel::lookupKernel(kernelName);
    if (!definition)
      return fail("unknown kernel '" + kernelName + "' (see --list)");
    if (compileJobs != 1 && !allConfigs)
      return fail("--jobs applies to --all-configs");
    if (allConfigs && !configText.empty())
      return fail("--all-configs compiles the declared configs; drop --config");
    const KernelDescription &description = definition->getDescription();
    if (allConfigs && description.getConfigs().empty())
      return fail(kernelName + " declares no configs to compile");
    auto config = allConfigs
                      ? tilec::Result<tilec::Config>(
                            description.getConfigs().front())
                      : description.parseConfig(configText);
    if (!config)
      return fail("bad --config for " + kernelName + ": " + config.message());
    auto values = parseNamedIntegers(argValues.getValue());
    if (!values)
      return fail("--arg-values: " + values.message());
    auto facts = description.specializationOfArguments(*values);
    if (!facts)
      return fail("--arg-values " + facts.message());
    if (allConfigs)
      return compileAllConfigs(registry, *definition, *facts, options,
                               compileJobs);
    auto specialized = definition->specialize(context, *config, *facts);
    if (mlir::failed(specialized))
      return fail("cannot specialize " + kernelName + " to " + config->str());
    module = std::move(*specialized);
    options.setConfig(*config);
  } else {
    if (allConfigs)
      return fail("--all-configs needs --kernel");
    if (inputFile.empty())
      return fail("no input: give a .ttir file or --kernel <name>");
    if (!argValues.empty())
      return fail("--arg-values applies to --kernel; a .ttir file is "
                  "already specialized");
    if (!configText.empty())
      return fail("--config applies to --kernel; a .ttir file is already "
                  "specialized");
    llvm::StringRef extension = llvm::sys::path::extension(inputFile);
    if (extension == ".llir" || extension == ".ptx") {
      // A later stage's artifact (a dump, or one edited by hand): the
      // stages after it run on it.
      auto buffer = llvm::MemoryBuffer::getFile(inputFile, /*IsText=*/true);
      if (!buffer)
        return fail("cannot read " + inputFile + ": " +
                    buffer.getError().message());
      artifactStage = extension == ".llir" ? Stage::LLIR : Stage::PTX;
      artifactText = (*buffer)->getBuffer().str();
    } else {
      module = mlir::parseSourceFile<mlir::ModuleOp>(inputFile.getValue(),
                                                     sourceMgr, &context);
      if (!module)
        return 1;
    }
  }

  // Each compile runs on its own copy: the passes spend a module.
  auto compileWith = [&](const CompileOptions &with) {
    if (artifactStage)
      return compileFromArtifact(context, *artifactStage, artifactText, with);
    mlir::OwningOpRef<mlir::ModuleOp> copy(module->clone());
    return compileKernel(*copy, with);
  };
  auto compiled = compileWith(options);
  bool cubinFailed = false;
  std::string compileError =
      compiled ? "" : llvm::toString(compiled.takeError());
  if (!compiled && !options.skipCubin &&
      llvm::StringRef(compileError).starts_with("stage cubin failed")) {
    // A cubin stage that fails (no ptxas, a ptxas error) still leaves the
    // stages before it to read: compiled again without it (an earlier
    // stage's failure is reported once, as it is).
    CompileOptions withoutCubin = options;
    withoutCubin.skipCubin = true;
    compiled = compileWith(withoutCubin);
    if (!compiled) {
      llvm::consumeError(compiled.takeError());
      return fail(compileError);
    }
    llvm::errs() << "tilec compile: error: " << compileError << "\n";
    cubinFailed = true;
  } else if (!compiled) {
    return fail(compileError);
  }

  if (!dumpDir.empty()) {
    if (std::error_code error = llvm::sys::fs::create_directories(dumpDir))
      return fail("cannot create " + dumpDir + ": " + error.message());
    auto path = [&](llvm::StringRef suffix) {
      llvm::SmallString<256> result(dumpDir.getValue());
      llvm::sys::path::append(result, compiled->name + suffix);
      return std::string(result);
    };
    // Stages that did not run (before an .llir or .ptx input, a cubin that
    // failed) write nothing.
    for (auto [suffix, text] : {std::pair{".ttir", &compiled->ttir},
                                std::pair{".ttgir", &compiled->ttgir},
                                std::pair{".llir", &compiled->llir},
                                std::pair{".ptx", &compiled->ptx},
                                std::pair{".cubin", &compiled->cubin}})
      if (!text->empty() && !writeArtifact(path(suffix), *text))
        return 1;
    if (!writeArtifact(path(".json"), compiled->metadataJson()))
      return 1;
  }
  if (cubinFailed) {
    if (!dumpDir.empty())
      llvm::errs() << "tilec compile: note: the stages before the cubin are "
                      "in "
                   << dumpDir << "\n";
    return 1;
  }

  for (const std::string &override : compiled->overrides)
    llvm::errs() << "tilec compile: note: " << override
                 << " replaced its stage's output\n";
  if (!compiled->options.dumpDir.empty())
    llvm::errs() << "tilec compile: note: stages dumped to "
                 << compiled->options.dumpDir << "/" << compiled->debugName
                 << "\n";
  llvm::outs() << compiled->name << ": " << compiled->options.target
               << ", " << compiled->options.numWarps << " warps, "
               << compiled->sharedBytes << " B shared";
  if (!compiled->cubin.empty())
    llvm::outs() << ", " << compiled->cubinInfo.registers << " registers, "
                 << compiled->cubinInfo.spillStoreBytes << " B spill stores";
  llvm::outs() << "\n";
  if (compiled->cubinInfo.wgmmaSerialized)
    llvm::errs() << "tilec compile: warning: ptxas serialized the wgmma "
                    "instructions of "
                 << compiled->name
                 << " (each waits for the one before; ptxas -v says why)\n";
  if (printTimings) {
    double total = 0, withoutPtxas = 0;
    llvm::outs() << (options.cache ? "stage    ms      cache\n"
                                   : "stage    ms\n");
    for (const StageTiming &timing : compiled->timings) {
      llvm::outs() << llvm::format("%-7s %7.2f", timing.stage.c_str(),
                                   timing.milliseconds);
      if (options.cache)
        llvm::outs() << "  " << getCacheResultName(timing.cache);
      llvm::outs() << "\n";
      total += timing.milliseconds;
      if (timing.stage != "cubin")
        withoutPtxas += timing.milliseconds;
    }
    llvm::outs() << llvm::format("total   %7.2f  (%.2f without ptxas)\n", total,
                                 withoutPtxas);
  }
  return 0;
}

} // namespace tilec::tool
