//===- StageCacheTest.cpp - The on-disk stage cache -----------------------===//
//
// Atomicity, checksums, corrupt and truncated entries, degrading on an
// unwritable directory, concurrent writers (processes), counters, prune and
// clear. Every test works in its own temporary directory.
//
//===----------------------------------------------------------------------===//

#include "tilec/runtime/StageCache.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using tilec::rt::CacheKey;
using tilec::rt::StageCache;

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void writeFile(const std::string &path, const std::string &contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
}

bool exists(const std::string &path) {
  struct stat info;
  return ::lstat(path.c_str(), &info) == 0;
}

// Every regular file under `dir`, relative, sorted.
void listFiles(const std::string &dir, const std::string &prefix,
               std::vector<std::string> &out) {
  DIR *handle = ::opendir(dir.c_str());
  if (!handle)
    return;
  while (struct dirent *entry = ::readdir(handle)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..")
      continue;
    std::string path = dir + "/" + name;
    struct stat info;
    ::lstat(path.c_str(), &info);
    if (S_ISDIR(info.st_mode))
      listFiles(path, prefix + name + "/", out);
    else
      out.push_back(prefix + name);
  }
  ::closedir(handle);
  std::sort(out.begin(), out.end());
}

std::vector<std::string> tempFiles(const std::string &dir) {
  std::vector<std::string> all, temps;
  listFiles(dir, "", all);
  for (const std::string &file : all)
    if (file.find(".tmp.") != std::string::npos)
      temps.push_back(file);
  return temps;
}

std::string keyOf(const std::string &text) {
  return CacheKey("test").add("text", text).str();
}

void setMtime(const std::string &path, time_t seconds) {
  struct timespec times[2];
  times[0].tv_sec = times[1].tv_sec = seconds;
  times[0].tv_nsec = times[1].tv_nsec = 0;
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

class StageCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/tilec-cache-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root = pattern;
    dir = root + "/cache";
  }
  void TearDown() override {
    std::string command =
        "chmod -R u+w '" + root + "' && rm -rf '" + root + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
  }

  // A cache whose warnings are collected instead of printed.
  std::unique_ptr<StageCache> open(const std::string &path) {
    return std::make_unique<StageCache>(
        path, nullptr,
        [this](const std::string &message) { warnings.push_back(message); });
  }
  std::string entryFile(const std::string &stage, const std::string &key) {
    return dir + "/" + StageCache::entryPath(stage, key);
  }

  std::string root, dir;
  std::vector<std::string> warnings;
};

TEST_F(StageCacheTest, StoreThenLookup) {
  auto cache = open(dir);
  std::string key = keyOf("a");
  EXPECT_FALSE(cache->lookup("cubin", key));
  std::string payload("\x7f"
                      "ELF\0\0binary\xff",
                      13);
  ASSERT_TRUE(cache->store("cubin", key, payload, R"({"registers":32})"));
  auto artifact = cache->lookup("cubin", key);
  ASSERT_TRUE(artifact);
  EXPECT_EQ(artifact->payload, payload);
  EXPECT_EQ(artifact->meta, R"({"registers":32})");
  EXPECT_EQ(artifact->payloadSha256, tilec::rt::Sha256::hashHex(payload));
  auto counters = cache->counters("cubin");
  EXPECT_EQ(counters.hits, 1u);
  EXPECT_EQ(counters.misses, 1u);
  EXPECT_EQ(counters.stores, 1u);
  EXPECT_EQ(counters.corrupt, 0u);
  EXPECT_TRUE(warnings.empty());
  // Another stage with the same key is another entry.
  EXPECT_FALSE(cache->lookup("ptx", key));
}

TEST_F(StageCacheTest, LayoutIsRelativeAndLeavesNoTemporaries) {
  auto cache = open(dir);
  std::string key = keyOf("layout");
  ASSERT_TRUE(cache->store("ptx", key, "payload", "meta"));
  EXPECT_EQ(StageCache::entryPath("ptx", key),
            "ptx/" + key.substr(0, 2) + "/" + key + ".ptx");
  std::string bytes = readFile(entryFile("ptx", key));
  EXPECT_EQ(bytes.substr(0, bytes.find('\n')),
            "tilec-cache 1 ptx " + key + " 4 7 " +
                tilec::rt::Sha256::hashHex("meta") + " " +
                tilec::rt::Sha256::hashHex("payload"));
  EXPECT_TRUE(tempFiles(dir).empty());
  EXPECT_TRUE(exists(dir + "/CACHEDIR.TAG"));

  // The tree copied elsewhere still hits: nothing in it names its location.
  std::string copy = root + "/copy";
  ASSERT_EQ(std::system(("cp -r '" + dir + "' '" + copy + "'").c_str()), 0);
  auto copied = open(copy);
  auto artifact = copied->lookup("ptx", key);
  ASSERT_TRUE(artifact);
  EXPECT_EQ(artifact->payload, "payload");
}

