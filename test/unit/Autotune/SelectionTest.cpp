//===- SelectionTest.cpp - Pruning, the winner, pinned configs ------------===//

#include "tilec/runtime/Autotuner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <unistd.h>

namespace rt = tilec::rt;

namespace {

// The H200's limits (sm_90), as the driver reports them.
rt::DeviceProperties h200() {
  rt::DeviceProperties device;
  device.name = "NVIDIA H200";
  device.computeMajor = 9;
  device.maxSharedBytesPerBlock = 48 * 1024;
  device.maxSharedBytesPerBlockOptin = 227 * 1024;
  device.maxRegistersPerBlock = 65536;
  device.maxThreadsPerBlock = 1024;
  device.l2CacheBytes = 60 * 1024 * 1024;
  return device;
}

tilec::CompileMetadata kernel(int numWarps, uint32_t sharedBytes,
                              int registers) {
  tilec::CompileMetadata metadata;
  metadata.name = metadata.kernelName = "matmul";
  metadata.target = "sm_90";
  metadata.numWarps = numWarps;
  metadata.sharedBytes = sharedBytes;
  metadata.registers = registers;
  return metadata;
}

TEST(Prune, FittingKernelsRun) {
  EXPECT_FALSE(rt::pruneReason(kernel(4, 32768, 128), h200()));
  // Above 48 KiB needs the opt-in, which the runtime does: not pruned.
  EXPECT_FALSE(rt::pruneReason(kernel(8, 200 * 1024, 128), h200()));
  // 255 registers x 256 threads: 8 warps x roundup(255 x 32, 256) = 65536.
  EXPECT_FALSE(rt::pruneReason(kernel(8, 0, 255), h200()));
  // Unknown registers (no ptxas report) are not held against a kernel.
  tilec::CompileMetadata unknown = kernel(4, 0, 0);
  unknown.registers.reset();
  EXPECT_FALSE(rt::pruneReason(unknown, h200()));
}

TEST(Prune, SharedMemoryAboveTheOptInMaximum) {
  auto reason = rt::pruneReason(kernel(8, 229376 + 4096, 128), h200());
  ASSERT_TRUE(reason);
  EXPECT_EQ(*reason, "needs 233472 B of shared memory per block, the device "
                     "allows 232448 B (opt-in maximum)");
}

TEST(Prune, RegistersTimesThreads) {
  // 255 x 512 threads = 16 warps x 8192 = 131072 > 65536.
  auto reason = rt::pruneReason(kernel(16, 0, 255), h200());
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("needs 255 registers x 512 threads = 131072 "
                         "registers per block, the device has 65536"),
            std::string::npos)
      << *reason;
  // 130 registers round up to 136 per thread: 8 warps x 4352 = 34816 fits,
  // 16 warps x 4352 = 69632 does not.
  EXPECT_FALSE(rt::pruneReason(kernel(8, 0, 130), h200()));
  EXPECT_TRUE(rt::pruneReason(kernel(16, 0, 130), h200()));
}

TEST(Prune, ThreadsPerBlock) {
  rt::DeviceProperties small = h200();
  small.maxThreadsPerBlock = 512;
  auto reason = rt::pruneReason(kernel(32, 0, 32), small);
  ASSERT_TRUE(reason);
  EXPECT_EQ(*reason, "needs 1024 threads per block, the device allows 512");
}

rt::ConfigTiming timing(const std::string &config, double medianUs,
                        const std::string &status = "ok") {
  rt::ConfigTiming t;
  t.config = config;
  t.medianUs = medianUs;
  t.status = status;
  return t;
}

TEST(Winner, LowestMedian) {
  std::vector<rt::ConfigTiming> timings = {timing("b", 120), timing("a", 100),
                                           timing("c", 150)};
  EXPECT_EQ(rt::selectWinner(timings, 0.01), 1);
}

