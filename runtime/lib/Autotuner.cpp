//===- Autotuner.cpp - Picking a kernel's config on the device ------------===//

#include "tilec/runtime/Autotuner.h"
#include "tilec/contract/JsonError.h"

#include "tilec/runtime/FileIO.h"
#include "tilec/runtime/Workload.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <set>
#include <thread>
#include <unistd.h>

namespace tilec::rt {

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
  }
  return "?";
}

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

std::string formatUs(double us) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f us", us);
  return buffer;
}

} // namespace

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

//===----------------------------------------------------------------------===//
// Pins
//===----------------------------------------------------------------------===//

Result<PinnedConfigs> PinnedConfigs::parseSpec(std::string_view spec) {
  PinnedConfigs pins;
  size_t start = 0;
  while (start < spec.size()) {
    size_t end = spec.find(';', start);
    if (end == std::string_view::npos)
      end = spec.size();
    std::string item(spec.substr(start, end - start));
    start = end + 1;
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item[0])))
      item.erase(0, 1);
    while (!item.empty() &&
           std::isspace(static_cast<unsigned char>(item.back())))
      item.pop_back();
    if (item.empty())
      continue;
    size_t equals = item.find('=');
    if (equals == std::string::npos || equals == 0)
      return Status::error("pinned config '" + item +
                           "' is not KERNEL=CONFIG (e.g. "
                           "matmul=BLOCK_M=64,BLOCK_N=64,BLOCK_K=32)");
    std::string kernel = item.substr(0, equals);
    std::string config = item.substr(equals + 1);
    Result<Config> parsed = Config::parse(config);
    if (!parsed)
      return parsed.status().withContext("pinned config for " + kernel);
    pins.pins_[kernel]["*"] = config;
  }
  return pins;
}

Result<PinnedConfigs> PinnedConfigs::parseFile(const std::string &path) {
  Result<std::string> text = readFile(path);
  if (!text)
    return text.status().withContext("pin file");
  if (std::string deep = jsonNestingError(*text); !deep.empty())
    return Status::error("pin file " + path + " " + deep);
  nlohmann::json json =
      nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object())
    return Status::error("pin file " + path +
                         " must be a JSON object: {\"kernel\": \"CONFIG\"} or "
                         "{\"kernel\": {\"KEY or *\": \"CONFIG\"}}");
  PinnedConfigs pins;
  auto add = [&](const std::string &kernel, const std::string &key,
                 const nlohmann::json &value) -> Status {
    if (!value.is_string())
      return Status::error("pin file " + path + ": the pin of " + kernel +
                           (key == "*" ? "" : " for key " + key) +
                           " must be a config string");
    std::string config = value.get<std::string>();
    Result<Config> parsed = Config::parse(config);
    if (!parsed)
      return parsed.status().withContext("pin file " + path + ", " + kernel);
    pins.pins_[kernel][key] = config;
    return Status::success();
  };
  for (auto kernel = json.begin(); kernel != json.end(); ++kernel) {
    if (kernel->is_object()) {
      for (auto key = kernel->begin(); key != kernel->end(); ++key)
        if (Status status = add(kernel.key(), key.key(), *key); !status.ok())
          return status;
    } else if (Status status = add(kernel.key(), "*", *kernel); !status.ok()) {
      return status;
    }
  }
  return pins;
}

Result<PinnedConfigs>
PinnedConfigs::fromEnvironment(const Environment &environment) {
  PinnedConfigs pins;
  if (const std::string &file = environment.pinFile; !file.empty()) {
    Result<PinnedConfigs> fromFile = parseFile(file);
    if (!fromFile)
      return fromFile.status().withContext("TILEC_PIN_FILE");
    pins = std::move(*fromFile);
  }
  if (const std::string &spec = environment.pinConfig; !spec.empty()) {
    Result<PinnedConfigs> fromSpec = parseSpec(spec);
    if (!fromSpec)
      return fromSpec.status().withContext("TILEC_PIN_CONFIG");
    pins.overrideWith(*fromSpec);
  }
  return pins;
}

