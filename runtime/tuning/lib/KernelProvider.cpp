//===- KernelProvider.cpp - Loaded kernels, compiled on first use ---------===//

#include "tilec/runtime/KernelProvider.h"

#include "tilec/contract/CompileMetadata.h"
#include "tilec/runtime/StageCache.h"

#include <chrono>

namespace tilec::rt {
namespace {

double usSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace

KernelProvider::KernelProvider(const Context &context, KernelCompiler *compiler,
                               std::shared_ptr<StageCache> cache)
    : context_(&context), compiler_(compiler), cache_(std::move(cache)),
      target_(context.properties().compileTarget()) {
  if (compiler_)
    ahead_ = std::make_unique<CompileAhead>(
        [this](const std::string &kernel, const Config &config,
               const Specialization &specialization) {
          return compileNow(kernel, config, specialization);
        },
        /*threads=*/0, kCompileAheadCapacity);
}

std::shared_ptr<KernelProvider::Slot>
KernelProvider::slot(const std::string &kernel, const Config &config,
                     const Specialization &specialization) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::shared_ptr<Slot> &slot =
      slots_[compileKey(kernel, config, specialization)];
  if (!slot)
    slot = std::make_shared<Slot>();
  return slot;
}

Result<CompiledArtifact>
KernelProvider::compile(const std::string &kernel, const Config &config,
                        const Specialization &specialization) const {
  if (ahead_)
    if (std::optional<Result<CompiledArtifact>> taken =
            ahead_->take(kernel, config, specialization))
      return std::move(*taken);
  return compileNow(kernel, config, specialization);
}

bool KernelProvider::compileAhead(const std::string &kernel,
                                  const Config &config,
                                  const Specialization &specialization,
                                  CompileAhead::When when) {
  // A kernel an earlier tuning loaded needs no compile: the next tuning
  // that tries it takes it loaded (findLoaded).
  return ahead_ && !findLoaded(kernel, config, specialization) &&
         ahead_->enqueue(kernel, config, specialization, when);
}

void KernelProvider::limitCompileAhead(unsigned threads) {
  if (ahead_)
    ahead_->setThreads(threads);
}

Result<CompiledArtifact>
KernelProvider::compileNow(const std::string &kernel, const Config &config,
                           const Specialization &specialization) const {
  if (!compiler_)
    return Status::error(ErrorKind::Compile,
                         "no compiler: " + kernel + " " + config.str() +
                             " is neither loaded nor cached, and this program "
                             "links no KernelCompiler (link tilec's JIT, or "
                             "tune/pack the kernel ahead of time)");
  auto start = std::chrono::steady_clock::now();
  Result<CompiledArtifact> artifact =
      compiler_->compile(kernel, config, target_, specialization);
  if (artifact)
    artifact->compileMs = usSince(start) / 1000;
  // Whatever stage failed, the kernel could not be made here; a config past
  // the target's block resources keeps its kind, for the tuner to prune.
  if (!artifact)
    return Status::error(
        artifact.status().kind() == ErrorKind::Resources ? ErrorKind::Resources
                                                         : ErrorKind::Compile,
        "compiling " + kernel + " " + config.str() +
            (specialization.empty() ? "" : " [" + specialization.str() + "]") +
            ": " + artifact.message());
  return artifact;
}

Status KernelProvider::setBundle(std::shared_ptr<const KernelBundle> bundle,
                                 BundlePolicy policy) {
  if (bundle)
    TILEC_RETURN_IF_ERROR(bundle->checkTarget(target_));
  bundle_ = std::move(bundle);
  bundlePolicy_ = policy;
  return Status::success();
}

Result<std::shared_ptr<const Kernel>>
KernelProvider::load(const CompiledArtifact &artifact) const {
  return load(artifact.cubin, artifact.metadata);
}

Result<std::shared_ptr<const Kernel>>
KernelProvider::load(std::string_view cubin,
                     const std::string &metadataJson) const {
  Result<CompileMetadata> metadata = CompileMetadata::parse(metadataJson);
  if (!metadata)
    return metadata.status().withContext("compile json");
  return load(cubin, std::move(*metadata));
}

Result<std::shared_ptr<const Kernel>>
KernelProvider::load(std::string_view cubin, CompileMetadata metadata) const {
  if (metadata.target != target_)
    return Status::error("the kernel was compiled for " + metadata.target +
                         ", the device is " + target_);
  Result<std::shared_ptr<Module>> module =
      Module::loadCubin(*context_, cubin.data(), cubin.size());
  if (!module)
    return module.status().withContext("loading " + metadata.name);
  Result<Kernel> kernel =
      Kernel::create(*context_, std::move(*module), std::move(metadata));
  if (!kernel)
    return kernel.status();
  return std::shared_ptr<const Kernel>(
      std::make_shared<Kernel>(std::move(*kernel)));
}

Result<std::shared_ptr<const Kernel>>
KernelProvider::get(const std::string &kernel, const Config &config,
                    const Specialization &specialization) {
  return getCached(kernel, config, specialization, "", "");
}

Result<std::shared_ptr<const Kernel>>
KernelProvider::getCached(const std::string &kernel, const Config &config,
                          const Specialization &specialization,
                          const std::string &cubinKey,
                          const std::string &metadataJson, LoadStats *stats) {
  LoadStats local;
  LoadStats &times = stats ? *stats : local;
  times = LoadStats();
  std::shared_ptr<Slot> entry = slot(kernel, config, specialization);
  // Held while loading or compiling: a second caller of the same config
  // waits for the first instead of compiling it again.
  std::lock_guard<std::mutex> lock(entry->mutex);
  if (entry->kernel) {
    times.memoized = true;
    return entry->kernel;
  }

  if (bundle_) {
    auto start = std::chrono::steady_clock::now();
    if (const BundleCubin *cubin = bundle_->findCubin(
            kernel, config.str(), specialization.str(), target_)) {
      Result<std::string_view> data = bundle_->cubinData(*cubin);
      times.cacheReadUs = usSince(start);
      if (!data)
        return data.status();
      start = std::chrono::steady_clock::now();
      // An embedded table compiles the compile json in; else it is parsed.
      Result<std::shared_ptr<const Kernel>> loaded =
          cubin->metadata ? load(*data, *cubin->metadata)
                          : load(*data, cubin->metadataJson);
      times.moduleLoadUs = usSince(start);
      if (!loaded)
        return loaded.status().withContext(bundle_->origin() + ", " + kernel +
                                           " " + config.str());
      entry->kernel = *loaded;
      times.fromBundle = true;
      std::lock_guard<std::mutex> countLock(mutex_);
      ++bundleLoads_;
      return entry->kernel;
    }
    if (bundlePolicy_ == BundlePolicy::Strict)
      return Status::error(
          ErrorKind::Compile,
          kernel + " " + config.str() +
              (specialization.empty() ? ""
                                      : " [" + specialization.str() + "]") +
              " for " + target_ + " is not in " + bundle_->origin() +
              " (pack a workload that includes this call, or set "
              "TILEC_BUNDLE_FALLBACK=1 to compile what the bundle lacks)");
  }

  std::string cacheProblem;
  if (cache_ && !cubinKey.empty() && !metadataJson.empty()) {
    auto start = std::chrono::steady_clock::now();
    std::optional<CacheArtifact> cubin = cache_->lookup("cubin", cubinKey);
    times.cacheReadUs = usSince(start);
    if (cubin) {
      start = std::chrono::steady_clock::now();
      Result<std::shared_ptr<const Kernel>> loaded =
          load(cubin->payload, metadataJson);
      times.moduleLoadUs = usSince(start);
      if (loaded) {
        entry->kernel = *loaded;
        times.fromStageCache = true;
        std::lock_guard<std::mutex> countLock(mutex_);
        ++cachedLoads_;
        return entry->kernel;
      }
      // A cubin that does not load (another driver, a stale json) is
      // recompiled rather than reported: the compiler knows better.
      cacheProblem = "the cached cubin " + cubinKey +
                     " does not load: " + loaded.message();
    } else {
      cacheProblem = "the stage cache " + cache_->directory() +
                     " has no cubin " + cubinKey;
    }
  }

  auto start = std::chrono::steady_clock::now();
  Result<CompiledArtifact> artifact = compile(kernel, config, specialization);
  times.compileUs = usSince(start);
  if (!artifact)
    return cacheProblem.empty()
               ? artifact.status()
               : Status::error(artifact.status().kind(),
                               artifact.message() + " (" + cacheProblem + ")");
  start = std::chrono::steady_clock::now();
  Result<std::shared_ptr<const Kernel>> loaded = load(*artifact);
  times.moduleLoadUs = usSince(start);
  if (!loaded)
    return loaded.status().withContext(kernel + " " + config.str());
  entry->kernel = *loaded;
  times.compiled = true;
  std::lock_guard<std::mutex> countLock(mutex_);
  ++compiles_;
  return entry->kernel;
}

std::shared_ptr<const Kernel>
KernelProvider::findLoaded(const std::string &kernel, const Config &config,
                           const Specialization &specialization) {
  std::shared_ptr<Slot> entry;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = slots_.find(compileKey(kernel, config, specialization));
    if (found == slots_.end())
      return nullptr;
    entry = found->second;
  }
  std::lock_guard<std::mutex> lock(entry->mutex);
  return entry->kernel;
}

void KernelProvider::insert(const std::string &kernel, const Config &config,
                            const Specialization &specialization,
                            std::shared_ptr<const Kernel> loaded) {
  std::shared_ptr<Slot> entry = slot(kernel, config, specialization);
  std::lock_guard<std::mutex> lock(entry->mutex);
  entry->kernel = std::move(loaded);
}

int KernelProvider::compileCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return compiles_;
}

int KernelProvider::cachedLoadCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cachedLoads_;
}

int KernelProvider::bundleLoadCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bundleLoads_;
}

} // namespace tilec::rt
