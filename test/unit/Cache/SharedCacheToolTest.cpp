//===- SharedCacheToolTest.cpp - tilec compile on a shared tier -----------===//
//
// Real `tilec compile` processes with cache directories of their own and one
// redis-server (TILEC_REDIS): a kernel compiled once is a remote hit for
// every other process, processes that start at once compile each key once
// (the others wait for its holder's lease), a holder killed mid-compile
// delays the others by its lease's life only, a flipped byte in the remote
// cubin is rejected and the cubin rebuilt, a server killed mid-run (or while
// processes wait) loses nothing locally and costs one warning, and without a
// server (or with a malformed TILEC_REDIS) the tool runs local-only with one
// warning. These need ptxas (the cubin stage) and skip without it.
//
//===----------------------------------------------------------------------===//

#include "RedisFixture.h"

#include "tilec/runtime/StageCache.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

extern char **environ;

namespace rt = tilec::rt;
using tilec::test::RedisServer;
using tilec::test::RedisTest;

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

size_t countOf(const std::string &text, const std::string &part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos;
       at = text.find(part, at + 1))
    ++count;
  return count;
}

bool havePtxas() {
  if (const char *ptxas = std::getenv("TILEC_PTXAS"); ptxas && *ptxas)
    return ::access(ptxas, X_OK) == 0;
  return ::access(TILEC_DEFAULT_PTXAS, X_OK) == 0;
}

// A `tilec` process: its environment is this one's without the caches'
// variables, plus `settings`; stdout and stderr go to <log>.out and .err.
class Tool {
public:
  Tool(const std::vector<std::string> &arguments,
       const std::vector<std::string> &settings, const std::string &log)
      : Tool(TILEC_TOOL, arguments, settings, log) {}
  Tool(const std::string &program, const std::vector<std::string> &arguments,
       const std::vector<std::string> &settings, const std::string &log)
      : log_(log) {
    std::vector<std::string> environment;
    for (char **entry = environ; *entry; ++entry) {
      std::string setting = *entry;
      if (setting.rfind("TILEC_REDIS", 0) != 0 &&
          setting.rfind("TILEC_CACHE_DIR=", 0) != 0 &&
          setting.rfind("TILEC_AUTOTUNE_CACHE=", 0) != 0)
        environment.push_back(setting);
    }
    environment.insert(environment.end(), settings.begin(), settings.end());
    std::vector<std::string> argv = {program};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    pid_ = ::fork();
    if (pid_ != 0)
      return;
    int out =
        ::open((log + ".out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err =
        ::open((log + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, 1);
    ::dup2(err, 2);
    std::vector<char *> args, env;
    for (std::string &argument : argv)
      args.push_back(argument.data());
    args.push_back(nullptr);
    for (std::string &setting : environment)
      env.push_back(setting.data());
    env.push_back(nullptr);
    ::execve(args[0], args.data(), env.data());
    ::_exit(127);
  }
  ~Tool() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      wait();
    }
  }

  pid_t pid() const { return pid_; }
  // Waits until the process stops (--stop-with-lease); false
  // when it exited instead.
  bool waitUntilStopped() {
    int status = 0;
    if (::waitpid(pid_, &status, WUNTRACED) == pid_ && WIFSTOPPED(status))
      return true;
    exited_ = true;
    return false;
  }
  // The exit status, or -1 when it did not exit normally.
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    exited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string out() const { return readFile(log_ + ".out"); }
  std::string err() const { return readFile(log_ + ".err"); }

private:
  std::string log_;
  pid_t pid_ = -1;
  bool exited_ = false;
};

// The counters of the cache in `directory`, by stage.
std::map<std::string, rt::StageCounters>
countersIn(const std::string &directory) {
  std::map<std::string, rt::StageCounters> counters;
  auto stats = rt::StageCache(directory).stats();
  if (stats)
    for (const auto &stage : stats->stages)
      counters[stage.name] = stage.counters;
  return counters;
}

std::string cubinKeyOf(const std::string &jsonPath) {
  auto json = nlohmann::json::parse(readFile(jsonPath), nullptr, false);
  if (json.is_discarded())
    return "";
  return json["cache"]["cubin"]["key"].get<std::string>();
}

class SharedCacheToolTest : public RedisTest {
protected:
  void SetUp() override {
    if (!havePtxas())
      GTEST_SKIP() << "no ptxas at " << TILEC_DEFAULT_PTXAS
                   << " (or TILEC_PTXAS): the cubin stage cannot run";
    RedisTest::SetUp();
  }