void PinnedConfigs::overrideWith(const PinnedConfigs &other) {
  for (const auto &[kernel, byKey] : other.pins_) {
    // A kernel pinned by `other` is pinned only as `other` says: its "*"
    // must not be shadowed by a key-specific pin of ours.
    pins_[kernel] = byKey;
  }
}

std::optional<std::string> PinnedConfigs::find(const std::string &kernel,
                                               const std::string &key) const {
  auto byKernel = pins_.find(kernel);
  if (byKernel == pins_.end())
    return std::nullopt;
  if (auto exact = byKernel->second.find(key); exact != byKernel->second.end())
    return exact->second;
  if (auto any = byKernel->second.find("*"); any != byKernel->second.end())
    return any->second;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Benchmarker
//===----------------------------------------------------------------------===//

Result<Benchmarker> Benchmarker::create(const Context &context,
                                        size_t flushBytes) {
  if (flushBytes == 0) {
    size_t l2 =
        static_cast<size_t>(std::max(0, context.properties().l2CacheBytes));
    // Twice the L2, so that nothing of the previous repetition survives;
    // Triton's 256 MB where the driver does not say.
    flushBytes = l2 > 0 ? 2 * l2 : size_t(256) << 20;
  }
  Result<DeviceBuffer> flush = DeviceBuffer::allocate(context, flushBytes);
  if (!flush)
    return flush.status().withContext("allocating the L2 flush buffer");
  return Benchmarker(context, std::move(*flush));
}

Status Benchmarker::ensureEvents(size_t count) {
  while (events_.size() < count) {
    Result<Event> event = Event::create(*context_);
    if (!event)
      return event.status();
    events_.push_back(std::move(*event));
  }
  return Status::success();
}

Result<BenchmarkResult> Benchmarker::run(const Kernel &kernel, Dim3 grid,
                                         const ArgPack &args,
                                         const BenchmarkOptions &options) {
  uint32_t flushValue = 0;
  auto flush = [&]() -> Status {
    if (!options.flushL2)
      return Status::success();
    return flush_.memset32(++flushValue);
  };
  auto elapsed = [&](size_t start, size_t stop) -> Result<float> {
    return Event::elapsedMs(events_[start], events_[stop]);
  };
  Status status;
#define TILEC_RT_BENCH_TRY(expr)                                               \
  if (!(status = (expr)).ok())                                                 \
    return status;

  // One launch, waited for: reports a launch failure at once and gives a
  // first estimate (cold instruction cache included).
  TILEC_RT_BENCH_TRY(ensureEvents(2));
  TILEC_RT_BENCH_TRY(flush());
  TILEC_RT_BENCH_TRY(events_[0].record());
  TILEC_RT_BENCH_TRY(launch(kernel, grid, args));
  TILEC_RT_BENCH_TRY(events_[1].record());
  TILEC_RT_BENCH_TRY(events_[1].synchronize());
  Result<float> first = elapsed(0, 1);
  if (!first)
    return first.status();
  if (options.stopAboveUs > 0 &&
      double(*first) * 1000.0 > options.stopAboveUs) {
    BenchmarkResult result;
    result.medianUs = result.p20Us = result.p80Us = result.minUs =
        double(*first) * 1000.0;
    result.repetitions = 1;
    result.stoppedEarly = true;
    return result;
  }

  // Warm-up for about warmupMs, timed as a whole (flushes included) to
  // estimate the cost of one repetition.
  double estimate = std::max(1e-3, double(*first));
  int warmups = static_cast<int>(
      std::clamp(std::ceil(options.warmupMs / estimate), 1.0, 1000.0));
  TILEC_RT_BENCH_TRY(events_[0].record());
  for (int i = 0; i < warmups; ++i) {
    TILEC_RT_BENCH_TRY(flush());
    TILEC_RT_BENCH_TRY(launch(kernel, grid, args));
  }
  TILEC_RT_BENCH_TRY(events_[1].record());
  TILEC_RT_BENCH_TRY(events_[1].synchronize());
  Result<float> warm = elapsed(0, 1);
  if (!warm)
    return warm.status();
  double perRepetition = std::max(1e-3, double(*warm) / warmups);
  int reps = static_cast<int>(std::clamp(
      std::floor(options.budgetMs / perRepetition),
      double(std::max(1, options.minReps)),
      double(std::max(std::max(1, options.minReps), options.maxReps))));

  // All repetitions are queued before waiting, so the host (busy compiling
  // other candidates, perhaps) never leaves the GPU idle between them.
  TILEC_RT_BENCH_TRY(ensureEvents(2 * size_t(reps)));
  for (int r = 0; r < reps; ++r) {
    TILEC_RT_BENCH_TRY(flush());
    TILEC_RT_BENCH_TRY(events_[2 * r].record());
    TILEC_RT_BENCH_TRY(launch(kernel, grid, args));
    TILEC_RT_BENCH_TRY(events_[2 * r + 1].record());
  }
  TILEC_RT_BENCH_TRY(events_[2 * reps - 1].synchronize());
#undef TILEC_RT_BENCH_TRY
  std::vector<double> times;
  times.reserve(reps);
  for (int r = 0; r < reps; ++r) {
    Result<float> ms = elapsed(2 * r, 2 * r + 1);
    if (!ms)
      return ms.status();
    times.push_back(double(*ms) * 1000.0);
  }
  std::sort(times.begin(), times.end());
  auto quantile = [&](double q) {
    double position = q * (times.size() - 1);
    size_t lower = static_cast<size_t>(std::floor(position));
    size_t upper = std::min(times.size() - 1, lower + 1);
    double fraction = position - lower;
    return times[lower] * (1 - fraction) + times[upper] * fraction;
  };
  BenchmarkResult result;
  result.medianUs = quantile(0.5);
  result.p20Us = quantile(0.2);
  result.p80Us = quantile(0.8);
  result.minUs = times.front();
  result.repetitions = reps;
  return result;
}

//===----------------------------------------------------------------------===//
// Progress
//===----------------------------------------------------------------------===//

namespace {

// One status line on stderr. On a terminal it is rewritten in place; when
// forced onto a pipe or file every update is its own line.
class Progress {
public:
  Progress(ProgressMode mode, std::string title) : title_(std::move(title)) {
    terminal_ = ::isatty(STDERR_FILENO) != 0;
    enabled_ = mode == ProgressMode::Always ||
               (mode == ProgressMode::Auto && terminal_);
  }
  ~Progress() { finish(); }

  void update(const std::string &status) {
    if (!enabled_)
      return;
    std::lock_guard<std::mutex> lock(mutex_);
    std::string line = title_ + ": " + status;
    if (terminal_)
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
    else
      std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
    open_ = terminal_;
  }
  // A line of its own (a failure), kept on the screen.
  void note(const std::string &message) {
    if (!enabled_)
      return;
    std::lock_guard<std::mutex> lock(mutex_);
    std::fprintf(stderr, "%s%s: %s\n", open_ ? "\r\033[K" : "", title_.c_str(),
                 message.c_str());
    open_ = false;
  }
  void finish() {
    if (enabled_ && open_) {
      std::fprintf(stderr, "\n");
      open_ = false;
    }
  }

private:
  std::string title_;
  bool terminal_ = false;
  bool enabled_ = false;
  bool open_ = false;
  std::mutex mutex_;
};

std::string firstLines(const std::string &text, size_t limit) {
  if (text.size() <= limit)
    return text;
  // Cut on a character boundary: half a UTF-8 sequence would make the
  // autotune cache's json invalid.
  while (limit > 0 && (static_cast<unsigned char>(text[limit]) & 0xC0) == 0x80)
    --limit;
  return text.substr(0, limit) + "...";
}

} // namespace

//===----------------------------------------------------------------------===//
// Autotuner
//===----------------------------------------------------------------------===//

Autotuner::Autotuner(KernelProvider &provider, AutotuneCache &cache,
                     PinnedConfigs pins, AutotuneOptions options)
    : provider_(provider), cache_(cache), pins_(std::move(pins)),
      options_(std::move(options)) {}

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
  return chosen_.count(choiceKey(
             kernel, specializedAutotuneKey(
                         *key, (*description)->specializationOf(call)))) != 0;
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
  if (!options_.force) {
    if (auto it = chosen_.find(memoKey); it != chosen_.end()) {
      TuneResult result = it->second;
      // A pin or a bundle stays what it was; a tuned result is now cached.
      if (result.source == ConfigSource::Tuned)
        result.source = ConfigSource::Cached;
      result.timings.clear();
      result.steps.clear();
      Result<Dim3> grid = description->evaluateGrid(result.config, call);
      if (!grid)
        return grid.status();
      result.grid = *grid;
      step("memo");
      return finish(std::move(result));
    }
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
    if (const AutotuneEntry *entry = cache_.find(deviceName(), kernel, *key)) {
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
  Result<TuneResult> tuned =
      inputs ? tune(*description, call, *key, specialization, inputs)
             : adoptOnlyCandidate(*description, call, *key, specialization);
  if (!tuned)
    return tuned.status();
  step("tune");
  chosen_[memoKey] = *tuned;
  return finish(std::move(*tuned));
}

namespace {

// One candidate as it moves through compile -> prune -> benchmark.
struct Candidate {
  Config config;
  std::string text;
  CompiledArtifact artifact;
  std::optional<CompileMetadata> metadata;
  ConfigTiming timing;
  bool compiled = false;
  // Set by the benchmarking phase once the candidate ran.
  std::shared_ptr<const Kernel> kernel;
};

// The candidates, completed for the call; configs that the call makes equal
// (e.g. differing only in a derived parameter) are tried once.
Result<std::vector<Candidate>>
collectCandidates(const KernelDescription &description,
                  const std::vector<Config> &declared, const Call &call) {
  std::vector<Candidate> candidates;
  std::set<std::string> seen;
  for (const Config &candidate : declared) {
    Result<Config> config = description.configForCall(candidate, call);
    if (!config)
      return config.status();
    std::string text = config->str();
    if (!seen.insert(text).second)
      continue;
    Candidate entry;
    entry.config = std::move(*config);
    entry.text = text;
    entry.timing.config = text;
    // The kernel says the candidate is not worth compiling for this call.
    Result<std::optional<std::string>> pruned =
        description.pruneReason(entry.config, call);
    if (!pruned)
      return pruned.status();
    if (*pruned) {
      entry.timing.status = "pruned";
      entry.timing.reason = **pruned;
    }
    candidates.push_back(std::move(entry));
  }
  if (candidates.empty())
    return Status::error(description.getName() +
                         " declares no candidate configs to tune");
  // The conditions say what is not worth trying, not what cannot run: when
  // they would leave nothing, everything is tried.
  if (std::all_of(candidates.begin(), candidates.end(),
                  [](const Candidate &candidate) {
                    return candidate.timing.status == "pruned";
                  }))
    for (Candidate &candidate : candidates) {
      candidate.timing.status = "ok";
      candidate.timing.reason.clear();
    }
  return candidates;
}

// The progress line of one tuning run.
struct TuneProgress {
  TuneProgress(ProgressMode mode, const std::string &title, size_t total)
      : line(mode, title), total(total) {}
  void report(size_t compiled) {
    line.update("compiled " + std::to_string(compiled) + "/" +
                std::to_string(total) + ", benchmarked " +
                std::to_string(benchmarked) + ", best " + best);
  }

  Progress line;
  size_t total;
  int benchmarked = 0;
  std::string best = "-";
};

//===----------------------------------------------------------------------===//
// Compile pool
//===----------------------------------------------------------------------===//

// min(candidates, hardware threads) unless the options say how many.
size_t compileJobs(unsigned requested, size_t candidates) {
  unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  size_t jobs = requested ? requested : std::min<size_t>(candidates, hardware);
  return std::max<size_t>(1, std::min(jobs, candidates));
}

// Runs `compile` on every candidate on `jobs` threads; next() hands the
// candidates over in the order they finish, so that benchmarking starts with
// the first compile done. Destroying the pool (an error on the way) stops
// handing out compiles and waits for the running ones.
class CompilePool {
public:
  using CompileFn = std::function<void(Candidate &)>;

  CompilePool(std::vector<Candidate> &candidates, size_t jobs,
              CompileFn compile)
      : candidates_(candidates), compile_(std::move(compile)),
        start_(Clock::now()) {
    for (size_t i = 0; i < jobs; ++i)
      threads_.emplace_back([this] { work(); });
  }
  ~CompilePool() {
    cancelled_ = true;
    join();
  }

  // Waits for the next compiled candidate; call it once per candidate.
  Candidate &next() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !ready_.empty(); });
    size_t index = ready_.front();
    ready_.pop_front();
    return candidates_[index];
  }
  void join() {
    for (std::thread &thread : threads_)
      if (thread.joinable())
        thread.join();
  }
  size_t compiled() const { return compiled_.load(); }
  // From the first compile submitted to the last finished.
  double compileMs() const { return double(lastEndNs_.load()) / 1e6; }

private:
  void work() {
    while (!cancelled_.load()) {
      size_t index = nextIndex_.fetch_add(1);
      if (index >= candidates_.size())
        return;
      compile_(candidates_[index]);
      int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       Clock::now() - start_)
                       .count();
      int64_t previous = lastEndNs_.load();
      while (ns > previous && !lastEndNs_.compare_exchange_weak(previous, ns))
        ;
      ++compiled_;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ready_.push_back(index);
      }
      changed_.notify_one();
    }
  }

  std::vector<Candidate> &candidates_;
  CompileFn compile_;
  Clock::time_point start_;
  std::atomic<size_t> nextIndex_{0};
  std::atomic<size_t> compiled_{0};
  std::atomic<bool> cancelled_{false};
  std::atomic<int64_t> lastEndNs_{0};
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<size_t> ready_;
  std::vector<std::thread> threads_;
};

