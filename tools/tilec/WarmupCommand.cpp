//===- WarmupCommand.cpp - tilec warmup -----------------------------------===//
//
// Tunes every call of a workload file (tilec/runtime/Workload.h: what a
// program recorded with TILEC_RECORD_WORKLOAD) once, so that the autotune
// cache and the stage cache hold every winner the program needs and can be
// packed for deployment. An op call (a sparse-convolution layer) runs the
// layer once on a shell of its voxel count, which builds its maps and tunes
// the convolution for each row block; a kernel call goes through the
// autotuner with the inputs `tilec tune` benchmarks on. Op calls run first:
// they fill most keys, and the kernel calls they made are then cached. See
// docs/deploy.md.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "TuningSession.h"

#include "tilec/Harness/KernelHarness.h"
#include "tilec/Kernel/KernelRegistry.h"
#include "tilec/runtime/AutotuneCache.h"
#include "tilec/runtime/Autotuner.h"
#include "tilec/runtime/Context.h"
#include "tilec/runtime/KernelProvider.h"
#include "tilec/runtime/Session.h"
#include "tilec/runtime/Workload.h"
#include "tilec/sparse/SparseConv.h"
#include "tilec/sparse/VoxelScenes.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <set>
#include <unistd.h>

namespace cl = llvm::cl;

