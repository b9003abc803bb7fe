//===- SharedAutotuneCacheTest.cpp - Autotune results on a shared tier ----===//
//
// Autotune entries stored by one process are found by another with its own
// file (the entry, and the description that a process without a compiler
// keys calls with); concurrent writers of different keys of one kernel all
// survive on the server; a damaged or misplaced remote entry is rejected;
// the tier's counters persist in <path>.stats.
//
//===----------------------------------------------------------------------===//

#include "RedisFixture.h"

#include "tilec/runtime/AutotuneCache.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

namespace rt = tilec::rt;
using tilec::test::RedisTest;

namespace {

constexpr const char *kDevice = "NVIDIA H200";

rt::AutotuneEntry entryOf(const std::string &config, double us) {
  rt::AutotuneEntry entry;
  entry.config = config;
  rt::ConfigTiming winner;
  winner.config = config;
  winner.medianUs = us;
  winner.repetitions = 40;
  entry.timings = {winner};
  entry.target = "sm_90";
  entry.cubinKey = std::string(64, 'c');
  entry.metadataJson = R"({"name": "matmul", "num_warps": 4})";
  entry.description =
      tilec::KernelDescription("matmul", "kernels/matmul.cpp", 7)
          .param(tilec::MetaParameter("BLOCK_M").powerOfTwo())
          .arg(tilec::scalar("M", "i32"))
          .key("M")
          .grid({"cdiv(M, BLOCK_M)"});
  entry.tunedAt = "2026-12-01T09:00:00Z";
  return entry;
}

class SharedAutotuneCacheTest : public RedisTest {
protected:
  std::string pathOf(const std::string &name) {
    return root + "/" + name + "/autotune_cache.json";
  }
  // Runs `body` in a child process and expects it to return 0.
  template <class Body> void inChild(Body body) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0)
      ::_exit(body());
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
};

TEST_F(SharedAutotuneCacheTest, AnotherProcessWithAnotherFileSeesTheEntry) {
  inChild([&] {
    rt::AutotuneCache cache(pathOf("tuner"), connect());
    if (!cache.load().ok())
      return 1;
    return cache.store(kDevice, "matmul", "M=4096",
                       entryOf("BLOCK_M=128", 812.5))
                   .ok()
               ? 0
               : 2;
  });

  rt::AutotuneCache cache(pathOf("user"), connect());
  ASSERT_TRUE(cache.load().ok());
  EXPECT_EQ(cache.find(kDevice, "matmul", "M=8192"), nullptr);
  const rt::AutotuneEntry *found = cache.find(kDevice, "matmul", "M=4096");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->config, "BLOCK_M=128");
  EXPECT_EQ(found->winnerMedianUs(), 812.5);
  EXPECT_EQ(found->cubinKey, std::string(64, 'c'));
  ASSERT_TRUE(found->description);
  EXPECT_EQ(found->description->getName(), "matmul");
  EXPECT_EQ(cache.remoteCounters().hits, 1u);
  EXPECT_EQ(cache.remoteCounters().misses, 1u);
  // The entry was merged into the local file: a cache without the tier
  // finds it there.
  rt::AutotuneCache local(pathOf("user"));
  ASSERT_TRUE(local.load().ok());
  ASSERT_NE(local.find(kDevice, "matmul", "M=4096"), nullptr);
  EXPECT_EQ(local.find(kDevice, "matmul", "M=4096")->config, "BLOCK_M=128");

  // A process without a compiler gets the description from any entry.
  rt::AutotuneCache runtime(pathOf("runtime"), connect());
  ASSERT_TRUE(runtime.load().ok());
  const tilec::KernelDescription *description =
      runtime.findDescription(kDevice, "matmul");
  ASSERT_NE(description, nullptr);
  EXPECT_EQ(description->getName(), "matmul");
  EXPECT_EQ(runtime.findDescription(kDevice, "softmax"), nullptr);
  EXPECT_EQ(runtime.remoteCounters().hits, 1u);
  EXPECT_EQ(runtime.remoteCounters().misses, 1u);
  EXPECT_TRUE(warnings.empty());
}

// Eight machines tune different keys of one kernel at once: each key is a
// field of its own, so all 48 survive on the server.
TEST_F(SharedAutotuneCacheTest, ConcurrentWritersOfDifferentEntriesAllSurvive) {
  constexpr int kProcesses = 8, kKeys = 6;
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(gate[1]);
      char byte;
      (void)::read(gate[0], &byte, 1);
      rt::AutotuneCache cache(pathOf("p" + std::to_string(p)), connect());
      int failures = 0;
      for (int k = 0; k < kKeys; ++k) {
        std::string key = "M=" + std::to_string(p * 100 + k);
        failures += !cache
                         .store(kDevice, "matmul", key,
                                entryOf("BLOCK_M=" + std::to_string(16 << k),
                                        p * 10 + k))
                         .ok();
      }
      failures += cache.remoteCounters().stores != kKeys;
      ::_exit(failures);
    }
    children.push_back(child);
  }
  ::close(gate[0]);
  ::close(gate[1]);
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(server->command({"HLEN", "tilec:1:autotune:NVIDIA H200:matmul"}),
            std::optional<std::string>(":48"));
  rt::AutotuneCache reader(pathOf("reader"), connect());
  ASSERT_TRUE(reader.load().ok());
  for (int p = 0; p < kProcesses; ++p)
    for (int k = 0; k < kKeys; ++k) {
      std::string key = "M=" + std::to_string(p * 100 + k);
      const rt::AutotuneEntry *entry = reader.find(kDevice, "matmul", key);
      ASSERT_NE(entry, nullptr) << key;
      EXPECT_EQ(entry->config, "BLOCK_M=" + std::to_string(16 << k));
      EXPECT_EQ(entry->winnerMedianUs(), p * 10 + k);
    }
  EXPECT_EQ(reader.remoteCounters().hits, uint64_t(kProcesses * kKeys));
  EXPECT_TRUE(warnings.empty());
}

