//===- CompileAheadTest.cpp - Compiles queued ahead of the tunings --------===//
//
// CompileAhead with a compile function that records its calls and can be
// held: each queued compile runs once, a taker gets the queued one's
// artifact (waiting for one that runs, compiling itself one that has not
// started), the batch runs on several workers, and the destructor waits.
//
//===----------------------------------------------------------------------===//

#include "tilec/runtime/CompileAhead.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <set>

using namespace tilec;
using namespace tilec::rt;

namespace {

Config configOf(int blockM) {
  Config config;
  config.params["BLOCK_M"] = blockM;
  return config;
}

// A compile function whose calls are counted and which, while held, blocks
// until released.
class FakeCompiler {
public:
  CompileAhead::CompileFunction function() {
    return [this](const std::string &kernel, const Config &config,
                  const Specialization &) -> Result<CompiledArtifact> {
      std::unique_lock<std::mutex> lock(mutex_);
      ++started_;
      ++running_;
      peak_ = std::max(peak_, running_);
      std::string name =
          kernel + " " + std::to_string(config.params.at("BLOCK_M"));
      calls_.push_back(name);
      changed_.notify_all();
      changed_.wait(lock, [&] { return !held_; });
      --running_;
      if (kernel == "broken")
        return Status::error("broken does not compile");
      CompiledArtifact artifact;
      artifact.cubin = "cubin of " + name;
      return artifact;
    };
  }
  void hold() {
    std::lock_guard<std::mutex> lock(mutex_);
    held_ = true;
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      held_ = false;
    }
    changed_.notify_all();
  }
  // Waits until `count` compiles have started.
  void waitStarted(int count) {
    std::unique_lock<std::mutex> lock(mutex_);
    ASSERT_TRUE(changed_.wait_for(lock, std::chrono::seconds(20),
                                  [&] { return started_ >= count; }));
  }
  int started() {
    std::lock_guard<std::mutex> lock(mutex_);
    return started_;
  }
  int peak() {
    std::lock_guard<std::mutex> lock(mutex_);
    return peak_;
  }
  std::vector<std::string> calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool held_ = false;
  int started_ = 0, running_ = 0, peak_ = 0;
  std::vector<std::string> calls_;
};

TEST(CompileAheadTest, QueuedCompilesRunOnceAndAreTakenOnce) {
  FakeCompiler compiler;
  CompileAhead ahead(compiler.function(), /*threads=*/2);
  for (int m : {16, 32, 64})
    EXPECT_TRUE(ahead.enqueue("k", configOf(m), {}));
  // Queued already (or running, or done): not again.
  EXPECT_FALSE(ahead.enqueue("k", configOf(32), {}));
  ahead.waitIdle();
  EXPECT_EQ(compiler.started(), 3);
  EXPECT_EQ(ahead.size(), 3u);

  std::optional<Result<CompiledArtifact>> taken =
      ahead.take("k", configOf(32), {});
  ASSERT_TRUE(taken.has_value());
  ASSERT_TRUE(taken->ok()) << taken->message();
  EXPECT_EQ((*taken)->cubin, "cubin of k 32");
  // Handed over once: the next taker compiles itself.
  EXPECT_FALSE(ahead.take("k", configOf(32), {}).has_value());
  EXPECT_FALSE(ahead.take("k", configOf(128), {}).has_value());
  // Another specialization is another compile.
  Specialization aligned;
  aligned.divisibility["N"] = 16;
  EXPECT_FALSE(ahead.take("k", configOf(16), aligned).has_value());
  EXPECT_EQ(ahead.size(), 2u);
  EXPECT_EQ(compiler.started(), 3);
}

TEST(CompileAheadTest, ATakerWaitsForARunningCompileAndGetsItsError) {
  FakeCompiler compiler;
  compiler.hold();
  CompileAhead ahead(compiler.function(), /*threads=*/1);
  ASSERT_TRUE(ahead.enqueue("broken", configOf(16), {}));
  compiler.waitStarted(1);
  auto taker = std::async(std::launch::async, [&] {
    return ahead.take("broken", configOf(16), {});
  });
  EXPECT_EQ(taker.wait_for(std::chrono::milliseconds(50)),
            std::future_status::timeout)
      << "the taker must wait for the running compile";
  compiler.release();
  std::optional<Result<CompiledArtifact>> taken = taker.get();
  ASSERT_TRUE(taken.has_value());
  ASSERT_FALSE(taken->ok());
  EXPECT_NE(taken->message().find("broken does not compile"),
            std::string::npos);
  EXPECT_EQ(compiler.started(), 1) << "the compile ran once";
}

