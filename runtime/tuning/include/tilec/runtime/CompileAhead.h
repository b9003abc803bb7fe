//===- CompileAhead.h - Compiles queued ahead of tunings --------*- C++ -*-===//
//
// Part of tilec_tuning, the tuning library.
//
// A tuning compiles its own candidates, on a pool as wide as their count,
// when it starts, and benchmarks them as they finish; tunings that come one
// after another (a sparse convolution's two row blocks, its backward's input
// and weight gradients) each wait for their own batch. A caller that knows
// which tunings come next queues all their candidates here first: they
// compile in one batch on every core, in the order queued, and each tuning
// takes its candidates' artifacts (KernelProvider::compile does) instead of
// compiling them again. A candidate queued but not started yet when its
// tuning asks for it is handed back to the tuning to compile itself, so
// nothing waits behind the queue.
//
// Compiles needed next (When::Next: a map build about to launch its
// kernels, SparseEngine::precompile) run before those queued for later
// tunings, in their own order. Queued behind a convolution's candidates, a
// build's kernels were each handed back to the build when it launched
// them, and compiled one after another on its thread (about 1 s at a
// network's first map build on the H100, while every worker compiled
// candidates).
//
// Thread-safe. The workers start with the first job and sleep while the
// queue is empty; the destructor drops what is still queued and waits for
// the compiles that run.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_COMPILEAHEAD_H
#define TILEC_RUNTIME_COMPILEAHEAD_H

#include "tilec/runtime/KernelCompiler.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace tilec::rt {

class CompileAhead {
public:
  using CompileFunction = std::function<Result<CompiledArtifact>(
      const std::string &kernel, const Config &config,
      const Specialization &specialization)>;

  // `threads` compiles at once at most (0: the hardware's threads); at most
  // `capacity` compiles queued, running or done and not taken at once.
  CompileAhead(CompileFunction compile, unsigned threads = 0,
               size_t capacity = 256);
  ~CompileAhead();
  CompileAhead(const CompileAhead &) = delete;
  CompileAhead &operator=(const CompileAhead &) = delete;

  // Queues a compile of (kernel, config, specialization). False when one is
  // already queued, running or done and not taken, or when `capacity` are
  // (after forgetting the done ones nobody took: their artifacts are in the
  // stage cache, if there is one).
  // Next: before every compile queued for Later (after the Next ones
  // queued before it); a Later compile still queued moves up to Next.
  enum class When { Later, Next };
  bool enqueue(const std::string &kernel, const Config &config,
               const Specialization &specialization, When when = When::Later);

  // The queued compile of (kernel, config, specialization): one running is
  // waited for, one done is handed over; either is then forgotten. Nothing
  // (nullopt) for one never queued or not started yet, which is dropped from
  // the queue: the caller compiles it itself, at once.
  std::optional<Result<CompiledArtifact>>
  take(const std::string &kernel, const Config &config,
       const Specialization &specialization);

  // At most `threads` compiles at once from now on (0: the hardware's
  // threads), as a tuner's own compile pool is limited (AutotuneOptions::
  // jobs).
  void setThreads(unsigned threads);

  // Compiles queued, running, and done but not taken.
  size_t size() const;

  // Blocks until nothing is queued or running (for tests and tools).
  void waitIdle();

private:
  struct Job {
    std::string kernel;
    Config config;
    Specialization specialization;
    bool running = false;
    bool done = false;
    bool taken = false;
    std::optional<Result<CompiledArtifact>> result;
  };
  void work();
  void forgetDoneLocked();

  CompileFunction compile_;
  unsigned threads_;
  size_t capacity_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::shared_ptr<Job>> jobs_;
  // The queued compiles not started yet: `next_` runs first.
  std::deque<std::string> next_, later_;
  size_t running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_COMPILEAHEAD_H
