//===- Environment.cpp - The one reader of tilec's variables --------------===//

#include "tilec/runtime/Environment.h"

#include <cstdlib>
#include <cstring>
#include <pwd.h>
#include <unistd.h>

namespace tilec::rt {
namespace {

std::string variable(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}

std::string homeDirectory() {
  if (std::string home = variable("HOME"); !home.empty())
    return home;
  struct passwd entry;
  struct passwd *found = nullptr;
  char buffer[4096];
  if (::getpwuid_r(::getuid(), &entry, buffer, sizeof(buffer), &found) == 0 &&
      found && found->pw_dir && *found->pw_dir)
    return found->pw_dir;
  return "";
}

} // namespace

Environment readEnvironment() {
  Environment environment;
  environment.cacheDirectory = variable("TILEC_CACHE_DIR");
  environment.autotuneCache = variable("TILEC_AUTOTUNE_CACHE");
  environment.home = homeDirectory();
  environment.bundle = variable("TILEC_BUNDLE");
  environment.bundleFallBack = variable("TILEC_BUNDLE_FALLBACK") == "1";
  environment.redis = variable("TILEC_REDIS");
  environment.redisNamespace = variable("TILEC_REDIS_NAMESPACE");
  environment.redisTimeoutMs = variable("TILEC_REDIS_TIMEOUT_MS");
  environment.redisLeaseMs = variable("TILEC_REDIS_LEASE_MS");
  environment.pinFile = variable("TILEC_PIN_FILE");
  environment.pinConfig = variable("TILEC_PIN_CONFIG");
  environment.recordWorkload = variable("TILEC_RECORD_WORKLOAD");
  environment.autotuneScreen = variable("TILEC_AUTOTUNE_SCREEN");
  environment.firstUse = variable("TILEC_FIRST_USE");
  environment.autotuneTargetError = variable("TILEC_AUTOTUNE_TARGET_ERROR");
  environment.ptxas = variable("TILEC_PTXAS");
  environment.nvJitLink = variable("TILEC_NVJITLINK");
  environment.libdevice = variable("TILEC_LIBDEVICE");
  environment.dumpDir = variable("TILEC_DUMP_DIR");
  environment.overrideDir = variable("TILEC_OVERRIDE_DIR");
  std::string interpret = variable("TILEC_INTERPRET");
  environment.interpret = !interpret.empty() && interpret != "0";
  environment.benchDir = variable("TILEC_BENCH_DIR");
  return environment;
}

std::string Environment::stageCacheDirectory() const {
  if (!cacheDirectory.empty())
    return cacheDirectory;
  if (home.empty())
    return "/tmp/tilec-cache-" + std::to_string(::getuid());
  return home + "/.tilec/cache";
}

std::string Environment::autotuneCachePath() const {
  if (!autotuneCache.empty())
    return autotuneCache;
  if (home.empty())
    return "/tmp/tilec-" + std::to_string(::getuid()) + "/autotune_cache.json";
  return home + "/.tilec/autotune_cache.json";
}

} // namespace tilec::rt
