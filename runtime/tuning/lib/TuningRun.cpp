//===- TuningRun.cpp - The steps of one tuning run ------------------------===//

#include "TuningRun.h"

#include "tilec/contract/CompileMetadata.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace tilec::rt::tuning {

std::string formatUs(double us) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f us", us);
  return buffer;
}

std::string firstLines(const std::string &text, size_t limit) {
  if (text.size() <= limit)
    return text;
  // Cut on a character boundary: half a UTF-8 sequence would make the
  // autotune cache's json invalid.
  while (limit > 0 && (static_cast<unsigned char>(text[limit]) & 0xC0) == 0x80)
    --limit;
  return text.substr(0, limit) + "...";
}

//===----------------------------------------------------------------------===//
// Candidates and their compiles
//===----------------------------------------------------------------------===//

// The candidates of the call (KernelDescription::candidatesForCall); an
// error where the kernel declares none.
Result<std::vector<KernelDescription::CallCandidate>>
candidatesToTune(const KernelDescription &description,
                 const std::vector<Config> &declared, const Call &call) {
  Result<std::vector<KernelDescription::CallCandidate>> candidates =
      description.candidatesForCall(declared, call);
  if (candidates && candidates->empty())
    return Status::error(description.getName() +
                         " declares no candidate configs to tune");
  return candidates;
}

// candidatesToTune, each ready to compile: one the kernel prunes is marked
// pruned, with its reason.
Result<std::vector<Candidate>>
collectCandidates(const KernelDescription &description,
                  const std::vector<Config> &declared, const Call &call) {
  Result<std::vector<KernelDescription::CallCandidate>> forCall =
      candidatesToTune(description, declared, call);
  if (!forCall)
    return forCall.status();
  std::vector<Candidate> candidates;
  for (KernelDescription::CallCandidate &candidate : *forCall) {
    Candidate entry;
    entry.text = candidate.config.str();
    entry.config = std::move(candidate.config);
    entry.timing.config = entry.text;
    // The kernel says the candidate is not worth compiling for this call.
    if (candidate.pruneReason) {
      entry.timing.status = "pruned";
      entry.timing.reason = std::move(*candidate.pruneReason);
    }
    candidates.push_back(std::move(entry));
  }
  return candidates;
}

// min(candidates, hardware threads) unless the options say how many.
size_t compileJobs(unsigned requested, size_t candidates) {
  unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  size_t jobs = requested ? requested : std::min<size_t>(candidates, hardware);
  return std::max<size_t>(1, std::min(jobs, candidates));
}

// Compiles `candidate`; its compile metadata's ptxas report goes
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
  if (std::shared_ptr<const Kernel> loaded =
          provider.findLoaded(kernel, candidate.config, specialization)) {
    // Loaded by an earlier tuning (another key, the same cubin): neither
    // compiled nor loaded again.
    candidate.kernel = std::move(loaded);
    candidate.artifact.metadata = candidate.kernel->metadata();
  } else {
    Result<CompiledArtifact> artifact =
        provider.compile(kernel, candidate.config, specialization);
    if (!artifact) {
      candidate.timing.compileMs = msSince(begin);
      candidate.timing.status = artifact.status().kind() == ErrorKind::Resources
                                    ? "pruned"
                                    : "failed";
      candidate.timing.reason = artifact.message();
      return;
    }
    candidate.artifact = std::move(*artifact);
  }
  // A compile queued ahead and handed over says how long it took; the wait
  // for it is not its cost.
  candidate.timing.compileMs = candidate.artifact.compileMs > 0
                                   ? candidate.artifact.compileMs
                                   : msSince(begin);
  const CompileMetadata &metadata = candidate.artifact.metadata;
  candidate.timing.registers = metadata.registers.value_or(-1);
  candidate.timing.sharedBytes = metadata.sharedBytes;
  candidate.timing.spillBytes =
      metadata.spillStores.value_or(0) + metadata.spillLoads.value_or(0);
  candidate.compiled = true;
}

// A compiled candidate that cannot run on `device` (pruneReason: shared
// memory, registers, threads against the device's limits) is marked pruned
// and never launched.
void pruneCandidate(Candidate &candidate, const DeviceProperties &device) {
  if (!candidate.compiled)
    return;
  if (std::optional<std::string> reason =
          pruneReason(candidate.artifact.metadata, device)) {
    candidate.timing.status = "pruned";
    candidate.timing.reason = *reason;
  }
}

//===----------------------------------------------------------------------===//
// Benchmarking
//===----------------------------------------------------------------------===//

namespace {

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

  // Every candidate of `pool`, in one round or two (see screens()). A
  // candidate that fails is recorded as failed; the error is only for one
  // that broke the CUDA context, after which nothing would run.
  Status run(CompilePool &pool, size_t total) {
    const bool screening = screens(pool.runnable());
    std::vector<Candidate *> timed;
    for (size_t handled = 0; handled < total; ++handled) {
      Candidate &candidate = pool.next();
      ConfigTiming &timing = candidate.timing;
      if (timing.status != "ok") {
        progress_.line.note(timing.config + ": " + timing.status + ": " +
                            firstLines(timing.reason, 300));
        progress_.report(pool.compiled());
        continue;
      }
      TILEC_RETURN_IF_ERROR(
          measure(candidate, screening ? screeningOptions() : nextOptions()));
      if (timing.status == "ok") {
        timed.push_back(&candidate);
        ++progress_.benchmarked;
      }
      progress_.report(pool.compiled());
    }
    if (screening)
      return confirm(timed);
    return Status::success();
  }
  double benchmarkMs() const { return benchmarkMs_; }

private:
  // Two rounds where more candidates than the screening keeps may run (the
  // kernel's own pruning left them).
  bool screens(size_t runnable) const {
    return options_.screening.keep > 0 &&
           runnable > size_t(options_.screening.keep);
  }

