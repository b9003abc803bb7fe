//===- AutotuneCacheTest.cpp - The autotune cache file --------------------===//

#include "tilec/runtime/AutotuneCache.h"
#include "tilec/runtime/FileIO.h"

#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace rt = tilec::rt;

namespace {

class AutotuneCacheTest : public testing::Test {
protected:
  void SetUp() override {
    char dir[] = "/tmp/tilec-autotune-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    directory = dir;
    path = directory + "/sub/dir/autotune_cache.json";
  }
  void TearDown() override {
    std::string command = "rm -rf '" + directory + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
  }

  static std::string read(const std::string &file) {
    std::ifstream in(file);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
  }

  static rt::AutotuneEntry entry(const std::string &config, double us) {
    rt::AutotuneEntry entry;
    entry.config = config;
    rt::ConfigTiming winner;
    winner.config = config;
    winner.medianUs = us;
    winner.p20Us = us * 0.99;
    winner.p80Us = us * 1.01;
    winner.minUs = us * 0.98;
    winner.repetitions = 40;
    winner.registers = 128;
    winner.sharedBytes = 49152;
    winner.compileMs = 250;
    rt::ConfigTiming pruned;
    pruned.config = "BLOCK_M=256,num_warps=8,num_stages=1";
    pruned.status = "pruned";
    pruned.reason = "needs 300000 B of shared memory per block";
    pruned.registers = 200;
    pruned.sharedBytes = 300000;
    entry.timings = {winner, pruned};
    entry.target = "sm_90";
    entry.cubinKey = std::string(64, 'a');
    entry.metadataJson =
        R"({"name": "matmul", "num_warps": 4, "ratio": 0.125, "ok": true,)"
        R"( "none": null, "signature": [{"name": "a\"\\b", "type": "ptr<f16>"}],)"
        R"( "nested": {"list": [1, -2, [3.5e-7, {}], []], "empty": {}}})";
    entry.description =
        tilec::KernelDescription("matmul", "kernels/matmul.cpp", 7)
            .param(tilec::MetaParameter("BLOCK_M").powerOfTwo())
            .param(tilec::MetaParameter("GROUP_M").byDefault(8))
            .param(tilec::MetaParameter("BLOCK_N").derivedAs(
                "next_power_of_2(n_cols)"))
            .typeParam(tilec::TypeParameter("DTYPE", {"f16"}).byDefault("f16"))
            .arg(tilec::scalar("M", "i32"))
            .arg(tilec::scalar("stride_am", "i32").divisibility(16))
            .key("LOG2_M", "ceil(log2(M))")
            .key("N")
            .grid({"cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)"});
    entry.tunedAt = "2026-11-29T12:00:00Z";
    entry.budgetMs = 20;
    entry.tuning = {1796385600123.5, 412.5, 300.25, 2.5, 96};
    return entry;
  }

  std::string directory;
  std::string path;
};

TEST_F(AutotuneCacheTest, MissingFileIsEmpty) {
  rt::AutotuneCache cache(path);
  ASSERT_TRUE(cache.load().ok());
  EXPECT_TRUE(cache.entries().empty());
  EXPECT_EQ(cache.find("NVIDIA H200", "matmul", "M=1"), nullptr);
}

// A directory where the file should be is not an empty cache (it read as
// one, and no winner could be stored).
TEST_F(AutotuneCacheTest, ADirectoryInPlaceOfTheFileIsAnError) {
  ASSERT_TRUE(rt::makeDirectories(path).ok());
  rt::AutotuneCache cache(path);
  tilec::Status loaded = cache.load();
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.message(),
            "autotune cache: " + path + " is not a regular file");
}

