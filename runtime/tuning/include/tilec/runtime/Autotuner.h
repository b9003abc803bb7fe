//===- Autotuner.h - Picking a kernel's config on the device ----*- C++ -*-===//
//
// Part of tilec_tuning, the tuning library (on top of tilec_runtime).
//
// For a call of a kernel (its sizes and dtypes) the autotuner returns a loaded
// kernel and its grid. The config comes from, in order:
//
//   1. a pinned config (TILEC_PIN_CONFIG or the file TILEC_PIN_FILE): used as
//      is, nothing is benchmarked or persisted;
//   1b. the provider's kernel bundle (Bundle.h), under the same key as the
//      autotune cache; a strict bundle that lacks the key ends the search
//      with an error naming the kernel and key;
//   2. the autotune cache (AutotuneCache.h, and its shared tier when it has
//      one), under the kernel's autotune key evaluated for the call; its
//      cubin comes from the stage cache when it is still there, so no
//      compiler is needed;
//   3. tuning: every candidate is compiled (in parallel, on a thread pool),
//      candidates that cannot run on the device are pruned (shared memory,
//      registers, threads, from the ptxas report against the device limits),
//      the rest are benchmarked one at a time with CUDA events (warm-up,
//      repetitions within a time budget, L2 flushed before each repetition,
//      median), and the lowest median wins; medians within the tie tolerance
//      of the best are ties, broken by the canonical config text so that the
//      same timings always give the same winner. The winner and all timings
//      are persisted.
//
// No LLVM here: compiling goes through the KernelCompiler interface.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_AUTOTUNER_H
#define TILEC_RUNTIME_AUTOTUNER_H

#include "tilec/contract/CompileMetadata.h"
#include "tilec/contract/Status.h"
#include "tilec/runtime/ArgPack.h"
#include "tilec/runtime/AutotuneCache.h"
#include "tilec/runtime/Context.h"
#include "tilec/runtime/DeviceBuffer.h"
#include "tilec/runtime/Environment.h"
#include "tilec/runtime/Event.h"
#include "tilec/runtime/KernelCompiler.h"
#include "tilec/runtime/KernelProvider.h"
#include "tilec/runtime/Launch.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilec::rt {

//===----------------------------------------------------------------------===//
// Pruning and picking the winner
//===----------------------------------------------------------------------===//

// Why a compiled kernel cannot run on `device`, or nothing when it can:
// dynamic shared memory above the opt-in maximum per block, registers x
// threads above the registers per block, threads above the threads per
// block.
std::optional<std::string> pruneReason(const CompileMetadata &metadata,
                                       const DeviceProperties &device);

// The index of the winner among `timings` (only status "ok" entries with a
// positive median compete): the lowest median, where every median within
// `tolerance` (relative, 0.01 = 1%) of the lowest is a tie broken by the
// smallest canonical config text. -1 when nothing ran.
int selectWinner(const std::vector<ConfigTiming> &timings, double tolerance);

//===----------------------------------------------------------------------===//
// Pinned configs
//===----------------------------------------------------------------------===//

// Configs that bypass tuning, for reproducible runs:
//   TILEC_PIN_CONFIG="matmul=BLOCK_M=64,BLOCK_N=64,BLOCK_K=32;softmax=num_warps=8"
//     (kernel=config, ';' between kernels)
//   TILEC_PIN_FILE=pins.json, a JSON object of kernel -> config text, or
//     kernel -> { key -> config text } with "*" matching any key.
// The environment variable wins over the file; within the file a key's own
// pin wins over "*".
class PinnedConfigs {
public:
  // TILEC_PIN_CONFIG and TILEC_PIN_FILE of `environment`. A malformed value
  // or file is an error naming it: a pin that silently did not apply would
  // defeat its purpose.
  static Result<PinnedConfigs> fromEnvironment(const Environment &environment);
  static Result<PinnedConfigs> parseSpec(std::string_view spec);
  static Result<PinnedConfigs> parseFile(const std::string &path);

  // Adds `other`'s pins over these.
  void overrideWith(const PinnedConfigs &other);

  // The pinned config text for (kernel, key), or nothing.
  std::optional<std::string> find(const std::string &kernel,
                                  const std::string &key) const;
  bool empty() const { return pins_.empty(); }

private:
  // kernel -> key ("*" = any) -> config text.
  std::map<std::string, std::map<std::string, std::string>> pins_;
};

