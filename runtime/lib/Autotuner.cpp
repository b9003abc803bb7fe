//===- Autotuner.cpp - Picking a kernel's config on the device ------------===//

#include "tilec/runtime/Autotuner.h"

#include "tilec/runtime/FileIO.h"

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

std::optional<std::string> pruneReason(const KernelMetadata &metadata,
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
    Result<KernelConfig> parsed = KernelConfig::parse(config);
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
    Result<KernelConfig> parsed = KernelConfig::parse(config);
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

Result<PinnedConfigs> PinnedConfigs::fromEnvironment() {
  PinnedConfigs pins;
  if (const char *file = std::getenv("TILEC_PIN_FILE"); file && *file) {
    Result<PinnedConfigs> fromFile = parseFile(file);
    if (!fromFile)
      return fromFile.status().withContext("TILEC_PIN_FILE");
    pins = std::move(*fromFile);
  }
  if (const char *spec = std::getenv("TILEC_PIN_CONFIG"); spec && *spec) {
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

std::string utcNow() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

std::string firstLines(const std::string &text, size_t limit) {
  if (text.size() <= limit)
    return text;
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

Result<std::unique_ptr<Autotuner>> Autotuner::create(KernelProvider &provider,
                                                     AutotuneCache &cache,
                                                     AutotuneOptions options) {
  if (Status status = cache.load(); !status.ok())
    return status;
  Result<PinnedConfigs> pins = PinnedConfigs::fromEnvironment();
  if (!pins)
    return pins.status();
  return std::make_unique<Autotuner>(provider, cache, std::move(*pins),
                                     std::move(options));
}

const std::string &Autotuner::deviceName() const {
  return provider_.context().properties().name;
}

Result<KernelDescription> Autotuner::describe(const std::string &kernel) {
  std::lock_guard<std::mutex> lock(mutex_);
  return describeLocked(kernel);
}

Result<KernelDescription> Autotuner::describeLocked(const std::string &kernel) {
  if (auto it = descriptions_.find(kernel); it != descriptions_.end())
    return it->second;
  if (KernelCompiler *compiler = provider_.compiler()) {
    Result<KernelDescription> description = compiler->describe(kernel);
    if (!description)
      return description.status();
    descriptions_[kernel] = *description;
    return description;
  }
  if (const KernelDescription *stored =
          cache_.findDeclaration(deviceName(), kernel)) {
    KernelDescription description = *stored;
    description.name = kernel;
    descriptions_[kernel] = description;
    return description;
  }
  return Status::error("no compiler, and the autotune cache " + cache_.path() +
                       " has no entry of kernel '" + kernel + "' for " +
                       deviceName() + " to read its key and grid from");
}

Result<TuneResult> Autotuner::select(const std::string &kernel,
                                     const CallSpec &call,
                                     const InputsFactory &inputs) {
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

  Result<KernelDescription> description = describeLocked(kernel);
  if (!description)
    return description.status();
  step("describe");
  Result<std::string> key = computeAutotuneKey(*description, call);
  if (!key)
    return key.status();
  // Pins name the declared key; results are kept per specialization too,
  // since the winner's cubin was compiled for it.
  const std::string declaredKey = *key;
  const Specialization specialization = specializeCall(*description, call);
  if (!specialization.empty())
    *key += "|" + specialization.str();
  step("key");

  std::string memoKey = kernel + "\n" + *key;
  if (!options_.force) {
    if (auto it = chosen_.find(memoKey); it != chosen_.end()) {
      TuneResult result = it->second;
      result.source = result.source == ConfigSource::Pinned
                          ? ConfigSource::Pinned
                          : ConfigSource::Cached;
      result.timings.clear();
      result.steps.clear();
      Result<Dim3> grid = evaluateGrid(*description, result.config, call);
      if (!grid)
        return grid.status();
      result.grid = *grid;
      step("memo");
      return finish(std::move(result));
    }
  }

  auto chooseLoaded =
      [&](ConfigSource source, KernelConfig config, const std::string &cubinKey,
          const std::string &metadataJson) -> Result<TuneResult> {
    KernelProvider::LoadStats stats;
    Result<std::shared_ptr<const Kernel>> loaded =
        provider_.getCached(kernel, config, specialization, cubinKey,
                            metadataJson, &stats);
    if (!loaded)
      return loaded.status();
    // The provider's own breakdown, then whatever else the step took.
    double accounted = stats.cacheReadUs + stats.compileUs + stats.moduleLoadUs;
    if (stats.cacheReadUs > 0)
      steps.emplace_back("read cubin (stage cache)", stats.cacheReadUs);
    if (stats.compiled)
      steps.emplace_back("compile", stats.compileUs);
    if (stats.moduleLoadUs > 0)
      steps.emplace_back("load module", stats.moduleLoadUs);
    step("provider");
    steps.back().second -= accounted;
    Result<Dim3> grid = evaluateGrid(*description, config, call);
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
    Result<KernelConfig> parsed = KernelConfig::parse(*pinned);
    if (!parsed)
      return parsed.status().withContext("pinned config of " + kernel);
    Result<KernelConfig> config = specializeConfig(*description, *parsed, call);
    if (!config)
      return config.status().withContext("pinned config of " + kernel);
    step("pin");
    return chooseLoaded(ConfigSource::Pinned, std::move(*config), "", "");
  }

  if (!options_.force) {
    if (const AutotuneEntry *entry = cache_.find(deviceName(), kernel, *key)) {
      Result<KernelConfig> config = KernelConfig::parse(entry->config);
      if (!config)
        return config.status().withContext("autotune cache " + cache_.path() +
                                           ", " + kernel + " " + *key);
      step("lookup");
      return chooseLoaded(ConfigSource::Cached, std::move(*config),
                          entry->cubinKey, entry->metadataJson);
    }
    step("lookup");
  }

  if (!provider_.compiler())
    return Status::error("no tuned config for " + kernel + " " + *key + " on " +
                         deviceName() + " in " + cache_.path() +
                         ", and no compiler to tune with");
  if (!inputs)
    return Status::error("no tuned config for " + kernel + " " + *key + " on " +
                         deviceName() + ", and no inputs to tune with");
  Result<TuneResult> tuned =
      tune(*description, call, *key, specialization, inputs);
  if (!tuned)
    return tuned.status();
  step("tune");
  chosen_[memoKey] = *tuned;
  return finish(std::move(*tuned));
}

namespace {

// One candidate as it moves through compile -> prune -> benchmark.
struct Candidate {
  KernelConfig config;
  std::string text;
  CompiledArtifact artifact;
  std::optional<KernelMetadata> metadata;
  ConfigTiming timing;
  bool compiled = false;
};

std::string cubinKeyOf(const std::string &metadataJson) {
  nlohmann::json json =
      nlohmann::json::parse(metadataJson, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("cache") ||
      !json["cache"].is_object() || !json["cache"].contains("cubin") ||
      !json["cache"]["cubin"].is_object() ||
      !json["cache"]["cubin"].contains("key") ||
      !json["cache"]["cubin"]["key"].is_string())
    return "";
  return json["cache"]["cubin"]["key"].get<std::string>();
}

std::string compilerIdOf(const std::string &metadataJson) {
  nlohmann::json json =
      nlohmann::json::parse(metadataJson, nullptr, /*allow_exceptions=*/false);
  if (json.is_object() && json.contains("compiler_id") &&
      json["compiler_id"].is_string())
    return json["compiler_id"].get<std::string>();
  return "";
}

} // namespace

Result<TuneResult> Autotuner::tune(const KernelDescription &description,
                                   const CallSpec &call, const std::string &key,
                                   const Specialization &specialization,
                                   const InputsFactory &inputs) {
  const std::string &kernel = description.name;
  Clock::time_point start = Clock::now();

  // The candidates, completed for the call; configs that the call makes
  // equal (e.g. differing only in a derived parameter) are tried once.
  std::vector<Candidate> candidates;
  std::set<std::string> seen;
  const std::vector<KernelConfig> &declared =
      options_.configs.empty() ? description.configs : options_.configs;
  for (const KernelConfig &candidate : declared) {
    Result<KernelConfig> config =
        specializeConfig(description, candidate, call);
    if (!config)
      return config.status();
    std::string text = config->str();
    if (!seen.insert(text).second)
      continue;
    Candidate entry;
    entry.config = std::move(*config);
    entry.text = text;
    entry.timing.config = text;
    candidates.push_back(std::move(entry));
  }
  if (candidates.empty())
    return Status::error(kernel + " declares no candidate configs to tune");

  Progress progress(options_.progress, "tune " + kernel + " [" + key + "]");
  const size_t total = candidates.size();
  std::atomic<size_t> compiled{0};
  std::atomic<int> benchmarked{0};
  std::string bestText = "-";
  auto report = [&]() {
    progress.update("compiled " + std::to_string(compiled.load()) + "/" +
                    std::to_string(total) + ", benchmarked " +
                    std::to_string(benchmarked.load()) + ", best " + bestText);
  };

  // Compile on a pool; finished candidates go to `ready` in completion order.
  std::mutex readyMutex;
  std::condition_variable readyChanged;
  std::deque<size_t> ready;
  std::atomic<size_t> next{0};
  std::atomic<bool> cancelled{false};
  unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  size_t jobs =
      options_.jobs ? options_.jobs : std::min<size_t>(total, hardware);
  jobs = std::max<size_t>(1, std::min(jobs, total));
  Clock::time_point compileStart = Clock::now();
  std::atomic<int64_t> compileEndNs{0};
  const DeviceProperties &device = provider_.context().properties();
  auto worker = [&]() {
    while (!cancelled.load()) {
      size_t index = next.fetch_add(1);
      if (index >= total)
        return;
      Candidate &candidate = candidates[index];
      Clock::time_point begin = Clock::now();
      Result<CompiledArtifact> artifact =
          provider_.compile(kernel, candidate.config, specialization);
      candidate.timing.compileMs = msSince(begin);
      if (!artifact) {
        candidate.timing.status = "failed";
        candidate.timing.reason = artifact.message();
      } else {
        candidate.artifact = std::move(*artifact);
        Result<KernelMetadata> metadata =
            KernelMetadata::parse(candidate.artifact.metadataJson);
        if (!metadata) {
          candidate.timing.status = "failed";
          candidate.timing.reason = "compile json: " + metadata.message();
        } else {
          candidate.timing.registers = metadata->registers.value_or(-1);
          candidate.timing.sharedBytes = metadata->sharedBytes;
          candidate.timing.spillBytes = metadata->spillStores.value_or(0) +
                                        metadata->spillLoads.value_or(0);
          if (std::optional<std::string> reason =
                  pruneReason(*metadata, device)) {
            candidate.timing.status = "pruned";
            candidate.timing.reason = *reason;
          }
          candidate.metadata = std::move(*metadata);
          candidate.compiled = true;
        }
      }
      int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       Clock::now() - compileStart)
                       .count();
      int64_t previous = compileEndNs.load();
      while (ns > previous && !compileEndNs.compare_exchange_weak(previous, ns))
        ;
      ++compiled;
      {
        std::lock_guard<std::mutex> lock(readyMutex);
        ready.push_back(index);
      }
      readyChanged.notify_one();
    }
  };
  std::vector<std::thread> workers;
  for (size_t i = 0; i < jobs; ++i)
    workers.emplace_back(worker);
  auto joinAll = [&]() {
    for (std::thread &thread : workers)
      if (thread.joinable())
        thread.join();
  };
  report();

  // The inputs are built while the candidates compile.
  Clock::time_point inputsStart = Clock::now();
  Result<std::shared_ptr<const BenchmarkInputs>> problem = inputs();
  double inputsMs = msSince(inputsStart);
  if (!problem) {
    cancelled = true;
    joinAll();
    return problem.status().withContext("building the inputs of " + kernel);
  }
  if (!benchmarker_) {
    Result<Benchmarker> benchmarker = Benchmarker::create(provider_.context());
    if (!benchmarker) {
      cancelled = true;
      joinAll();
      return benchmarker.status();
    }
    benchmarker_ = std::make_unique<Benchmarker>(std::move(*benchmarker));
  }

  // Benchmark in completion order, one at a time.
  std::vector<std::shared_ptr<const Kernel>> loaded(total);
  std::vector<ConfigTiming> measured;
  double benchmarkMs = 0;
  for (size_t handled = 0; handled < total; ++handled) {
    size_t index;
    {
      std::unique_lock<std::mutex> lock(readyMutex);
      readyChanged.wait(lock, [&] { return !ready.empty(); });
      index = ready.front();
      ready.pop_front();
    }
    Candidate &candidate = candidates[index];
    ConfigTiming &timing = candidate.timing;
    if (timing.status != "ok") {
      progress.note(timing.config + ": " + timing.status + ": " +
                    firstLines(timing.reason, 300));
      report();
      continue;
    }
    Clock::time_point benchStart = Clock::now();
    auto fail = [&](const Status &status, const char *what) {
      timing.status = "failed";
      timing.reason = std::string(what) + ": " + status.message();
      progress.note(timing.config + ": " + timing.reason);
    };
    Result<std::shared_ptr<const Kernel>> kernelResult =
        provider_.load(candidate.artifact);
    Result<Dim3> grid = evaluateGrid(description, candidate.config, call);
    if (!kernelResult) {
      fail(kernelResult.status(), "load");
    } else if (!grid) {
      fail(grid.status(), "grid");
    } else {
      Result<ArgPack> pack = (*kernelResult)->makeArgPack();
      Status bound = pack ? (*problem)->bind(*pack) : pack.status();
      if (!bound.ok()) {
        fail(bound, "arguments");
      } else {
        BenchmarkOptions benchmarkOptions = options_.benchmark;
        if (int best = selectWinner(measured, 0.0);
            best >= 0 && options_.stopFactor > 0)
          benchmarkOptions.stopAboveUs =
              std::max(options_.stopFactor * measured[best].medianUs,
                       options_.stopMinUs);
        Result<BenchmarkResult> result =
            benchmarker_->run(**kernelResult, *grid, *pack, benchmarkOptions);
        if (!result) {
          fail(result.status(), "benchmark");
          // A kernel fault poisons the context: nothing after it would run.
          if (Status sync = provider_.context().synchronize(); !sync.ok()) {
            cancelled = true;
            joinAll();
            return Status::error("benchmarking " + kernel + " " +
                                 timing.config +
                                 " broke the CUDA context: " + sync.message());
          }
        } else {
          timing.medianUs = result->medianUs;
          timing.p20Us = result->p20Us;
          timing.p80Us = result->p80Us;
          timing.minUs = result->minUs;
          timing.repetitions = result->repetitions;
          if (result->stoppedEarly) {
            char note[96];
            std::snprintf(note, sizeof(note),
                          "one launch: over %gx the best median so far",
                          options_.stopFactor);
            timing.reason = note;
          }
          loaded[index] = std::move(*kernelResult);
          ++benchmarked;
        }
      }
    }
    benchmarkMs += msSince(benchStart);
    // Only the main thread's copies: workers may still write to candidates
    // that are not handed over yet.
    if (timing.status == "ok")
      measured.push_back(timing);
    if (int best = selectWinner(measured, options_.tieTolerance); best >= 0)
      bestText =
          formatUs(measured[best].medianUs) + " " + measured[best].config;
    report();
  }
  joinAll();
  progress.finish();

  TuneResult result;
  result.kernelName = kernel;
  result.key = key;
  result.source = ConfigSource::Tuned;
  for (const Candidate &candidate : candidates)
    result.timings.push_back(candidate.timing);
  result.winnerIndex = selectWinner(result.timings, options_.tieTolerance);
  result.flops = (*problem)->flops();
  result.compileMs = compileEndNs.load() / 1e6;
  result.inputsMs = inputsMs;
  result.benchmarkMs = benchmarkMs;
  if (result.winnerIndex < 0) {
    std::string reasons;
    for (const ConfigTiming &timing : result.timings)
      reasons += "\n  " + timing.config + ": " + timing.status + ": " +
                 firstLines(timing.reason, 400);
    return Status::error("no config of " + kernel + " ran for " + key + ":" +
                         reasons);
  }
  Candidate &winner = candidates[result.winnerIndex];
  result.config = winner.config;
  result.kernel = loaded[result.winnerIndex];
  Result<Dim3> grid = evaluateGrid(description, winner.config, call);
  if (!grid)
    return grid.status();
  result.grid = *grid;
  provider_.insert(kernel, winner.config, specialization, result.kernel);

  if (options_.persist) {
    AutotuneEntry entry;
    entry.config = winner.text;
    for (ConfigTiming timing : result.timings) {
      timing.reason = firstLines(timing.reason, 500);
      entry.timings.push_back(std::move(timing));
    }
    entry.target = provider_.target();
    entry.cubinKey = cubinKeyOf(winner.artifact.metadataJson);
    entry.metadataJson = winner.artifact.metadataJson;
    entry.declaration = description;
    entry.declaration.configs.clear();
    entry.tunedAt = utcNow();
    entry.compilerId = compilerIdOf(winner.artifact.metadataJson);
    entry.budgetMs = options_.benchmark.budgetMs;
    if (Status status = cache_.store(deviceName(), kernel, key, entry);
        !status.ok())
      result.persistWarning = status.message();
  }
  result.totalMs = msSince(start);
  return result;
}

} // namespace tilec::rt