TEST_F(AutotuneCacheTest, StoreThenLoadRoundTrips) {
  {
    rt::AutotuneCache cache(path);
    ASSERT_TRUE(cache.load().ok());
    tilec::Status status =
        cache.store("NVIDIA H200", "matmul", "LOG2_M=12,N=4096",
                    entry("BLOCK_M=128,num_warps=4,num_stages=3", 812.5));
    ASSERT_TRUE(status.ok()) << status.message();
  }
  rt::AutotuneCache cache(path);
  ASSERT_TRUE(cache.load().ok());
  const rt::AutotuneEntry *found =
      cache.find("NVIDIA H200", "matmul", "LOG2_M=12,N=4096");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->config, "BLOCK_M=128,num_warps=4,num_stages=3");
  ASSERT_EQ(found->timings.size(), 2u);
  EXPECT_DOUBLE_EQ(found->timings[0].medianUs, 812.5);
  EXPECT_EQ(found->timings[0].repetitions, 40);
  EXPECT_EQ(found->timings[1].status, "pruned");
  EXPECT_EQ(found->timings[1].sharedBytes, 300000);
  EXPECT_EQ(found->cubinKey, std::string(64, 'a'));
  EXPECT_EQ(found->target, "sm_90");
  // The compile json comes back as the same JSON value (the loader
  // re-serializes it while streaming).
  auto metadata = nlohmann::json::parse(found->metadataJson, nullptr, false);
  ASSERT_FALSE(metadata.is_discarded()) << found->metadataJson;
  EXPECT_EQ(metadata, nlohmann::json::parse(entry("A=1", 1).metadataJson));
  EXPECT_EQ(metadata["signature"][0]["name"], "a\"\\b");
  // The description comes back whole, through the contract's json.
  const tilec::KernelDescription *description =
      cache.findDescription("NVIDIA H200", "matmul");
  ASSERT_NE(description, nullptr);
  EXPECT_EQ(description->toJson(), entry("A=1", 1).description->toJson());
  ASSERT_EQ(description->getAutotuneKey().size(), 2u);
  EXPECT_EQ(description->getAutotuneKey()[0].derivation, "ceil(log2(M))");
  EXPECT_EQ(description->getGrid()[0], "cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)");
  EXPECT_EQ(description->getIntegerArguments(),
            (std::map<std::string, int64_t>{{"M", 1}, {"stride_am", 16}}));
  EXPECT_EQ(found->tunedAt, "2026-11-29T12:00:00Z");
  EXPECT_DOUBLE_EQ(found->budgetMs, 20);
  // The tuning's times, through the streaming loader and the entry codec
  // (the shared tier's).
  auto decoded =
      rt::AutotuneCache::decodeEntry(rt::AutotuneCache::encodeEntry(*found));
  ASSERT_TRUE(decoded.ok()) << decoded.message();
  const rt::AutotuneEntry *codec = &*decoded;
  for (const rt::AutotuneEntry *times : {found, codec}) {
    EXPECT_DOUBLE_EQ(times->tuning.startedUnixMs, 1796385600123.5);
    EXPECT_DOUBLE_EQ(times->tuning.totalMs, 412.5);
    EXPECT_DOUBLE_EQ(times->tuning.compileMs, 300.25);
    EXPECT_DOUBLE_EQ(times->tuning.inputsMs, 2.5);
    EXPECT_DOUBLE_EQ(times->tuning.benchmarkMs, 96);
  }
  EXPECT_EQ(found->timings[1].reason,
            "needs 300000 B of shared memory per block");
  EXPECT_EQ(cache.findDescription("NVIDIA H100", "matmul"), nullptr);

  // The shape the design asks for: device -> kernel -> key -> {config, ...}.
  auto json = nlohmann::json::parse(read(path));
  EXPECT_EQ(json["NVIDIA H200"]["matmul"]["LOG2_M=12,N=4096"]["config"],
            "BLOCK_M=128,num_warps=4,num_stages=3");
  EXPECT_TRUE(
      json["NVIDIA H200"]["matmul"]["LOG2_M=12,N=4096"]["timings"].is_array());
}

TEST_F(AutotuneCacheTest, StoreReplacesOnlyItsOwnEntry) {
  rt::AutotuneCache cache(path);
  ASSERT_TRUE(cache.load().ok());
  ASSERT_TRUE(cache.store("dev", "matmul", "k1", entry("A=1", 10)).ok());
  // Another writer's entry with a field this version does not know.
  auto json = nlohmann::json::parse(read(path));
  json["dev"]["softmax"]["k9"] = {{"config", "num_warps=8"},
                                  {"from_the_future", {1, 2, 3}}};
  std::ofstream(path) << json.dump(2);

  ASSERT_TRUE(cache.store("dev", "matmul", "k1", entry("A=2", 9)).ok());
  auto merged = nlohmann::json::parse(read(path));
  EXPECT_EQ(merged["dev"]["matmul"]["k1"]["config"], "A=2");
  EXPECT_EQ(merged["dev"]["softmax"]["k9"]["from_the_future"],
            nlohmann::json({1, 2, 3}));
  // The in-memory view follows the file, others' entries included.
  ASSERT_NE(cache.find("dev", "softmax", "k9"), nullptr);
  EXPECT_EQ(cache.find("dev", "matmul", "k1")->config, "A=2");
}