// Any single flipped byte, in the header, the meta or the payload, is caught.
TEST_F(StageCacheTest, EveryFlippedByteIsDetectedAndDiscarded) {
  std::string key = keyOf("flip");
  std::string payload(300, 'x');
  for (size_t i = 0; i < payload.size(); ++i)
    payload[i] = char(i);
  std::string good = StageCache::encodeEntry("cubin", key, payload, "{}");
  for (size_t position = 0; position < good.size(); ++position) {
    std::string bad = good;
    bad[position] ^= 0x01;
    auto decoded = StageCache::decodeEntry(bad, "cubin", key);
    EXPECT_FALSE(decoded) << "flip at byte " << position << " not detected";
  }
  EXPECT_TRUE(StageCache::decodeEntry(good, "cubin", key));

  // Through the store: the flipped file is removed, counted, rebuilt.
  auto cache = open(dir);
  ASSERT_TRUE(cache->store("cubin", key, payload));
  std::string path = entryFile("cubin", key);
  std::string bytes = readFile(path);
  bytes[bytes.size() - 10] ^= 0x40;
  writeFile(path, bytes);
  EXPECT_FALSE(cache->lookup("cubin", key));
  EXPECT_FALSE(exists(path));
  EXPECT_EQ(cache->counters("cubin").corrupt, 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("checksum mismatch"), std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find(path), std::string::npos) << warnings[0];
  ASSERT_TRUE(cache->store("cubin", key, payload));
  ASSERT_TRUE(cache->lookup("cubin", key));
}

TEST_F(StageCacheTest, TruncatedOrPaddedEntriesAreDiscarded) {
  auto cache = open(dir);
  std::string key = keyOf("truncate");
  std::string path = entryFile("llir", key);
  std::string good = StageCache::encodeEntry("llir", key, "define void", "{}");
  std::string header = good.substr(0, good.find('\n') + 1);
  for (const std::string &bad :
       {good.substr(0, good.size() - 1), header, good.substr(0, 20),
        std::string(), good + "x"}) {
    ASSERT_TRUE(cache->store("llir", key, "define void", "{}"));
    writeFile(path, bad);
    EXPECT_FALSE(cache->lookup("llir", key)) << "accepted: " << bad;
    EXPECT_FALSE(exists(path));
  }
  EXPECT_EQ(cache->counters("llir").corrupt, 5u);
  auto truncated =
      StageCache::decodeEntry(good.substr(0, good.size() - 1), "llir", key);
  ASSERT_FALSE(truncated);
  EXPECT_NE(truncated.message().find("truncated"), std::string::npos)
      << truncated.message();
}

// An entry copied under another key's name, or another stage's directory,
// is not loaded.
TEST_F(StageCacheTest, MisplacedEntriesAreDiscarded) {
  auto cache = open(dir);
  std::string a = keyOf("a"), b = keyOf("b");
  ASSERT_TRUE(cache->store("ptx", a, "ptx of a"));
  ASSERT_TRUE(cache->store("ptx", b, "ptx of b"));
  writeFile(entryFile("ptx", b), readFile(entryFile("ptx", a)));
  auto wrongKey = cache->lookup("ptx", b);
  EXPECT_FALSE(wrongKey);
  ASSERT_TRUE(cache->store("llir", a, "llir"));
  writeFile(entryFile("llir", a), readFile(entryFile("ptx", a)));
  EXPECT_FALSE(cache->lookup("llir", a));
  EXPECT_TRUE(cache->lookup("ptx", a));
}