TEST(CompileAheadTest, ACompileNotStartedIsLeftToItsTaker) {
  FakeCompiler compiler;
  compiler.hold();
  CompileAhead ahead(compiler.function(), /*threads=*/1);
  ASSERT_TRUE(ahead.enqueue("k", configOf(16), {}));
  ASSERT_TRUE(ahead.enqueue("k", configOf(32), {}));
  compiler.waitStarted(1);
  // BLOCK_M=32 waits behind the held one: its taker compiles it now.
  EXPECT_FALSE(ahead.take("k", configOf(32), {}).has_value());
  compiler.release();
  ahead.waitIdle();
  EXPECT_EQ(compiler.calls(), std::vector<std::string>{"k 16"});
}

TEST(CompileAheadTest, TheBatchRunsOnSeveralWorkersInQueuedOrder) {
  FakeCompiler compiler;
  compiler.hold();
  CompileAhead ahead(compiler.function(), /*threads=*/3);
  for (int m = 1; m <= 9; ++m)
    ASSERT_TRUE(ahead.enqueue("k", configOf(m), {}));
  compiler.waitStarted(3);
  EXPECT_EQ(compiler.started(), 3) << "three workers, no more";
  compiler.release();
  ahead.waitIdle();
  EXPECT_EQ(compiler.peak(), 3);
  std::vector<std::string> calls = compiler.calls();
  ASSERT_EQ(calls.size(), 9u);
  std::set<std::string> first(calls.begin(), calls.begin() + 3);
  EXPECT_EQ(first, (std::set<std::string>{"k 1", "k 2", "k 3"}));
}

TEST(CompileAheadTest, CapacityForgetsUntakenArtifactsFirst) {
  FakeCompiler compiler;
  CompileAhead ahead(compiler.function(), /*threads=*/1, /*capacity=*/2);
  ASSERT_TRUE(ahead.enqueue("k", configOf(1), {}));
  ASSERT_TRUE(ahead.enqueue("k", configOf(2), {}));
  ahead.waitIdle();
  // Both done and never taken: forgotten to make room.
  ASSERT_TRUE(ahead.enqueue("k", configOf(3), {}));
  ahead.waitIdle();
  EXPECT_FALSE(ahead.take("k", configOf(1), {}).has_value());
  EXPECT_TRUE(ahead.take("k", configOf(3), {}).has_value());

  // Full of compiles that still run: nothing more is queued.
  compiler.hold();
  ASSERT_TRUE(ahead.enqueue("k", configOf(4), {}));
  ASSERT_TRUE(ahead.enqueue("k", configOf(5), {}));
  EXPECT_FALSE(ahead.enqueue("k", configOf(6), {}));
  compiler.release();
}

TEST(CompileAheadTest, TheDestructorDropsTheQueueAndWaitsForRunningCompiles) {
  FakeCompiler compiler;
  compiler.hold();
  std::thread releaser;
  {
    CompileAhead ahead(compiler.function(), /*threads=*/1);
    for (int m = 1; m <= 4; ++m)
      ASSERT_TRUE(ahead.enqueue("k", configOf(m), {}));
    compiler.waitStarted(1);
    // Released while the destructor waits for the running compile.
    releaser = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      compiler.release();
    });
  }
  releaser.join();
  EXPECT_EQ(compiler.started(), 1) << "the queued ones were dropped";
}

TEST(CompileAheadTest, FewerThreadsFromNowOn) {
  FakeCompiler compiler;
  compiler.hold();
  CompileAhead ahead(compiler.function(), /*threads=*/4);
  ahead.setThreads(2);
  for (int m = 1; m <= 6; ++m)
    ASSERT_TRUE(ahead.enqueue("k", configOf(m), {}));
  compiler.waitStarted(2);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(compiler.started(), 2) << "two at once";
  compiler.release();
  ahead.waitIdle();
  EXPECT_EQ(compiler.started(), 6);
  EXPECT_EQ(compiler.peak(), 2);
}

} // namespace

// A map build about to launch its kernels queues them Next: they run before
// the candidates queued for later tunings, in their own order, and a Later
// compile still queued moves up when it is needed next.
TEST(CompileAheadTest, CompilesNeededNextRunBeforeThoseForLater) {
  FakeCompiler compiler;
  compiler.hold();
  CompileAhead ahead(compiler.function(), /*threads=*/1);
  for (int m : {1, 2, 3, 4})
    ASSERT_TRUE(ahead.enqueue("candidate", configOf(m), {}));
  compiler.waitStarted(1);
  ASSERT_TRUE(ahead.enqueue("map", configOf(1), {}, CompileAhead::When::Next));
  ASSERT_TRUE(ahead.enqueue("map", configOf(2), {}, CompileAhead::When::Next));
  // Queued for later already: it moves up, behind the two.
  EXPECT_FALSE(
      ahead.enqueue("candidate", configOf(4), {}, CompileAhead::When::Next));
  compiler.release();
  ahead.waitIdle();
  EXPECT_EQ(
      compiler.calls(),
      (std::vector<std::string>{"candidate 1", "map 1", "map 2", "candidate 4",
                                "candidate 2", "candidate 3"}));
}
