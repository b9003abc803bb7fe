//===- tilec-startup.cpp - First kernel of a fresh process from caches ----===//
//
// Measures what a deployed program pays for its first kernel when the
// autotune cache and the stage cache are warm: from the moment its CUDA
// context is ready until the first kernel has finished. In that window it
// loads the autotune cache, computes the call's key from the kernel
// description stored there, picks the tuned config, reads the cubin from the stage cache,
// loads it, launches and synchronizes; no compiler is linked (this binary has
// no LLVM). The driver start-up (dlopen, cuInit, primary context) is timed
// separately in the same run, and the inputs are built before the window (a
// program has its tensors before it calls a kernel).
//
//   tilec-startup --kernel matmul --sizes M=4096,N=4096,K=4096 --types
//   DTYPE=f16
//                 [--params ALLOW_TF32=1] [--device 0] [--json out.json]
//                 [--bundle FILE | --embedded]
//
// Uses $TILEC_AUTOTUNE_CACHE and $TILEC_CACHE_DIR like tilec tune. With
// --bundle the window opens and checks that bundle file instead and runs
// from it alone (docs/deploy.md); --embedded, in tilec-startup-embedded (built
// with -DTILEC_STARTUP_BUNDLE=FILE), wraps the bundle compiled into the
// binary.
//
//===----------------------------------------------------------------------===//

#include "tilec/Harness/KernelHarness.h"
#include "tilec/runtime/AutotuneCache.h"
#include "tilec/runtime/Bundle.h"
#include "tilec/runtime/Autotuner.h"
#include "tilec/runtime/Context.h"
#include "tilec/runtime/Driver.h"
#include "tilec/runtime/KernelProvider.h"
#include "tilec/runtime/Launch.h"
#include "tilec/runtime/RemoteCache.h"
#include "tilec/runtime/StageCache.h"

#include <nlohmann/json.hpp>

#ifdef TILEC_STARTUP_EMBEDDED
#include "startup_bundle.h"
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace rt = tilec::rt;
namespace harness = tilec::harness;

namespace {

using Clock = std::chrono::steady_clock;

double usSince(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start)
      .count();
}

int fail(const std::string &message) {
  std::fprintf(stderr, "tilec-startup: error: %s\n", message.c_str());
  return 1;
}

struct Options {
  std::string kernel;
  std::string sizes, types, params;
  int device = 0;
  std::string jsonPath;
  std::string bundlePath;
  bool embedded = false;
};

// The bundle the run uses, or null when it runs from the caches.
tilec::Result<std::shared_ptr<const rt::KernelBundle>>
openBundle(const Options &options) {
  if (options.embedded) {
#ifdef TILEC_STARTUP_EMBEDDED
    return rt::KernelBundle::fromEmbedded(*startup_bundle_bundle());
#else
    return tilec::Status::error("--embedded: this binary has no bundle "
                                "compiled in (tilec-startup-embedded has)");
#endif
  }
  if (!options.bundlePath.empty())
    return rt::KernelBundle::open(options.bundlePath);
  return std::shared_ptr<const rt::KernelBundle>();
}

