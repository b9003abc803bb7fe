//===- Autotuner.cpp - Picking a kernel's config on the device ------------===//

#include "tilec/runtime/Autotuner.h"

#include "TuningRun.h"
#include "tilec/contract/InterpreterDevice.h"
#include "tilec/runtime/Workload.h"

#include <algorithm>
#include <ctime>
#include <string>

namespace tilec::rt {

using namespace tuning;

BenchmarkInputs::~BenchmarkInputs() = default;

const char *getConfigSourceName(ConfigSource source) {
  switch (source) {
  case ConfigSource::Pinned:
    return "pinned";
  case ConfigSource::Cached:
    return "cached";
  case ConfigSource::Tuned:
    return "tuned";
  case ConfigSource::Bundled:
    return "bundle";
  case ConfigSource::Predicted:
    return "predicted";
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// Pruning and the winner
//===----------------------------------------------------------------------===//

std::optional<std::string> pruneReason(const CompileMetadata &metadata,
                                       const DeviceProperties &device) {
  uint32_t threads = metadata.blockThreads();
  if (device.maxThreadsPerBlock > 0 &&
      threads > static_cast<uint32_t>(device.maxThreadsPerBlock))
    return "needs " + std::to_string(threads) +
           " threads per block, the device allows " +
           std::to_string(device.maxThreadsPerBlock);
  if (device.maxSharedBytesPerBlockOptin > 0 &&
      metadata.sharedBytes >
          static_cast<uint32_t>(device.maxSharedBytesPerBlockOptin))
    return "needs " + std::to_string(metadata.sharedBytes) +
           " B of shared memory per block, the device allows " +
           std::to_string(device.maxSharedBytesPerBlockOptin) +
           " B (opt-in maximum)";
  if (metadata.registers && device.maxRegistersPerBlock > 0) {
    // Registers are allocated per warp in units of 256, so a warp of a
    // kernel using r registers per thread takes roundup(32 r, 256).
    int64_t warps = (threads + 31) / 32;
    int64_t perWarp = (int64_t(*metadata.registers) * 32 + 255) / 256 * 256;
    if (perWarp * warps > device.maxRegistersPerBlock)
      return "needs " + std::to_string(*metadata.registers) + " registers x " +
             std::to_string(threads) +
             " threads = " + std::to_string(perWarp * warps) +
             " registers per block, the device has " +
             std::to_string(device.maxRegistersPerBlock);
  }
  return std::nullopt;
}

int selectWinner(const std::vector<ConfigTiming> &timings, double tolerance) {
  int best = -1;
  for (size_t i = 0; i < timings.size(); ++i) {
    const ConfigTiming &timing = timings[i];
    if (timing.status != "ok" || !(timing.medianUs > 0))
      continue;
    if (best < 0 || timing.medianUs < timings[best].medianUs)
      best = static_cast<int>(i);
  }
  if (best < 0)
    return -1;
  // Every median within the tolerance of the best is a tie: differences that
  // small are noise between runs, and picking by config text makes the same
  // measurements give the same winner every time.
  double threshold = timings[best].medianUs * (1 + std::max(0.0, tolerance));
  int winner = -1;
  for (size_t i = 0; i < timings.size(); ++i) {
    const ConfigTiming &timing = timings[i];
    if (timing.status != "ok" || !(timing.medianUs > 0) ||
        timing.medianUs > threshold)
      continue;
    if (winner < 0 || timing.config < timings[winner].config)
      winner = static_cast<int>(i);
  }
  return winner;
}

ScreeningCut screeningCut(const std::vector<ConfigTiming> &timings,
                          const ScreeningOptions &screening) {
  ScreeningCut cut;
  for (size_t i = 0; i < timings.size(); ++i)
    if (timings[i].status == "ok" && timings[i].medianUs > 0)
      cut.order.push_back(i);
  std::sort(cut.order.begin(), cut.order.end(), [&](size_t a, size_t b) {
    if (timings[a].medianUs != timings[b].medianUs)
      return timings[a].medianUs < timings[b].medianUs;
    return timings[a].config < timings[b].config;
  });
  size_t keep = size_t(std::max(1, screening.keep));
  if (cut.order.size() <= keep) {
    cut.kept = cut.order.size();
    return cut;
  }
  // The kept ones first, each part in the order of their medians.
  const double fastest = timings[cut.order.front()].medianUs;
  std::vector<size_t> kept = {cut.order.front()}, rest;
  for (size_t rank = 1; rank < cut.order.size(); ++rank) {
    const ConfigTiming &next = timings[cut.order[rank]];
    bool near = next.medianUs <= fastest * (1 + screening.within) &&
                next.repetitions > 1;
    (near && kept.size() < keep ? kept : rest).push_back(cut.order[rank]);
  }
  cut.kept = kept.size();
  cut.order = std::move(kept);
  cut.order.insert(cut.order.end(), rest.begin(), rest.end());
  return cut;
}

//===----------------------------------------------------------------------===//
// Autotuner
//===----------------------------------------------------------------------===//

Autotuner::Autotuner(KernelProvider &provider, AutotuneCache &cache,
                     PinnedConfigs pins, AutotuneOptions options)
    : provider_(provider), cache_(cache), pins_(std::move(pins)),
      options_(std::move(options)) {}

double unixMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string utcTimestamp() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

std::string specializedAutotuneKey(const std::string &key,
                                   const Specialization &specialization) {
  return specialization.empty() ? key : key + "|" + specialization.str();
}

const std::string &Autotuner::deviceName() const {
  return provider_.context().properties().name;
}

Result<KernelDescription> Autotuner::describe(const std::string &kernel) {
  std::lock_guard<std::mutex> lock(mutex_);
  Result<const KernelDescription *> description = describeLocked(kernel);
  if (!description)
    return description.status();
  return **description;
}

// Kept in descriptions_, so that a select copies no description; a
// bundle's own object is shared with the bundle, not copied.
Result<const KernelDescription *>
Autotuner::describeLocked(const std::string &kernel) {
  if (auto it = descriptions_.find(kernel); it != descriptions_.end())
    return it->second.get();
  auto keep = [&](std::shared_ptr<const KernelDescription> description) {
    return (descriptions_[kernel] = std::move(description)).get();
  };
  if (KernelCompiler *compiler = provider_.compiler()) {
    Result<KernelDescription> description = compiler->describe(kernel);
    if (!description)
      return description.status();
    return keep(
        std::make_shared<const KernelDescription>(std::move(*description)));
  }
  if (std::shared_ptr<const KernelBundle> bundle = provider_.sharedBundle()) {
    Result<const KernelDescription *> bundled = bundle->description(kernel);
    if (!bundled)
      return bundled.status();
    if (*bundled)
      return keep(std::shared_ptr<const KernelDescription>(bundle, *bundled));
    if (provider_.bundlePolicy() == BundlePolicy::Strict)
      return Status::error("kernel '" + kernel + "' is not in " +
                           bundle->origin());
  }
  if (const KernelDescription *stored =
          cache_.findDescription(deviceName(), kernel))
    return keep(std::make_shared<const KernelDescription>(*stored));
  return Status::error("no compiler, and the autotune cache " + cache_.path() +
                       " has no entry of kernel '" + kernel + "' for " +
                       deviceName() + " to read its key and grid from");
}

// Where chosen_ keeps a kernel's choice for a (specialized) autotune key.
static std::string choiceKey(const std::string &kernel,
                             const std::string &key) {
  return kernel + "\n" + key;
}

// select()'s answer from this process's choice (a pin or a bundle stays
// what it was; a tuned result is now cached), without the grid.
static TuneResult answerFromChoice(const TuneResult &choice) {
  TuneResult result = choice;
  if (result.source == ConfigSource::Tuned)
    result.source = ConfigSource::Cached;
  result.timings.clear();
  result.steps.clear();
  return result;
}

const TuneResult *Autotuner::choiceLocked(const std::string &kernel,
                                          const std::string &key) const {
  if (options_.force)
    return nullptr;
  auto it = chosen_.find(choiceKey(kernel, key));
  return it == chosen_.end() ? nullptr : &it->second;
}

std::optional<TuneResult> Autotuner::chosenForKey(const std::string &kernel,
                                                  const std::string &key) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (const TuneResult *choice = choiceLocked(kernel, key))
    return answerFromChoice(*choice);
  return std::nullopt;
}

bool Autotuner::hasChoiceForKey(const std::string &kernel,
                                const std::string &key) {
  std::lock_guard<std::mutex> lock(mutex_);
  return choiceLocked(kernel, key) != nullptr;
}

bool Autotuner::hasChoice(const std::string &kernel, const Call &call) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (options_.force)
    return false;
  Result<const KernelDescription *> description = describeLocked(kernel);
  if (!description)
    return false;
  Result<std::string> key = (*description)->evaluateAutotuneKey(call);
  if (!key)
    return false;
  return choiceLocked(kernel,
                      specializedAutotuneKey(
                          *key, (*description)->specializationOf(call))) !=
         nullptr;
}

// The order of select(): this process's choice, a pin, the bundle, the
// autotune cache; a call none of them answers is tuned where there is a
// compiler.
bool Autotuner::wouldTuneLocked(const std::string &kernel,
                                const KernelDescription &description,
                                const Call &call) {
  if (!provider_.compiler())
    return false;
  Result<std::string> declaredKey = description.evaluateAutotuneKey(call);
  if (!declaredKey)
    return false;
  std::string key =
      specializedAutotuneKey(*declaredKey, description.specializationOf(call));
  // --force skips the memo and the autotune cache, not a pin or a bundle.
  if (!options_.force && chosen_.count(choiceKey(kernel, key)))
    return false;
  if (pins_.find(kernel, *declaredKey))
    return false;
  if (const KernelBundle *bundle = provider_.bundle())
    if (bundle->findSelection(deviceName(), provider_.target(), kernel, key) ||
        provider_.bundlePolicy() == BundlePolicy::Strict)
      return false;
  return options_.force || cachedEntry(kernel, key, description) == nullptr;
}

// A compiler id's first word, "tilec-<version>": what the kernels' code is.
// Builds of one version differ in their build-ids, not in their kernels:
// the tilec tool that warmed the caches up and the library that serves
// from them (docs/deploy.md) are two.
static std::string_view compilerVersion(std::string_view id) {
  return id.substr(0, id.find(' '));
}

// Whether the cubin `metadataJson` describes takes the arguments
// `description` declares, by name and in order (what a call binds by); an
// entry without metadata is taken as it is.
static bool takesDeclaredArguments(const std::string &metadataJson,
                                   const KernelDescription &description) {
  if (metadataJson.empty())
    return true;
  Result<CompileMetadata> metadata = CompileMetadata::parse(metadataJson);
  return metadata && description.takesArguments(metadata->signature);
}

const AutotuneEntry *
Autotuner::cachedEntry(const std::string &kernel, const std::string &key,
                       const KernelDescription &description) const {
  const AutotuneEntry *entry = cache_.find(deviceName(), kernel, key);
  KernelCompiler *compiler = provider_.compiler();
  if (!entry || !compiler)
    return entry;
  std::string ours = compiler->compilerId();
  if (!ours.empty() && !entry->compilerId.empty() &&
      compilerVersion(ours) != compilerVersion(entry->compilerId))
    return nullptr;
  return takesDeclaredArguments(entry->metadataJson, description) ? entry
                                                                  : nullptr;
}

bool Autotuner::wouldTune(const std::string &kernel, const Call &call) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!provider_.compiler())
    return false;
  Result<const KernelDescription *> description = describeLocked(kernel);
  return description && wouldTuneLocked(kernel, **description, call);
}

