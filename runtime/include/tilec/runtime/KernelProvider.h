//===- KernelProvider.h - Loaded kernels, compiled on first use -*- C++ -*-===//
//
// Part of tilec_tuning, the tuning library (on top of tilec_runtime).
//
// The runtime's memo of loaded kernels: one rt::Kernel per (kernel, config)
// for the provider's context, loaded at most once. A miss is served, in this
// order, by the stage cache (when the caller knows the cubin's key, e.g. from
// the autotune cache: no compiler is involved) and by the KernelCompiler.
// Without a compiler, a miss that the stage cache cannot serve is an error
// that says so.
//
// Thread-safe: concurrent get()s of one (kernel, config) compile once; those
// of different configs compile in parallel (the compiler must allow it).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_KERNELPROVIDER_H
#define TILEC_RUNTIME_KERNELPROVIDER_H

#include "tilec/runtime/Context.h"
#include "tilec/runtime/KernelCompiler.h"
#include "tilec/runtime/Module.h"
#include "tilec/contract/Status.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace tilec::rt {

class StageCache;

class KernelProvider {
public:
  // `compiler` and `cache` may be null; both must outlive the provider.
  KernelProvider(const Context &context, KernelCompiler *compiler,
                 std::shared_ptr<StageCache> cache = nullptr);
  KernelProvider(const KernelProvider &) = delete;
  KernelProvider &operator=(const KernelProvider &) = delete;

  const Context &context() const { return *context_; }
  KernelCompiler *compiler() const { return compiler_; }
  StageCache *stageCache() const { return cache_.get(); }
  // The device's "sm_XX".
  const std::string &target() const { return target_; }

  // The loaded kernel for (kernel, config, specialization): memoized, else
  // compiled and loaded.
  Result<std::shared_ptr<const Kernel>>
  get(const std::string &kernel, const Config &config,
      const Specialization &specialization = {});

  // Where the time of a get went, for start-up measurements.
  struct LoadStats {
    // Reading (and checksumming) the cubin from the stage cache.
    double cacheReadUs = 0;
    // Compiling (when the cache could not serve it).
    double compileUs = 0;
    // cuModuleLoadData and Kernel::create.
    double moduleLoadUs = 0;
    bool memoized = false;
    bool fromStageCache = false;
    bool compiled = false;
  };

  // Like get(), but a miss first tries the stage cache's cubin entry
  // `cubinKey` with `metadataJson` (both from an autotune cache entry), and
  // compiles only if that entry is gone. `stats`, when given, says where the
  // time went.
  Result<std::shared_ptr<const Kernel>>
  getCached(const std::string &kernel, const Config &config,
            const Specialization &specialization, const std::string &cubinKey,
            const std::string &metadataJson, LoadStats *stats = nullptr);

  // Compiles without loading or memoizing (the autotuner compiles candidates
  // in parallel, then loads them one at a time). Errors name the kernel and
  // config.
  Result<CompiledArtifact> compile(const std::string &kernel,
                                   const Config &config,
                                   const Specialization &specialization) const;

  // Loads `artifact` on the provider's context (the calling thread must have
  // it current) without memoizing.
  Result<std::shared_ptr<const Kernel>>
  load(const CompiledArtifact &artifact) const;

  // Memoizes an already loaded kernel (the autotuner's winner).
  void insert(const std::string &kernel, const Config &config,
              const Specialization &specialization,
              std::shared_ptr<const Kernel> loaded);

  // How many kernels get() compiled and how many it loaded from the stage
  // cache by key, for tests and tools.
  int compileCount() const;
  int cachedLoadCount() const;

private:
  struct Slot {
    std::mutex mutex;
    std::shared_ptr<const Kernel> kernel;
  };
  std::shared_ptr<Slot> slot(const std::string &kernel,
                             const Config &config,
                             const Specialization &specialization);

  const Context *context_;
  KernelCompiler *compiler_;
  std::shared_ptr<StageCache> cache_;
  std::string target_;

  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Slot>> slots_;
  int compiles_ = 0;
  int cachedLoads_ = 0;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_KERNELPROVIDER_H