// Compiles `candidate` and reads its compile json, whose ptxas report goes
// into its timing; a failure is recorded there. A config the compiler
// refuses for the target's block resources (shared memory past the limit)
// is pruned, as pruneCandidate prunes one past the device's. One its kernel
// already pruned (KernelDescription::pruneUnless) is not compiled.
void compileCandidate(KernelProvider &provider, const std::string &kernel,
                      const Specialization &specialization,
                      Candidate &candidate) {
  if (candidate.timing.status == "pruned")
    return;
  Clock::time_point begin = Clock::now();
  Result<CompiledArtifact> artifact =
      provider.compile(kernel, candidate.config, specialization);
  candidate.timing.compileMs = msSince(begin);
  if (!artifact) {
    candidate.timing.status =
        artifact.status().kind() == ErrorKind::Resources ? "pruned" : "failed";
    candidate.timing.reason = artifact.message();
    return;
  }
  candidate.artifact = std::move(*artifact);
  Result<CompileMetadata> metadata =
      CompileMetadata::parse(candidate.artifact.metadataJson);
  if (!metadata) {
    candidate.timing.status = "failed";
    candidate.timing.reason = "compile json: " + metadata.message();
    return;
  }
  candidate.timing.registers = metadata->registers.value_or(-1);
  candidate.timing.sharedBytes = metadata->sharedBytes;
  candidate.timing.spillBytes =
      metadata->spillStores.value_or(0) + metadata->spillLoads.value_or(0);
  candidate.metadata = std::move(*metadata);
  candidate.compiled = true;
}