size_t Autotuner::compileAhead(
    const std::vector<std::pair<std::string, Call>> &calls) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Nothing to describe or look up where nothing can be compiled.
  if (!provider_.compiler())
    return 0;
  provider_.limitCompileAhead(options_.jobs);
  size_t queued = 0;
  for (const auto &[kernel, call] : calls) {
    Result<const KernelDescription *> description = describeLocked(kernel);
    if (!description || !wouldTuneLocked(kernel, **description, call))
      continue;
    Result<std::vector<KernelDescription::CallCandidate>> candidates =
        candidatesToTune(**description, configsToTry(**description), call);
    if (!candidates || candidates->size() < 2)
      continue;
    Specialization specialization = (*description)->specializationOf(call);
    // A first use that predicts compiles its prediction alone.
    if (options_.firstUse == FirstUse::Predict && !onInterpreter()) {
      Result<std::vector<Config>> predicted =
          predictedConfigs(**description, *candidates, call);
      if (predicted && !predicted->empty() &&
          provider_.compileAhead(kernel, predicted->front(), specialization))
        ++queued;
      continue;
    }
    for (const KernelDescription::CallCandidate &candidate : *candidates)
      if (!candidate.pruneReason &&
          provider_.compileAhead(kernel, candidate.config, specialization))
        ++queued;
  }
  return queued;
}

