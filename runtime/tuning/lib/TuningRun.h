//===- TuningRun.h - The steps of one tuning run ----------------*- C++ -*-===//
//
// Private to tilec_tuning. Autotuner::tune (Autotuner.cpp) runs these in
// order: the candidates of a call (collectCandidates), compiled on a pool
// of threads (CompilePool, compileCandidate) and pruned against the device
// (pruneCandidate), benchmarked one at a time as their compiles finish
// (benchmarkCandidates, on Benchmarker.cpp's timing), then the winner
// picked (pickWinner) and its autotune cache entry made (makeEntry), with a
// progress line on stderr (Progress.h).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_TUNING_TUNINGRUN_H
#define TILEC_RUNTIME_TUNING_TUNINGRUN_H

#include "Progress.h"

#include "tilec/runtime/AutotuneCache.h"
#include "tilec/runtime/Autotuner.h"
#include "tilec/runtime/KernelProvider.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace tilec::rt::tuning {

using Clock = std::chrono::steady_clock;

inline double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

// "12.3 us".
std::string formatUs(double us);
// `text` cut to `limit` bytes on a character boundary, "..." after a cut.
std::string firstLines(const std::string &text, size_t limit);

// One candidate as it moves through compile -> prune -> benchmark.
struct Candidate {
  Config config;
  std::string text;
  CompiledArtifact artifact;
  ConfigTiming timing;
  bool compiled = false;
  // Set by the benchmarking phase once the candidate ran.
  std::shared_ptr<const Kernel> kernel;
};

// The candidates of the call (KernelDescription::candidatesForCall); an
// error where the kernel declares none.
Result<std::vector<KernelDescription::CallCandidate>>
candidatesToTune(const KernelDescription &description,
                 const std::vector<Config> &declared, const Call &call);

// candidatesToTune, each ready to compile: one the kernel prunes is marked
// pruned, with its reason.
Result<std::vector<Candidate>>
collectCandidates(const KernelDescription &description,
                  const std::vector<Config> &declared, const Call &call);

// min(candidates, hardware threads) unless the options say how many.
size_t compileJobs(unsigned requested, size_t candidates);

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
    for (const Candidate &candidate : candidates)
      runnable_ += candidate.timing.status != "pruned";
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
  // The candidates the kernel's own conditions did not prune before
  // compiling (collectCandidates).
  size_t runnable() const { return runnable_; }
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
  size_t runnable_ = 0;
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
                      Candidate &candidate);

// A compiled candidate that cannot run on `device` (pruneReason: shared
// memory, registers, threads against the device's limits) is marked pruned
// and never launched.
void pruneCandidate(Candidate &candidate, const DeviceProperties &device);

// Benchmarks the candidates one at a time as `pool` hands them over, on the
// calling thread, and gives the time it spent. A candidate that fails is
// recorded as failed; the error is only for one that broke the CUDA
// context, after which nothing would run.
Result<double>
benchmarkCandidates(CompilePool &pool, size_t total, KernelProvider &provider,
                    Benchmarker &benchmarker, const BenchmarkInputs &inputs,
                    const KernelDescription &description, const Call &call,
                    const AutotuneOptions &options, TuneProgress &progress);

// The autotune cache's entry for `winner`: its config, every candidate's
// timing (reasons shortened), its cubin's stage-cache key and compile json,
// and the kernel's description.
AutotuneEntry makeEntry(const KernelDescription &description,
                        const Candidate &winner,
                        const std::vector<ConfigTiming> &timings,
                        const std::string &target, double budgetMs);

// The winner among the benchmarked candidates, with every candidate's
// timing; an error listing why each failed when none ran.
Result<TuneResult> pickWinner(const KernelDescription &description,
                              const Call &call, const std::string &key,
                              const std::vector<Candidate> &candidates,
                              double tieTolerance);

} // namespace tilec::rt::tuning

#endif // TILEC_RUNTIME_TUNING_TUNINGRUN_H
