//===- Benchmarker.cpp - Timing one kernel on the device ------------------===//

#include "tilec/runtime/Autotuner.h"

#include <algorithm>
#include <cmath>

namespace tilec::rt {

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

bool Benchmarker::clocksHeld() const {
  return lastRunEnd_ && std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - *lastRunEnd_)
                                .count() < kClocksHeldMs;
}

// The value at quantile q of `sorted`, interpolated between neighbours.
static double quantile(const std::vector<double> &sorted, double q) {
  double position = q * double(sorted.size() - 1);
  size_t lower = static_cast<size_t>(std::floor(position));
  size_t upper = std::min(sorted.size() - 1, lower + 1);
  double fraction = position - double(lower);
  return sorted[lower] * (1 - fraction) + sorted[upper] * fraction;
}

double medianRelativeError(const std::vector<double> &sortedUs) {
  if (sortedUs.size() < 2)
    return 0;
  double median = quantile(sortedUs, 0.5);
  if (!(median > 0))
    return 0;
  double sigma = (quantile(sortedUs, 0.8) - quantile(sortedUs, 0.2)) / 1.6832;
  return 1.2533 * sigma / std::sqrt(double(sortedUs.size())) / median;
}

double enoughError(const BenchmarkOptions &options, double medianUs) {
  if (options.targetError <= 0)
    return 0;
  if (!(medianUs > 0))
    return options.targetError;
  return std::max(options.targetError, options.resolutionUs / medianUs);
}

int nextRepetitions(int done, int cap, double error, double enough) {
  if (done >= cap)
    return 0;
  if (done == 0)
    return enough > 0 ? std::min(cap, kRepetitionBatch) : cap;
  if (enough <= 0 || error <= enough)
    return 0;
  return std::min(cap - done, std::max(kRepetitionBatch, done / 2));
}

Result<BenchmarkResult> Benchmarker::run(const Kernel &kernel, Dim3 grid,
                                         const ArgPack &args,
                                         const BenchmarkOptions &options) {
  Result<BenchmarkResult> result = measure(kernel, grid, args, options);
  lastRunEnd_ = std::chrono::steady_clock::now();
  return result;
}

Result<BenchmarkResult> Benchmarker::measure(const Kernel &kernel, Dim3 grid,
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
  // first estimate (cold instruction cache included). Its flush is timed
  // too: each warm-up launch pays one.
  TILEC_RT_BENCH_TRY(ensureEvents(3));
  TILEC_RT_BENCH_TRY(events_[2].record());
  TILEC_RT_BENCH_TRY(flush());
  TILEC_RT_BENCH_TRY(events_[0].record());
  TILEC_RT_BENCH_TRY(launch(kernel, grid, args));
  TILEC_RT_BENCH_TRY(events_[1].record());
  TILEC_RT_BENCH_TRY(events_[1].synchronize());
  Result<float> first = elapsed(0, 1);
  if (!first)
    return first.status();
  Result<float> firstFlush = elapsed(2, 0);
  if (!firstFlush)
    return firstFlush.status();
  if (options.stopAboveUs > 0 &&
      double(*first) * 1000.0 > options.stopAboveUs) {
    BenchmarkResult result;
    result.medianUs = result.p20Us = result.p80Us = result.minUs =
        double(*first) * 1000.0;
    result.repetitions = 1;
    result.stoppedEarly = true;
    return result;
  }

  // Warm-up, timed as a whole (flushes included) to estimate the cost of
  // one repetition.
  double warmupMs = clocksHeld()
                        ? std::min(options.warmupMs, options.warmWarmupMs)
                        : options.warmupMs;
  // A launch and its flush: a short kernel's warm-up counted in launches
  // alone would flush the L2 a few dozen times (1.3 ms of warm-up for
  // 0.25 ms asked, at 11 us a launch behind a 100 MB flush).
  double estimate = std::max(1e-3, double(*first) + double(*firstFlush));
  int warmups =
      static_cast<int>(std::clamp(std::ceil(warmupMs / estimate), 1.0, 1000.0));
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
  int cap = static_cast<int>(std::clamp(
      std::floor(options.budgetMs / perRepetition),
      double(std::max(1, options.minReps)),
      double(std::max(std::max(1, options.minReps), options.maxReps))));

  // Batches of repetitions, each queued whole before waiting, so that the
  // host (busy compiling other candidates, perhaps) never leaves the GPU
  // idle between them; after each, the median's error says whether to go
  // on (nextRepetitions).
  TILEC_RT_BENCH_TRY(ensureEvents(2 * size_t(cap)));
  std::vector<double> times;
  times.reserve(cap);
  int done = 0;
  for (int batch = nextRepetitions(0, cap, 0, enoughError(options, 0));
       batch > 0;
       batch = nextRepetitions(done, cap, medianRelativeError(times),
                               enoughError(options, quantile(times, 0.5)))) {
    for (int r = done; r < done + batch; ++r) {
      TILEC_RT_BENCH_TRY(flush());
      TILEC_RT_BENCH_TRY(events_[2 * r].record());
      TILEC_RT_BENCH_TRY(launch(kernel, grid, args));
      TILEC_RT_BENCH_TRY(events_[2 * r + 1].record());
    }
    TILEC_RT_BENCH_TRY(events_[2 * (done + batch) - 1].synchronize());
    for (int r = done; r < done + batch; ++r) {
      Result<float> ms = elapsed(2 * r, 2 * r + 1);
      if (!ms)
        return ms.status();
      times.push_back(double(*ms) * 1000.0);
    }
    done += batch;
    std::sort(times.begin(), times.end());
  }
#undef TILEC_RT_BENCH_TRY
  BenchmarkResult result;
  result.medianUs = quantile(times, 0.5);
  result.p20Us = quantile(times, 0.2);
  result.p80Us = quantile(times, 0.8);
  result.minUs = times.front();
  result.repetitions = done;
  return result;
}

} // namespace tilec::rt