size_t Autotuner::retirePredictions() {
  std::lock_guard<std::mutex> lock(mutex_);
  provider_.limitCompileAhead(options_.jobs);
  size_t retired = 0;
  for (const auto &[memoKey, predictedCall] : predicted_) {
    auto choice = chosen_.find(memoKey);
    if (choice == chosen_.end() ||
        choice->second.source != ConfigSource::Predicted)
      continue;
    chosen_.erase(choice);
    ++retired;
    const auto &[kernel, call] = predictedCall;
    Result<const KernelDescription *> description = describeLocked(kernel);
    if (!description)
      continue;
    Result<std::vector<Candidate>> candidates =
        collectCandidates(**description, configsToTry(**description), call);
    if (!candidates)
      continue;
    Specialization specialization = (*description)->specializationOf(call);
    for (const Candidate &candidate : *candidates)
      if (candidate.timing.status != "pruned")
        provider_.compileAhead(kernel, candidate.config, specialization);
  }
  predicted_.clear();
  // From here on a new key is tuned too: a program that predicts while it
  // starts retires that once, then tunes what it meets.
  options_.firstUse = FirstUse::Tune;
  return retired;
}

FirstUse Autotuner::firstUse() {
  std::lock_guard<std::mutex> lock(mutex_);
  return options_.firstUse;
}

