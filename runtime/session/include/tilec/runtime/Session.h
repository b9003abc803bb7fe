//===- Session.h - One device's runtime from one options struct -*- C++ -*-===//
//-*-===//
//
// Part of tilec_session, the library on top of the runtime's others.
//
// A Session owns everything a program runs kernels on for one device, built
// in one place and in one order:
//
//   Context (the device's primary context)
//     -> StageCache (+ the shared tier)  -> KernelCompiler (the JIT, if any)
//     -> KernelProvider (+ a bundle)     -> AutotuneCache -> Autotuner
//     -> sparse::SparseEngine
//
// and tears it down in the reverse order. The C API's runtime, every tool
// and the GPU tests make theirs here; SessionOptions::fromEnvironment() is
// what a program gets from TILEC_* variables (docs/environment.md), and a
// program may change any field before Session::create. Sessions of several
// devices, or several of one device, live side by side in a process: each
// has its own context reference, provider and tuner, and they share the
// files of the caches (safe for concurrent processes, so for sessions too)
// and the process's Redis connection.
//
// The compiler is a factory so that the runtime needs no LLVM: a program
// that compiles passes jit::compilerFactory() (TilecJIT.h), a deployed one
// leaves it null and runs from its caches or a bundle.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_SESSION_H
#define TILEC_RUNTIME_SESSION_H

#include "tilec/contract/Status.h"
#include "tilec/runtime/Autotuner.h"
#include "tilec/runtime/Bundle.h"
#include "tilec/runtime/Environment.h"
#include "tilec/runtime/KernelCompiler.h"

#include <functional>
#include <memory>
#include <string>

namespace tilec::sparse {
class SparseEngine;
} // namespace tilec::sparse

namespace tilec::rt {

class AutotuneCache;
class Context;
class Driver;
class KernelProvider;
class RemoteCache;
class StageCache;

struct SessionOptions {
  /// The device: an ordinal among those CUDA_VISIBLE_DEVICES leaves.
  int device = 0;
  /// The driver; null: the process's (Driver::get). A program that loaded
  /// its own (tilec-startup, to time it) passes that one.
  const Driver *driver = nullptr;
  /// The stage cache's directory; empty: no stage cache (every kernel comes
  /// from the bundle or is compiled in memory).
  std::string stageCacheDirectory;
  /// The autotune cache's file.
  std::string autotuneCachePath;
  /// The shared tier of both caches; null: the local files only.
  std::shared_ptr<RemoteCache> remote;
  /// A bundle the provider serves from. With BundlePolicy::Strict it
  /// answers every call: the session opens no stage cache, makes no
  /// compiler and reads no autotune cache, as a deployed program needs.
  std::shared_ptr<const KernelBundle> bundle;
  BundlePolicy bundlePolicy = BundlePolicy::Strict;
  /// Configs the autotuner uses instead of tuning (docs/autotune.md).
  PinnedConfigs pins;
  /// Null: no compiler; kernels come from the caches or the bundle.
  CompilerFactory compiler;
  AutotuneOptions tuning;

  /// What the environment asks for: TILEC_CACHE_DIR, TILEC_AUTOTUNE_CACHE
  /// (their defaults under ~/.tilec), TILEC_REDIS*, TILEC_BUNDLE (opened and
  /// checked here) with TILEC_BUNDLE_FALLBACK, TILEC_PIN_FILE and
  /// TILEC_PIN_CONFIG. Device 0, no compiler, the default tuning. A
  /// malformed value is an error naming its variable.
  static Result<SessionOptions> fromEnvironment(const Environment &environment);
};

class Session {
public:
  /// Retains the device's primary context and builds the stack on it; the
  /// context is left current on the calling thread. Other threads, and this
  /// one after using another session, call context().makeCurrent() first.
  static Result<std::unique_ptr<Session>> create(SessionOptions options);
  /// Makes the context current and tears the stack down in it.
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  int device() const { return device_; }
  Context &context() { return *context_; }
  /// Null without a stage cache.
  const std::shared_ptr<StageCache> &stageCache() const { return stageCache_; }
  /// Null without a compiler.
  KernelCompiler *compiler() const { return compiler_.get(); }
  KernelProvider &provider() { return *provider_; }
  AutotuneCache &autotuneCache() { return *autotuneCache_; }
  Autotuner &autotuner() { return *autotuner_; }
  sparse::SparseEngine &sparse() { return *sparse_; }

private:
  Session();

  // Declared in the order they are built; destroyed in the reverse.
  int device_ = 0;
  std::unique_ptr<Context> context_;
  std::shared_ptr<StageCache> stageCache_;
  std::unique_ptr<KernelCompiler> compiler_;
  std::unique_ptr<KernelProvider> provider_;
  std::unique_ptr<AutotuneCache> autotuneCache_;
  std::unique_ptr<Autotuner> autotuner_;
  std::unique_ptr<sparse::SparseEngine> sparse_;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_SESSION_H
