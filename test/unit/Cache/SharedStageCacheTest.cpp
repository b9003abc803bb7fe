//===- SharedStageCacheTest.cpp - The stage cache over a shared tier ------===//
//
// Two caches with their own directories on one redis-server: a remote hit is
// verified and kept locally, every flipped byte of a remote entry is
// rejected, a server killed mid-run or never started loses nothing locally
// and costs one warning, processes share entries, a build's lease makes
// another cache wait for its entry (but not past the lease's life, nor
// after a failed build), and the tier's counters persist beside the local
// ones.
//
//===----------------------------------------------------------------------===//

#include "RedisFixture.h"

#include "tilec/runtime/CounterFile.h"
#include "tilec/runtime/StageCache.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <future>
#include <sstream>

using tilec::rt::CacheKey;
using tilec::rt::RemoteCache;
using tilec::rt::StageCache;
using tilec::test::RedisServer;
using tilec::test::RedisTest;

namespace {

std::string keyOf(const std::string &text) {
  return CacheKey("test").add("text", text).str();
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

class SharedStageCacheTest : public RedisTest {
protected:
  // A cache in <root>/<name> on `remote`, its warnings collected.
  std::unique_ptr<StageCache> open(const std::string &name,
                                   std::shared_ptr<RemoteCache> remote) {
    return std::make_unique<StageCache>(
        root + "/" + name, std::move(remote),
        [this](const std::string &message) { warnings.push_back(message); });
  }
  std::string entryFile(const std::string &name, const std::string &stage,
                        const std::string &key) {
    return root + "/" + name + "/" + StageCache::entryPath(stage, key);
  }
};

TEST_F(SharedStageCacheTest, RemoteHitIsVerifiedAndKeptLocally) {
  std::string key = keyOf("a");
  std::string payload("\x7f"
                      "ELF\0cubin\xff",
                      11);
  auto a = open("a", connect());
  EXPECT_FALSE(a->lookup("cubin", key));
  ASSERT_TRUE(a->store("cubin", key, payload, R"({"registers":32})"));
  EXPECT_EQ(a->counters("cubin").remote.misses, 1u);
  EXPECT_EQ(a->counters("cubin").remote.stores, 1u);
  // The server holds the very bytes of the local entry, under the stage and
  // the key.
  auto stored = connect()->get("tilec:1:cubin:" + key);
  ASSERT_TRUE(stored && *stored) << stored.message();
  EXPECT_EQ(**stored, readFile(entryFile("a", "cubin", key)));

  auto b = open("b", connect());
  auto hit = b->lookup("cubin", key);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->payload, payload);
  EXPECT_EQ(hit->meta, R"({"registers":32})");
  EXPECT_EQ(hit->payloadSha256, tilec::rt::Sha256::hashHex(payload));
  auto counters = b->counters("cubin");
  EXPECT_EQ(counters.misses, 1u);
  EXPECT_EQ(counters.stores, 1u);
  EXPECT_EQ(counters.remote.hits, 1u);
  EXPECT_EQ(counters.remote.stores, 0u);
  EXPECT_EQ(readFile(entryFile("b", "cubin", key)), **stored);
  // Now it is local: the next lookup does not ask the server.
  ASSERT_TRUE(b->lookup("cubin", key));
  EXPECT_EQ(b->counters("cubin").hits, 1u);
  EXPECT_EQ(b->counters("cubin").remote.hits, 1u);
  EXPECT_TRUE(warnings.empty());
}

// The remote value is checked as a local file is: any flipped byte (header,
// meta or payload) is rejected, and the rebuilt artifact's store replaces it.
TEST_F(SharedStageCacheTest, EveryFlippedRemoteByteIsRejected) {
  std::string key = keyOf("flip");
  auto a = open("a", connect());
  ASSERT_TRUE(a->store("ptx", key, std::string(64, 'p'), "{}"));
  auto remote = connect();
  std::string name = remote->key("ptx", key);
  std::string good = **remote->get(name);
  auto b = open("b", connect());
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x20;
    ASSERT_TRUE(remote->set(name, bad).ok());
    EXPECT_FALSE(b->lookup("ptx", key)) << "flipped byte " << i;
  }
  EXPECT_EQ(b->counters("ptx").remote.rejects, good.size());
  EXPECT_EQ(b->counters("ptx").remote.hits, 0u);
  ASSERT_EQ(warnings.size(), good.size());
  EXPECT_EQ(warnings.back().rfind("ignored the invalid entry " + name +
                                      " of the shared cache redis://",
                                  0),
            0u)
      << warnings.back();
  EXPECT_NE(warnings.back().find("); rebuilding it"), std::string::npos);
  // Nothing rejected reached b's directory.
  EXPECT_FALSE(b->lookup("ptx", key));
  EXPECT_EQ(b->counters("ptx").hits, 0u);

  ASSERT_TRUE(b->store("ptx", key, std::string(64, 'p'), "{}"));
  EXPECT_EQ(**remote->get(name), good);
  auto c = open("c", connect());
  EXPECT_TRUE(c->lookup("ptx", key));
  EXPECT_EQ(c->counters("ptx").remote.hits, 1u);
}