size_t Autotuner::predictionCount() {
  std::lock_guard<std::mutex> lock(mutex_);
  return size_t(
      std::count_if(chosen_.begin(), chosen_.end(), [](const auto &c) {
        return c.second.source == ConfigSource::Predicted;
      }));
}

Result<TuneResult> Autotuner::select(const std::string &kernel,
                                     const Call &call,
                                     const InputsFactory &inputs) {
  WorkloadRecorder::process().recordKernelCall(kernel, call);
  std::lock_guard<std::mutex> lock(mutex_);
  Clock::time_point start = Clock::now();
  std::vector<std::pair<std::string, double>> steps;
  Clock::time_point stepStart = start;
  auto step = [&](const char *name) {
    Clock::time_point now = Clock::now();
    steps.emplace_back(
        name,
        std::chrono::duration<double, std::micro>(now - stepStart).count());
    stepStart = now;
  };
  auto finish = [&](TuneResult result) -> Result<TuneResult> {
    result.totalMs = msSince(start);
    result.steps.insert(result.steps.begin(), steps.begin(), steps.end());
    return result;
  };

  Result<const KernelDescription *> described = describeLocked(kernel);
  if (!described)
    return described.status();
  const KernelDescription *description = *described;
  step("describe");
  Result<std::string> key = description->evaluateAutotuneKey(call);
  if (!key)
    return key.status();
  // Pins name the declared key; results are kept per specialization too,
  // since the winner's cubin was compiled for it.
  const std::string declaredKey = *key;
  const Specialization specialization = description->specializationOf(call);
  *key = specializedAutotuneKey(declaredKey, specialization);
  step("key");

  std::string memoKey = choiceKey(kernel, *key);
  if (const TuneResult *choice = choiceLocked(kernel, *key)) {
    TuneResult result = answerFromChoice(*choice);
    Result<Dim3> grid = description->evaluateGrid(result.config, call);
    if (!grid)
      return grid.status();
    result.grid = *grid;
    step("memo");
    return finish(std::move(result));
  }

  auto chooseLoaded =
      [&](ConfigSource source, Config config, const std::string &cubinKey,
          const std::string &metadataJson) -> Result<TuneResult> {
    KernelProvider::LoadStats stats;
    Result<std::shared_ptr<const Kernel>> loaded = provider_.getCached(
        kernel, config, specialization, cubinKey, metadataJson, &stats);
    if (!loaded)
      return loaded.status();
    // The provider's own breakdown, then whatever else the step took.
    double accounted = stats.cacheReadUs + stats.compileUs + stats.moduleLoadUs;
    if (stats.cacheReadUs > 0)
      steps.emplace_back(stats.fromBundle ? "find cubin (bundle)"
                                          : "read cubin (stage cache)",
                         stats.cacheReadUs);
    if (stats.compiled)
      steps.emplace_back("compile", stats.compileUs);
    if (stats.moduleLoadUs > 0)
      steps.emplace_back("load module", stats.moduleLoadUs);
    step("provider");
    steps.back().second -= accounted;
    Result<Dim3> grid = description->evaluateGrid(config, call);
    if (!grid)
      return grid.status();
    step("grid");
    TuneResult result;
    result.kernelName = kernel;
    result.key = *key;
    result.source = source;
    result.config = std::move(config);
    result.kernel = std::move(*loaded);
    result.grid = *grid;
    chosen_[memoKey] = result;
    return finish(std::move(result));
  };

  if (std::optional<std::string> pinned = pins_.find(kernel, declaredKey)) {
    Result<Config> parsed = Config::parse(*pinned);
    if (!parsed)
      return parsed.status().withContext("pinned config of " + kernel);
    Result<Config> config = description->configForCall(*parsed, call);
    if (!config)
      return config.status().withContext("pinned config of " + kernel);
    step("pin");
    return chooseLoaded(ConfigSource::Pinned, std::move(*config), "", "");
  }

  if (const KernelBundle *bundle = provider_.bundle()) {
    if (const BundleSelection *selection = bundle->findSelection(
            deviceName(), provider_.target(), kernel, *key)) {
      Result<Config> config =
          Config::parse(bundle->cubin(selection->cubin).config);
      if (!config)
        return config.status().withContext(bundle->origin() + ", " + kernel +
                                           " " + *key);
      step("bundle");
      Result<TuneResult> chosen =
          chooseLoaded(ConfigSource::Bundled, std::move(*config), "", "");
      if (chosen)
        chosen_[memoKey].medianUs = chosen->medianUs = selection->medianUs;
      return chosen;
    }
    if (provider_.bundlePolicy() == BundlePolicy::Strict)
      return Status::error(
          ErrorKind::Compile,
          "no winner for " + kernel + " " + *key + " on " + deviceName() +
              " in " + bundle->origin() +
              " (warm up and pack a workload that includes this call, or set "
              "TILEC_BUNDLE_FALLBACK=1 to use the caches and the compiler)");
  }

  if (!options_.force) {
    if (const AutotuneEntry *entry = cachedEntry(kernel, *key, *description)) {
      Result<Config> config = Config::parse(entry->config);
      if (!config)
        return config.status().withContext("autotune cache " + cache_.path() +
                                           ", " + kernel + " " + *key);
      step("lookup");
      Result<TuneResult> chosen =
          chooseLoaded(ConfigSource::Cached, std::move(*config),
                       entry->cubinKey, entry->metadataJson);
      if (chosen)
        chosen_[memoKey].medianUs = chosen->medianUs = entry->winnerMedianUs();
      return chosen;
    }
    step("lookup");
  }

  if (!provider_.compiler())
    return Status::error("no tuned config for " + kernel + " " + *key + " on " +
                         deviceName() + " in " + cache_.path() +
                         ", and no compiler to tune with");
  bool benchmarks = inputs && !onInterpreter();
  Result<TuneResult> tuned =
      !benchmarks ? adoptOnlyCandidate(*description, call, *key, specialization)
      : options_.firstUse == FirstUse::Predict
          ? predict(*description, call, *key, specialization, inputs)
          : tune(*description, call, *key, specialization, inputs);
  if (!tuned)
    return tuned.status();
  step(tuned->source == ConfigSource::Predicted ? "predict" : "tune");
  chosen_[memoKey] = *tuned;
  if (tuned->source == ConfigSource::Predicted)
    predicted_[memoKey] = {kernel, call};
  return finish(std::move(*tuned));
}