//===----------------------------------------------------------------------===//
// Pruning
//===----------------------------------------------------------------------===//

// A compiled candidate that cannot run on `device` (pruneReason: shared
// memory, registers, threads against the device's limits) is marked pruned
// and never launched.
void pruneCandidate(Candidate &candidate, const DeviceProperties &device) {
  if (!candidate.compiled)
    return;
  if (std::optional<std::string> reason =
          pruneReason(*candidate.metadata, device)) {
    candidate.timing.status = "pruned";
    candidate.timing.reason = *reason;
  }
}

//===----------------------------------------------------------------------===//
// Benchmarking
//===----------------------------------------------------------------------===//

// Benchmarks the candidates one at a time, in the order the pool hands them
// over, on the calling thread.
class BenchmarkPhase {
public:
  BenchmarkPhase(KernelProvider &provider, Benchmarker &benchmarker,
                 const BenchmarkInputs &inputs,
                 const KernelDescription &description, const Call &call,
                 const AutotuneOptions &options, TuneProgress &progress)
      : provider_(provider), benchmarker_(benchmarker), inputs_(inputs),
        description_(description), call_(call), options_(options),
        progress_(progress) {}

  // Every candidate of `pool`. A candidate that fails is recorded as failed;
  // the error is only for one that broke the CUDA context, after which
  // nothing would run.
  Status run(CompilePool &pool, size_t total) {
    for (size_t handled = 0; handled < total; ++handled) {
      Candidate &candidate = pool.next();
      ConfigTiming &timing = candidate.timing;
      if (timing.status != "ok") {
        progress_.line.note(timing.config + ": " + timing.status + ": " +
                            firstLines(timing.reason, 300));
        progress_.report(pool.compiled());
        continue;
      }
      Clock::time_point start = Clock::now();
      Status status = measure(candidate);
      benchmarkMs_ += msSince(start);
      if (!status.ok())
        return status;
      // Only the main thread's copies: workers may still write to
      // candidates that are not handed over yet.
      if (timing.status == "ok")
        measured_.push_back(timing);
      if (int best = selectWinner(measured_, options_.tieTolerance); best >= 0)
        progress_.best =
            formatUs(measured_[best].medianUs) + " " + measured_[best].config;
      progress_.report(pool.compiled());
    }
    return Status::success();
  }
  double benchmarkMs() const { return benchmarkMs_; }

private:
  // Loads, binds and times one candidate; see run() for the errors.
  Status measure(Candidate &candidate) {
    ConfigTiming &timing = candidate.timing;
    auto fail = [&](const Status &status, const char *what) {
      timing.status = "failed";
      timing.reason = std::string(what) + ": " + status.message();
      progress_.line.note(timing.config + ": " + timing.reason);
      return Status::success();
    };
    Result<std::shared_ptr<const Kernel>> kernel =
        provider_.load(candidate.artifact);
    if (!kernel)
      return fail(kernel.status(), "load");
    Result<Dim3> grid = description_.evaluateGrid(candidate.config, call_);
    if (!grid)
      return fail(grid.status(), "grid");
    Result<ArgPack> pack = (*kernel)->makeArgPack();
    Status bound = pack ? inputs_.bind(*pack) : pack.status();
    if (!bound.ok())
      return fail(bound, "arguments");
    Result<BenchmarkResult> result =
        benchmarker_.run(**kernel, *grid, *pack, nextOptions());
    if (!result) {
      Status recorded = fail(result.status(), "benchmark");
      // A kernel fault poisons the context: nothing after it would run.
      Status sync = provider_.context().synchronize();
      if (sync.ok())
        return recorded;
      return Status::error("benchmarking " + description_.getName() + " " +
                           timing.config +
                           " broke the CUDA context: " + sync.message());
    }
    record(*result, timing);
    candidate.kernel = std::move(*kernel);
    ++progress_.benchmarked;
    return Status::success();
  }

