//===- TuneCommand.cpp - tilec tune ---------------------------------------===//
//
// Autotunes a kernel from kernels/ for one call (sizes, types) on the GPU:
// compiles the kernel's candidate configs in parallel, prunes the ones the
// device cannot run, benchmarks the rest with the L2 flushed, prints a table
// and the winner, and persists it in the autotune cache. `--show` prints the
// autotune cache. See docs/autotune.md.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "TuningSession.h"

#include "tilec/Harness/KernelHarness.h"
#include "tilec/JIT/TilecJIT.h"
#include "tilec/Kernel/KernelRegistry.h"
#include "tilec/runtime/AutotuneCache.h"
#include "tilec/runtime/Autotuner.h"
#include "tilec/runtime/Context.h"
#include "tilec/runtime/FileIO.h"
#include "tilec/runtime/KernelProvider.h"
#include "tilec/runtime/Session.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>

namespace cl = llvm::cl;

namespace tilec::tool {

cl::SubCommand tuneCommand("tune",
                           "Autotune a kernel's configs on the GPU for one "
                           "call, or show the autotune cache");

static cl::OptionCategory category("tilec tune options");
static cl::opt<std::string> kernelName("kernel",
                                       cl::desc("A kernel from kernels/"),
                                       cl::init(""), cl::sub(tuneCommand),
                                       cl::cat(category));
static cl::opt<std::string>
    sizesText("sizes",
              cl::desc("Problem sizes, e.g. M=4096,N=4096,K=4096 (default: the "
                       "harness's sizes of the kernel)"),
              cl::init(""), cl::sub(tuneCommand), cl::cat(category));
static cl::opt<std::string>
    typesText("types", cl::desc("Type parameters of the call, e.g. DTYPE=f16"),
              cl::init(""), cl::sub(tuneCommand), cl::cat(category));
static cl::opt<std::string>
    paramsText("params",
               cl::desc("Meta-parameters fixed by the call, e.g. ALLOW_TF32=1"),
               cl::init(""), cl::sub(tuneCommand), cl::cat(category));
static cl::opt<std::string> configsText(
    "configs",
    cl::desc("Candidates to try instead of the kernel's, separated by ';'"),
    cl::init(""), cl::sub(tuneCommand), cl::cat(category));
static cl::opt<double> budgetMs(
    "budget-ms",
    cl::desc("Time of the timed repetitions per config, ms (default 20)"),
    cl::init(20), cl::sub(tuneCommand), cl::cat(category));
static cl::opt<double> warmupMs(
    "warmup-ms",
    cl::desc("Warm-up per config where the GPU may have lowered its clocks "
             "(the first, or after 100 ms idle), ms (default 5; 0.25 right "
             "after another config)"),
    cl::init(5), cl::sub(tuneCommand), cl::cat(category));
static cl::opt<int> screenKeep(
    "screen-keep",
    cl::desc("Where there are more configs than this, time each on the "
             "screening budget (--screen-budget-ms) first, then only the "
             "fastest this many (within 10%) in full; 0 times every config "
             "in full (default 4, or TILEC_AUTOTUNE_SCREEN)"),
    cl::init(-1), cl::sub(tuneCommand), cl::cat(category));
static cl::opt<double> screenBudgetMs(
    "screen-budget-ms",
    cl::desc("Time of the timed repetitions per config in the screening "
             "round, ms (default 4)"),
    cl::init(4), cl::sub(tuneCommand), cl::cat(category));
static cl::opt<double> targetError(
    "target-error",
    cl::desc("Stop timing a config once its median's standard error is at "
             "most this percentage (default 0.5, or "
             "TILEC_AUTOTUNE_TARGET_ERROR); 0 times every repetition the "
             "budget allows, in both rounds"),
    cl::init(0.5), cl::sub(tuneCommand), cl::cat(category));
static cl::opt<double> screenTargetError(
    "screen-target-error",
    cl::desc("The same for the screening round, percent (default 2)"),
    cl::init(2), cl::sub(tuneCommand), cl::cat(category));
static cl::opt<double> tieTolerance(
    "tie-tolerance",
    cl::desc("Medians within this fraction of the best tie (default 0.01); "
             "ties go to the first config in text order"),
    cl::init(0.01), cl::sub(tuneCommand), cl::cat(category));
static cl::opt<double> stopFactor(
    "stop-factor",
    cl::desc("Stop measuring a config after one launch when it takes more "
             "than this many times the best median so far (and over 1 ms); "
             "0 measures every config fully (default 3)"),
    cl::init(3), cl::sub(tuneCommand), cl::cat(category));
static cl::opt<unsigned>
    jobs("jobs",
         cl::desc("Parallel compiles (default: one per config, at "
                  "most the hardware threads)"),
         cl::init(0), cl::sub(tuneCommand), cl::cat(category));
static cl::opt<bool>
    showProgress("progress",
                 cl::desc("Progress on stderr even when it is not a terminal"),
                 cl::sub(tuneCommand), cl::cat(category));
static cl::opt<bool> quiet("quiet", cl::desc("No progress output"),
                           cl::sub(tuneCommand), cl::cat(category));
static cl::opt<bool>
    force("force", cl::desc("Tune even when the autotune cache has the key"),
          cl::sub(tuneCommand), cl::cat(category));
static cl::opt<bool> noCache(
    "no-cache",
    cl::desc("Compile every stage without the stage cache (TILEC_CACHE_DIR)"),
    cl::sub(tuneCommand), cl::cat(category));
static cl::opt<bool>
    noPersist("no-persist",
              cl::desc("Do not write the result to the autotune cache"),
              cl::sub(tuneCommand), cl::cat(category));
static cl::opt<int> device("device", cl::desc("CUDA device ordinal"),
                           cl::init(0), cl::sub(tuneCommand),
                           cl::cat(category));
static cl::opt<unsigned> seed("seed", cl::desc("Seed of the random inputs"),
                              cl::init(1), cl::sub(tuneCommand),
                              cl::cat(category));
static cl::opt<std::string>
    jsonPath("json",
             cl::desc("Also write the result (with --show: the "
                      "cache's entries) as JSON to this file"),
             cl::init(""), cl::sub(tuneCommand), cl::cat(category));
static cl::opt<bool> show("show",
                          cl::desc("Print the autotune cache "
                                   "($TILEC_AUTOTUNE_CACHE) and exit"),
                          cl::sub(tuneCommand), cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "tilec tune: error: " << message << "\n";
  return 1;
}

static std::string formatTflops(double flops, double us) {
  if (!(flops > 0) || !(us > 0))
    return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f", flops / (us * 1e-6) / 1e12);
  return buffer;
}

// --show --json: the entries as a list, one object each.
static int writeShowJson(const rt::AutotuneCache &cache) {
  nlohmann::ordered_json json;
  json["autotune_cache"] = cache.path();
  json["entries"] = nlohmann::ordered_json::array();
  for (const auto &[deviceName, kernels] : cache.entries())
    for (const auto &[kernel, keys] : kernels)
      for (const auto &[key, entry] : keys) {
        size_t ran = std::count_if(entry.timings.begin(), entry.timings.end(),
                                   std::mem_fn(&rt::ConfigTiming::timed));
        json["entries"].push_back({{"device", deviceName},
                                   {"kernel", kernel},
                                   {"key", key},
                                   {"winner", entry.config},
                                   {"median_us", entry.winnerMedianUs()},
                                   {"configs_ran", ran},
                                   {"configs", entry.timings.size()},
                                   {"tuned_at", entry.tunedAt},
                                   {"cubin_cached", !entry.cubinKey.empty()}});
      }
  if (tilec::Status status =
          rt::writeFileAtomically(jsonPath.getValue(), json.dump(2) + "\n");
      !status.ok())
    return fail(status.message());
  return 0;
}

Result<rt::SessionOptions> tuningSessionOptions(int device, bool quiet,
                                                bool showProgress) {
  rt::Environment environment = rt::readEnvironment();
  environment.bundle.clear();
  auto options = rt::SessionOptions::fromEnvironment(environment);
  if (!options)
    return options.status();
  options->device = device;
  options->compiler = jit::compilerFactory();
  // These commands exist to tune and persist: TILEC_FIRST_USE=predict
  // would leave every key unmeasured and the caches (and a pack) empty.
  options->tuning.firstUse = rt::FirstUse::Tune;
  options->tuning.progress = quiet          ? rt::ProgressMode::Never
                             : showProgress ? rt::ProgressMode::Always
                                            : rt::ProgressMode::Auto;
  return options;
}

static int runShow() {
  rt::AutotuneCache cache(rt::readEnvironment().autotuneCachePath());
  if (tilec::Status status = cache.load(); !status.ok())
    return fail(status.message());
  for (const std::string &warning : cache.warnings())
    llvm::errs() << "tilec tune: warning: " << warning << "\n";
  if (!jsonPath.empty())
    if (int failed = writeShowJson(cache))
      return failed;
  size_t count = 0;
  for (const auto &[deviceName, kernels] : cache.entries())
    for (const auto &[kernel, keys] : kernels)
      count += keys.size();
  if (count == 0) {
    llvm::outs() << "autotune cache " << cache.path() << ": empty\n";
    return 0;
  }
  llvm::outs() << "autotune cache " << cache.path() << ": " << count
               << (count == 1 ? " entry" : " entries") << "\n";
  for (const auto &[deviceName, kernels] : cache.entries()) {
    llvm::outs() << deviceName << "\n";
    for (const auto &[kernel, keys] : kernels) {
      llvm::outs() << "  " << kernel << "\n";
      for (const auto &[key, entry] : keys) {
        llvm::outs() << "    " << key << "\n      winner " << entry.config;
        if (double median = entry.winnerMedianUs(); median > 0)
          llvm::outs() << llvm::format("  %.1f us", median);
        size_t ran = std::count_if(entry.timings.begin(), entry.timings.end(),
                                   std::mem_fn(&rt::ConfigTiming::timed));
        llvm::outs() << "\n      " << ran << "/" << entry.timings.size()
                     << " configs ran";
        if (!entry.tunedAt.empty())
          llvm::outs() << ", tuned " << entry.tunedAt;
        llvm::outs() << (entry.cubinKey.empty() ? ", cubin not cached"
                                                : ", cubin cached")
                     << "\n";
      }
    }
  }
  return 0;
}

static void printTable(const rt::TuneResult &result) {
  size_t width = 6;
  for (const rt::ConfigTiming &timing : result.timings)
    width = std::max(width, timing.config.size());
  llvm::outs() << llvm::left_justify("config", width)
               << "   regs    smem B  spill B  compile ms  median us"
                  "  p20-p80 us       TFLOP/s  status\n";
  for (size_t i = 0; i < result.timings.size(); ++i) {
    const rt::ConfigTiming &timing = result.timings[i];
    llvm::outs() << llvm::left_justify(timing.config, width);
    if (timing.registers >= 0)
      llvm::outs() << llvm::format("  %5d  %8lld  %7lld", timing.registers,
                                   (long long)timing.sharedBytes,
                                   (long long)timing.spillBytes);
    else
      llvm::outs() << "      -         -        -";
    llvm::outs() << llvm::format("  %10.1f", timing.compileMs);
    if (timing.timed())
      llvm::outs() << llvm::format("  %9.1f  %5.1f-%-7.1f", timing.medianUs,
                                   timing.p20Us, timing.p80Us)
                   << llvm::right_justify(
                          formatTflops(result.flops, timing.medianUs), 9);
    else
      llvm::outs() << "          -  -                    -";
    llvm::outs() << "  "
                 << (static_cast<int>(i) == result.winnerIndex ? "* winner"
                                                               : timing.status);
    if (!timing.reason.empty()) {
      std::string reason = timing.reason.substr(0, timing.reason.find('\n'));
      llvm::outs() << ": " << reason;
    }
    llvm::outs() << "\n";
  }
}

static bool writeJson(const rt::TuneResult &result, const rt::Context &context,
                      const std::string &cachePath) {
  nlohmann::ordered_json json;
  json["kernel"] = result.kernelName;
  json["key"] = result.key;
  json["device"] = context.properties().name;
  json["target"] = context.properties().compileTarget();
  json["source"] = rt::getConfigSourceName(result.source);
  json["config"] = result.config.str();
  json["grid"] = {result.grid.x, result.grid.y, result.grid.z};
  json["total_ms"] = result.totalMs;
  json["compile_ms"] = result.compileMs;
  json["inputs_ms"] = result.inputsMs;
  json["benchmark_ms"] = result.benchmarkMs;
  json["flops"] = result.flops;
  json["autotune_cache"] = cachePath;
  nlohmann::ordered_json steps = nlohmann::ordered_json::object();
  for (const auto &[name, us] : result.steps)
    steps[name] = us;
  json["steps_us"] = steps;
  json["timings"] = nlohmann::ordered_json::array();
  for (const rt::ConfigTiming &timing : result.timings) {
    nlohmann::ordered_json row = {{"config", timing.config},
                                  {"status", timing.status},
                                  {"registers", timing.registers},
                                  {"shared_bytes", timing.sharedBytes},
                                  {"spill_bytes", timing.spillBytes},
                                  {"compile_ms", timing.compileMs},
                                  {"median_us", timing.medianUs},
                                  {"p20_us", timing.p20Us},
                                  {"p80_us", timing.p80Us},
                                  {"reps", timing.repetitions}};
    if (!timing.reason.empty())
      row["reason"] = timing.reason;
    json["timings"].push_back(row);
  }
  std::ofstream out(jsonPath.getValue());
  out << json.dump(2) << "\n";
  return static_cast<bool>(out);
}

int runTune() {
  if (show)
    return runShow();
  if (kernelName.empty())
    return fail("--kernel is required (or --show)");
  if (showProgress && quiet)
    return fail("--progress and --quiet exclude each other");
  // The benchmark's times and factors, before the GPU.
  for (auto [name, value] :
       {std::pair{"--budget-ms", budgetMs.getValue()},
        std::pair{"--screen-budget-ms", screenBudgetMs.getValue()}})
    if (!(value > 0) || !std::isfinite(value))
      return fail(std::string(name) + " must be a positive number of ms");
  for (auto [name, value] :
       {std::pair{"--warmup-ms", warmupMs.getValue()},
        std::pair{"--tie-tolerance", tieTolerance.getValue()},
        std::pair{"--stop-factor", stopFactor.getValue()}})
    if (!(value >= 0) || !std::isfinite(value))
      return fail(std::string(name) + " must be a finite number, 0 or more");
  if (screenKeep < -1)
    return fail("--screen-keep must be 0 or more");
  if (!(targetError >= 0 && targetError <= 50))
    return fail("--target-error must be a percentage from 0 to 50");
  if (!(screenTargetError >= 0 && screenTargetError <= 50))
    return fail("--screen-target-error must be a percentage from 0 to 50");

  const kernel::KernelDefinition *definition =
      kernel::lookupKernel(kernelName);
  if (!definition)
    return fail("unknown kernel '" + kernelName + "' (known: " +
                kernel::knownKernelNames() + ")");
  harness::RunRequest request =
      harness::requestFor(definition->getDescription());
  request.seed = seed;
  if (!sizesText.empty()) {
    auto sizes = harness::parseSizes(sizesText);
    if (!sizes)
      return fail("--sizes: " + sizes.message());
    for (const auto &[name, value] : *sizes)
      request.call.sizes[name] = value;
  }
  if (!typesText.empty()) {
    auto types = parseNamedTypes(typesText);
    if (!types)
      return fail("--types: " + types.message());
    request.call.types = *types;
  }
  if (!paramsText.empty()) {
    auto params = parseNamedIntegers(paramsText);
    if (!params)
      return fail("--params: " + params.message());
    request.call.params = *params;
  }
  // The GPU first: without one, say so before compiling anything.
  auto sessionOptions = tuningSessionOptions(device, quiet, showProgress);
  if (!sessionOptions)
    return fail(sessionOptions.message());
  if (noCache)
    sessionOptions->stageCacheDirectory.clear();
  rt::AutotuneOptions &options = sessionOptions->tuning;
  options.benchmark.budgetMs = budgetMs;
  options.benchmark.warmupMs = warmupMs;
  if (screenKeep >= 0)
    options.screening.keep = screenKeep;
  options.screening.budgetMs = screenBudgetMs;
  // Unless given, the session's (TILEC_AUTOTUNE_TARGET_ERROR or 0.5%).
  if (targetError.getNumOccurrences())
    options.benchmark.targetError = targetError / 100;
  options.screening.targetError = screenTargetError / 100;
  options.tieTolerance = tieTolerance;
  options.stopFactor = stopFactor;
  options.jobs = jobs;
  options.force = force;
  options.persist = !noPersist;
  if (!configsText.empty()) {
    llvm::SmallVector<llvm::StringRef> items;
    llvm::StringRef(configsText).split(items, ';', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef item : items) {
      auto config = tilec::Config::parse(item.trim());
      if (!config)
        return fail("--configs: " + config.message());
      options.configs.push_back(*config);
    }
  }
  auto session = rt::Session::create(std::move(*sessionOptions));
  if (!session)
    return fail(session.message());
  rt::Context *context = &(*session)->context();
  rt::KernelProvider &provider = (*session)->provider();
  rt::AutotuneCache &cache = (*session)->autotuneCache();
  rt::Autotuner *autotuner = &(*session)->autotuner();
  for (const std::string &warning : cache.warnings())
    llvm::errs() << "tilec tune: warning: " << warning << "\n";

  // The autotuner derives the strides the call leaves out from the
  // description, and specializes on them too.
  const tilec::Call &call = request.call;
  rt::InputsFactory inputs = harness::benchmarkInputsFor(*context, request);
  auto result = autotuner->select(kernelName, call, inputs);
  if (!result)
    return fail(result.message());

  llvm::outs() << kernelName << " on " << context->properties().name << " ("
               << provider.target() << "), key " << result->key << "\n";
  if (result->source == rt::ConfigSource::Tuned) {
    printTable(*result);
    const rt::ConfigTiming &winner = result->timings[result->winnerIndex];
    llvm::outs() << "winner: " << winner.config
                 << llvm::format("  %.1f us", winner.medianUs);
    std::string tflops = formatTflops(result->flops, winner.medianUs);
    if (tflops != "-")
      llvm::outs() << "  " << tflops << " TFLOP/s";
    llvm::outs() << "\n"
                 << llvm::format(
                        "time: %.0f ms (compile %.0f ms, %zu configs, "
                        "inputs %.0f ms overlapped, benchmark %.0f ms)",
                        result->totalMs, result->compileMs,
                        result->timings.size(), result->inputsMs,
                        result->benchmarkMs)
                 << "\n";
    if (!result->persistWarning.empty())
      llvm::errs() << "tilec tune: warning: " << result->persistWarning << "\n";
    else if (!noPersist)
      llvm::outs() << "persisted to " << cache.path() << "\n";
  } else {
    // A cached winner: show the timings it was chosen by.
    if (const rt::AutotuneEntry *entry =
            cache.find(context->properties().name, kernelName, result->key);
        entry && result->source == rt::ConfigSource::Cached &&
        !entry->timings.empty()) {
      rt::TuneResult stored;
      stored.timings = entry->timings;
      if (auto flops =
              definition->getDescription().evaluateFlops(request.call))
        stored.flops = *flops;
      for (size_t i = 0; i < entry->timings.size(); ++i)
        if (entry->timings[i].config == entry->config)
          stored.winnerIndex = static_cast<int>(i);
      printTable(stored);
    }
    llvm::outs() << rt::getConfigSourceName(result->source) << ": "
                 << result->config.str()
                 << (result->source == rt::ConfigSource::Pinned
                         ? " (TILEC_PIN_CONFIG / TILEC_PIN_FILE)"
                         : " (from " + cache.path() + "; --force tunes again)")
                 << llvm::format("\ntime: %.3f ms", result->totalMs) << "\n";
  }
  if (!jsonPath.empty() && !writeJson(*result, *context, cache.path()))
    return fail("cannot write " + jsonPath);
  return 0;
}

} // namespace tilec::tool