  std::vector<std::string> settings() const {
    return {"TILEC_REDIS=" + server->address(),
            "TILEC_AUTOTUNE_CACHE=" + root + "/autotune_cache.json"};
  }
  // tilec compile of vector_add into <root>/<name>, its files in
  // <root>/<name>.dump, with `extra` settings, by the hooked tilec (every
  // process of a test, since the stage keys name the compiler's binary);
  // with `stopWithLease` it stops itself once it holds that stage's lease.
  std::unique_ptr<Tool> compile(const std::string &name,
                                const std::vector<std::string> &extra = {},
                                const std::string &stopWithLease = "") {
    std::vector<std::string> environment = settings();
    environment.insert(environment.end(), extra.begin(), extra.end());
    std::vector<std::string> arguments = {"compile",
                                          "--cache-dir",
                                          root + "/" + name,
                                          "--dump-dir",
                                          root + "/" + name + ".dump",
                                          "--timings",
                                          TILEC_KERNELS_DIR "/vector_add.ttir"};
    if (!stopWithLease.empty())
      arguments.insert(arguments.begin(), "--stop-with-lease=" + stopWithLease);
    return std::make_unique<Tool>(TILEC_HOOKED_TOOL, arguments, environment,
                                  root + "/" + name);
  }
  std::string cubinOf(const std::string &name) {
    return readFile(root + "/" + name + ".dump/vector_add.cubin");
  }
  // Waits (60 s at most) until `count` connections last sent a SET: while a
  // stopped process holds a lease and no entry is stored, those are the
  // holder and processes whose SET NX found the lease held, i.e. waiters.
  bool waitForSets(size_t count) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      std::vector<std::string> commands = server->clientCommands();
      if (size_t(std::count(commands.begin(), commands.end(), "set")) >= count)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }
};

TEST_F(SharedCacheToolTest, EveryKeyIsCompiledOnce) {
  auto first = compile("p0");
  ASSERT_EQ(first->wait(), 0) << first->err();
  EXPECT_EQ(first->err(), "");
  for (auto &[stage, counters] : countersIn(root + "/p0")) {
    EXPECT_EQ(counters.remote.misses, 1u) << stage;
    EXPECT_EQ(counters.remote.stores, 1u) << stage;
  }
  EXPECT_EQ(countOf(first->out(), "  miss\n"), 5u) << first->out();
  EXPECT_EQ(server->keyCount(), 5);

  // Three more at once, each with an empty directory: nothing is compiled,
  // every stage is a remote hit, and the cubins are the first one's.
  std::vector<std::unique_ptr<Tool>> others;
  for (int p = 1; p <= 3; ++p)
    others.push_back(compile("p" + std::to_string(p)));
  std::string cubin = readFile(root + "/p0.dump/vector_add.cubin");
  ASSERT_FALSE(cubin.empty());
  for (int p = 1; p <= 3; ++p) {
    std::string name = "p" + std::to_string(p);
    ASSERT_EQ(others[p - 1]->wait(), 0) << others[p - 1]->err();
    EXPECT_EQ(others[p - 1]->err(), "");
    for (auto &[stage, counters] : countersIn(root + "/" + name)) {
      EXPECT_EQ(counters.remote.hits, 1u) << name << " " << stage;
      EXPECT_EQ(counters.remote.misses, 0u) << name << " " << stage;
      EXPECT_EQ(counters.remote.stores, 0u) << name << " " << stage;
      EXPECT_EQ(counters.stores, 1u) << name << " " << stage;
    }
    EXPECT_EQ(readFile(root + "/" + name + ".dump/vector_add.cubin"), cubin);
    EXPECT_EQ(countOf(others[p - 1]->out(), "  remote hit\n"), 5u)
        << others[p - 1]->out();
  }
  EXPECT_EQ(server->keyCount(), 5);

  Tool stats({"cache", "stats", "--cache-dir", root + "/p1"}, settings(),
             root + "/stats");
  ASSERT_EQ(stats.wait(), 0) << stats.err();
  EXPECT_NE(stats.out().find("shared cache: redis://" + server->address() +
                             "/0, namespace tilec\n"
                             "remote      hits   misses  rejects   stores   "
                             "errors    waits\n"
                             "ttir            1        0        0        0  "
                             "      0        0\n"),
            std::string::npos)
      << stats.out();
  EXPECT_NE(stats.out().find("total           5        0        0        0  "
                             "      0        0\n"
                             "autotune        0        0        0        0  "
                             "      0        0\n"),
            std::string::npos)
      << stats.out();
}