// A store re-serializes only its own entry and assembles the file from the
// others' texts: what it writes must be byte for byte what a dump of the
// whole file would be, whatever the file held (misplaced values, empty
// objects, keys that need escaping, text that is not ASCII).
TEST_F(AutotuneCacheTest, AStoreWritesWhatADumpOfTheWholeFileWrites) {
  std::string dir = directory + "/sub/dir";
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "'").c_str()), 0);
  std::ofstream(path) << R"({"old": [{"matmul": {"k": {"config": "A=1"}}}],
                             "empty": {},
                             "dev": {"softmax": 3, "none": {},
                                     "matmul": {"k\"q\\": {"config": "A=2"},
                                                "ü": {"config": "A=3",
                                                      "x": [1, [], {}]}}}})";
  auto wholeDump = [&] {
    return nlohmann::ordered_json::parse(read(path)).dump(2) + "\n";
  };
  rt::AutotuneCache cache(path);
  ASSERT_TRUE(cache.load().ok());
  ASSERT_TRUE(cache.store("dev", "matmul", "k1", entry("A=4", 10)).ok());
  EXPECT_EQ(read(path), wholeDump());
  // Into memory and the file as they were, the earlier entries' texts
  // reused: a new kernel, a new device, an entry replaced.
  ASSERT_TRUE(cache.store("dev", "conv", "k2", entry("A=5", 11)).ok());
  ASSERT_TRUE(
      cache.store("other \"gpu\"", "conv", "k3", entry("A=6", 12)).ok());
  ASSERT_TRUE(cache.store("dev", "matmul", "k1", entry("A=7", 13)).ok());
  std::string text = read(path);
  EXPECT_EQ(text, wholeDump());
  auto json = nlohmann::ordered_json::parse(text);
  EXPECT_EQ(json["dev"]["matmul"]["k1"]["config"], "A=7");
  EXPECT_EQ(json["dev"]["matmul"]["ü"]["x"],
            nlohmann::ordered_json::parse("[1, [], {}]"));
  EXPECT_EQ(json["dev"]["softmax"], 3);
  EXPECT_EQ(json["old"][0]["matmul"]["k"]["config"], "A=1");
  EXPECT_EQ(cache.find("dev", "matmul", "k1")->config, "A=7");
  EXPECT_EQ(cache.find("other \"gpu\"", "conv", "k3")->config, "A=6");
}

// Names may hold any character: a device "a\0b" with kernel "c" and a
// device "a" with kernel "b\0c" are two entries, each keeping its own text.
TEST_F(AutotuneCacheTest, NamesThatHoldNulKeepTheirOwnEntries) {
  std::string dir = directory + "/sub/dir";
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "'").c_str()), 0);
  std::ofstream(path) << R"({"a\u0000b": {"c": {"k": {"config": "X=1"}}},
                             "a": {"b\u0000c": {"k": {"config": "Y=2"}}}})";
  rt::AutotuneCache cache(path);
  ASSERT_TRUE(cache.load().ok());
  ASSERT_TRUE(cache.store("dev", "matmul", "k1", entry("A=1", 10)).ok());
  ASSERT_TRUE(cache.store("dev", "matmul", "k2", entry("A=2", 10)).ok());
  auto json = nlohmann::json::parse(read(path));
  EXPECT_EQ(json[std::string("a\0b", 3)]["c"]["k"]["config"], "X=1");
  EXPECT_EQ(json["a"][std::string("b\0c", 3)]["k"]["config"], "Y=2");
}