  // The benchmark options, with the early stop set from the best median so
  // far.
  BenchmarkOptions nextOptions() const {
    BenchmarkOptions options = options_.benchmark;
    if (int best = selectWinner(measured_, 0.0);
        best >= 0 && options_.stopFactor > 0)
      options.stopAboveUs = std::max(
          options_.stopFactor * measured_[best].medianUs, options_.stopMinUs);
    return options;
  }

  void record(const BenchmarkResult &result, ConfigTiming &timing) const {
    timing.medianUs = result.medianUs;
    timing.p20Us = result.p20Us;
    timing.p80Us = result.p80Us;
    timing.minUs = result.minUs;
    timing.repetitions = result.repetitions;
    if (result.stoppedEarly) {
      char note[96];
      std::snprintf(note, sizeof(note),
                    "one launch: over %gx the best median so far",
                    options_.stopFactor);
      timing.reason = note;
    }
  }

  KernelProvider &provider_;
  Benchmarker &benchmarker_;
  const BenchmarkInputs &inputs_;
  const KernelDescription &description_;
  const Call &call_;
  const AutotuneOptions &options_;
  TuneProgress &progress_;
  std::vector<ConfigTiming> measured_;
  double benchmarkMs_ = 0;
};

//===----------------------------------------------------------------------===//
// Persistence
//===----------------------------------------------------------------------===//