//===----------------------------------------------------------------------===//
// Benchmarking
//===----------------------------------------------------------------------===//

// The arguments of a benchmark call: buffers on the device and scalars,
// bound into a pack of the kernel's signature. Implemented by the kernel
// harness (tilec::harness) and by applications.
class BenchmarkInputs {
public:
  virtual ~BenchmarkInputs();
  virtual Status bind(ArgPack &pack) const = 0;
  // Floating-point operations of one call, for TFLOP/s; 0 when unknown.
  virtual double flops() const { return 0; }
};

struct BenchmarkOptions {
  // Launches before timing, for about this long (at least one), where the
  // GPU may have lowered its clocks: the benchmarker's first run, or one
  // that starts more than kClocksHeldMs after the last ended. Right after a
  // run (the candidates of a tuning, one after another) the clocks are up
  // and `warmWarmupMs` settles the new kernel's caches.
  double warmupMs = 5;
  double warmWarmupMs = 0.25;
  // Timed repetitions: at most about this much time, within [minReps,
  // maxReps].
  double budgetMs = 20;
  int minReps = 5;
  int maxReps = 200;
  // Repetitions stop once the median's relative standard error, estimated
  // from those so far (medianRelativeError), is at most this (0.005 =
  // 0.5%); 0 times every repetition the budget allows. A kernel of a few
  // microseconds with a steady time needs a few dozen, not the budget's
  // hundreds.
  double targetError = 0.005;
  // The median's error, in microseconds, below which no more repetitions
  // are worth their time whatever targetError asks: half the resolution of
  // CUDA's event timer (about 0.5 us). An 11 us kernel's 0.5% is 0.055 us,
  // a tenth of the timer's step: its full measurement ran to the cap of 200
  // repetitions (11 ms behind the L2 flushes) to tell 10.5 from 10.6 us.
  double resolutionUs = 0.25;
  // Write a buffer of twice the L2 size before each repetition, so that
  // every repetition starts with a cold L2 as a call in a real workload does.
  bool flushL2 = true;
  // Stop after the first launch when it took longer than this (0: never):
  // the autotuner sets it from the best median so far, so that a config
  // that cannot win costs one launch instead of a full measurement.
  double stopAboveUs = 0;
};

// How long after a run the next one counts the GPU's clocks as still up.
inline constexpr double kClocksHeldMs = 100;

// The relative standard error of the median of `sortedUs` (ascending):
// 1.2533 sigma / sqrt(n) / median, with sigma read from the spread between
// the 20th and 80th percentiles as for a normal distribution (p80 - p20 =
// 1.6832 sigma), which an outlier does not move. 0 for fewer than two times
// or a median of 0.
double medianRelativeError(const std::vector<double> &sortedUs);

// The fewest repetitions a batch of the target error's rule queues: enough
// for the spread between the 20th and 80th percentiles to say something.
inline constexpr int kRepetitionBatch = 10;

// The relative error of a median of `medianUs` that is precise enough:
// options.targetError, or more where the timer's resolution
// (options.resolutionUs) is the larger share of the median; 0 where
// targetError is 0 (the rule off). A median of 0 (none yet) gets
// targetError.
double enoughError(const BenchmarkOptions &options, double medianUs);

// How many repetitions to queue next, after `done` of at most `cap`, whose
// median's relative error is `error`, `enough` being precise enough
// (enoughError): 0 when done. The first batch is kRepetitionBatch (the
// whole cap where `enough` is 0, as it was before the rule); then, until
// the error is at most `enough`, half as many again as are done (at least
// kRepetitionBatch), so that a measurement takes a few waits, not one per
// repetition.
int nextRepetitions(int done, int cap, double error, double enough);

struct BenchmarkResult {
  double medianUs = 0;
  double p20Us = 0;
  double p80Us = 0;
  double minUs = 0;
  int repetitions = 0;
  // The first launch was above stopAboveUs: its time is all there is.
  bool stoppedEarly = false;
};

// Times launches with CUDA events on the legacy default stream. Owns the L2
// flush buffer and the events, reused across kernels.
class Benchmarker {
public:
  // `flushBytes` 0: twice the device's L2 (CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE).
  static Result<Benchmarker> create(const Context &context,
                                    size_t flushBytes = 0);