// The server dies mid-run: what was stored stays, the rest is stored locally,
// and the process says so once.
TEST_F(SharedStageCacheTest, KilledServerLosesNothingLocally) {
  auto cache = open("a", connect());
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(cache->store("llir", keyOf("before" + std::to_string(i)),
                             "llir " + std::to_string(i)));
  server->kill();
  for (int i = 0; i < 3; ++i) {
    std::string key = keyOf("after" + std::to_string(i));
    EXPECT_FALSE(cache->lookup("llir", key));
    ASSERT_TRUE(cache->store("llir", key, "llir " + std::to_string(i)));
  }
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("failed (GET tilec:1:llir:"), std::string::npos)
      << warnings[0];
  EXPECT_FALSE(cache->remote()->enabled());
  auto counters = cache->counters("llir");
  EXPECT_EQ(counters.remote.stores, 3u);
  EXPECT_EQ(counters.remote.errors, 1u);
  EXPECT_EQ(counters.stores, 6u);
  auto report = cache->verify();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->valid, 6u);
  EXPECT_TRUE(report->corrupt.empty());
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(cache->lookup("llir", keyOf("before" + std::to_string(i))));
    EXPECT_TRUE(cache->lookup("llir", keyOf("after" + std::to_string(i))));
  }
  EXPECT_EQ(warnings.size(), 1u);
}

TEST(SharedStageCacheNoServer, LocalOnlyWithOneWarning) {
  char pattern[] = "/tmp/tilec-redis-test-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  std::string root = pattern;
  std::vector<std::string> warnings;
  auto warn = [&](const std::string &message) { warnings.push_back(message); };
  tilec::rt::RemoteCacheOptions options;
  options.port = RedisServer::freePort();
  {
    StageCache cache(root + "/cache",
                     std::make_shared<RemoteCache>(options, warn), warn);
    for (int i = 0; i < 4; ++i) {
      std::string key = keyOf(std::to_string(i));
      EXPECT_FALSE(cache.lookup("ttgir", key));
      EXPECT_TRUE(cache.store("ttgir", key, "ttgir"));
      EXPECT_TRUE(cache.lookup("ttgir", key));
    }
    EXPECT_EQ(cache.counters("ttgir").remote.errors, 1u);
    EXPECT_EQ(cache.counters("ttgir").hits, 4u);
  }
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("Connection refused"), std::string::npos)
      << warnings[0];
  ASSERT_EQ(std::system(("rm -rf '" + root + "'").c_str()), 0);
}

// Processes with directories of their own look up and store the same keys at
// once. Without coordination two of them may both miss and build a key; none
// fails, every process ends with every entry, and what the server holds is
// valid.
TEST_F(SharedStageCacheTest, ConcurrentProcessesShareEntries) {
  constexpr int kProcesses = 4, kKeys = 20;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      int failures = 0;
      {
        auto cache = std::make_unique<StageCache>(
            root + "/p" + std::to_string(p),
            std::make_shared<RemoteCache>(
                options(), [&](const std::string &) { ++failures; }),
            [&](const std::string &) { ++failures; });
        for (int i = 0; i < kKeys; ++i) {
          std::string name = "shared" + std::to_string(i);
          auto hit = cache->lookup("cubin", keyOf(name));
          if (!hit)
            failures += !cache->store("cubin", keyOf(name), name);
          else
            failures += hit->payload != name;
        }
      }
      ::_exit(failures == 0 ? 0 : 1);
    }
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "process " << child;
  }
  EXPECT_EQ(server->keyCount(), kKeys);
  uint64_t hits = 0, misses = 0, stores = 0;
  for (int p = 0; p < kProcesses; ++p) {
    auto cache = open("p" + std::to_string(p), nullptr);
    auto report = cache->verify();
    ASSERT_TRUE(report);
    EXPECT_EQ(report->validPerStage["cubin"], uint64_t(kKeys));
    auto stats = cache->stats();
    ASSERT_TRUE(stats);
    for (const auto &stage : stats->stages)
      if (stage.name == "cubin") {
        hits += stage.counters.remote.hits;
        misses += stage.counters.remote.misses;
        stores += stage.counters.remote.stores;
      }
  }
  EXPECT_EQ(hits + misses, uint64_t(kProcesses * kKeys));
  EXPECT_EQ(stores, misses);
  EXPECT_GE(misses, uint64_t(kKeys));
  auto reader = open("reader", connect());
  for (int i = 0; i < kKeys; ++i) {
    std::string name = "shared" + std::to_string(i);
    auto hit = reader->lookup("cubin", keyOf(name));
    ASSERT_TRUE(hit) << name;
    EXPECT_EQ(hit->payload, name);
  }
  EXPECT_TRUE(warnings.empty());
}