// Four processes start at once with empty caches: each stage is built by the
// process that takes its lease, and the others wait and get its entry. The
// first is stopped while it holds the ttir lease until the three others
// wait for it, so that they all do.
TEST_F(SharedCacheToolTest, ConcurrentFirstBuildsCompileEachKeyOnce) {
  auto first = compile("p0", {}, "ttir");
  ASSERT_TRUE(first->waitUntilStopped()) << first->err();
  std::vector<std::unique_ptr<Tool>> tools;
  tools.push_back(std::move(first));
  for (int p = 1; p <= 3; ++p)
    tools.push_back(compile("p" + std::to_string(p)));
  ASSERT_TRUE(waitForSets(4));
  ::kill(tools[0]->pid(), SIGCONT);

  std::map<std::string, rt::RemoteCounters> total;
  size_t built = 0;
  for (int p = 0; p <= 3; ++p) {
    std::string name = "p" + std::to_string(p);
    ASSERT_EQ(tools[p]->wait(), 0) << tools[p]->err();
    EXPECT_EQ(tools[p]->err(), "");
    built += countOf(tools[p]->out(), "  miss\n");
    for (auto &[stage, counters] : countersIn(root + "/" + name)) {
      // Built and stored, or fetched: never both, never neither.
      EXPECT_EQ(counters.remote.stores + counters.remote.hits, 1u)
          << name << " " << stage;
      if (p > 0 && stage == "ttir")
        EXPECT_EQ(counters.remote.waits, 1u) << name;
      total[stage] += counters.remote;
    }
    EXPECT_EQ(cubinOf(name), cubinOf("p0")) << name;
  }
  EXPECT_EQ(built, 5u);
  for (auto &[stage, counters] : total) {
    EXPECT_EQ(counters.stores, 1u) << stage;
    EXPECT_EQ(counters.hits, 3u) << stage;
    EXPECT_EQ(counters.errors, 0u) << stage;
  }
  EXPECT_FALSE(cubinOf("p0").empty());
  // The five entries; no lease is left.
  EXPECT_EQ(server->keyCount(), 5);

  Tool stats({"cache", "stats", "--cache-dir", root + "/p1"}, settings(),
             root + "/stats");
  ASSERT_EQ(stats.wait(), 0) << stats.err();
  EXPECT_NE(stats.out().find("remote      hits   misses  rejects   stores   "
                             "errors    waits\n"
                             "ttir            1        1        0        0  "
                             "      0        1\n"),
            std::string::npos)
      << stats.out();
}