TEST(Winner, TiesWithinToleranceGoToTheSmallestConfigText) {
  // c is fastest, but a and b are within 1% of it: a tie, and "a" sorts first.
  std::vector<rt::ConfigTiming> timings = {
      timing("b", 100.5), timing("c", 100.0), timing("a", 100.9),
      timing("d", 101.1)};
  EXPECT_EQ(timings[rt::selectWinner(timings, 0.01)].config, "a");
  // Without a tolerance the fastest wins.
  EXPECT_EQ(timings[rt::selectWinner(timings, 0.0)].config, "c");
  // d is 1.1% slower: outside the tie.
  std::vector<rt::ConfigTiming> two = {timing("d", 101.1), timing("c", 100)};
  EXPECT_EQ(two[rt::selectWinner(two, 0.01)].config, "c");
}

TEST(Winner, DeterministicUnderAnyOrder) {
  std::vector<rt::ConfigTiming> timings = {
      timing("BLOCK_M=128,num_warps=4", 200.0),
      timing("BLOCK_M=64,num_warps=4", 199.0),
      timing("BLOCK_M=32,num_warps=2", 199.5),
      timing("BLOCK_M=256,num_warps=8", 300.0),
      timing("BLOCK_M=16,num_warps=1", 0, "pruned"),
      timing("BLOCK_M=8,num_warps=1", 0, "failed")};
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::shuffle(timings.begin(), timings.end(), rng);
    int winner = rt::selectWinner(timings, 0.01);
    ASSERT_GE(winner, 0);
    // Among the three within 1% of 199.0, "BLOCK_M=128..." sorts first.
    EXPECT_EQ(timings[winner].config, "BLOCK_M=128,num_warps=4");
  }
}

TEST(Winner, NothingRan) {
  std::vector<rt::ConfigTiming> timings = {timing("a", 0, "pruned"),
                                           timing("b", 10, "failed")};
  EXPECT_EQ(rt::selectWinner(timings, 0.01), -1);
  EXPECT_EQ(rt::selectWinner({}, 0.01), -1);
}

// The screening round's cut: what is timed again in full.
rt::ConfigTiming screened(const std::string &config, double medianUs,
                          int repetitions = 20,
                          const std::string &status = "ok") {
  rt::ConfigTiming t = timing(config, medianUs, status);
  t.repetitions = repetitions;
  return t;
}

std::vector<std::string> keptConfigs(const std::vector<rt::ConfigTiming> &round,
                                     const rt::ScreeningCut &cut) {
  std::vector<std::string> kept;
  for (size_t rank = 0; rank < cut.kept; ++rank)
    kept.push_back(round[cut.order[rank]].config);
  return kept;
}

TEST(Screening, TheFastestAndThoseWithinTheMarginUpToKeep) {
  rt::ScreeningOptions options; // keep 4, within 10%
  std::vector<rt::ConfigTiming> round = {screened("e", 130),
                                         screened("a", 100),
                                         screened("d", 109),
                                         screened("c", 105),
                                         screened("f", 111),
                                         screened("b", 104),
                                         screened("g", 0, 0, "pruned"),
                                         screened("h", 90, 20, "failed")};
  rt::ScreeningCut cut = rt::screeningCut(round, options);
  // Fastest first; pruned and failed ones did not run.
  ASSERT_EQ(cut.order.size(), 6u);
  EXPECT_EQ(keptConfigs(round, cut),
            (std::vector<std::string>{"a", "b", "c", "d"}));
  options.keep = 2;
  EXPECT_EQ(keptConfigs(round, rt::screeningCut(round, options)),
            (std::vector<std::string>{"a", "b"}));
  options.keep = 4;
  options.within = 0.045;
  EXPECT_EQ(keptConfigs(round, rt::screeningCut(round, options)),
            (std::vector<std::string>{"a", "b"}));
}

TEST(Screening, TheFastestIsKeptAloneWhenNothingIsNear) {
  std::vector<rt::ConfigTiming> round = {screened("a", 300), screened("b", 100),
                                         screened("c", 200), screened("d", 400),
                                         screened("e", 500)};
  EXPECT_EQ(keptConfigs(round, rt::screeningCut(round, {})),
            std::vector<std::string>{"b"});
}

TEST(Screening, EveryOneThatRanWhereNoMoreThanKeepDid) {
  // Far apart, but only three ran: all three are timed in full.
  std::vector<rt::ConfigTiming> round = {
      screened("a", 300), screened("b", 100), screened("c", 200),
      screened("d", 0, 0, "pruned"), screened("e", 0, 0, "failed")};
  EXPECT_EQ(keptConfigs(round, rt::screeningCut(round, {})),
            (std::vector<std::string>{"b", "c", "a"}));
}

