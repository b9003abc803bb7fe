//===- EnvironmentTest.cpp - The one reader of tilec's variables ----------===//

#include "tilec/runtime/Environment.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace {

using tilec::rt::Environment;
using tilec::rt::readEnvironment;

// Sets variables for one test and puts the old values back after it.
class ScopedVariables {
public:
  using Values = std::map<std::string, std::string>;
  explicit ScopedVariables(const Values &values) {
    for (const auto &[name, value] : values) {
      const char *old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedVariables() {
    for (const auto &[name, value] : saved_)
      if (value)
        ::setenv(name.c_str(), value->c_str(), 1);
      else
        ::unsetenv(name.c_str());
  }

private:
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(EnvironmentTest, EveryVariableReachesItsField) {
  ScopedVariables set(
      ScopedVariables::Values{{"TILEC_CACHE_DIR", "/c"},
                              {"TILEC_AUTOTUNE_CACHE", "/a.json"},
                              {"HOME", "/home/someone"},
                              {"TILEC_BUNDLE", "/b.bundle"},
                              {"TILEC_BUNDLE_FALLBACK", "1"},
                              {"TILEC_REDIS", "cachebox:6390"},
                              {"TILEC_REDIS_NAMESPACE", "team"},
                              {"TILEC_REDIS_TIMEOUT_MS", "250"},
                              {"TILEC_REDIS_LEASE_MS", "2500"},
                              {"TILEC_PIN_FILE", "/pins.json"},
                              {"TILEC_PIN_CONFIG", "matmul=BLOCK_M=64"},
                              {"TILEC_RECORD_WORKLOAD", "/w.json"},
                              {"TILEC_AUTOTUNE_SCREEN", "2"},
                              {"TILEC_AUTOTUNE_TARGET_ERROR", "0.5"},
                              {"TILEC_PTXAS", "/bin/ptxas"},
                              {"TILEC_NVJITLINK", "/lib/nvjitlink.so"},
                              {"TILEC_LIBDEVICE", "/lib/libdevice.bc"},
                              {"TILEC_DUMP_DIR", "/dump"},
                              {"TILEC_OVERRIDE_DIR", "/override"},
                              {"TILEC_INTERPRET", "1"},
                              {"TILEC_BENCH_DIR", "/bench"}});
  Environment environment = readEnvironment();
  EXPECT_EQ(environment.cacheDirectory, "/c");
  EXPECT_EQ(environment.autotuneCache, "/a.json");
  EXPECT_EQ(environment.home, "/home/someone");
  EXPECT_EQ(environment.bundle, "/b.bundle");
  EXPECT_TRUE(environment.bundleFallBack);
  EXPECT_EQ(environment.redis, "cachebox:6390");
  EXPECT_EQ(environment.redisNamespace, "team");
  EXPECT_EQ(environment.redisTimeoutMs, "250");
  EXPECT_EQ(environment.redisLeaseMs, "2500");
  EXPECT_EQ(environment.pinFile, "/pins.json");
  EXPECT_EQ(environment.pinConfig, "matmul=BLOCK_M=64");
  EXPECT_EQ(environment.recordWorkload, "/w.json");
  EXPECT_EQ(environment.autotuneScreen, "2");
  EXPECT_EQ(environment.autotuneTargetError, "0.5");
  EXPECT_EQ(environment.ptxas, "/bin/ptxas");
  EXPECT_EQ(environment.nvJitLink, "/lib/nvjitlink.so");
  EXPECT_EQ(environment.libdevice, "/lib/libdevice.bc");
  EXPECT_EQ(environment.dumpDir, "/dump");
  EXPECT_EQ(environment.overrideDir, "/override");
  EXPECT_TRUE(environment.interpret);
  EXPECT_EQ(environment.benchDir, "/bench");
  EXPECT_EQ(environment.stageCacheDirectory(), "/c");
  EXPECT_EQ(environment.autotuneCachePath(), "/a.json");
}

TEST(EnvironmentTest, FallBackIsOnlyOne) {
  for (const char *value : {"0", "yes", "true", ""}) {
    ScopedVariables set(
        ScopedVariables::Values{{"TILEC_BUNDLE_FALLBACK", value}});
    EXPECT_FALSE(readEnvironment().bundleFallBack) << value;
  }
}

TEST(EnvironmentTest, InterpretIsAnyValueButZero) {
  for (const char *value : {"1", "yes"}) {
    ScopedVariables set(ScopedVariables::Values{{"TILEC_INTERPRET", value}});
    EXPECT_TRUE(readEnvironment().interpret) << value;
  }
  for (const char *value : {"0", ""}) {
    ScopedVariables set(ScopedVariables::Values{{"TILEC_INTERPRET", value}});
    EXPECT_FALSE(readEnvironment().interpret) << value;
  }
}

// Unset and empty are the default alike: under HOME, else under /tmp.
TEST(EnvironmentTest, CachesDefaultUnderHome) {
  ScopedVariables set(ScopedVariables::Values{{"TILEC_CACHE_DIR", ""},
                                              {"TILEC_AUTOTUNE_CACHE", ""},
                                              {"HOME", "/home/someone"}});
  Environment environment = readEnvironment();
  EXPECT_EQ(environment.stageCacheDirectory(), "/home/someone/.tilec/cache");
  EXPECT_EQ(environment.autotuneCachePath(),
            "/home/someone/.tilec/autotune_cache.json");

  Environment homeless;
  EXPECT_EQ(homeless.stageCacheDirectory().rfind("/tmp/tilec-cache-", 0), 0u);
  EXPECT_EQ(homeless.autotuneCachePath().rfind("/tmp/tilec-", 0), 0u);
}

} // namespace