// The process holding the cubin lease is killed: the others find the lease
// held, wait until it expires (TILEC_REDIS_LEASE_MS), then one of them
// builds the cubin and the other two get it.
TEST_F(SharedCacheToolTest, KilledHolderDelaysOthersByTheLeaseOnly) {
  std::string lease = "TILEC_REDIS_LEASE_MS=3000";
  auto dead = compile("dead", {lease}, "cubin");
  ASSERT_TRUE(dead->waitUntilStopped()) << dead->err();
  ::kill(dead->pid(), SIGKILL);
  EXPECT_EQ(dead->wait(), -1);

  auto start = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<Tool>> tools;
  for (int p = 1; p <= 3; ++p)
    tools.push_back(compile("p" + std::to_string(p), {lease}));
  uint64_t cubinStores = 0;
  for (int p = 1; p <= 3; ++p) {
    std::string name = "p" + std::to_string(p);
    ASSERT_EQ(tools[p - 1]->wait(), 0) << tools[p - 1]->err();
    EXPECT_EQ(tools[p - 1]->err(), "");
    auto counters = countersIn(root + "/" + name);
    EXPECT_EQ(counters["ptx"].remote.hits, 1u) << name;
    EXPECT_EQ(counters["cubin"].remote.waits, 1u) << name;
    cubinStores += counters["cubin"].remote.stores;
    EXPECT_EQ(cubinOf(name), cubinOf("p1")) << name;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_EQ(cubinStores, 1u);
  EXPECT_FALSE(cubinOf("p1").empty());
  EXPECT_EQ(server->keyCount(), 5);
}

// The server dies while three processes wait for the stopped holder of the
// ttir lease: each of the four warns once and compiles locally.
TEST_F(SharedCacheToolTest, ServerKilledWhileWaitingCompilesLocally) {
  auto first = compile("p0", {}, "ttir");
  ASSERT_TRUE(first->waitUntilStopped()) << first->err();
  std::vector<std::unique_ptr<Tool>> tools;
  tools.push_back(std::move(first));
  for (int p = 1; p <= 3; ++p)
    tools.push_back(compile("p" + std::to_string(p)));
  ASSERT_TRUE(waitForSets(4));
  server->kill();
  ::kill(tools[0]->pid(), SIGCONT);
  for (int p = 0; p <= 3; ++p) {
    std::string name = "p" + std::to_string(p);
    ASSERT_EQ(tools[p]->wait(), 0) << tools[p]->err();
    EXPECT_EQ(countOf(tools[p]->err(), "warning:"), 1u) << tools[p]->err();
    EXPECT_NE(tools[p]->err().find("warning: the shared cache redis://" +
                                   server->address() + "/0 failed ("),
              std::string::npos)
        << tools[p]->err();
    EXPECT_EQ(countOf(tools[p]->out(), "  miss\n"), 5u) << tools[p]->out();
    uint64_t errors = 0;
    for (auto &[stage, counters] : countersIn(root + "/" + name)) {
      EXPECT_EQ(counters.stores, 1u) << name << " " << stage;
      errors += counters.remote.errors;
    }
    EXPECT_EQ(errors, 1u) << name;
    EXPECT_EQ(cubinOf(name), cubinOf("p0")) << name;
  }
  EXPECT_FALSE(cubinOf("p0").empty());
}

TEST_F(SharedCacheToolTest, FlippedRemoteCubinIsRebuilt) {
  auto first = compile("p0");
  ASSERT_EQ(first->wait(), 0) << first->err();
  std::string key = cubinKeyOf(root + "/p0.dump/vector_add.json");
  ASSERT_EQ(key.size(), 64u);
  auto remote = connect();
  std::string name = "tilec:1:cubin:" + key;
  std::string good = **remote->get(name);
  std::string bad = good;
  bad[bad.size() - 100] ^= 0x20;
  ASSERT_TRUE(remote->set(name, bad).ok());

  auto second = compile("p1");
  ASSERT_EQ(second->wait(), 0) << second->err();
  EXPECT_EQ(countOf(second->err(), "warning:"), 1u) << second->err();
  EXPECT_NE(second->err().find("tilec compile: warning: ignored the invalid "
                               "entry " +
                               name + " of the shared cache redis://" +
                               server->address() + "/0 (checksum mismatch: "),
            std::string::npos)
      << second->err();
  EXPECT_EQ(readFile(root + "/p1.dump/vector_add.cubin"),
            readFile(root + "/p0.dump/vector_add.cubin"));
  auto counters = countersIn(root + "/p1");
  EXPECT_EQ(counters["ptx"].remote.hits, 1u);
  EXPECT_EQ(counters["cubin"].remote.rejects, 1u);
  EXPECT_EQ(counters["cubin"].remote.hits, 0u);
  // The rebuilt cubin went back to the server, over the bad value.
  EXPECT_EQ(counters["cubin"].remote.stores, 1u);
  EXPECT_EQ(**remote->get(name), good);
}

// The server is killed while `tilec compile --all-configs` runs, once the
// first of its four configs is on the server (the tool is stopped during the
// kill, so that the other configs' requests all come after it): the compile
// succeeds, warns once, and its cache holds every entry.
TEST_F(SharedCacheToolTest, ServerKilledMidRunLosesNothingLocally) {
  std::vector<std::string> arguments = {"compile",    "--cache-dir",
                                        root + "/p0", "--kernel",
                                        "vector_add", "--all-configs"};
  Tool tool(arguments, settings(), root + "/p0");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (server->entryCount() < 5 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ::kill(tool.pid(), SIGSTOP);
  long stored = server->entryCount();
  server->kill();
  ::kill(tool.pid(), SIGCONT);
  ASSERT_EQ(tool.wait(), 0) << tool.err();
  // The first config's five entries were on the server, the other three
  // configs' fifteen were not all there yet.
  ASSERT_GE(stored, 5);
  ASSERT_LT(stored, 20);
  EXPECT_EQ(countOf(tool.err(), "warning:"), 1u) << tool.err();
  EXPECT_NE(tool.err().find("warning: the shared cache redis://" +
                            server->address() + "/0 failed ("),
            std::string::npos)
      << tool.err();

  rt::StageCache cache(root + "/p0");
  auto report = cache.verify();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->valid, 20u);
  EXPECT_TRUE(report->corrupt.empty());
  uint64_t errors = 0, remoteStores = 0, stores = 0;
  for (auto &[stage, counters] : countersIn(root + "/p0")) {
    errors += counters.remote.errors;
    remoteStores += counters.remote.stores;
    stores += counters.stores;
  }
  EXPECT_EQ(errors, 1u);
  EXPECT_EQ(stores, 20u);
  // A store in flight around the kill may or may not have made it.
  EXPECT_GE(remoteStores + 1, uint64_t(stored));
  EXPECT_LT(remoteStores, 20u);
  // A second run without the server compiles nothing.
  Tool again(arguments, {}, root + "/again");
  ASSERT_EQ(again.wait(), 0) << again.err();
  EXPECT_EQ(countersIn(root + "/p0")["cubin"].hits, 4u);
}

// No server at all, or an address that does not parse: one warning, and
// the compile goes on with the local cache.
TEST(SharedCacheToolNoServer, OneWarningThenLocalOnly) {
  if (!havePtxas())
    GTEST_SKIP() << "no ptxas: the cubin stage cannot run";
  char pattern[] = "/tmp/tilec-redis-test-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  std::string root = pattern;
  std::string address = "127.0.0.1:" + std::to_string(RedisServer::freePort());
  auto compile = [&](const std::string &redis, const std::string &log) {
    return std::make_unique<Tool>(
        std::vector<std::string>{"compile", "--cache-dir", root + "/cache",
                                 TILEC_KERNELS_DIR "/vector_add.ttir"},
        std::vector<std::string>{"TILEC_REDIS=" + redis}, root + "/" + log);
  };
  auto cold = compile(address, "cold");
  ASSERT_EQ(cold->wait(), 0) << cold->err();
  EXPECT_EQ(cold->err(),
            "warning: the shared cache redis://" + address +
                "/0 failed (cannot connect to " + address +
                ": Connection refused); using the local caches only for the "
                "rest of this process\n");
  // Everything is local now: the tier is not even asked.
  auto warm = compile(address, "warm");
  ASSERT_EQ(warm->wait(), 0) << warm->err();
  EXPECT_EQ(warm->err(), "");
  auto counters = countersIn(root + "/cache");
  EXPECT_EQ(counters["cubin"].stores, 1u);
  EXPECT_EQ(counters["cubin"].hits, 1u);
  EXPECT_EQ(counters["ttir"].remote.errors, 1u);
  EXPECT_EQ(counters["cubin"].remote.errors, 0u);

  auto malformed = compile("redis://cachebox:port", "malformed");
  ASSERT_EQ(malformed->wait(), 0) << malformed->err();
  EXPECT_EQ(malformed->err(),
            "warning: TILEC_REDIS: 'redis://cachebox:port' is not a Redis "
            "address: the port 'port' is not a number from 1 to 65535 "
            "(expected redis://[[user]:password@]host[:port][/db] or "
            "host[:port]); using the local caches only\n");
  ASSERT_EQ(std::system(("rm -rf '" + root + "'").c_str()), 0);
}

} // namespace