TEST_F(SharedAutotuneCacheTest, DamagedOrMisplacedEntriesAreRejected) {
  auto remote = connect();
  std::string hash = remote->key("autotune", std::string(kDevice) + ":matmul");
  {
    rt::AutotuneCache tuner(pathOf("tuner"), connect());
    ASSERT_TRUE(
        tuner.store(kDevice, "matmul", "M=64", entryOf("BLOCK_M=16", 3)).ok());
  }
  std::string good = **remote->hashGet(hash, "M=64");
  EXPECT_EQ(good.rfind("tilec-autotune 1 ", 0), 0u);
  auto decoded =
      rt::AutotuneCache::decodeRemoteEntry(good, kDevice, "matmul", "M=64");
  ASSERT_TRUE(decoded) << decoded.message();

  // A digit of the median: still JSON, still an entry; the checksum catches
  // it.
  std::string bad = good;
  size_t digit = bad.find("\"median_us\":3");
  ASSERT_NE(digit, std::string::npos);
  bad[digit + 12] = '4';
  ASSERT_TRUE(remote->hashSet(hash, "M=64", bad).ok());
  // The same bytes under another key: valid for M=64, not for M=128.
  ASSERT_TRUE(remote->hashSet(hash, "M=128", good).ok());

  rt::AutotuneCache cache(pathOf("user"), connect());
  ASSERT_TRUE(cache.load().ok());
  EXPECT_EQ(cache.find(kDevice, "matmul", "M=64"), nullptr);
  EXPECT_EQ(cache.find(kDevice, "matmul", "M=128"), nullptr);
  EXPECT_EQ(cache.remoteCounters().rejects, 2u);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("ignored the invalid autotune entry M=64 in " +
                             hash + " of the shared cache redis://"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("checksum mismatch"), std::string::npos);
  EXPECT_NE(warnings[1].find("M=128"), std::string::npos) << warnings[1];

  // Tuning again stores a good entry over the bad one.
  ASSERT_TRUE(
      cache.store(kDevice, "matmul", "M=64", entryOf("BLOCK_M=16", 3)).ok());
  rt::AutotuneCache again(pathOf("again"), connect());
  ASSERT_TRUE(again.load().ok());
  ASSERT_NE(again.find(kDevice, "matmul", "M=64"), nullptr);
  EXPECT_EQ(again.remoteCounters().hits, 1u);
}

TEST_F(SharedAutotuneCacheTest, CountersPersistNextToTheFile) {
  for (int run = 0; run < 2; ++run) {
    rt::AutotuneCache cache(pathOf("a"), connect());
    ASSERT_TRUE(cache.load().ok());
    EXPECT_EQ(cache.find(kDevice, "softmax", "N=" + std::to_string(run)),
              nullptr);
    ASSERT_TRUE(cache
                    .store(kDevice, "softmax", "N=" + std::to_string(run),
                           entryOf("BLOCK_M=16", 1))
                    .ok());
  }
  rt::RemoteCounters stats = rt::AutotuneCache(pathOf("a")).remoteStats();
  EXPECT_EQ(stats.misses, 2u);
  EXPECT_EQ(stats.stores, 2u);
  EXPECT_EQ(stats.hits + stats.rejects + stats.errors, 0u);
}

// The server goes away: stores still reach the file, with one warning.
TEST_F(SharedAutotuneCacheTest, KilledServerStillStoresLocally) {
  rt::AutotuneCache cache(pathOf("a"), connect());
  ASSERT_TRUE(cache.load().ok());
  ASSERT_TRUE(
      cache.store(kDevice, "matmul", "M=1", entryOf("BLOCK_M=16", 1)).ok());
  server->kill();
  EXPECT_EQ(cache.find(kDevice, "matmul", "M=2"), nullptr);
  ASSERT_TRUE(
      cache.store(kDevice, "matmul", "M=2", entryOf("BLOCK_M=32", 2)).ok());
  EXPECT_EQ(warnings.size(), 1u);
  EXPECT_EQ(cache.remoteCounters().errors, 1u);
  rt::AutotuneCache local(pathOf("a"));
  ASSERT_TRUE(local.load().ok());
  EXPECT_NE(local.find(kDevice, "matmul", "M=1"), nullptr);
  EXPECT_NE(local.find(kDevice, "matmul", "M=2"), nullptr);
}

} // namespace
