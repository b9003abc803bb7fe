//===- KernelProvider.h - Loaded kernels, compiled on first use -*- C++ -*-===//
//
// Part of tilec_tuning, the tuning library (on top of tilec_runtime).
//
// The runtime's memo of loaded kernels: one rt::Kernel per (kernel, config)
// for the provider's context, loaded at most once. A miss is served, in this
// order, by a kernel bundle (Bundle.h) when one is set, by the stage cache
// (when the caller knows the cubin's key, e.g. from the autotune cache: no
// compiler is involved) and by the KernelCompiler. A bundle with
// BundlePolicy::Strict serves every miss or reports it; without a compiler,
// a miss that the stage cache cannot serve is an error that says so.
//
// Thread-safe: concurrent get()s of one (kernel, config) compile once; those
// of different configs compile in parallel (the compiler must allow it).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_KERNELPROVIDER_H
#define TILEC_RUNTIME_KERNELPROVIDER_H

#include "tilec/contract/Status.h"
#include "tilec/runtime/Bundle.h"
#include "tilec/runtime/CompileAhead.h"
#include "tilec/runtime/Context.h"
#include "tilec/runtime/KernelCompiler.h"
#include "tilec/runtime/Module.h"

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

  // Serves misses from `bundle` first. A bundle without a cubin for this
  // device's target is refused (nothing is set). With BundlePolicy::Strict a
  // kernel the bundle lacks is an error naming it; with FallBack it goes on
  // to the stage cache and the compiler. Set it before the first get().
  Status setBundle(std::shared_ptr<const KernelBundle> bundle,
                   BundlePolicy policy);
  const KernelBundle *bundle() const { return bundle_.get(); }
  const std::shared_ptr<const KernelBundle> &sharedBundle() const {
    return bundle_;
  }
  BundlePolicy bundlePolicy() const { return bundlePolicy_; }

  // The loaded kernel for (kernel, config, specialization): memoized, else
  // compiled and loaded.
  Result<std::shared_ptr<const Kernel>>
  get(const std::string &kernel, const Config &config,
      const Specialization &specialization = {});

  // Where the time of a get went, for start-up measurements.
  struct LoadStats {
    // Reading (and checksumming) the cubin from the stage cache or finding
    // (and checksumming) it in the bundle.
    double cacheReadUs = 0;
    // Compiling (when the cache could not serve it).
    double compileUs = 0;
    // cuModuleLoadData and Kernel::create.
    double moduleLoadUs = 0;
    bool memoized = false;
    bool fromBundle = false;
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
  // config. A compile queued by compileAhead() that has started is waited
  // for and handed over instead.
  Result<CompiledArtifact> compile(const std::string &kernel,
                                   const Config &config,
                                   const Specialization &specialization) const;

  // How many compiles the provider's queue holds at once (queued, running,
  // and done but not taken): a network's layers queued together
  // (sparse::compileLayersAhead) are a few hundred candidates; a done one is
  // a cubin of tens of KB, forgotten first when the queue needs the room.
  static constexpr size_t kCompileAheadCapacity = 1024;

  // Queues a compile of (kernel, config, specialization) on the provider's
  // background workers (CompileAhead.h), for a compile() that comes later;
  // false when there is no compiler, it is queued already, or the kernel is
  // loaded (findLoaded). `when`: Next for a compile a launch is about to
  // need, before those queued for later tunings.
  bool compileAhead(const std::string &kernel, const Config &config,
                    const Specialization &specialization,
                    CompileAhead::When when = CompileAhead::When::Later);
  // At most `threads` compiles queued ahead run at once (0: one per
  // hardware thread).
  void limitCompileAhead(unsigned threads);

  // Loads `artifact` on the provider's context (the calling thread must have
  // it current) without memoizing.
  Result<std::shared_ptr<const Kernel>>
  load(const CompiledArtifact &artifact) const;
  Result<std::shared_ptr<const Kernel>>
  load(std::string_view cubin, const std::string &metadataJson) const;
  Result<std::shared_ptr<const Kernel>> load(std::string_view cubin,
                                             CompileMetadata metadata) const;

  // The kernel get() or insert() memoized for (kernel, config,
  // specialization), else null; compiles and loads nothing. A tuning takes
  // its candidates from here when an earlier tuning of another key loaded
  // the same cubin.
  std::shared_ptr<const Kernel>
  findLoaded(const std::string &kernel, const Config &config,
             const Specialization &specialization);

  // Memoizes an already loaded kernel (the autotuner's winner).
  void insert(const std::string &kernel, const Config &config,
              const Specialization &specialization,
              std::shared_ptr<const Kernel> loaded);

  // How many kernels get() compiled, loaded from the stage cache by key and
  // loaded from the bundle, for tests and tools.
  int compileCount() const;
  int cachedLoadCount() const;
  int bundleLoadCount() const;

private:
  struct Slot {
    std::mutex mutex;
    std::shared_ptr<const Kernel> kernel;
  };
  std::shared_ptr<Slot> slot(const std::string &kernel,
                             const Config &config,
                             const Specialization &specialization);
  Result<CompiledArtifact>
  compileNow(const std::string &kernel, const Config &config,
             const Specialization &specialization) const;

  const Context *context_;
  KernelCompiler *compiler_;
  std::shared_ptr<StageCache> cache_;
  std::shared_ptr<const KernelBundle> bundle_;
  BundlePolicy bundlePolicy_ = BundlePolicy::Strict;
  std::string target_;

  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Slot>> slots_;
  int compiles_ = 0;
  int cachedLoads_ = 0;
  int bundleLoads_ = 0;
  // Declared last: destroyed first, its running compiles finish while the
  // compiler is still there.
  std::unique_ptr<CompileAhead> ahead_;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_KERNELPROVIDER_H