// A writer killed between writing its temporary file and the rename leaves
// nothing a reader sees; verify() removes the leftover.
TEST_F(StageCacheTest, WriterKilledBeforeRenameLeavesNothingVisible) {
  std::string key = keyOf("crash");
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    StageCache cache(dir, nullptr, [](const std::string &) {});
    StageCache::TestHooks hooks;
    hooks.beforeRename = [](std::string_view stage) {
      if (stage == "cubin")
        ::_exit(86);
    };
    StageCache::setTestHooks(std::move(hooks));
    cache.store("ttir", keyOf("before"), "ttir"); // not the crash stage
    cache.store("cubin", key, std::string(100000, 'c'));
    ::_exit(0); // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 86);

  auto cache = open(dir);
  EXPECT_FALSE(cache->lookup("cubin", key));
  EXPECT_TRUE(cache->lookup("ttir", keyOf("before")));
  auto entries = cache->list();
  ASSERT_TRUE(entries);
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].stage, "ttir");
  ASSERT_EQ(tempFiles(dir).size(), 1u);
  EXPECT_EQ(tempFiles(dir)[0].find("cubin/" + key.substr(0, 2) + "/" + key +
                                   ".cubin.tmp." + std::to_string(child) + "."),
            0u)
      << tempFiles(dir)[0];

  auto report = cache->verify();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->removedTempFiles, 1u);
  EXPECT_EQ(report->valid, 1u);
  EXPECT_TRUE(report->corrupt.empty());
  EXPECT_TRUE(tempFiles(dir).empty());
  // The next compile rebuilds it.
  EXPECT_TRUE(cache->store("cubin", key, "rebuilt"));
  EXPECT_TRUE(cache->lookup("cubin", key));
}

// A temporary file of a live writer is neither read nor removed.
TEST_F(StageCacheTest, LiveTemporaryFilesAreLeftAlone) {
  auto cache = open(dir);
  std::string key = keyOf("live");
  ASSERT_TRUE(cache->store("ttir", keyOf("other"), "x"));
  std::string temp = entryFile("ttir", key) + ".tmp." +
                     std::to_string(::getpid()) + ".0123456789abcdef";
  ASSERT_EQ(std::system(
                ("mkdir -p '" + temp.substr(0, temp.rfind('/')) + "'").c_str()),
            0);
  writeFile(temp, StageCache::encodeEntry("ttir", key, "x", ""));
  EXPECT_FALSE(cache->lookup("ttir", key));
  auto report = cache->verify();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->liveTempFiles, 1u);
  EXPECT_EQ(report->removedTempFiles, 0u);
  EXPECT_TRUE(exists(temp));
  // Unless it is too old to belong to a running write.
  setMtime(temp, ::time(nullptr) - 7200);
  report = cache->verify();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->removedTempFiles, 1u);
  EXPECT_FALSE(exists(temp));
}

// The cache directory cannot be created: every store fails, one warning, and
// lookups still run.
TEST_F(StageCacheTest, UnwritableDirectoryWarnsOnce) {
  writeFile(root + "/file", "not a directory");
  auto cache = open(root + "/file/cache");
  for (std::string_view stage : tilec::rt::kCacheStages) {
    EXPECT_FALSE(cache->lookup(stage, keyOf("x")));
    EXPECT_FALSE(cache->store(stage, keyOf("x"), "artifact"));
  }
  EXPECT_FALSE(cache->storesEnabled());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(root + "/file/cache"), std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("not writable"), std::string::npos) << warnings[0];
  cache->flushCounters(); // no directory, no statistics, no crash
}

// A cache that existed and then became read-only still serves hits; stores
// fail with one warning.
TEST_F(StageCacheTest, ReadOnlyDirectoryStillHits) {
  std::string key = keyOf("ro");
  {
    auto writer = open(dir);
    ASSERT_TRUE(writer->store("ttir", key, "ttir text"));
  }
  // chmod does not stop root; replacing a stage directory by a file does.
  bool rootUser = ::geteuid() == 0;
  if (rootUser)
    writeFile(dir + "/ttgir", "a file where the ttgir directory goes");
  else
    ASSERT_EQ(std::system(("chmod -R a-w '" + dir + "'").c_str()), 0);
  auto cache = open(dir);
  auto hit = cache->lookup("ttir", key);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->payload, "ttir text");
  if (!rootUser) {
    EXPECT_FALSE(cache->store("ttir", keyOf("new"), "x"));
  }
  EXPECT_FALSE(cache->store("ttgir", keyOf("new"), "x"));
  EXPECT_FALSE(cache->store("llir", keyOf("new"), "x"));
  EXPECT_FALSE(cache->store("cubin", keyOf("new"), "x"));
  EXPECT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(tempFiles(dir).empty());
}