Result<TuneResult> Autotuner::tune(const KernelDescription &description,
                                   const Call &call, const std::string &key,
                                   const Specialization &specialization,
                                   const InputsFactory &inputs) {
  const std::string &kernel = description.getName();
  Clock::time_point start = Clock::now();
  double startedUnixMs = unixMs();
  Result<std::vector<Candidate>> candidates =
      collectCandidates(description, configsToTry(description), call);
  if (!candidates)
    return candidates.status();
  const size_t total = candidates->size();
  TuneProgress progress(options_.progress, "tune " + kernel + " [" + key + "]",
                        total);
  const DeviceProperties &device = provider_.context().properties();
  CompilePool pool(*candidates, compileJobs(options_.jobs, total),
                   [&](Candidate &candidate) {
                     compileCandidate(provider_, kernel, specialization,
                                      candidate);
                     pruneCandidate(candidate, device);
                   });
  progress.report(pool.compiled());

  // The inputs are built while the candidates compile.
  Clock::time_point inputsStart = Clock::now();
  Result<std::shared_ptr<const BenchmarkInputs>> problem = inputs();
  double inputsMs = msSince(inputsStart);
  if (!problem)
    return problem.status().withContext("building the inputs of " + kernel);
  if (!benchmarker_) {
    Result<Benchmarker> benchmarker = Benchmarker::create(provider_.context());
    if (!benchmarker)
      return benchmarker.status();
    benchmarker_ = std::make_unique<Benchmarker>(std::move(*benchmarker));
  }
  Result<double> benchmarkMs =
      benchmarkCandidates(pool, total, provider_, *benchmarker_, **problem,
                          description, call, options_, progress);
  if (!benchmarkMs)
    return benchmarkMs.status();
  pool.join();
  progress.line.finish();

  Result<TuneResult> result =
      pickWinner(description, call, key, *candidates, options_.tieTolerance);
  if (!result)
    return result.status();
  result->flops = (*problem)->flops();
  result->medianUs = result->timings[result->winnerIndex].medianUs;
  result->compileMs = pool.compileMs();
  result->inputsMs = inputsMs;
  result->benchmarkMs = *benchmarkMs;
  // Every candidate that ran, the winner among them, stays loaded for the
  // tunings of other keys that try the same cubin (a network's layers, a
  // map kernel's buckets).
  for (const Candidate &candidate : *candidates)
    if (candidate.kernel && candidate.timing.timed())
      provider_.insert(kernel, candidate.config, specialization,
                       candidate.kernel);
  const Candidate &winner = (*candidates)[result->winnerIndex];
  if (options_.persist) {
    AutotuneEntry entry =
        makeEntry(description, winner, result->timings, provider_.target(),
                  options_.benchmark.budgetMs);
    entry.tuning = {startedUnixMs, msSince(start), result->compileMs,
                    result->inputsMs, result->benchmarkMs};
    if (Status status = cache_.store(deviceName(), kernel, key, entry);
        !status.ok())
      result->persistWarning = status.message();
  }
  result->totalMs = msSince(start);
  return result;
}

