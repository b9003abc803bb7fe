//===- Environment.h - The one reader of tilec's variables -----*- C++ -*-===//
//
// Part of tilec_runtime, the launch library.
//
// Every environment variable tilec's libraries honour is read by
// readEnvironment() and nowhere else (docs/environment.md lists them). What
// it returns is plain data: the session's options
// (SessionOptions::fromEnvironment), the caches' default places, the
// compiler's tool paths and debug directories are made from it, so that a
// program can set each of them without touching its environment, and a test
// can hand a library an Environment instead of calling setenv.
//
// Values are the variables' text; each owner parses and checks its own
// (RemoteCacheOptions the Redis ones, PinnedConfigs the pins), so that its
// errors name the variable. Unset and empty are the same.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_ENVIRONMENT_H
#define TILEC_RUNTIME_ENVIRONMENT_H

#include <string>

namespace tilec::rt {

struct Environment {
  // The caches (docs/cache.md, docs/autotune.md).
  std::string cacheDirectory; // TILEC_CACHE_DIR
  std::string autotuneCache;  // TILEC_AUTOTUNE_CACHE
  // HOME, else the password database's home of the user; empty without one.
  std::string home;

  // Deployment (docs/bundles.md).
  std::string bundle;          // TILEC_BUNDLE
  bool bundleFallBack = false; // TILEC_BUNDLE_FALLBACK=1

  // The shared tier (docs/shared-cache.md).
  std::string redis;          // TILEC_REDIS
  std::string redisNamespace; // TILEC_REDIS_NAMESPACE
  std::string redisTimeoutMs; // TILEC_REDIS_TIMEOUT_MS
  std::string redisLeaseMs;   // TILEC_REDIS_LEASE_MS

  // The autotuner (docs/autotune.md) and workload recording.
  std::string pinFile;        // TILEC_PIN_FILE
  std::string pinConfig;      // TILEC_PIN_CONFIG
  std::string recordWorkload; // TILEC_RECORD_WORKLOAD
  std::string autotuneScreen; // TILEC_AUTOTUNE_SCREEN
  std::string firstUse;       // TILEC_FIRST_USE
  std::string autotuneTargetError; // TILEC_AUTOTUNE_TARGET_ERROR

  // The compiler's tools and debugging (docs/environment.md).
  std::string ptxas;       // TILEC_PTXAS
  std::string nvJitLink;   // TILEC_NVJITLINK
  std::string libdevice;   // TILEC_LIBDEVICE
  std::string dumpDir;     // TILEC_DUMP_DIR
  std::string overrideDir; // TILEC_OVERRIDE_DIR
  // `tilec run` on the CPU interpreter (docs/interpreter.md).
  bool interpret = false; // TILEC_INTERPRET, set and not 0

  // Where `tilec bench` finds its scripts (docs/bench.md).
  std::string benchDir; // TILEC_BENCH_DIR

  // TILEC_CACHE_DIR, else <home>/.tilec/cache, else
  // /tmp/tilec-cache-<uid>.
  std::string stageCacheDirectory() const;
  // TILEC_AUTOTUNE_CACHE, else <home>/.tilec/autotune_cache.json, else
  // /tmp/tilec-<uid>/autotune_cache.json.
  std::string autotuneCachePath() const;
};

// The process's environment now (read on every call: cheap, and a program
// or test that changes a variable sees it on the next call).
Environment readEnvironment();

} // namespace tilec::rt

#endif // TILEC_RUNTIME_ENVIRONMENT_H