TEST(Screening, AnEarlyStopIsNotKeptAndTiesGoByConfigText) {
  // "c" is within the margin but was stopped after one launch; "b" and "a"
  // tie on the median: "a" ranks first.
  std::vector<rt::ConfigTiming> round = {
      screened("b", 100), screened("a", 100), screened("c", 101, 1),
      screened("d", 102), screened("e", 103), screened("f", 180)};
  rt::ScreeningCut cut = rt::screeningCut(round, {});
  EXPECT_EQ(keptConfigs(round, cut),
            (std::vector<std::string>{"a", "b", "d", "e"}));
  ASSERT_EQ(cut.order.size(), 6u);
  EXPECT_EQ(round[cut.order[4]].config, "c");
  EXPECT_EQ(round[cut.order[5]].config, "f");
}
// Repetitions of a kernel whose time is `trueUs` with relative spread
// `sigma`, and a fraction `outliers` of launches 30% slower (a clock dip, a
// neighbour on the GPU), timed as Benchmarker::run does: batches from
// nextRepetitions until the median's estimated error is small enough.
struct SimulatedMeasurement {
  double medianUs = 0;
  int repetitions = 0;
};
SimulatedMeasurement simulateMeasurement(std::mt19937 &random, double trueUs,
                                         double sigma, double outliers,
                                         const rt::BenchmarkOptions &options,
                                         int cap = 200) {
  std::normal_distribution<double> noise(0, sigma);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<double> times;
  int done = 0;
  auto median = [&] {
    size_t n = times.size();
    return n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
  };
  for (int batch = rt::nextRepetitions(0, cap, 0, rt::enoughError(options, 0));
       batch > 0;
       batch = rt::nextRepetitions(done, cap, rt::medianRelativeError(times),
                                   rt::enoughError(options, median()))) {
    for (int i = 0; i < batch; ++i)
      times.push_back(trueUs * (1 + noise(random)) *
                      (unit(random) < outliers ? 1.3 : 1.0));
    done += batch;
    std::sort(times.begin(), times.end());
  }
  return {median(), done};
}

TEST(Repetitions, TheMedianErrorComesFromTheSpreadAndTheCount) {
  EXPECT_EQ(rt::medianRelativeError({}), 0);
  EXPECT_EQ(rt::medianRelativeError({5.0}), 0);
  EXPECT_EQ(rt::medianRelativeError({5.0, 5.0, 5.0, 5.0}), 0);
  // A normal sample of 2% spread: 1.2533 * 2% / sqrt(n).
  std::mt19937 random(7);
  std::normal_distribution<double> noise(100, 2);
  std::vector<double> times(2000);
  for (double &time : times)
    time = noise(random);
  std::sort(times.begin(), times.end());
  double expected = 1.2533 * 0.02 / std::sqrt(2000.0);
  EXPECT_NEAR(rt::medianRelativeError(times), expected, 0.1 * expected);
  // The slowest 5% ten times slower (outliers) barely move it.
  for (size_t i = times.size() * 95 / 100; i < times.size(); ++i)
    times[i] *= 10;
  EXPECT_NEAR(rt::medianRelativeError(times), expected, 0.2 * expected);
}

TEST(Repetitions, BatchesGrowUntilPreciseOrCapped) {
  const double enough = 0.005;
  EXPECT_EQ(rt::nextRepetitions(0, 200, 0, enough), rt::kRepetitionBatch);
  EXPECT_EQ(rt::kRepetitionBatch, 10);
  EXPECT_EQ(rt::nextRepetitions(0, 4, 0, enough), 4);
  // Imprecise: half as many again as are done, at least 10.
  EXPECT_EQ(rt::nextRepetitions(10, 200, 0.02, enough), 10);
  EXPECT_EQ(rt::nextRepetitions(40, 200, 0.02, enough), 20);
  EXPECT_EQ(rt::nextRepetitions(190, 200, 0.02, enough), 10);
  EXPECT_EQ(rt::nextRepetitions(195, 200, 0.02, enough), 5);
  EXPECT_EQ(rt::nextRepetitions(200, 200, 0.02, enough), 0);
  // Precise enough: done.
  EXPECT_EQ(rt::nextRepetitions(10, 200, 0.005, enough), 0);
  EXPECT_EQ(rt::nextRepetitions(10, 200, 0.0, enough), 0);
  // Off: the whole cap at once, as before the rule.
  EXPECT_EQ(rt::nextRepetitions(0, 200, 0, 0), 200);
  EXPECT_EQ(rt::nextRepetitions(200, 200, 0.3, 0), 0);
}