Result<std::vector<Config>> Autotuner::predictedConfigs(
    const KernelDescription &description,
    const std::vector<KernelDescription::CallCandidate> &candidates,
    const Call &call) const {
  if (options_.configs.empty())
    return description.predictedConfigs(candidates, call);
  // Configs the caller gave: those a tuning would try, in its order.
  std::vector<Config> configs;
  for (const KernelDescription::CallCandidate &candidate : candidates)
    if (!candidate.pruneReason)
      configs.push_back(candidate.config);
  return configs;
}

Result<TuneResult> Autotuner::predict(const KernelDescription &description,
                                      const Call &call, const std::string &key,
                                      const Specialization &specialization,
                                      const InputsFactory &inputs) {
  const std::string &kernel = description.getName();
  Clock::time_point start = Clock::now();
  Result<std::vector<KernelDescription::CallCandidate>> candidates =
      candidatesToTune(description, configsToTry(description), call);
  if (!candidates)
    return candidates.status();
  // Nothing to predict between: recorded as a tuning records it.
  if (candidates->size() == 1)
    return adoptOnlyCandidate(description, call, key, specialization);
  Result<std::vector<Config>> configs =
      predictedConfigs(description, *candidates, call);
  if (!configs)
    return configs.status();
  const DeviceProperties &device = provider_.context().properties();
  for (const Config &config : *configs) {
    // As a tuning treats a candidate: one that does not compile, exceeds
    // the device's block resources, does not load or breaks a requirement
    // is passed over for the next.
    std::shared_ptr<const Kernel> loaded =
        provider_.findLoaded(kernel, config, specialization);
    if (!loaded) {
      Result<CompiledArtifact> artifact =
          provider_.compile(kernel, config, specialization);
      if (!artifact || pruneReason(artifact->metadata, device))
        continue;
      Result<std::shared_ptr<const Kernel>> made = provider_.load(*artifact);
      if (!made)
        continue;
      loaded = std::move(*made);
      provider_.insert(kernel, config, specialization, loaded);
    }
    Result<Dim3> grid = description.evaluateGrid(config, call);
    if (!grid)
      continue;
    TuneResult result;
    result.kernelName = kernel;
    result.key = key;
    result.source = ConfigSource::Predicted;
    result.config = config;
    result.kernel = std::move(loaded);
    result.grid = *grid;
    result.compileMs = msSince(start);
    result.totalMs = msSince(start);
    return result;
  }
  // No prediction runs on this device: the tuning says why of each.
  return tune(description, call, key, specialization, inputs);
}