// One process's stores skip re-reading the file it wrote last; another
// writer's store in between is read, kept, and joins memory.
TEST_F(AutotuneCacheTest, StoresBetweenAnotherWritersStoresKeepEveryEntry) {
  rt::AutotuneCache first(path), second(path);
  ASSERT_TRUE(first.load().ok());
  ASSERT_TRUE(second.load().ok());
  ASSERT_TRUE(first.store("dev", "matmul", "k1", entry("A=1", 10)).ok());
  ASSERT_TRUE(first.store("dev", "matmul", "k2", entry("A=2", 10)).ok());
  ASSERT_TRUE(second.store("dev", "matmul", "k3", entry("A=3", 10)).ok());
  ASSERT_TRUE(first.store("dev", "softmax", "k4", entry("A=4", 10)).ok());
  ASSERT_TRUE(first.store("dev", "softmax", "k5", entry("A=5", 10)).ok());
  ASSERT_TRUE(second.store("dev", "matmul", "k1", entry("A=6", 10)).ok());
  auto json = nlohmann::json::parse(read(path));
  EXPECT_EQ(json["dev"]["matmul"]["k1"]["config"], "A=6");
  EXPECT_EQ(json["dev"]["matmul"]["k2"]["config"], "A=2");
  EXPECT_EQ(json["dev"]["matmul"]["k3"]["config"], "A=3");
  EXPECT_EQ(json["dev"]["softmax"]["k4"]["config"], "A=4");
  EXPECT_EQ(json["dev"]["softmax"]["k5"]["config"], "A=5");
  // first read the file again at k4's store (k3 is in memory), not since.
  ASSERT_NE(first.find("dev", "matmul", "k3"), nullptr);
  EXPECT_EQ(first.find("dev", "matmul", "k1")->config, "A=1");
  ASSERT_NE(second.find("dev", "softmax", "k5"), nullptr);
  EXPECT_EQ(second.find("dev", "matmul", "k1")->config, "A=6");
}

// The concurrency the cache is built for: 8 processes tune different keys at
// once, each storing as soon as it is done. Every entry survives and the file
// is valid JSON throughout.
TEST_F(AutotuneCacheTest, ConcurrentProcessesKeepEachOthersEntries) {
  constexpr int kProcesses = 8;
  constexpr int kKeysPerProcess = 6;
  // The children wait on a pipe so that they start storing together.
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(gate[1]);
      char byte;
      (void)::read(gate[0], &byte, 1);
      rt::AutotuneCache cache(path);
      int failures = 0;
      for (int k = 0; k < kKeysPerProcess; ++k) {
        std::string key = "M=" + std::to_string(p) + ",K=" + std::to_string(k);
        std::string kernel = p % 2 ? "matmul" : "softmax";
        if (!cache
                 .store("NVIDIA H200", kernel, key,
                        entry("BLOCK_M=" + std::to_string(16 << (k % 4)),
                              100 + p * 10 + k))
                 .ok())
          ++failures;
        // Readers take no lock: a read at any moment must parse.
        rt::AutotuneCache reader(path);
        if (!reader.load().ok())
          ++failures;
      }
      ::_exit(failures);
    }
    children.push_back(pid);
  }
  ::close(gate[0]);
  ::close(gate[1]); // opens the gate
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "a child failed to store or read";
  }

  nlohmann::json json = nlohmann::json::parse(read(path), nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << "the merged file is not valid JSON";
  rt::AutotuneCache cache(path);
  ASSERT_TRUE(cache.load().ok());
  EXPECT_TRUE(cache.warnings().empty());
  int found = 0;
  for (int p = 0; p < kProcesses; ++p)
    for (int k = 0; k < kKeysPerProcess; ++k) {
      std::string key = "M=" + std::to_string(p) + ",K=" + std::to_string(k);
      const rt::AutotuneEntry *entry =
          cache.find("NVIDIA H200", p % 2 ? "matmul" : "softmax", key);
      EXPECT_NE(entry, nullptr) << key << " was lost";
      if (entry) {
        ++found;
        EXPECT_DOUBLE_EQ(entry->timings[0].medianUs, 100 + p * 10 + k);
      }
    }
  EXPECT_EQ(found, kProcesses * kKeysPerProcess);
  // No temporary files are left behind.
  std::string leftovers = "ls '" + directory + "/sub/dir' | grep -c tmp";
  FILE *pipe = ::popen(leftovers.c_str(), "r");
  char count[16] = {};
  ASSERT_NE(std::fgets(count, sizeof(count), pipe), nullptr);
  ::pclose(pipe);
  EXPECT_EQ(std::string(count), "0\n");
}