// 8 processes store the same 20 keys and 5 keys of their own, at once, then
// read everything back: each key ends with exactly one valid entry.
TEST_F(StageCacheTest, ConcurrentProcessesLeaveOneValidEntryPerKey) {
  constexpr int kProcesses = 8, kShared = 20, kOwn = 5;
  auto payloadOf = [](const std::string &name) {
    std::string payload;
    for (int i = 0; i < 2000; ++i)
      payload += name;
    return payload;
  };
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      int failures = 0;
      {
        StageCache cache(dir, nullptr,
                         [&](const std::string &) { ++failures; });
        for (int round = 0; round < 3; ++round)
          for (int i = 0; i < kShared; ++i) {
            std::string name = "shared" + std::to_string(i);
            if (!cache.lookup("ptx", keyOf(name)))
              failures += !cache.store("ptx", keyOf(name), payloadOf(name));
          }
        for (int i = 0; i < kOwn; ++i) {
          std::string name =
              "own" + std::to_string(p) + "." + std::to_string(i);
          failures += !cache.store("cubin", keyOf(name), payloadOf(name));
        }
        for (int i = 0; i < kShared; ++i) {
          std::string name = "shared" + std::to_string(i);
          auto hit = cache.lookup("ptx", keyOf(name));
          failures += !hit || hit->payload != payloadOf(name);
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
  auto cache = open(dir);
  auto report = cache->verify();
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->corrupt.empty());
  EXPECT_EQ(report->validPerStage["ptx"], uint64_t(kShared));
  EXPECT_EQ(report->validPerStage["cubin"], uint64_t(kProcesses * kOwn));
  EXPECT_EQ(report->removedTempFiles + report->liveTempFiles, 0u);
  EXPECT_TRUE(tempFiles(dir).empty());
  // Counters from all processes add up under the lock: every process looked
  // up the 20 shared keys 3 + 1 times.
  auto stats = cache->stats();
  ASSERT_TRUE(stats);
  for (const auto &stage : stats->stages)
    if (stage.name == "ptx") {
      EXPECT_EQ(stage.counters.hits + stage.counters.misses,
                uint64_t(kProcesses * kShared * 4));
      EXPECT_EQ(stage.entries, uint64_t(kShared));
    }
}

TEST_F(StageCacheTest, CountersPersistAcrossProcesses) {
  std::string key = keyOf("count");
  {
    auto cache = open(dir);
    EXPECT_FALSE(cache->lookup("ttgir", key));
    ASSERT_TRUE(cache->store("ttgir", key, "ttgir"));
  }
  {
    auto cache = open(dir);
    EXPECT_TRUE(cache->lookup("ttgir", key));
    EXPECT_TRUE(cache->lookup("ttgir", key));
    cache->flushCounters();
    cache->flushCounters(); // nothing new: adds nothing
  }
  auto stats = open(dir)->stats();
  ASSERT_TRUE(stats);
  for (const auto &stage : stats->stages) {
    if (stage.name != "ttgir")
      continue;
    EXPECT_EQ(stage.counters.hits, 2u);
    EXPECT_EQ(stage.counters.misses, 1u);
    EXPECT_EQ(stage.counters.stores, 1u);
    EXPECT_EQ(stage.entries, 1u);
    EXPECT_GT(stage.bytes, 5u);
  }
}

// prune keeps the most recently used entries within the size limit; a hit
// counts as a use.
TEST_F(StageCacheTest, PruneRemovesLeastRecentlyUsedFirst) {
  auto cache = open(dir);
  std::vector<std::string> keys;
  time_t now = ::time(nullptr);
  for (int i = 0; i < 5; ++i) {
    keys.push_back(keyOf("prune" + std::to_string(i)));
    ASSERT_TRUE(cache->store("ptx", keys.back(), std::string(1000, 'p')));
    setMtime(entryFile("ptx", keys.back()), now - 1000 + i * 100);
  }
  // Entry 0 is the oldest; using it makes it the newest.
  ASSERT_TRUE(cache->lookup("ptx", keys[0]));
  uint64_t entryBytes = readFile(entryFile("ptx", keys[0])).size();
  auto report = cache->prune(2 * entryBytes + 10);
  ASSERT_TRUE(report);
  EXPECT_EQ(report->removedEntries, 3u);
  EXPECT_EQ(report->keptEntries, 2u);
  EXPECT_EQ(report->keptBytes, 2 * entryBytes);
  EXPECT_TRUE(exists(entryFile("ptx", keys[0])));
  EXPECT_FALSE(exists(entryFile("ptx", keys[1])));
  EXPECT_FALSE(exists(entryFile("ptx", keys[2])));
  EXPECT_FALSE(exists(entryFile("ptx", keys[3])));
  EXPECT_TRUE(exists(entryFile("ptx", keys[4])));
  report = cache->prune(0);
  ASSERT_TRUE(report);
  EXPECT_EQ(report->keptEntries, 0u);
  auto entries = cache->list();
  ASSERT_TRUE(entries);
  EXPECT_TRUE(entries->empty());
}

TEST_F(StageCacheTest, VerifyFindsAndRemovesCorruptEntries) {
  auto cache = open(dir);
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(cache->store("llir", keyOf(std::to_string(i)), "llir"));
  std::string bad = entryFile("llir", keyOf("1"));
  std::string bytes = readFile(bad);
  writeFile(bad, bytes.substr(0, bytes.size() - 2));
  writeFile(dir + "/llir/README", "a file that is not ours");
  ASSERT_EQ(::mkdir((dir + "/llir/zz").c_str(), 0777), 0);
  writeFile(dir + "/llir/zz/notes.txt", "not ours either");
  auto report = cache->verify();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->valid, 2u);
  ASSERT_EQ(report->corrupt.size(), 1u);
  EXPECT_NE(report->corrupt[0].find(StageCache::entryPath("llir", keyOf("1"))),
            std::string::npos);
  EXPECT_NE(report->corrupt[0].find("truncated"), std::string::npos);
  EXPECT_FALSE(exists(bad));
  EXPECT_EQ(report->unknownFiles,
            std::vector<std::string>{"llir/zz/notes.txt"});
  report = cache->verify();
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->corrupt.empty());
}

