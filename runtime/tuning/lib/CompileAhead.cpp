//===- CompileAhead.cpp - Compiles queued ahead of tunings ----------------===//

#include "tilec/runtime/CompileAhead.h"

#include <algorithm>

namespace tilec::rt {

CompileAhead::CompileAhead(CompileFunction compile, unsigned threads,
                           size_t capacity)
    : compile_(std::move(compile)),
      threads_(threads ? threads
                       : std::max(1u, std::thread::hardware_concurrency())),
      capacity_(std::max<size_t>(1, capacity)) {}

CompileAhead::~CompileAhead() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    next_.clear();
    later_.clear();
  }
  changed_.notify_all();
  for (std::thread &worker : workers_)
    worker.join();
}

void CompileAhead::forgetDoneLocked() {
  for (auto it = jobs_.begin(); it != jobs_.end();)
    it = it->second->done ? jobs_.erase(it) : std::next(it);
}

bool CompileAhead::enqueue(const std::string &kernel, const Config &config,
                           const Specialization &specialization, When when) {
  std::string key = compileKey(kernel, config, specialization);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_)
      return false;
    if (auto queued = jobs_.find(key); queued != jobs_.end()) {
      // Queued for later and needed next now: it moves up.
      if (when == When::Next && !queued->second->running &&
          !queued->second->done) {
        if (auto at = std::find(later_.begin(), later_.end(), key);
            at != later_.end()) {
          later_.erase(at);
          next_.push_back(key);
        }
      }
      return false;
    }
    if (jobs_.size() >= capacity_)
      forgetDoneLocked();
    if (jobs_.size() >= capacity_)
      return false;
    // Workers start with the work, up to the limit; idle ones sleep.
    if (workers_.size() < threads_ &&
        workers_.size() < next_.size() + later_.size() + running_ + 1)
      workers_.emplace_back([this] { work(); });
    auto job = std::make_shared<Job>();
    job->kernel = kernel;
    job->config = config;
    job->specialization = specialization;
    jobs_.emplace(key, std::move(job));
    (when == When::Next ? next_ : later_).push_back(std::move(key));
  }
  // Workers, takers and waitIdle() share the condition: all of them look.
  changed_.notify_all();
  return true;
}

void CompileAhead::setThreads(unsigned threads) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    threads_ =
        threads ? threads : std::max(1u, std::thread::hardware_concurrency());
  }
  changed_.notify_all();
}

std::optional<Result<CompiledArtifact>>
CompileAhead::take(const std::string &kernel, const Config &config,
                   const Specialization &specialization) {
  std::string key = compileKey(kernel, config, specialization);
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = jobs_.find(key);
  if (it == jobs_.end())
    return std::nullopt;
  std::shared_ptr<Job> job = it->second;
  if (!job->running && !job->done) {
    // Not started: the caller's own compile starts now, not behind the
    // queue.
    for (std::deque<std::string> *queue : {&next_, &later_})
      if (auto at = std::find(queue->begin(), queue->end(), key);
          at != queue->end())
        queue->erase(at);
    jobs_.erase(it);
    return std::nullopt;
  }
  changed_.wait(lock, [&] { return job->done; });
  // A second taker of the same compile (two threads asking at once) gets
  // nothing and compiles itself.
  if (job->taken)
    return std::nullopt;
  job->taken = true;
  if (auto same = jobs_.find(key); same != jobs_.end() && same->second == job)
    jobs_.erase(same);
  return std::move(job->result);
}

size_t CompileAhead::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return jobs_.size();
}

void CompileAhead::waitIdle() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(
      lock, [&] { return next_.empty() && later_.empty() && running_ == 0; });
}

void CompileAhead::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] {
      return stopping_ ||
             ((!next_.empty() || !later_.empty()) && running_ < threads_);
    });
    if (stopping_)
      return;
    std::deque<std::string> &queue = next_.empty() ? later_ : next_;
    std::shared_ptr<Job> job = jobs_.at(queue.front());
    queue.pop_front();
    job->running = true;
    ++running_;
    lock.unlock();
    Result<CompiledArtifact> result =
        compile_(job->kernel, job->config, job->specialization);
    lock.lock();
    job->result = std::move(result);
    job->running = false;
    job->done = true;
    --running_;
    // Takers of this job and waitIdle() wait on the same condition.
    changed_.notify_all();
  }
}

} // namespace tilec::rt