  // Times `kernel`: one launch (the early stop's), a warm-up (long where
  // the GPU was idle, see BenchmarkOptions::warmupMs), then repetitions in
  // batches until the median is as precise as asked or the budget is spent.
  Result<BenchmarkResult> run(const Kernel &kernel, Dim3 grid,
                              const ArgPack &args,
                              const BenchmarkOptions &options);

  size_t flushBytes() const { return flush_.size(); }

private:
  Benchmarker(const Context &context, DeviceBuffer flush)
      : context_(&context), flush_(std::move(flush)) {}
  Result<BenchmarkResult> measure(const Kernel &kernel, Dim3 grid,
                                  const ArgPack &args,
                                  const BenchmarkOptions &options);
  Status ensureEvents(size_t count);
  // Whether the last run ended within kClocksHeldMs.
  bool clocksHeld() const;

  const Context *context_;
  DeviceBuffer flush_;
  std::vector<Event> events_;
  std::optional<std::chrono::steady_clock::time_point> lastRunEnd_;
};

//===----------------------------------------------------------------------===//
// The autotuner
//===----------------------------------------------------------------------===//

// Builds a call's inputs. Called at most once per tuning, on the calling
// thread, after the candidates' compiles have started (so that building the
// inputs overlaps compiling); not called when the config comes from a pin or
// the cache.
using InputsFactory =
    std::function<Result<std::shared_ptr<const BenchmarkInputs>>()>;

enum class ProgressMode {
  // Progress on stderr when stderr is a terminal.
  Auto,
  Always,
  Never,
};

// The first of two benchmark rounds (AutotuneOptions::screening).
struct ScreeningOptions {
  // Each candidate's short measurement.
  double warmupMs = 1;
  double budgetMs = 4;
  // Those whose median is within this of the best screened median (0.10 =
  // 10%) go on to the full measurement, at most `keep` of them, fastest
  // first. keep 0 measures every candidate in full, in one round.
  double within = 0.10;
  int keep = 4;
  // The short measurement's precision (BenchmarkOptions::targetError): it
  // only needs to tell candidates 10% apart.
  double targetError = 0.02;
};

// The screening round's outcome: the candidates that ran (status "ok", a
// positive median), as indices into the round's timings: the `kept` to time
// again in full first, then the others, each part fastest first (ties by
// config text).
struct ScreeningCut {
  std::vector<size_t> order;
  size_t kept = 0;
};

// The cut of a screening round over `timings` (each candidate's short
// measurement): the fastest, then those within `screening.within` of it
// measured on more than one repetition (an early stop's single launch is
// not), `screening.keep` in all; every one that ran where no more than
// `screening.keep` did.
ScreeningCut screeningCut(const std::vector<ConfigTiming> &timings,
                          const ScreeningOptions &screening);

// What select() does with a key no pin, bundle or autotune cache answers
// (and a compiler is there).
enum class FirstUse {
  // Tunes it on the call: every candidate compiles and is benchmarked before
  // the call goes on (a network's first training step: seconds).
  Tune,
  // Runs the kernel's prediction for the call (KernelDescription::
  // predictedConfigs), compiled alone, not benchmarked and not persisted:
  // the key is tuned at its next select() after retirePredictions(), a
  // point the program chooses, so that which config computes which call
  // does not depend on timing. A kernel with a single candidate is adopted
  // as in Tune.
  Predict,
};

struct AutotuneOptions {
  BenchmarkOptions benchmark;
  // TILEC_FIRST_USE=tune|predict.
  FirstUse firstUse = FirstUse::Tune;
  // Where there are more than screening.keep candidates, every candidate is
  // first timed on the screening budget, then the few fastest again on the
  // full one (`benchmark`), and the winner is chosen among those; the others
  // are recorded "screened" with their short measurement. Most candidates of
  // a tuning are far from the winner: the two rounds benchmark for about a
  // third of the time of one full round, which is most of a first call's
  // tuning once its compiles are done.
  ScreeningOptions screening;
  // Relative difference of medians that counts as a tie (0.01 = 1%).
  double tieTolerance = 0.01;
  // A candidate whose first launch takes more than stopFactor times the best
  // median so far, and more than stopMinUs, is not measured further: it
  // cannot win (nor tie: stopFactor is far above the tie tolerance), and a
  // slow config is exactly the one whose full measurement costs most. The
  // floor keeps short kernels, whose first launch varies most, measured in
  // full. stopFactor 0 measures everything.
  double stopFactor = 3;
  double stopMinUs = 1000;
  // Compile threads; 0: one per candidate, at most the hardware threads.
  unsigned jobs = 0;
  ProgressMode progress = ProgressMode::Auto;
  // Tune even when the autotune cache has the key.
  bool force = false;
  // Write the result to the autotune cache.
  bool persist = true;
  // Candidates to try instead of the kernel's declared ones.
  std::vector<Config> configs;
};