bool parseOptions(int argc, char **argv, Options &options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    if (arg == "--embedded") {
      options.embedded = true;
      continue;
    }
    std::string device;
    if (arg == "--kernel"   ? !value(options.kernel)
        : arg == "--sizes"  ? !value(options.sizes)
        : arg == "--types"  ? !value(options.types)
        : arg == "--params" ? !value(options.params)
        : arg == "--json"   ? !value(options.jsonPath)
        : arg == "--device" ? !value(device)
        : arg == "--bundle" ? !value(options.bundlePath)
                            : true) {
      std::fprintf(stderr,
                   "usage: tilec-startup --kernel NAME [--sizes M=..,N=..] "
                   "[--types DTYPE=f16] [--params NAME=V] [--device N] "
                   "[--json FILE] [--bundle FILE | --embedded]\n");
      return false;
    }
    if (!device.empty())
      options.device = std::atoi(device.c_str());
  }
  return !options.kernel.empty();
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  if (!parseOptions(argc, argv, options))
    return 2;

  tilec::Call call;
  if (!options.sizes.empty()) {
    auto sizes = harness::parseSizes(options.sizes);
    if (!sizes)
      return fail("--sizes: " + sizes.message());
    call.sizes = *sizes;
  }
  if (!options.types.empty()) {
    auto types = tilec::parseNamedTypes(options.types);
    if (!types)
      return fail("--types: " + types.message());
    call.types = *types;
  }
  if (!options.params.empty()) {
    auto params = tilec::parseNamedIntegers(options.params);
    if (!params)
      return fail("--params: " + params.message());
    call.params = *params;
  }

  // Driver start-up, each step timed.
  Clock::time_point start = Clock::now();
  auto driver = rt::Driver::load("libcuda.so.1");
  if (!driver)
    return fail(driver.message());
  double dlopenUs = usSince(start);
  start = Clock::now();
  if (tilec::Status status = (*driver)->initialize(); !status.ok())
    return fail(status.message());
  double cuInitUs = usSince(start);
  start = Clock::now();
  auto context = rt::Context::create(**driver, options.device);
  if (!context)
    return fail(context.message());
  double contextUs = usSince(start);

  // The program's tensors, before its first call. Without a compiler the
  // kernel's description comes from the bundle, else the autotune cache
  // that tuned it.
  rt::AutotuneCache descriptions(rt::AutotuneCache::defaultPath(),
                                 rt::RemoteCache::fromEnvironment());
  auto inputsBundle = openBundle(options);
  if (!inputsBundle)
    return fail(inputsBundle.message());
  const tilec::KernelDescription *description = nullptr;
  if (*inputsBundle) {
    auto bundled = (*inputsBundle)->description(options.kernel);
    if (!bundled)
      return fail(bundled.message());
    if (!*bundled)
      return fail((*inputsBundle)->origin() + " has no kernel " +
                  options.kernel);
    description = *bundled;
  } else {
    if (tilec::Status status = descriptions.load(); !status.ok())
      return fail(status.message());
    description = descriptions.findDescription(context->properties().name,
                                               options.kernel);
  }
  if (!description)
    return fail("the autotune cache " + descriptions.path() +
                " has no entry of " + options.kernel + " for " +
                context->properties().name + ": run tilec tune first");
  harness::RunRequest request = harness::requestFor(*description);
  for (const auto &[name, value] : call.sizes)
    request.call.sizes[name] = value;
  request.call.types = call.types;
  request.call.params = call.params;
  call = request.call;
  start = Clock::now();
  auto problem = harness::buildProblem(*context, request,
                                       /*withReference=*/false);
  if (!problem)
    return fail(problem.message());
  if (tilec::Status status = context->synchronize(); !status.ok())
    return fail(status.message());
  double inputsUs = usSince(start);

  // The window: context ready -> first kernel done.
  std::vector<std::pair<std::string, double>> steps;
  Clock::time_point windowStart = Clock::now();
  Clock::time_point stepStart = windowStart;
  auto step = [&](const std::string &name) {
    steps.emplace_back(name, usSince(stepStart));
    stepStart = Clock::now();
  };
  rt::AutotuneCache cache(rt::AutotuneCache::defaultPath(),
                          rt::RemoteCache::fromEnvironment());
  auto bundle = openBundle(options);
  if (!bundle)
    return fail(bundle.message());
  // A deployed program from a bundle has no cache directory at all.
  auto stageCache = *bundle ? nullptr
                            : std::make_shared<rt::StageCache>(
                                  rt::StageCache::defaultDirectory(),
                                  rt::RemoteCache::fromEnvironment());
  rt::KernelProvider provider(*context, /*compiler=*/nullptr, stageCache);
  if (*bundle) {
    if (tilec::Status status =
            provider.setBundle(*bundle, rt::BundlePolicy::Strict);
        !status.ok())
      return fail(status.message());
    step(options.embedded ? "wrap the embedded bundle"
                          : "open + check the bundle file");
  }
  auto autotuner = rt::Autotuner::create(provider, cache);
  if (!autotuner)
    return fail(autotuner.message());
  step(*bundle ? "pins" : "load autotune cache + pins");
  auto selected = (*autotuner)->select(options.kernel, call);
  if (!selected)
    return fail(selected.message());
  for (const auto &[name, us] : selected->steps)
    steps.emplace_back("select: " + name, us);
  stepStart = Clock::now();
  auto pack = selected->kernel->makeArgPack();
  if (!pack)
    return fail(pack.message());
  if (tilec::Status status = (*problem)->bind(*pack); !status.ok())
    return fail(status.message());
  step("bind arguments");
  if (tilec::Status status = rt::launch(*selected->kernel, selected->grid, *pack);
      !status.ok())
    return fail(status.message());
  step("launch");
  if (tilec::Status status = context->synchronize(); !status.ok())
    return fail(status.message());
  step("synchronize (kernel runs)");
  double firstCallUs = usSince(windowStart);

  // The kernel alone, to tell the start-up cost from the kernel's own time.
  auto kernelMs = harness::medianEventMs(
      *context,
      [&] { return rt::launch(*selected->kernel, selected->grid, *pack); },
      20);
  if (!kernelMs)
    return fail(kernelMs.message());
  double kernelMedianUs = *kernelMs * 1000.0;
  bool fromStageCache = provider.cachedLoadCount() == 1;
  bool fromBundle = provider.bundleLoadCount() == 1;
  const char *cubinSource = fromBundle       ? "from the bundle"
                            : fromStageCache ? "from the stage cache"
                                             : "memoized";

  const rt::DeviceProperties &device = context->properties();
  std::printf("tilec-startup: %s [%s] on %s (%s)\n", options.kernel.c_str(),
              selected->key.c_str(), device.name.c_str(),
              device.smName().c_str());
  std::printf("driver start-up: dlopen %.2f ms, cuInit %.2f ms, primary "
              "context %.2f ms\n",
              dlopenUs / 1000, cuInitUs / 1000, contextUs / 1000);
  std::printf("inputs (before the window): %.1f ms\n", inputsUs / 1000);
  std::printf("first call, context ready -> kernel done: %.3f ms\n",
              firstCallUs / 1000);
  for (const auto &[name, us] : steps)
    std::printf("  %-34s %9.1f us\n", name.c_str(), us);
  std::printf("kernel alone (events, median of 20): %.1f us; start-up "
              "overhead %.1f us\n",
              kernelMedianUs, firstCallUs - kernelMedianUs);
  std::printf("config %s (%s), cubin %s\n", selected->config.str().c_str(),
              rt::getConfigSourceName(selected->source),
              cubinSource);

  if (!options.jsonPath.empty()) {
    nlohmann::ordered_json json;
    json["kernel"] = options.kernel;
    json["key"] = selected->key;
    json["device"] = device.name;
    json["config"] = selected->config.str();
    json["source"] = rt::getConfigSourceName(selected->source);
    json["cubin_from_stage_cache"] = fromStageCache;
    json["cubin_source"] = cubinSource;
    json["bundle"] = options.embedded ? "embedded" : options.bundlePath;
    json["dlopen_ms"] = dlopenUs / 1000;
    json["cuinit_ms"] = cuInitUs / 1000;
    json["context_ms"] = contextUs / 1000;
    json["inputs_ms"] = inputsUs / 1000;
    json["first_call_ms"] = firstCallUs / 1000;
    json["kernel_us"] = kernelMedianUs;
    json["overhead_us"] = firstCallUs - kernelMedianUs;
    nlohmann::ordered_json stepJson = nlohmann::ordered_json::object();
    for (const auto &[name, us] : steps)
      stepJson[name] = us;
    json["steps_us"] = stepJson;
    std::ofstream out(options.jsonPath);
    out << json.dump(2) << "\n";
    if (!out)
      return fail("cannot write " + options.jsonPath);
  }
  return 0;
}