std::vector<Config>
Autotuner::configsToTry(const KernelDescription &description) const {
  const std::vector<Config> &configs =
      options_.configs.empty() ? description.getConfigs() : options_.configs;
  if (onInterpreter() && configs.size() > 1)
    return {configs.front()};
  return configs;
}

bool Autotuner::onInterpreter() const {
  return provider_.target() == kInterpreterTarget;
}

// A kernel with a single candidate has nothing to choose between: the
// candidate is compiled, checked against the device and recorded as the
// winner without a benchmark, so that a call without inputs (the sparse
// convolution's map kernels) still leaves its cubin's key in the autotune
// cache for `tilec pack`.
Result<TuneResult>
Autotuner::adoptOnlyCandidate(const KernelDescription &description,
                              const Call &call, const std::string &key,
                              const Specialization &specialization) {
  const std::string &kernel = description.getName();
  Clock::time_point start = Clock::now();
  double startedUnixMs = unixMs();
  Result<std::vector<Candidate>> candidates =
      collectCandidates(description, configsToTry(description), call);
  if (!candidates)
    return candidates.status();
  if (candidates->size() != 1)
    return Status::error("no tuned config for " + kernel + " " + key + " on " +
                         deviceName() + ", and no inputs to tune its " +
                         std::to_string(candidates->size()) +
                         " candidates with");
  Candidate &only = candidates->front();
  compileCandidate(provider_, kernel, specialization, only);
  pruneCandidate(only, provider_.context().properties());
  if (only.timing.status != "ok")
    return Status::error(only.timing.status == "pruned"
                             ? ErrorKind::Resources
                             : ErrorKind::Unspecified,
                         kernel + " " + only.text + " " + only.timing.status +
                             ": " + only.timing.reason);
  Result<std::shared_ptr<const Kernel>> loaded =
      only.kernel ? Result<std::shared_ptr<const Kernel>>(only.kernel)
                  : provider_.load(only.artifact);
  if (!loaded)
    return loaded.status().withContext(kernel + " " + only.text);
  Result<Dim3> grid = description.evaluateGrid(only.config, call);
  if (!grid)
    return grid.status();
  only.timing.status = "only";
  only.timing.reason = "the only candidate: not benchmarked";
  TuneResult result;
  result.kernelName = kernel;
  result.key = key;
  result.source = ConfigSource::Tuned;
  result.config = only.config;
  result.kernel = *loaded;
  result.grid = *grid;
  result.timings = {only.timing};
  result.winnerIndex = 0;
  result.compileMs = only.timing.compileMs;
  provider_.insert(kernel, only.config, specialization, result.kernel);
  if (options_.persist) {
    AutotuneEntry entry =
        makeEntry(description, only, result.timings, provider_.target(), 0);
    entry.tuning = {startedUnixMs, msSince(start), result.compileMs, 0, 0};
    if (Status status = cache_.store(deviceName(), kernel, key, entry);
        !status.ok())
      result.persistWarning = status.message();
  }
  result.totalMs = msSince(start);
  return result;
}

} // namespace tilec::rt