TEST(Repetitions, TheTimersResolutionBoundsThePrecisionAskedFor) {
  rt::BenchmarkOptions options;
  options.targetError = 0.005;
  options.resolutionUs = 0.25;
  // Long kernels: the relative target.
  EXPECT_DOUBLE_EQ(rt::enoughError(options, 100), 0.005);
  EXPECT_DOUBLE_EQ(rt::enoughError(options, 50), 0.005);
  // Short ones: a quarter microsecond.
  EXPECT_DOUBLE_EQ(rt::enoughError(options, 10), 0.025);
  // No median yet: the target.
  EXPECT_DOUBLE_EQ(rt::enoughError(options, 0), 0.005);
  // The rule off stays off.
  options.targetError = 0;
  EXPECT_EQ(rt::enoughError(options, 10), 0);
}

TEST(Repetitions, AShortKernelStopsAtTheTimersResolution) {
  // An 11 us kernel with 5% spread (the SpUNet's first call's short
  // kernels behind the L2 flush: p80 - p20 of 0.9 us): with the timer's
  // floor the median is within 0.5 us after a batch or two; without it
  // (resolutionUs 0) it ran to the cap, as those tunings did (91
  // measurements of 100 to 200 repetitions, to tell 10.5 from 10.6 us).
  rt::BenchmarkOptions options;
  std::mt19937 random(11);
  double floored = 0;
  int within = 0;
  for (int run = 0; run < 200; ++run) {
    SimulatedMeasurement measured =
        simulateMeasurement(random, 11.0, 0.05, 0.0, options);
    floored += measured.repetitions;
    within += std::abs(measured.medianUs - 11.0) <= 0.5;
  }
  floored /= 200;
  EXPECT_LT(floored, 25);
  EXPECT_GE(within, 190);
  options.resolutionUs = 0;
  double unfloored = 0;
  for (int run = 0; run < 200; ++run)
    unfloored +=
        simulateMeasurement(random, 11.0, 0.05, 0.0, options).repetitions;
  unfloored /= 200;
  EXPECT_GT(unfloored, 100);
  std::printf("11 us kernel, 5%% spread: %.1f repetitions with the floor, "
              "%.1f without\n",
              floored, unfloored);
}

TEST(Repetitions, SimulatedMeasurementsMeetTheTargetWithFewRepetitions) {
  // Spreads like the H200's tunings (p80 - p20 of 1% to 7% of the median:
  // sigma 0.6% to 4%), with and without 5% outliers: the median lands
  // within twice the target error of the true time in at least 90% of
  // 400 measurements (95% for an exact estimate), with far fewer
  // repetitions than the cap of 200, except where the spread is wide. The
  // relative rule alone: the timer's floor is 1.25% of 20 us.
  rt::BenchmarkOptions options;
  options.resolutionUs = 0;
  std::mt19937 random(2026);
  for (double sigma : {0.006, 0.02, 0.04})
    for (double outliers : {0.0, 0.05}) {
      SCOPED_TRACE("sigma " + std::to_string(sigma) + ", outliers " +
                   std::to_string(outliers));
      int within = 0;
      double repetitions = 0;
      for (int run = 0; run < 400; ++run) {
        SimulatedMeasurement measured =
            simulateMeasurement(random, 20.0, sigma, outliers, options);
        within += std::abs(measured.medianUs / 20.0 - 1) <=
                  2 * options.targetError + 0.05 * outliers;
        repetitions += measured.repetitions;
      }
      repetitions /= 400;
      EXPECT_GE(within, 360);
      if (sigma <= 0.02) {
        EXPECT_LT(repetitions, 60);
      }
      std::printf("sigma %.3f outliers %.2f: %d of 400 within %.1f%%, "
                  "%.1f repetitions on average\n",
                  sigma, outliers, within,
                  100 * (2 * options.targetError + 0.05 * outliers),
                  repetitions);
    }
}