// The autotune cache's entry for `winner`: its config, every candidate's
// timing (reasons shortened), its cubin's stage-cache key and compile json,
// and the kernel's description.
AutotuneEntry makeEntry(const KernelDescription &description,
                        const Candidate &winner,
                        const std::vector<ConfigTiming> &timings,
                        const std::string &target, double budgetMs) {
  AutotuneEntry entry;
  entry.config = winner.text;
  for (ConfigTiming timing : timings) {
    timing.reason = firstLines(timing.reason, 500);
    entry.timings.push_back(std::move(timing));
  }
  entry.target = target;
  // The winner was benchmarked, so its compile json parsed.
  entry.cubinKey = winner.metadata->cubinKey();
  entry.metadataJson = winner.artifact.metadataJson;
  entry.description = description;
  entry.tunedAt = utcTimestamp();
  entry.compilerId = winner.metadata->compilerId;
  entry.budgetMs = budgetMs;
  return entry;
}

// The winner among the benchmarked candidates, with every candidate's
// timing; an error listing why each failed when none ran.
Result<TuneResult> pickWinner(const KernelDescription &description,
                              const Call &call, const std::string &key,
                              const std::vector<Candidate> &candidates,
                              double tieTolerance) {
  TuneResult result;
  result.kernelName = description.getName();
  result.key = key;
  result.source = ConfigSource::Tuned;
  for (const Candidate &candidate : candidates)
    result.timings.push_back(candidate.timing);
  result.winnerIndex = selectWinner(result.timings, tieTolerance);
  if (result.winnerIndex < 0) {
    std::string reasons;
    for (const ConfigTiming &timing : result.timings)
      reasons += "\n  " + timing.config + ": " + timing.status + ": " +
                 firstLines(timing.reason, 400);
    return Status::error("no config of " + description.getName() + " ran for " +
                         key + ":" + reasons);
  }
  const Candidate &winner = candidates[result.winnerIndex];
  result.config = winner.config;
  result.kernel = winner.kernel;
  Result<Dim3> grid = description.evaluateGrid(winner.config, call);
  if (!grid)
    return grid.status();
  result.grid = *grid;
  return result;
}

} // namespace