// What is not a regular file, or is too large, in an entry's place: a
// lookup misses at once (a FIFO made it wait forever, /dev/zero behind a
// symlink ran out of memory, a 6 GiB file was read whole), and verify
// reports and removes it, so that the key is stored again.
TEST_F(StageCacheTest, EntriesThatAreNotRegularFilesOrTooLargeAreRefused) {
  auto cache = open(dir);
  for (const char *name : {"fifo", "zero", "large", "dir"})
    ASSERT_TRUE(cache->store("ptx", keyOf(name), "ptx"));
  std::string fifo = entryFile("ptx", keyOf("fifo"));
  ASSERT_EQ(::unlink(fifo.c_str()), 0);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string zero = entryFile("ptx", keyOf("zero"));
  ASSERT_EQ(::unlink(zero.c_str()), 0);
  ASSERT_EQ(::symlink("/dev/zero", zero.c_str()), 0);
  std::string large = entryFile("ptx", keyOf("large"));
  ASSERT_EQ(::truncate(large.c_str(), off_t(1) << 30), 0); // sparse
  std::string directory = entryFile("ptx", keyOf("dir"));
  ASSERT_EQ(::unlink(directory.c_str()), 0);
  ASSERT_EQ(::mkdir(directory.c_str(), 0700), 0);
  for (const char *name : {"fifo", "zero", "large", "dir"})
    EXPECT_FALSE(cache->lookup("ptx", keyOf(name))) << name;
  auto report = cache->verify();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->valid, 0u);
  ASSERT_EQ(report->corrupt.size(), 4u);
  std::string all;
  for (const std::string &line : report->corrupt)
    all += line + "\n";
  EXPECT_NE(all.find("not a regular file"), std::string::npos) << all;
  EXPECT_NE(all.find("1073741824 bytes, more than the"), std::string::npos)
      << all;
  for (const char *name : {"fifo", "zero", "large", "dir"}) {
    EXPECT_FALSE(exists(entryFile("ptx", keyOf(name)))) << name;
    ASSERT_TRUE(cache->store("ptx", keyOf(name), "again")) << name;
    auto found = cache->lookup("ptx", keyOf(name));
    ASSERT_TRUE(found) << name;
    EXPECT_EQ(found->payload, "again");
  }
}