TEST(Pins, Spec) {
  auto pins =
      rt::PinnedConfigs::parseSpec("matmul=BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,"
                                   "num_warps=4; softmax=num_warps=8");
  ASSERT_TRUE(pins.ok()) << pins.message();
  EXPECT_EQ(pins->find("matmul", "M=1,N=2"),
            "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_warps=4");
  EXPECT_EQ(pins->find("softmax", "BLOCK_N=1024"), "num_warps=8");
  EXPECT_FALSE(pins->find("vector_add", "LOG2_N=20"));
}

TEST(Pins, MalformedSpecsAreErrors) {
  auto noKernel = rt::PinnedConfigs::parseSpec("BLOCK_M");
  ASSERT_FALSE(noKernel.ok());
  EXPECT_NE(noKernel.message().find("is not KERNEL=CONFIG"), std::string::npos);
  auto badConfig = rt::PinnedConfigs::parseSpec("matmul=num_warps=3");
  ASSERT_FALSE(badConfig.ok());
  EXPECT_NE(badConfig.message().find("pinned config for matmul"),
            std::string::npos);
}

std::string writeTemp(const std::string &contents) {
  char path[] = "/tmp/tilec-pins-XXXXXX";
  int fd = ::mkstemp(path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::write(fd, contents.data(), contents.size()),
            static_cast<ssize_t>(contents.size()));
  ::close(fd);
  return path;
}

TEST(Pins, FileWithKeysAndWildcard) {
  std::string path = writeTemp(R"({
    "matmul": {"M=4096,N=4096,K=4096,DTYPE=f16,ALLOW_TF32=0": "BLOCK_M=128,BLOCK_N=128,BLOCK_K=32",
               "*": "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32"},
    "softmax": "num_warps=16"
  })");
  auto pins = rt::PinnedConfigs::parseFile(path);
  ASSERT_TRUE(pins.ok()) << pins.message();
  EXPECT_EQ(pins->find("matmul", "M=4096,N=4096,K=4096,DTYPE=f16,ALLOW_TF32=0"),
            "BLOCK_M=128,BLOCK_N=128,BLOCK_K=32");
  EXPECT_EQ(pins->find("matmul", "M=512,N=512,K=512,DTYPE=f16,ALLOW_TF32=0"),
            "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32");
  EXPECT_EQ(pins->find("softmax", "BLOCK_N=1024"), "num_warps=16");
  std::remove(path.c_str());

  std::string bad = writeTemp(R"({"matmul": 3})");
  auto broken = rt::PinnedConfigs::parseFile(bad);
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.message().find("must be a config string"),
            std::string::npos);
  std::remove(bad.c_str());
  auto missing = rt::PinnedConfigs::parseFile("/nonexistent/pins.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("/nonexistent/pins.json"),
            std::string::npos);
}

TEST(Pins, EnvironmentWinsOverTheFile) {
  std::string path = writeTemp(R"({"matmul": "BLOCK_M=32,BLOCK_N=32,BLOCK_K=32",
                                   "softmax": "num_warps=16"})");
  rt::Environment environment;
  environment.pinFile = path;
  environment.pinConfig = "matmul=BLOCK_M=256,BLOCK_N=64,BLOCK_K=64";
  auto pins = rt::PinnedConfigs::fromEnvironment(environment);
  std::remove(path.c_str());
  ASSERT_TRUE(pins.ok()) << pins.message();
  EXPECT_EQ(pins->find("matmul", "any"), "BLOCK_M=256,BLOCK_N=64,BLOCK_K=64");
  EXPECT_EQ(pins->find("softmax", "any"), "num_warps=16");

  rt::Environment brokenEnvironment;
  brokenEnvironment.pinConfig = "matmul";
  auto broken = rt::PinnedConfigs::fromEnvironment(brokenEnvironment);
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.message().find("TILEC_PIN_CONFIG"), std::string::npos);

  auto none = rt::PinnedConfigs::fromEnvironment(rt::Environment());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

} // namespace