Result<TuneResult> Autotuner::tune(const KernelDescription &description,
                                   const Call &call, const std::string &key,
                                   const Specialization &specialization,
                                   const InputsFactory &inputs) {
  const std::string &kernel = description.getName();
  Clock::time_point start = Clock::now();
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
  BenchmarkPhase benchmarking(provider_, *benchmarker_, **problem, description,
                              call, options_, progress);
  if (Status status = benchmarking.run(pool, total); !status.ok())
    return status;
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
  result->benchmarkMs = benchmarking.benchmarkMs();
  const Candidate &winner = (*candidates)[result->winnerIndex];
  provider_.insert(kernel, winner.config, specialization, result->kernel);
  if (options_.persist) {
    AutotuneEntry entry =
        makeEntry(description, winner, result->timings, provider_.target(),
                  options_.benchmark.budgetMs);
    if (Status status = cache_.store(deviceName(), kernel, key, entry);
        !status.ok())
      result->persistWarning = status.message();
  }
  result->totalMs = msSince(start);
  return result;
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
  Result<std::shared_ptr<const Kernel>> loaded = provider_.load(only.artifact);
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
    if (Status status = cache_.store(deviceName(), kernel, key, entry);
        !status.ok())
      result.persistWarning = status.message();
  }
  result.totalMs = msSince(start);
  return result;
}

} // namespace tilec::rt