TEST_F(AutotuneCacheTest, UnreadableFileIsAnErrorOnLoadAndMovedAsideOnStore) {
  ASSERT_TRUE(rt::AutotuneCache(path)
                  .store("dev", "matmul", "k", entry("A=1", 1))
                  .ok());
  std::ofstream(path) << "{ not json";
  rt::AutotuneCache cache(path);
  tilec::Status status = cache.load();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find(path + " is not valid JSON"),
            std::string::npos)
      << status.message();

  ASSERT_TRUE(cache.store("dev", "matmul", "k2", entry("A=2", 2)).ok());
  EXPECT_EQ(read(path + ".corrupt"), "{ not json");
  ASSERT_EQ(cache.warnings().size(), 1u);
  EXPECT_NE(cache.warnings()[0].find("moved to"), std::string::npos);
  ASSERT_NE(cache.find("dev", "matmul", "k2"), nullptr);

  std::ofstream(path) << "[1, 2]";
  status = rt::AutotuneCache(path).load();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("must hold a JSON object"),
            std::string::npos);
}

TEST_F(AutotuneCacheTest, MalformedEntriesAreSkippedWithAWarning) {
  std::string dir = directory + "/sub/dir";
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "'").c_str()), 0);
  std::ofstream(path) << R"({"dev": {"matmul": {"good": {"config": "A=1"},
                                                "bad": {"timings": []}},
                                     "softmax": 3}})";
  rt::AutotuneCache cache(path);
  ASSERT_TRUE(cache.load().ok());
  EXPECT_NE(cache.find("dev", "matmul", "good"), nullptr);
  EXPECT_EQ(cache.find("dev", "matmul", "bad"), nullptr);
  ASSERT_EQ(cache.warnings().size(), 2u);
  EXPECT_NE(cache.warnings()[0].find("dev/matmul/bad"), std::string::npos);
}

// A description that does not parse keeps its entry's config but is dropped
// with a warning that says why, instead of silently leaving a process
// without a compiler with nothing to key calls by.
TEST_F(AutotuneCacheTest, UnreadableDescriptionIsDroppedWithAWarning) {
  std::string dir = directory + "/sub/dir";
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "'").c_str()), 0);
  std::ofstream(path) << R"({"dev": {"matmul": {"k": {"config": "A=1",
      "description": {"name": "matmul", "params": [{"name": 7}]}}}}})";
  rt::AutotuneCache cache(path);
  ASSERT_TRUE(cache.load().ok());
  ASSERT_NE(cache.find("dev", "matmul", "k"), nullptr);
  EXPECT_EQ(cache.findDescription("dev", "matmul"), nullptr);
  ASSERT_EQ(cache.warnings().size(), 1u);
  EXPECT_NE(cache.warnings()[0].find("entry dev/matmul/k: kernel description: "
                                     "field 'params[0].name' must be a string"),
            std::string::npos)
      << cache.warnings()[0];
}

TEST_F(AutotuneCacheTest, MisplacedValuesAreSkippedWhole) {
  std::string dir = directory + "/sub/dir";
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "'").c_str()), 0);
  // A device that is an array of objects, an entry that is an array: their
  // contents must not be read as kernels or entries.
  std::ofstream(path) << R"({"old": [{"matmul": {"k": {"config": "A=1"}}}],
                             "dev": {"matmul": {"k": [{"config": "A=2"}],
                                                "ok": {"config": "A=3"}}}})";
  rt::AutotuneCache cache(path);
  ASSERT_TRUE(cache.load().ok());
  EXPECT_EQ(cache.entries().count("old"), 0u);
  EXPECT_EQ(cache.find("dev", "matmul", "k"), nullptr);
  ASSERT_NE(cache.find("dev", "matmul", "ok"), nullptr);
  EXPECT_EQ(cache.find("dev", "matmul", "ok")->config, "A=3");
  ASSERT_EQ(cache.warnings().size(), 2u);
  EXPECT_NE(cache.warnings()[0].find("device 'old' is not an object"),
            std::string::npos)
      << cache.warnings()[0];
  EXPECT_NE(cache.warnings()[1].find("entry dev/matmul/k: an entry must be an "
                                     "object"),
            std::string::npos)
      << cache.warnings()[1];
}

TEST_F(AutotuneCacheTest, StoreIntoAnUnwritableDirectoryNamesIt) {
  rt::AutotuneCache cache("/proc/tilec-no/autotune.json");
  tilec::Status status = cache.store("dev", "matmul", "k", entry("A=1", 1));
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("/proc/tilec-no"), std::string::npos)
      << status.message();
}

} // namespace