namespace tilec::tool {

cl::SubCommand warmupCommand("warmup",
                             "Tune every call of a workload file once, "
                             "filling the autotune and stage caches");

static cl::OptionCategory category("tilec warmup options");
static cl::opt<std::string> workloadPath(cl::Positional,
                                         cl::desc("<workload.json>"),
                                         cl::init(""), cl::sub(warmupCommand),
                                         cl::cat(category));
static cl::opt<double> budgetMs(
    "budget-ms",
    cl::desc("Time of the timed repetitions per config, ms (default 20)"),
    cl::init(20), cl::sub(warmupCommand), cl::cat(category));
static cl::opt<int> screenKeep(
    "screen-keep",
    cl::desc("Where a kernel has more configs than this, time each on a "
             "short budget first, then only the fastest this many (within "
             "10%) in full; 0 times every config in full (default 4, or "
             "TILEC_AUTOTUNE_SCREEN)"),
    cl::init(-1), cl::sub(warmupCommand), cl::cat(category));
static cl::opt<double> targetError(
    "target-error",
    cl::desc("Stop timing a config once its median's standard error is at "
             "most this percentage (default 0.5, or "
             "TILEC_AUTOTUNE_TARGET_ERROR); 0 times every repetition the "
             "budget allows"),
    cl::init(0.5), cl::sub(warmupCommand), cl::cat(category));
static cl::opt<unsigned>
    jobs("jobs",
         cl::desc("Parallel compiles (default: one per config, at "
                  "most the hardware threads)"),
         cl::init(0), cl::sub(warmupCommand), cl::cat(category));
static cl::opt<bool>
    showProgress("progress",
                 cl::desc("Progress on stderr even when it is not a terminal"),
                 cl::sub(warmupCommand), cl::cat(category));
static cl::opt<bool> quiet("quiet", cl::desc("No progress output"),
                           cl::sub(warmupCommand), cl::cat(category));
static cl::opt<int> device("device", cl::desc("CUDA device ordinal"),
                           cl::init(0), cl::sub(warmupCommand),
                           cl::cat(category));
static cl::opt<std::string>
    jsonPath("json", cl::desc("Also write the results as JSON to this file"),
             cl::init(""), cl::sub(warmupCommand), cl::cat(category));

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

int fail(const llvm::Twine &message) {
  llvm::errs() << "tilec warmup: error: " << message << "\n";
  return 1;
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One autotune key an entry filled or found.
struct KeyResult {
  std::string kernel;
  std::string key;
  std::string source;
  std::string config;
};

// One workload entry and what became of it.
struct EntryResult {
  size_t index = 0;
  const rt::WorkloadCall *call = nullptr;
  // Empty when it succeeded.
  std::string error;
  std::vector<KeyResult> keys;
  double seconds = 0;

  bool failed() const { return !error.empty(); }
  // "tuned" when it tuned anything, else how its keys were found.
  std::string source() const {
    if (failed())
      return "failed";
    for (const char *source : {"tuned", "cached", "pinned"})
      for (const KeyResult &key : keys)
        if (key.source == source)
          return source;
    return "-";
  }
};

//===----------------------------------------------------------------------===//
// Checking the workload before the GPU
//===----------------------------------------------------------------------===//

// A kernel with one candidate config is compiled and recorded without a
// benchmark (Autotuner::select without inputs), so its call needs no inputs
// from the harness, and its integer arguments may be 0 (radix_scatter's
// SHIFT=0, as a recorded map build calls it).
bool hasSingleCandidate(const kernel::KernelDefinition &definition) {
  return definition.getDescription().getConfigs().size() == 1;
}

// What can be known wrong about a call without a GPU: an unknown kernel,
// sizes the harness cannot build inputs of, a call its kernel cannot key.
Status checkCall(const rt::WorkloadCall &call) {
  if (call.isOp())
    return sparse::convArgumentsOf(*call.conv).status();
  const kernel::KernelDefinition *definition =
      kernel::lookupKernel(call.kernel);
  if (!definition)
    return Status::error("unknown kernel '" + call.kernel + "' (known: " +
                         kernel::knownKernelNames() + ")");
  if (!hasSingleCandidate(*definition))
    TILEC_RETURN_IF_ERROR(harness::requirePositive(call.call.sizes));
  return definition->getDescription().evaluateAutotuneKey(call.call).status();
}

//===----------------------------------------------------------------------===//
// Running the calls
//===----------------------------------------------------------------------===//

Result<rt::DeviceBuffer> upload(const rt::Context &context, const void *data,
                                size_t bytes) {
  // Never an empty buffer: the kernels take 16-byte aligned addresses.
  auto buffer = rt::DeviceBuffer::allocate(context, std::max<size_t>(bytes, 16));
  if (!buffer)
    return buffer.status();
  TILEC_RETURN_IF_ERROR(buffer->copyFromHost(data, bytes));
  return buffer;
}

// Random values of the layer's dtype (only the first 65537 drawn: timings do
// not depend on them).
Result<rt::DeviceBuffer> randomTensor(const rt::Context &context,
                                      harness::ElementFormat format,
                                      size_t elements, harness::Random &rng) {
  harness::HostTensor host(format, elements);
  harness::fillUniform(host, rng, -1, 1, /*withReference=*/false);
  return upload(context, host.bytes.data(), host.bytes.size());
}

// About what a layer holds on the device (coordinates, features, the maps
// and their build's temporaries), so that a layer too large for the device
// is refused before gigabytes are generated for it on the host.
Status checkDeviceMemory(const rt::ConvLayer &layer,
                         const sparse::ConvArguments &arguments,
                         const rt::DeviceProperties &properties) {
  if (properties.totalMemoryBytes == 0)
    return Status::success();
  double elementBytes = layer.dtype == "f32" ? 4 : 2;
  double offsets =
      double(layer.kernelSize[0]) * layer.kernelSize[1] * layer.kernelSize[2];
  double perVoxel = 16 + 64 + 12 * offsets +
                    elementBytes * double(arguments.xStride() +
                                          arguments.yStride());
  double bytes = double(layer.voxels) * perVoxel +
                 elementBytes * offsets * double(layer.inChannels) *
                     double(layer.outChannels);
  if (bytes <= 0.9 * double(properties.totalMemoryBytes))
    return Status::success();
  return Status::error(llvm::formatv(
                           "the layer needs about {0:F1} GiB of device "
                           "memory, {1} has {2:F1} GiB",
                           bytes / (1 << 30), properties.name,
                           double(properties.totalMemoryBytes) / (1 << 30))
                           .str());
}

// The keys of the autotune cache for (device, kernel).
std::set<std::string> cachedKeys(const rt::AutotuneCache &cache,
                                 const std::string &deviceName,
                                 const std::string &kernel) {
  std::set<std::string> keys;
  auto d = cache.entries().find(deviceName);
  if (d == cache.entries().end())
    return keys;
  auto k = d->second.find(kernel);
  if (k == d->second.end())
    return keys;
  for (const auto &[key, entry] : k->second)
    keys.insert(key);
  return keys;
}

// Runs the layer once on a shell of exactly its voxel count, which builds
// its maps and tunes the convolution for each row block; then names the
// keys it used, tuned unless the autotune cache had them before.
Status runConvLayer(rt::Session &session, const rt::ConvLayer &layer,
                    EntryResult &result) {
  Result<sparse::ConvArguments> parsed = sparse::convArgumentsOf(layer);
  if (!parsed)
    return parsed.status();
  sparse::ConvArguments arguments = *parsed;
  TILEC_RETURN_IF_ERROR(
      checkDeviceMemory(layer, arguments, session.context().properties()));
  Result<harness::ElementFormat> format = harness::formatOf(layer.dtype);
  if (!format)
    return format.status();

  sparse::VoxelCloud cloud = sparse::shellSceneOfSize(layer.voxels);
  int64_t n = cloud.size();
  auto coords = upload(session.context(), cloud.coords.data(),
                       cloud.coords.size() * sizeof(int32_t));
  if (!coords)
    return coords.status();
  int64_t offsets =
      int64_t(layer.kernelSize[0]) * layer.kernelSize[1] * layer.kernelSize[2];
  harness::Random rng(1);
  auto x =
      randomTensor(session.context(), *format, n * arguments.xStride(), rng);
  auto weight =
      randomTensor(session.context(), *format,
                   layer.outChannels * offsets * layer.inChannels, rng);
  auto bias = randomTensor(session.context(), *format, layer.outChannels, rng);
  auto y =
      randomTensor(session.context(), *format, n * arguments.yStride(), rng);
  for (const auto *buffer : {&x, &weight, &bias, &y})
    if (!*buffer)
      return buffer->status();
  arguments.x = x->ptr();
  arguments.weight = weight->ptr();
  arguments.bias = layer.bias ? bias->ptr() : rt::DevicePtr{};
  arguments.y = y->ptr();

  auto tensor =
      sparse::SparseTensor::create(session.sparse(), coords->ptr(), n);
  if (!tensor)
    return tensor.status();
  const std::string &deviceName = session.autotuner().deviceName();
  std::vector<std::pair<std::string, Call>> calls =
      sparse::convKernelCalls(arguments, n);
  std::map<std::string, std::set<std::string>> before;
  for (const auto &[kernel, call] : calls)
    before[kernel] = cachedKeys(session.autotuneCache(), deviceName, kernel);

  TILEC_RETURN_IF_ERROR(
      sparse::submanifoldConv3d(session.sparse(), *tensor, arguments, nullptr));
  TILEC_RETURN_IF_ERROR(session.sparse().synchronize(nullptr));

  // The convolution's selections, from the autotuner's memo (which says
  // "cached" for whatever this process chose before): where each came from
  // is read off the autotune cache before and after.
  for (const auto &[kernel, call] : calls) {
    Result<rt::TuneResult> selected = session.autotuner().select(kernel, call);
    if (!selected)
      return selected.status();
    std::set<std::string> after =
        cachedKeys(session.autotuneCache(), deviceName, kernel);
    const std::string &key = selected->key;
    std::string source =
        selected->source == rt::ConfigSource::Pinned ? "pinned"
        : before[kernel].count(key)                  ? "cached"
        : after.count(key)                           ? "tuned"
        // Served from elsewhere (a bundle), or its store failed (warned).
                                                     : "not persisted";
    result.keys.push_back({kernel, key, source, selected->config.str()});
  }
  return Status::success();
}

// A kernel call through the autotuner, on the inputs `tilec tune` builds.
Status runKernelCall(rt::Session &session, const rt::WorkloadCall &call,
                     EntryResult &result) {
  const kernel::KernelDefinition *definition =
      kernel::lookupKernel(call.kernel);
  if (!definition)
    return Status::error("unknown kernel '" + call.kernel + "'");
  harness::RunRequest request =
      harness::requestFor(definition->getDescription());
  request.call = call.call;
  Result<rt::TuneResult> selected =
      hasSingleCandidate(*definition)
          ? session.autotuner().select(call.kernel, call.call)
          : session.autotuner().select(
                call.kernel, call.call,
                harness::benchmarkInputsFor(session.context(), request));
  if (!selected)
    return selected.status();
  if (!selected->persistWarning.empty())
    llvm::errs() << "tilec warmup: warning: " << selected->persistWarning
                 << "\n";
  result.keys.push_back({call.kernel, selected->key,
                         rt::getConfigSourceName(selected->source),
                         selected->config.str()});
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Progress and the report
//===----------------------------------------------------------------------===//

// "warmup 3/12: <call>: tuned 0.4 s" on stderr, one line per call; on a
// terminal the call being run shows first and is rewritten when it is done.
class WarmupProgress {
public:
  WarmupProgress(bool enabled, size_t total)
      : enabled_(enabled), terminal_(::isatty(STDERR_FILENO) != 0),
        total_(total) {}

  void start(size_t done, const rt::WorkloadCall &call) {
    if (enabled_ && terminal_)
      llvm::errs() << "\r\033[K" << prefix(done) << call.describe() << " ...";
  }
  void finish(size_t done, const EntryResult &result) {
    if (!enabled_)
      return;
    if (terminal_)
      llvm::errs() << "\r\033[K";
    llvm::errs() << prefix(done) << result.call->describe() << ": "
                 << result.source()
                 << llvm::format(" %.1f s", result.seconds) << "\n";
  }

private:
  std::string prefix(size_t done) const {
    return "warmup " + std::to_string(done + 1) + "/" +
           std::to_string(total_) + ": ";
  }

  bool enabled_, terminal_;
  size_t total_;
};

void printTable(const std::vector<EntryResult> &results) {
  size_t callWidth = 4, sourceWidth = 6;
  for (const EntryResult &result : results) {
    callWidth = std::max(callWidth, result.call->describe().size());
    for (const KeyResult &key : result.keys)
      sourceWidth = std::max(sourceWidth, key.source.size());
  }
  llvm::outs() << llvm::left_justify("entry", 10)
               << llvm::left_justify("call", callWidth) << "  "
               << llvm::left_justify("source", sourceWidth)
               << "    time s  key\n";
  for (const EntryResult &result : results) {
    llvm::outs() << llvm::left_justify(
                        "calls[" + std::to_string(result.index) + "]", 10)
                 << llvm::left_justify(result.call->describe(), callWidth);
    if (result.failed()) {
      llvm::outs() << "  " << llvm::left_justify("failed", sourceWidth)
                   << "         -  " << result.error << "\n";
      continue;
    }
    for (size_t i = 0; i < result.keys.size(); ++i) {
      const KeyResult &key = result.keys[i];
      if (i > 0)
        llvm::outs().indent(10 + callWidth);
      llvm::outs() << "  " << llvm::left_justify(key.source, sourceWidth);
      if (i == 0)
        llvm::outs() << llvm::format("  %8.3f", result.seconds);
      else
        llvm::outs().indent(10);
      llvm::outs() << "  " << key.kernel << " " << key.key << "\n";
    }
  }
}

struct Totals {
  size_t calls = 0, failed = 0;
  std::map<std::string, size_t> keysBySource;
  size_t keys = 0;
  double seconds = 0;
};

Totals totalsOf(const std::vector<EntryResult> &results, double seconds) {
  Totals totals;
  totals.calls = results.size();
  totals.seconds = seconds;
  for (const EntryResult &result : results) {
    totals.failed += result.failed();
    for (const KeyResult &key : result.keys) {
      ++totals.keysBySource[key.source];
      ++totals.keys;
    }
  }
  return totals;
}

void printTotals(const Totals &totals) {
  llvm::outs() << "total: " << totals.calls
               << (totals.calls == 1 ? " call" : " calls") << ", "
               << totals.failed << " failed; " << totals.keys
               << (totals.keys == 1 ? " key" : " keys");
  std::string sources;
  for (const auto &[source, count] : totals.keysBySource)
    sources += (sources.empty() ? "" : ", ") + std::to_string(count) + " " +
               source;
  if (!sources.empty())
    llvm::outs() << " (" << sources << ")";
  llvm::outs() << llvm::format("; %.3f s", totals.seconds) << "\n";
}

// `context` is null when no call could run (nothing asked for the GPU).
bool writeJson(const std::vector<EntryResult> &results, const Totals &totals,
               const rt::Context *context, const std::string &cachePath) {
  Json json;
  json["workload"] = workloadPath.getValue();
  json["device"] = context ? Json(context->properties().name) : Json();
  json["target"] =
      context ? Json(context->properties().compileTarget()) : Json();
  json["autotune_cache"] = cachePath;
  json["calls"] = Json::array();
  for (const EntryResult &result : results) {
    Json row;
    row["index"] = result.index;
    // The canonical text is valid JSON by construction.
    row["call"] = Json::parse(result.call->encode(), nullptr, false);
    row["status"] = result.failed() ? "failed" : "ok";
    if (result.failed())
      row["error"] = result.error;
    row["source"] = result.source();
    row["seconds"] = result.seconds;
    row["keys"] = Json::array();
    for (const KeyResult &key : result.keys)
      row["keys"].push_back({{"kernel", key.kernel},
                             {"key", key.key},
                             {"source", key.source},
                             {"config", key.config}});
    json["calls"].push_back(std::move(row));
  }
  Json keys = Json::object();
  for (const auto &[source, count] : totals.keysBySource)
    keys[source] = count;
  json["totals"] = {{"calls", totals.calls},
                    {"failed", totals.failed},
                    {"keys", totals.keys},
                    {"keys_by_source", keys},
                    {"seconds", totals.seconds}};
  std::ofstream out(jsonPath.getValue());
  out << json.dump(2) << "\n";
  return static_cast<bool>(out);
}

} // namespace

namespace {

void reportFailure(const EntryResult &result) {
  llvm::errs() << "tilec warmup: error: workload " << workloadPath
               << ": calls[" << result.index << "]: " << result.error << "\n";
}

// One result per call, in the file's order; the calls that cannot run are
// reported and marked failed.
std::vector<EntryResult> checkWorkload(const rt::Workload &workload) {
  std::vector<EntryResult> results(workload.calls.size());
  for (size_t i = 0; i < results.size(); ++i) {
    results[i].index = i;
    results[i].call = &workload.calls[i];
    if (Status status = checkCall(workload.calls[i]); !status.ok()) {
      results[i].error = status.message();
      reportFailure(results[i]);
    }
  }
  return results;
}

// The calls to run: op calls first, since the kernel calls they make are
// then cached.
std::vector<EntryResult *> runOrder(std::vector<EntryResult> &results) {
  std::vector<EntryResult *> order;
  for (bool ops : {true, false})
    for (EntryResult &result : results)
      if (!result.failed() && result.call->isOp() == ops)
        order.push_back(&result);
  return order;
}

void runCalls(rt::Session &session, const std::vector<EntryResult *> &order,
              rt::ProgressMode mode) {
  bool showing = mode == rt::ProgressMode::Always ||
                 (mode == rt::ProgressMode::Auto && ::isatty(STDERR_FILENO));
  WarmupProgress progress(showing, order.size());
  for (size_t done = 0; done < order.size(); ++done) {
    EntryResult &result = *order[done];
    progress.start(done, *result.call);
    Clock::time_point start = Clock::now();
    Status status = result.call->isOp()
                        ? runConvLayer(session, *result.call->conv, result)
                        : runKernelCall(session, *result.call, result);
    result.seconds = secondsSince(start);
    if (!status.ok()) {
      result.error = status.message();
      result.keys.clear();
      reportFailure(result);
    }
    progress.finish(done, result);
  }
}

// The table and the totals on stdout, and --json; `context` is null when no
// call could run. Returns the exit status.
int report(const std::vector<EntryResult> &results, double seconds,
           const rt::Context *context, const std::string &cachePath) {
  printTable(results);
  Totals totals = totalsOf(results, seconds);
  printTotals(totals);
  if (!jsonPath.empty() && !writeJson(results, totals, context, cachePath))
    return fail("cannot write " + jsonPath);
  return totals.failed ? 1 : 0;
}

} // namespace

int runWarmup() {
  if (workloadPath.empty())
    return fail("a workload file is required (tilec warmup WORKLOAD.json)");
  if (showProgress && quiet)
    return fail("--progress and --quiet exclude each other");
  if (!(budgetMs > 0) || !std::isfinite(budgetMs))
    return fail("--budget-ms must be a positive number of ms");
  if (screenKeep < -1)
    return fail("--screen-keep must be 0 or more");
  if (!(targetError >= 0 && targetError <= 50))
    return fail("--target-error must be a percentage from 0 to 50");
  // The file first, so that a bad one is diagnosed on any machine.
  Result<rt::Workload> workload = rt::Workload::load(workloadPath);
  if (!workload)
    return fail(workload.message());
  std::vector<EntryResult> results = checkWorkload(*workload);
  if (results.empty()) {
    llvm::outs() << "workload " << workloadPath
                 << " lists no calls: nothing to warm up\n";
    return 0;
  }
  std::vector<EntryResult *> order = runOrder(results);
  if (order.empty()) {
    llvm::outs() << "warmup of " << workloadPath << ": no call can run\n";
    return report(results, 0, nullptr,
                  rt::readEnvironment().autotuneCachePath());
  }

  // The GPU next: without one, say so before compiling anything.
  auto sessionOptions = tuningSessionOptions(device, quiet, showProgress);
  if (!sessionOptions)
    return fail(sessionOptions.message());
  rt::AutotuneOptions &options = sessionOptions->tuning;
  options.benchmark.budgetMs = budgetMs;
  if (screenKeep >= 0)
    options.screening.keep = screenKeep;
  // Unless given, the session's (TILEC_AUTOTUNE_TARGET_ERROR or 0.5%).
  if (targetError.getNumOccurrences())
    options.benchmark.targetError = targetError / 100;
  options.jobs = jobs;
  rt::ProgressMode progress = options.progress;
  auto created = rt::Session::create(std::move(*sessionOptions));
  if (!created)
    return fail(created.message());
  rt::Session &session = **created;
  for (const std::string &warning : session.autotuneCache().warnings())
    llvm::errs() << "tilec warmup: warning: " << warning << "\n";

  Clock::time_point start = Clock::now();
  runCalls(session, order, progress);
  llvm::outs() << "warmup of " << workloadPath << " on "
               << session.context().properties().name << " ("
               << session.provider().target() << ")\n";
  return report(results, secondsSince(start), &session.context(),
                session.autotuneCache().path());
}

} // namespace tilec::tool
