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

} // namespace tilec::rt