  BenchmarkOptions screeningOptions() const {
    BenchmarkOptions options = nextOptions();
    options.warmupMs = options_.screening.warmupMs;
    options.budgetMs = options_.screening.budgetMs;
    // Off in both rounds where the full one is off: budgets alone then.
    options.targetError =
        options_.benchmark.targetError > 0 ? options_.screening.targetError : 0;
    return options;
  }

  // The second round: screeningCut's candidates are timed again in full,
  // unless it kept the fastest alone. The others are marked "screened",
  // which keeps them out of the winner's choice (their medians are from
  // fewer repetitions), unless none of those timed in full ran: then the
  // fastest screened one competes with its short measurement.
  Status confirm(const std::vector<Candidate *> &timed) {
    std::vector<ConfigTiming> round;
    for (const Candidate *candidate : timed)
      round.push_back(candidate->timing);
    ScreeningCut cut = screeningCut(round, options_.screening);
    if (cut.order.empty())
      return Status::success();
    const double fastest = round[cut.order.front()].medianUs;
    for (size_t rank = cut.kept; rank < cut.order.size(); ++rank) {
      ConfigTiming &timing = timed[cut.order[rank]]->timing;
      char reason[128];
      std::snprintf(reason, sizeof(reason),
                    "%.2fx the fastest on the screening budget (%g ms), "
                    "rank %zu of %zu",
                    timing.medianUs / fastest, options_.screening.budgetMs,
                    rank + 1, cut.order.size());
      timing.status = "screened";
      if (!timing.reason.empty())
        timing.reason += "; ";
      timing.reason += reason;
    }
    // Nothing came within the margin: the fastest wins on its screening
    // measurement (its median over the short budget's repetitions, the L2
    // flushed before each), with no second one.
    if (cut.kept == 1 && cut.order.size() > 1) {
      timed[cut.order.front()]->timing.reason =
          "timed on the screening budget only: no other candidate within "
          "the margin";
      return Status::success();
    }
    measured_.clear();
    bool ran = false;
    for (size_t rank = 0; rank < cut.kept; ++rank) {
      Candidate &candidate = *timed[cut.order[rank]];
      candidate.timing.reason.clear();
      TILEC_RETURN_IF_ERROR(measure(candidate, options_.benchmark));
      ran = ran || candidate.timing.status == "ok";
      progress_.report(progress_.total);
    }
    if (!ran && cut.kept < cut.order.size()) {
      ConfigTiming &best = timed[cut.order[cut.kept]]->timing;
      best.status = "ok";
      best.reason = "the screening round's measurement: the candidates "
                    "timed in full failed";
    }
    return Status::success();
  }

  // Loads (once), binds and times one candidate; see run() for the errors.
  Status measure(Candidate &candidate, const BenchmarkOptions &options) {
    Clock::time_point start = Clock::now();
    Status status = measureOnce(candidate, options);
    benchmarkMs_ += msSince(start);
    if (!status.ok())
      return status;
    // Only the main thread's copies: workers may still write to
    // candidates that are not handed over yet.
    if (candidate.timing.status == "ok")
      measured_.push_back(candidate.timing);
    if (int best = selectWinner(measured_, options_.tieTolerance); best >= 0)
      progress_.best =
          formatUs(measured_[best].medianUs) + " " + measured_[best].config;
    return Status::success();
  }

  Status measureOnce(Candidate &candidate, const BenchmarkOptions &options) {
    ConfigTiming &timing = candidate.timing;
    auto fail = [&](const Status &status, const char *what) {
      timing.status = "failed";
      timing.reason = std::string(what) + ": " + status.message();
      progress_.line.note(timing.config + ": " + timing.reason);
      return Status::success();
    };
    if (!candidate.kernel) {
      Result<std::shared_ptr<const Kernel>> kernel =
          provider_.load(candidate.artifact);
      if (!kernel)
        return fail(kernel.status(), "load");
      candidate.kernel = std::move(*kernel);
    }
    Result<Dim3> grid = description_.evaluateGrid(candidate.config, call_);
    if (!grid)
      return fail(grid.status(), "grid");
    Result<ArgPack> pack = candidate.kernel->makeArgPack();
    Status bound = pack ? inputs_.bind(*pack) : pack.status();
    if (!bound.ok())
      return fail(bound, "arguments");
    Result<BenchmarkResult> result =
        benchmarker_.run(*candidate.kernel, *grid, *pack, options);
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

} // namespace

Result<double>
benchmarkCandidates(CompilePool &pool, size_t total, KernelProvider &provider,
                    Benchmarker &benchmarker, const BenchmarkInputs &inputs,
                    const KernelDescription &description, const Call &call,
                    const AutotuneOptions &options, TuneProgress &progress) {
  BenchmarkPhase phase(provider, benchmarker, inputs, description, call,
                       options, progress);
  TILEC_RETURN_IF_ERROR(phase.run(pool, total));
  return phase.benchmarkMs();
}

//===----------------------------------------------------------------------===//
// The winner and its entry
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
  entry.cubinKey = winner.artifact.metadata.cubinKey();
  entry.metadataJson = winner.artifact.metadata.toJson();
  entry.description = description;
  entry.tunedAt = utcTimestamp();
  entry.compilerId = winner.artifact.metadata.compilerId;
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

} // namespace tilec::rt::tuning