// The tier's counters go to <dir>/stats as rows that older readers skip;
// a file of the first version still reads.
TEST_F(SharedStageCacheTest, CountersPersistBesideTheLocalOnes) {
  std::string key = keyOf("count");
  {
    auto cache = open("a", connect());
    EXPECT_FALSE(cache->lookup("ptx", key));
    ASSERT_TRUE(cache->store("ptx", key, "ptx"));
  }
  {
    auto cache = open("b", connect());
    EXPECT_TRUE(cache->lookup("ptx", key));
  }
  auto rows =
      tilec::rt::readCounterFile(root + "/a/stats", "tilec-cache-stats 1");
  EXPECT_EQ(rows["ptx"], (std::vector<uint64_t>{0, 1, 0, 1}));
  EXPECT_EQ(rows["remote-ptx"], (std::vector<uint64_t>{0, 1, 0, 1, 0, 0}));
  auto stats = open("b", nullptr)->stats();
  ASSERT_TRUE(stats);
  for (const auto &stage : stats->stages)
    if (stage.name == "ptx") {
      EXPECT_EQ(stage.counters.misses, 1u);
      EXPECT_EQ(stage.counters.stores, 1u);
      EXPECT_EQ(stage.counters.remote.hits, 1u);
      EXPECT_EQ(stage.counters.remote.misses, 0u);
    }

  ASSERT_EQ(std::system(("mkdir -p '" + root +
                         "/old' && printf "
                         "'tilec-cache-stats 1\\nttir 3 4 1 4\\n"
                         "remote-ptx 1 2 0 2 0\\n' > '" +
                         root + "/old/stats'")
                            .c_str()),
            0);
  auto old = open("old", nullptr)->stats();
  ASSERT_TRUE(old);
  EXPECT_EQ(old->stages[0].counters.hits, 3u);
  EXPECT_EQ(old->stages[0].counters.corrupt, 1u);
  EXPECT_TRUE(old->stages[0].counters.remote.empty());
  // A row from before leases has no waits.
  EXPECT_EQ(old->stages[3].counters.remote.stores, 2u);
  EXPECT_EQ(old->stages[3].counters.remote.waits, 0u);
}

// The cache that misses first holds the lease until its store; the other
// waits and gets the entry from the tier, not a build of its own.
TEST_F(SharedStageCacheTest, LeaseHolderBuildsAndTheOtherWaits) {
  std::string key = keyOf("leased");
  auto holder = open("holder", connect());
  auto waiter = open("waiter", connect());
  EXPECT_FALSE(holder->lookupOrLease("cubin", key));
  EXPECT_EQ(server->keyCount(), 1);
  auto waiting = std::async(std::launch::async, [&] {
    return waiter->lookupOrLease("cubin", key);
  });
  EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds(200)),
            std::future_status::timeout);
  ASSERT_TRUE(holder->store("cubin", key, "built once"));
  std::optional<tilec::rt::CacheArtifact> got = waiting.get();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->payload, "built once");
  EXPECT_TRUE(got->fromRemote);
  // The entry is there, the lease gone.
  EXPECT_EQ(server->keyCount(), 1);
  tilec::rt::RemoteCounters counters = waiter->counters("cubin").remote;
  EXPECT_EQ(counters.waits, 1u);
  EXPECT_EQ(counters.misses, 1u);
  EXPECT_EQ(counters.hits, 1u);
  EXPECT_EQ(holder->counters("cubin").remote.waits, 0u);
  EXPECT_TRUE(warnings.empty());
}

// A failed build gives its lease up: the next cache takes it at once.
TEST_F(SharedStageCacheTest, ReleasedLeaseIsTakenWithoutWaiting) {
  std::string key = keyOf("failed");
  auto first = open("first", connect());
  auto second = open("second", connect());
  EXPECT_FALSE(first->lookupOrLease("ptx", key));
  first->releaseLease("ptx", key);
  EXPECT_EQ(server->keyCount(), 0);
  EXPECT_FALSE(second->lookupOrLease("ptx", key));
  EXPECT_EQ(second->counters("ptx").remote.waits, 0u);
  EXPECT_EQ(server->keyCount(), 1);
}

// A holder that never stores (it died) delays the others by the lease's
// life at most: then one of them takes the lease over and builds.
TEST_F(SharedStageCacheTest, AbandonedLeaseExpires) {
  std::string key = keyOf("abandoned");
  auto shortLease = options();
  shortLease.leaseMs = 300;
  auto dead = open("dead", connect(shortLease));
  auto waiter = open("waiter", connect(shortLease));
  EXPECT_FALSE(dead->lookupOrLease("llir", key));
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(waiter->lookupOrLease("llir", key));
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(200));
  EXPECT_LT(waited, std::chrono::milliseconds(2000));
  EXPECT_EQ(waiter->counters("llir").remote.waits, 1u);
  // The waiter holds the lease now: its store releases it, the dead one's
  // release does not touch it.
  std::string lease = "tilec:1:lease:llir:" + key;
  dead->releaseLease("llir", key);
  EXPECT_EQ(server->command({"EXISTS", lease}), ":1");
  ASSERT_TRUE(waiter->store("llir", key, "llir"));
  EXPECT_EQ(server->command({"EXISTS", lease}), ":0");
  EXPECT_EQ(server->keyCount(), 1);
}

} // namespace