// A directory holding files in one entry's place fails that key's store
// alone; it disabled every store of the cache for the process.
TEST_F(StageCacheTest, ADirectoryInAnEntrysPlaceFailsThatKeyAlone) {
  auto cache = open(dir);
  ASSERT_TRUE(cache->store("llir", keyOf("first"), "x"));
  std::string blocked = entryFile("llir", keyOf("blocked"));
  ASSERT_EQ(std::system(("mkdir -p '" + blocked + "'").c_str()), 0);
  writeFile(blocked + "/inside", "a file");
  EXPECT_FALSE(cache->store("llir", keyOf("blocked"), "y"));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("a directory is in its place"), std::string::npos)
      << warnings[0];
  EXPECT_TRUE(cache->store("llir", keyOf("after"), "z"));
  EXPECT_TRUE(cache->lookup("llir", keyOf("after")));
}

// A cache directory that is a file is an error, not an empty cache that
// verifies.
TEST_F(StageCacheTest, ACacheThatIsAFileIsAnError) {
  std::string file = root + "/plain";
  writeFile(file, "not a cache");
  auto cache = open(file);
  auto report = cache->verify();
  ASSERT_FALSE(report);
  EXPECT_EQ(report.message(), "the cache " + file + " is not a directory");
  EXPECT_FALSE(cache->prune(0));
}

// clear removes what is ours and nothing else.
TEST_F(StageCacheTest, ClearRemovesOnlyCacheFiles) {
  auto cache = open(dir);
  ASSERT_TRUE(cache->store("ttir", keyOf("x"), "x"));
  ASSERT_TRUE(cache->store("cubin", keyOf("y"), "y"));
  EXPECT_TRUE(cache->lookup("ttir", keyOf("x")));
  cache->flushCounters();
  writeFile(dir + "/mine.txt", "user file");
  ASSERT_TRUE(cache->clear().ok());
  EXPECT_TRUE(exists(dir + "/mine.txt"));
  EXPECT_FALSE(exists(dir + "/ttir"));
  EXPECT_FALSE(exists(dir + "/stats"));
  auto entries = cache->list();
  ASSERT_TRUE(entries);
  EXPECT_TRUE(entries->empty());
  // The cache works after a clear.
  EXPECT_TRUE(cache->store("ttir", keyOf("x"), "x"));
  EXPECT_TRUE(cache->lookup("ttir", keyOf("x")));
}

TEST(CacheKey, FieldsAreUnambiguous) {
  EXPECT_EQ(CacheKey("ptx").add("a", "bc").str(),
            CacheKey("ptx").add("a", "bc").str());
  EXPECT_NE(CacheKey("ptx").add("a", "bc").str(),
            CacheKey("ptx").add("ab", "c").str());
  EXPECT_NE(CacheKey("ptx").add("a", "b").add("c", "d").str(),
            CacheKey("ptx").add("a", "b\nc=1:d").str());
  EXPECT_NE(CacheKey("ptx").add("a", "x").str(),
            CacheKey("cubin").add("a", "x").str());
  EXPECT_NE(CacheKey("ptx").add("n", int64_t(4)).str(),
            CacheKey("ptx").add("n", int64_t(8)).str());
  EXPECT_TRUE(StageCache::isValidKey(CacheKey("ptx").str()));
}

TEST(CacheSizes, ParseAndFormat) {
  EXPECT_EQ(*tilec::rt::parseByteSize("1048576"), 1048576u);
  EXPECT_EQ(*tilec::rt::parseByteSize("100M"), 100u << 20);
  EXPECT_EQ(*tilec::rt::parseByteSize("1G"), 1u << 30);
  EXPECT_EQ(*tilec::rt::parseByteSize("512KiB"), 512u << 10);
  EXPECT_EQ(*tilec::rt::parseByteSize("2t"), 2ull << 40);
  EXPECT_EQ(*tilec::rt::parseByteSize("0"), 0u);
  EXPECT_FALSE(tilec::rt::parseByteSize(""));
  EXPECT_FALSE(tilec::rt::parseByteSize("M"));
  EXPECT_FALSE(tilec::rt::parseByteSize("10X"));
  EXPECT_FALSE(tilec::rt::parseByteSize("-5"));
  EXPECT_EQ(tilec::rt::formatByteSize(12), "12B");
  EXPECT_EQ(tilec::rt::formatByteSize(1536), "1.5K");
  EXPECT_EQ(tilec::rt::formatByteSize(300u << 20), "300M");
}

} // namespace