// Where a TuneResult's config came from.
enum class ConfigSource {
  Pinned,
  // The autotune cache, in this process's memo or on disk.
  Cached,
  Tuned,
  // A kernel bundle (Bundle.h).
  Bundled,
  // The kernel's prediction, on a first use under FirstUse::Predict.
  Predicted,
};
const char *getConfigSourceName(ConfigSource source);

// The current UTC time as "2026-11-29T12:00:00Z": when an entry was tuned or
// a bundle packed.
std::string utcTimestamp();
// Milliseconds since the Unix epoch, now: when a tuning started.
double unixMs();

struct TuneResult {
  std::string kernelName;
  std::string key;
  ConfigSource source = ConfigSource::Tuned;
  Config config;
  std::shared_ptr<const Kernel> kernel;
  Dim3 grid;
  // Tuned only: every candidate, in declaration order.
  std::vector<ConfigTiming> timings;
  int winnerIndex = -1;
  // The winner's median kernel time in microseconds as measured when it was
  // tuned (from this tuning, the autotune cache or a bundle); 0 when it was
  // never benchmarked (a pin, a kernel with a single candidate).
  double medianUs = 0;
  double flops = 0;
  // Wall times, milliseconds: the whole select(), the compiles (first
  // submitted to last finished), building the inputs, benchmarking.
  double totalMs = 0;
  double compileMs = 0;
  double inputsMs = 0;
  double benchmarkMs = 0;
  // The steps of select() with their time in microseconds, in order (key,
  // cache lookup, load, ...), for start-up measurements.
  std::vector<std::pair<std::string, double>> steps;
  // Set when persisting failed (the result is still usable).
  std::string persistWarning;
};

/// The key a result is stored under for a call: its autotune key, then "|"
/// and its specialization where it has one (the winner's cubin was compiled
/// for it). Pins name the autotune key alone.
std::string specializedAutotuneKey(const std::string &key,
                                   const Specialization &specialization);

class Autotuner {
public:
  // `provider`, `cache` must outlive the autotuner. The autotune cache is
  // used as loaded: call cache.load() first (Session::create does, unless a
  // strict bundle answers every call).
  Autotuner(KernelProvider &provider, AutotuneCache &cache, PinnedConfigs pins,
            AutotuneOptions options = {});

  // The loaded kernel and grid for a call of `kernel` (see the file
  // comment). `inputs` is only needed to tune; without it a key that is not
  // pinned or cached is an error, except for a kernel with a single
  // candidate: that one is compiled, checked against the device's limits and
  // recorded in the autotune cache as the winner without being benchmarked
  // (status "only"), so that a packed bundle includes it too.
  Result<TuneResult> select(const std::string &kernel, const Call &call,
                            const InputsFactory &inputs = {});

  // Whether select() would answer a call from this process's own choice for
  // its key (no compile, no cache or bundle read, no module load): a new
  // size inside a bucket that was already selected. False for a kernel that
  // cannot be described or keyed: select() reports those.
  bool hasChoice(const std::string &kernel, const Call &call);

  // This process's choice for a call of `kernel` whose specialized
  // autotune key (specializedAutotuneKey) is `key`, as select() answers it
  // from that choice, but without the grid, which the caller evaluates:
  // for callers that key a call faster than the description can (a plan of
  // the call's shape, SparseEngine). Nothing under --force or without a
  // choice; select() records the call in the workload, this does not.
  std::optional<TuneResult> chosenForKey(const std::string &kernel,
                                         const std::string &key);
  // Whether chosenForKey gives a choice.
  bool hasChoiceForKey(const std::string &kernel, const std::string &key);

  // Whether select() would tune `call`: there is a compiler, and no memo,
  // pin, bundle or autotune cache entry answers it. False for a kernel that
  // cannot be described or keyed.
  bool wouldTune(const std::string &kernel, const Call &call);

  // Queues the candidates of each call that select() would tune (no memo,
  // pin, bundle or autotune cache entry answers it, and there is a
  // compiler) for compiling ahead on the provider's workers, in order:
  // tunings that follow one another then find their candidates compiled by
  // one batch over every core (KernelProvider::compileAhead). Returns how
  // many compiles it queued; a call that cannot be described or keyed is
  // left to select() to report.
  size_t compileAhead(const std::vector<std::pair<std::string, Call>> &calls);

  // Drops this process's predictions (ConfigSource::Predicted): the next
  // select() of each of their keys tunes it on that call's inputs. Their
  // other candidates are queued now on the provider's compile workers, so
  // that those tunings find them compiled. Returns how many were dropped.
  size_t retirePredictions();
  // How many choices are predictions.
  size_t predictionCount();
  // options().firstUse, read under the tuner's lock (retirePredictions
  // changes it).
  FirstUse firstUse();

  // The kernel's description: the compiler's, else the one stored in the
  // autotune cache for this device.
  Result<KernelDescription> describe(const std::string &kernel);

  AutotuneOptions &options() { return options_; }
  const std::string &deviceName() const;

  // The configs a tuning of `description`'s kernel tries (before pruning):
  // the options' configs when set, else the kernel's candidates; on the
  // interpreter device, which times nothing, only the first of them.
  std::vector<Config> configsToTry(const KernelDescription &description) const;

private:
  // Whether the device is the interpreter (tilec/contract/
  // InterpreterDevice.h): its times say nothing, so a tuning adopts the
  // first candidate without benchmarks.
  bool onInterpreter() const;
  Result<const KernelDescription *> describeLocked(const std::string &kernel);
  // This process's choice for `kernel` under its specialized autotune key,
  // or null (also under --force, which always tunes anew).
  const TuneResult *choiceLocked(const std::string &kernel,
                                 const std::string &key) const;
  bool wouldTuneLocked(const std::string &kernel,
                       const KernelDescription &description, const Call &call);
  // The autotune cache's entry for (kernel, key) on this device that this
  // process may answer from, or null: an entry recorded by another version
  // of tilec than this process's compiler (an upgrade) names that version's
  // cubin, whose kernel code may not be this one's (its arguments, its
  // derived parameters), so the call tunes again and its entry replaces
  // the old one. Builds of one version answer from each other's entries
  // (the tool that warmed up, the library that serves), unless the entry's
  // cubin takes other arguments than `description` declares (a build from
  // before the kernel's arguments changed): that one is tuned again too. A
  // process without a compiler, or entries and compilers that name none,
  // take the entry as it is.
  const AutotuneEntry *cachedEntry(const std::string &kernel,
                                   const std::string &key,
                                   const KernelDescription &description) const;
  Result<TuneResult> tune(const KernelDescription &description,
                          const Call &call, const std::string &key,
                          const Specialization &specialization,
                          const InputsFactory &inputs);
  // select()'s first use under FirstUse::Predict: the first predicted
  // config that compiles and fits the device; a tuning where none does.
  Result<TuneResult> predict(const KernelDescription &description,
                             const Call &call, const std::string &key,
                             const Specialization &specialization,
                             const InputsFactory &inputs);
  // The configs predict() tries, in order, of `candidates` (the call's,
  // KernelDescription::candidatesForCall of configsToTry).
  Result<std::vector<Config>> predictedConfigs(
      const KernelDescription &description,
      const std::vector<KernelDescription::CallCandidate> &candidates,
      const Call &call) const;
  Result<TuneResult> adoptOnlyCandidate(const KernelDescription &description,
                                        const Call &call,
                                        const std::string &key,
                                        const Specialization &specialization);

  KernelProvider &provider_;
  AutotuneCache &cache_;
  PinnedConfigs pins_;
  AutotuneOptions options_;
  std::unique_ptr<Benchmarker> benchmarker_;

  std::mutex mutex_;
  // A bundle's descriptions are shared with it (they live as long as it),
  // the others are copies the tuner owns.
  std::map<std::string, std::shared_ptr<const KernelDescription>> descriptions_;
  // kernel + '\n' + key -> the chosen config and kernel.
  std::map<std::string, TuneResult> chosen_;
  // The calls whose choices in chosen_ are predictions, by the same key:
  // retirePredictions() queues their candidates.
  std::map<std::string, std::pair<std::string, Call>> predicted_;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_AUTOTUNER_H
