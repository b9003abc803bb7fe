//===- tilec-startup.cpp - First kernel of a fresh process from caches ----===//
//
// Measures what a deployed program pays for its first kernel when the
// autotune cache and the stage cache are warm: from the moment its CUDA
// context is ready until the first kernel has finished. In that window it
// loads the autotune cache, computes the call's key from the kernel
// description stored there, picks the tuned config, reads the cubin from the
// stage cache, loads it, launches and synchronizes; no compiler is linked (this
// binary has no LLVM). The driver start-up (dlopen, cuInit, primary context) is
// timed separately in the same run, and the inputs are built before the window
// (a program has its tensors before it calls a kernel).
//
//   tilec-startup --kernel matmul --sizes M=4096,N=4096,K=4096 --types
//   DTYPE=f16
//                 [--params ALLOW_TF32=1] [--device 0] [--json out.json]
//                 [--bundle FILE | --embedded] [--bare] [--prefault-code]
//                 [--second-sizes M=..,N=.. [--second-types DTYPE=bf16]]
//
// Uses $TILEC_AUTOTUNE_CACHE and $TILEC_CACHE_DIR like tilec tune. With
// --bundle the window opens and checks that bundle file instead and runs
// from it alone (docs/deploy.md); --embedded, in tilec-startup-embedded (built
// with -DTILEC_STARTUP_BUNDLE=FILE), wraps the bundle compiled into the
// binary. --bare (with a bundle) is the floor a program pays with the raw
// driver: the window holds only cuModuleLoadData, cuModuleGetFunction, the
// shared-memory attribute, cuLaunchKernel and the synchronization of the same
// cubin, everything tilec does (key, lookup, grid, argument pack) done before
// it; tilec's own cost is the difference between the two runs.
//
// The window's page faults are reported with its time: code that runs for the
// first time in a process faults its pages in. --prefault-code reads every
// page of the binary's executable segments before the window, to tell that
// cost from the rest (an experiment, docs/deploy.md). --second-sizes times,
// after the first window, a second window: the first call of the same
// kernel with other sizes (another selection, another cubin), which tells
// what the process's first tilec call pays once from what each new kernel
// pays.
//
//===----------------------------------------------------------------------===//

#include "tilec/Harness/KernelHarness.h"
#include "tilec/contract/CompileMetadata.h"
#include "tilec/runtime/AutotuneCache.h"
#include "tilec/runtime/Autotuner.h"
#include "tilec/runtime/Bundle.h"
#include "tilec/runtime/Context.h"
#include "tilec/runtime/Driver.h"
#include "tilec/runtime/KernelProvider.h"
#include "tilec/runtime/Launch.h"
#include "tilec/runtime/RemoteCache.h"
#include "tilec/runtime/Session.h"

#include <nlohmann/json.hpp>

#ifdef TILEC_STARTUP_EMBEDDED
#include "startup_bundle.h"
#endif

#include <link.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
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
  bool bare = false;
  bool prefaultCode = false;
  std::string secondSizes, secondTypes;
};

/// The process's page faults so far (minor: the page was in memory, e.g. the
/// page cache; major: it was read from disk).
struct PageFaults {
  long minor = 0, major = 0;
  static PageFaults now() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return {usage.ru_minflt, usage.ru_majflt};
  }
  PageFaults operator-(const PageFaults &other) const {
    return {minor - other.minor, major - other.major};
  }
};

/// Reads a byte of every page of the main binary's executable segments, so
/// that running its code later faults nothing in.
void prefaultExecutableSegments() {
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *) -> int {
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &segment = info->dlpi_phdr[i];
          if (segment.p_type != PT_LOAD || !(segment.p_flags & PF_X))
            continue;
          // From the page the segment starts in (it may start mid-page).
          uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
          uintptr_t start = info->dlpi_addr + segment.p_vaddr;
          uintptr_t end = start + segment.p_memsz;
          for (uintptr_t at = start & ~(page - 1); at < end; at += page)
            (void)*reinterpret_cast<const volatile char *>(at);
        }
        return 1; // the first object is the executable itself
      },
      nullptr);
}

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
    if (arg == "--prefault-code") {
      options.prefaultCode = true;
      continue;
    }
    if (arg == "--embedded" || arg == "--bare") {
      (arg == "--bare" ? options.bare : options.embedded) = true;
      continue;
    }
    std::string device;
    if (arg == "--kernel"         ? !value(options.kernel)
        : arg == "--sizes"        ? !value(options.sizes)
        : arg == "--types"        ? !value(options.types)
        : arg == "--params"       ? !value(options.params)
        : arg == "--json"         ? !value(options.jsonPath)
        : arg == "--device"       ? !value(device)
        : arg == "--bundle"       ? !value(options.bundlePath)
        : arg == "--second-sizes" ? !value(options.secondSizes)
        : arg == "--second-types" ? !value(options.secondTypes)
                                  : true) {
      std::fprintf(stderr,
                   "usage: tilec-startup --kernel NAME [--sizes M=..,N=..] "
                   "[--types DTYPE=f16] [--params NAME=V] [--device N] "
                   "[--json FILE] [--bundle FILE | --embedded] [--bare] "
                   "[--prefault-code] [--second-sizes S [--second-types T]]\n");
      return false;
    }
    if (!device.empty())
      options.device = std::atoi(device.c_str());
  }
  if (!options.secondTypes.empty() && options.secondSizes.empty()) {
    std::fprintf(stderr, "tilec-startup: --second-types needs --second-sizes "
                         "(the second call)\n");
    return false;
  }
  if (options.bare && !options.embedded && options.bundlePath.empty()) {
    std::fprintf(stderr, "tilec-startup: --bare needs --bundle or --embedded "
                         "(the cubin it loads)\n");
    return false;
  }
  return !options.kernel.empty();
}

/// Sets the parts of `call` that the options `<prefix>sizes`, `<prefix>types`
/// and `<prefix>params` give (each a list NAME=VALUE,...; empty: unchanged).
tilec::Status setFromOptions(tilec::Call &call, const std::string &prefix,
                             const std::string &sizes, const std::string &types,
                             const std::string &params) {
  if (!sizes.empty()) {
    auto parsed = harness::parseSizes(sizes);
    if (!parsed)
      return tilec::Status::error(prefix + "sizes: " + parsed.message());
    call.sizes = *parsed;
  }
  if (!types.empty()) {
    auto parsed = tilec::parseNamedTypes(types);
    if (!parsed)
      return tilec::Status::error(prefix + "types: " + parsed.message());
    call.types = *parsed;
  }
  if (!params.empty()) {
    auto parsed = tilec::parseNamedIntegers(params);
    if (!parsed)
      return tilec::Status::error(prefix + "params: " + parsed.message());
    call.params = *parsed;
  }
  return tilec::Status::success();
}

/// The driver's own start-up and the inputs, timed before the window.
struct DriverStartup {
  double dlopenUs = 0, cuInitUs = 0, contextUs = 0, inputsUs = 0;
};

/// One run's window and what it ran.
struct Report {
  std::string key, config, source, cubinSource;
  bool cubinFromStageCache = false;
  DriverStartup startup;
  std::vector<std::pair<std::string, double>> steps;
  double firstCallUs = 0, kernelUs = 0;
  PageFaults windowFaults;
  // The second window (--second-sizes), or negative.
  double secondCallUs = -1, secondKernelUs = 0;
  std::string secondKey;
};

tilec::Status writeReport(const Options &options,
                          const rt::DeviceProperties &device,
                          const Report &report) {
  const DriverStartup &startup = report.startup;
  std::printf("tilec-startup%s: %s [%s] on %s (%s)\n",
              options.bare ? " --bare" : "", options.kernel.c_str(),
              report.key.c_str(), device.name.c_str(), device.smName().c_str());
  std::printf("driver start-up: dlopen %.2f ms, cuInit %.2f ms, primary "
              "context %.2f ms\n",
              startup.dlopenUs / 1000, startup.cuInitUs / 1000,
              startup.contextUs / 1000);
  std::printf("inputs (before the window): %.1f ms\n", startup.inputsUs / 1000);
  std::printf("first call, context ready -> kernel done: %.3f ms\n",
              report.firstCallUs / 1000);
  for (const auto &[name, us] : report.steps)
    std::printf("  %-34s %9.1f us\n", name.c_str(), us);
  std::printf("page faults in the window: %ld minor, %ld major\n",
              report.windowFaults.minor, report.windowFaults.major);
  std::printf("kernel alone (events, median of 20): %.1f us; start-up "
              "overhead %.1f us\n",
              report.kernelUs, report.firstCallUs - report.kernelUs);
  std::printf("config %s (%s), cubin %s\n", report.config.c_str(),
              report.source.c_str(), report.cubinSource.c_str());
  if (report.secondCallUs >= 0)
    std::printf("second kernel's first call [%s]: %.3f ms, kernel %.1f us, "
                "start-up overhead %.1f us\n",
                report.secondKey.c_str(), report.secondCallUs / 1000,
                report.secondKernelUs,
                report.secondCallUs - report.secondKernelUs);
  if (options.jsonPath.empty())
    return tilec::Status::success();
  nlohmann::ordered_json json;
  json["kernel"] = options.kernel;
  json["key"] = report.key;
  json["device"] = device.name;
  json["config"] = report.config;
  json["source"] = report.source;
  json["mode"] = options.bare ? "bare driver" : "tilec";
  json["cubin_from_stage_cache"] = report.cubinFromStageCache;
  json["cubin_source"] = report.cubinSource;
  json["bundle"] = options.embedded ? "embedded" : options.bundlePath;
  json["dlopen_ms"] = startup.dlopenUs / 1000;
  json["cuinit_ms"] = startup.cuInitUs / 1000;
  json["context_ms"] = startup.contextUs / 1000;
  json["inputs_ms"] = startup.inputsUs / 1000;
  json["first_call_ms"] = report.firstCallUs / 1000;
  json["window_minor_faults"] = report.windowFaults.minor;
  json["window_major_faults"] = report.windowFaults.major;
  json["prefault_code"] = options.prefaultCode;
  json["kernel_us"] = report.kernelUs;
  json["overhead_us"] = report.firstCallUs - report.kernelUs;
  if (report.secondCallUs >= 0) {
    json["second_key"] = report.secondKey;
    json["second_call_ms"] = report.secondCallUs / 1000;
    json["second_kernel_us"] = report.secondKernelUs;
    json["second_overhead_us"] = report.secondCallUs - report.secondKernelUs;
  }
  nlohmann::ordered_json stepJson = nlohmann::ordered_json::object();
  for (const auto &[name, us] : report.steps)
    stepJson[name] = us;
  json["steps_us"] = stepJson;
  std::ofstream out(options.jsonPath);
  out << json.dump(2) << "\n";
  if (!out)
    return tilec::Status::error("cannot write " + options.jsonPath);
  return tilec::Status::success();
}

/// What the raw driver needs to run the bundle's winner for a call, all of
/// it found before the window.
struct BareLaunch {
  std::string_view cubin;
  tilec::CompileMetadata metadata;
  tilec::GridSize grid;
  std::string key, config;
};

tilec::Result<BareLaunch> prepareBare(const rt::KernelBundle &bundle,
                                      const tilec::KernelDescription &kernel,
                                      const rt::DeviceProperties &device,
                                      const tilec::Call &call) {
  auto key = kernel.evaluateAutotuneKey(call);
  if (!key)
    return key.status();
  *key = rt::specializedAutotuneKey(*key, kernel.specializationOf(call));
  const rt::BundleSelection *selection = bundle.findSelection(
      device.name, device.compileTarget(), kernel.getName(), *key);
  if (!selection)
    return tilec::Status::error(bundle.origin() + " has no selection of " +
                                kernel.getName() + " for " + *key);
  const rt::BundleCubin &cubin = bundle.cubin(selection->cubin);
  auto data = bundle.cubinData(cubin);
  if (!data)
    return data.status();
  auto metadata = tilec::CompileMetadata::parse(cubin.metadataJson);
  if (!metadata)
    return metadata.status();
  auto config = tilec::Config::parse(cubin.config);
  if (!config)
    return config.status();
  auto grid = kernel.evaluateGrid(*config, call);
  if (!grid)
    return grid.status();
  return BareLaunch{*data, std::move(*metadata), *grid, *key, cubin.config};
}

/// The window of --bare: the driver calls a program makes to run a cubin it
/// already holds, each a step.
tilec::Status runBare(const rt::Context &context, const BareLaunch &bare,
                      CUfunction &function,
                      const std::function<void(const std::string &)> &step) {
  const rt::Driver &driver = context.driver();
  const rt::DriverApi &api = driver.api();
  CUmodule module = nullptr;
  if (auto status = driver.check(
          api.cuModuleLoadData(&module, bare.cubin.data()), "cuModuleLoadData");
      !status.ok())
    return status;
  step("cuModuleLoadData");
  if (auto status =
          driver.check(api.cuModuleGetFunction(
                           &function, module, bare.metadata.kernelName.c_str()),
                       "cuModuleGetFunction");
      !status.ok())
    return status;
  step("cuModuleGetFunction");
  if (bare.metadata.sharedBytes > 48 * 1024) {
    if (auto status = driver.check(
            api.cuFuncSetAttribute(
                function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                int(bare.metadata.sharedBytes)),
            "cuFuncSetAttribute");
        !status.ok())
      return status;
    step("cuFuncSetAttribute");
  }
  return tilec::Status::success();
}

tilec::Status launchBare(const rt::Context &context, const BareLaunch &bare,
                         const rt::ArgPack &pack, CUfunction function) {
  const rt::Driver &driver = context.driver();
  // A TMA kernel's hidden tensor maps, encoded as launch() encodes them
  // (cuTensorMapEncodeTiled, again only when their arguments change).
  if (pack.hasTensorMaps())
    TILEC_RETURN_IF_ERROR(pack.encodeTensorMaps(driver));
  return driver.check(
      driver.api().cuLaunchKernel(function, bare.grid.x, bare.grid.y,
                                  bare.grid.z, bare.metadata.blockThreads(), 1,
                                  1, bare.metadata.sharedBytes, nullptr,
                                  pack.kernelParams(), nullptr),
      "cuLaunchKernel");
}

/// A call of the kernel and its tensors, built before any window (a program
/// has its tensors before it calls a kernel).
struct PreparedCall {
  tilec::Call call;
  std::unique_ptr<harness::Problem> problem;
};

tilec::Result<PreparedCall> prepareCall(const rt::Context &context,
                                        const tilec::KernelDescription &kernel,
                                        const tilec::Call &given) {
  harness::RunRequest request = harness::requestFor(kernel);
  for (const auto &[name, value] : given.sizes)
    request.call.sizes[name] = value;
  request.call.types = given.types;
  request.call.params = given.params;
  auto problem = harness::buildProblem(context, request,
                                       /*withReference=*/false);
  if (!problem)
    return problem.status();
  return PreparedCall{request.call, std::move(*problem)};
}

/// One raw-driver window: the bundle's winner for `prepared` found and its
/// arguments packed first; timed, the driver's calls only.
struct BareWindow {
  BareLaunch bare;
  std::vector<std::pair<std::string, double>> steps;
  double us = 0, kernelUs = 0;
  PageFaults faults;
};

tilec::Result<BareWindow> timeBareWindow(const rt::Context &context,
                                         const rt::KernelBundle &bundle,
                                         const tilec::KernelDescription &kernel,
                                         const PreparedCall &prepared) {
  auto bare = prepareBare(bundle, kernel, context.properties(), prepared.call);
  if (!bare)
    return bare.status();
  auto pack =
      rt::ArgPack::create(bare->metadata.signature, bare->metadata.tensorMaps);
  if (!pack)
    return pack.status();
  TILEC_RETURN_IF_ERROR(prepared.problem->bind(*pack));

  BareWindow window;
  PageFaults faultsBefore = PageFaults::now();
  Clock::time_point windowStart = Clock::now();
  Clock::time_point stepStart = windowStart;
  auto step = [&](const std::string &name) {
    window.steps.emplace_back(name, usSince(stepStart));
    stepStart = Clock::now();
  };
  CUfunction function = nullptr;
  TILEC_RETURN_IF_ERROR(runBare(context, *bare, function, step));
  TILEC_RETURN_IF_ERROR(launchBare(context, *bare, *pack, function));
  step("cuLaunchKernel");
  TILEC_RETURN_IF_ERROR(context.synchronize());
  step("synchronize (kernel runs)");
  window.us = usSince(windowStart);
  window.faults = PageFaults::now() - faultsBefore;

  auto kernelMs = harness::medianEventMs(
      context, [&] { return launchBare(context, *bare, *pack, function); }, 20);
  if (!kernelMs)
    return kernelMs.status();
  window.kernelUs = *kernelMs * 1000.0;
  window.bare = std::move(*bare);
  return window;
}

/// --bare: in each window, the raw driver's calls only.
int runBareWindows(const Options &options, const rt::Context &context,
                   const rt::KernelBundle &bundle,
                   const tilec::KernelDescription &kernel,
                   const PreparedCall &first, const PreparedCall *second,
                   DriverStartup startup) {
  if (options.prefaultCode)
    prefaultExecutableSegments();
  auto window = timeBareWindow(context, bundle, kernel, first);
  if (!window)
    return fail(window.message());
  Report report;
  report.windowFaults = window->faults;
  report.steps = std::move(window->steps);
  report.firstCallUs = window->us;
  report.kernelUs = window->kernelUs;
  report.key = window->bare.key;
  report.config = window->bare.config;
  report.source = "bundle";
  report.cubinSource = "from the bundle (raw driver)";
  report.startup = startup;
  if (second) {
    auto secondWindow = timeBareWindow(context, bundle, kernel, *second);
    if (!secondWindow)
      return fail(secondWindow.message());
    report.secondCallUs = secondWindow->us;
    report.secondKernelUs = secondWindow->kernelUs;
    report.secondKey = secondWindow->bare.key;
  }
  if (tilec::Status status = writeReport(options, context.properties(), report);
      !status.ok())
    return fail(status.message());
  return 0;
}

/// One window of tilec's path: select, bind, launch, synchronize.
struct TilecWindow {
  rt::TuneResult selected;
  std::vector<std::pair<std::string, double>> steps;
  double us = 0, kernelUs = 0;
  // The process's faults when the window closed (it opens in the caller).
  PageFaults faultsAtEnd;
};

tilec::Result<TilecWindow>
timeTilecWindow(const rt::Context &context, rt::Autotuner &autotuner,
                const Options &options, const PreparedCall &prepared,
                Clock::time_point windowStart, TilecWindow window) {
  auto selected = autotuner.select(options.kernel, prepared.call);
  if (!selected)
    return selected.status();
  for (const auto &[name, us] : selected->steps)
    window.steps.emplace_back("select: " + name, us);
  Clock::time_point stepStart = Clock::now();
  auto step = [&](const std::string &name) {
    window.steps.emplace_back(name, usSince(stepStart));
    stepStart = Clock::now();
  };
  auto pack = selected->kernel->makeArgPack();
  if (!pack)
    return pack.status();
  TILEC_RETURN_IF_ERROR(prepared.problem->bind(*pack));
  step("bind arguments");
  TILEC_RETURN_IF_ERROR(rt::launch(*selected->kernel, selected->grid, *pack));
  step("launch");
  TILEC_RETURN_IF_ERROR(context.synchronize());
  step("synchronize (kernel runs)");
  window.us = usSince(windowStart);
  window.faultsAtEnd = PageFaults::now();

  // The kernel alone, to tell the start-up cost from the kernel's own time.
  auto kernelMs = harness::medianEventMs(
      context,
      [&] { return rt::launch(*selected->kernel, selected->grid, *pack); }, 20);
  if (!kernelMs)
    return kernelMs.status();
  window.kernelUs = *kernelMs * 1000.0;
  window.selected = std::move(*selected);
  return window;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  if (!parseOptions(argc, argv, options))
    return 2;

  tilec::Call call;
  if (tilec::Status status = setFromOptions(call, "--", options.sizes,
                                            options.types, options.params);
      !status.ok())
    return fail(status.message());

  // Driver start-up, each step timed.
  DriverStartup startup;
  Clock::time_point start = Clock::now();
  auto driver = rt::Driver::load("libcuda.so.1");
  if (!driver)
    return fail(driver.message());
  startup.dlopenUs = usSince(start);
  start = Clock::now();
  if (tilec::Status status = (*driver)->initialize(); !status.ok())
    return fail(status.message());
  startup.cuInitUs = usSince(start);
  start = Clock::now();
  auto context = rt::Context::create(**driver, options.device);
  if (!context)
    return fail(context.message());
  startup.contextUs = usSince(start);

  // The program's tensors, before its first call. Without a compiler the
  // kernel's description comes from the bundle, else the autotune cache
  // that tuned it.
  rt::AutotuneCache descriptions(rt::readEnvironment().autotuneCachePath(),
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
  start = Clock::now();
  auto first = prepareCall(*context, *description, call);
  if (!first)
    return fail(first.message());
  std::optional<PreparedCall> second;
  if (!options.secondSizes.empty()) {
    tilec::Call secondCall = call;
    if (tilec::Status status =
            setFromOptions(secondCall, "--second-", options.secondSizes,
                           options.secondTypes, /*params=*/"");
        !status.ok())
      return fail(status.message());
    auto prepared = prepareCall(*context, *description, secondCall);
    if (!prepared)
      return fail(prepared.message());
    second = std::move(*prepared);
  }
  if (tilec::Status status = context->synchronize(); !status.ok())
    return fail(status.message());
  startup.inputsUs = usSince(start);

  if (options.bare)
    return runBareWindows(options, *context, **inputsBundle, *description,
                          *first, second ? &*second : nullptr, startup);

  // The window: context ready -> first kernel done.
  TilecWindow window;
  if (options.prefaultCode)
    prefaultExecutableSegments();
  PageFaults faultsBefore = PageFaults::now();
  Clock::time_point windowStart = Clock::now();
  Clock::time_point stepStart = windowStart;
  auto step = [&](const std::string &name) {
    window.steps.emplace_back(name, usSince(stepStart));
    stepStart = Clock::now();
  };
  auto bundle = openBundle(options);
  if (!bundle)
    return fail(bundle.message());
  if (*bundle)
    step(options.embedded ? "wrap the embedded bundle"
                          : "open + check the bundle file");
  // --bundle or --embedded wins over TILEC_BUNDLE, which is then not opened.
  rt::Environment environment = rt::readEnvironment();
  if (*bundle)
    environment.bundle.clear();
  auto sessionOptions = rt::SessionOptions::fromEnvironment(environment);
  if (!sessionOptions)
    return fail(sessionOptions.message());
  sessionOptions->driver = driver->get();
  sessionOptions->device = options.device;
  if (*bundle) {
    // A deployed program from a bundle has no cache directory at all.
    sessionOptions->bundle = *bundle;
    sessionOptions->bundlePolicy = rt::BundlePolicy::Strict;
  }
  auto session = rt::Session::create(std::move(*sessionOptions));
  if (!session)
    return fail(session.message());
  rt::KernelProvider &provider = (*session)->provider();
  rt::Autotuner *autotuner = &(*session)->autotuner();
  step(*bundle ? "session (bundle checked for the device, pins)"
               : "session (autotune cache, pins)");
  auto timed = timeTilecWindow(*context, *autotuner, options, *first,
                               windowStart, std::move(window));
  if (!timed)
    return fail(timed.message());
  PageFaults windowFaults = timed->faultsAtEnd - faultsBefore;
  bool fromStageCache = provider.cachedLoadCount() == 1;
  bool fromBundle = provider.bundleLoadCount() == 1;
  const char *cubinSource = fromBundle       ? "from the bundle"
                            : fromStageCache ? "from the stage cache"
                                             : "memoized";

  Report report;
  report.key = timed->selected.key;
  report.config = timed->selected.config.str();
  report.source = rt::getConfigSourceName(timed->selected.source);
  report.cubinSource = cubinSource;
  report.cubinFromStageCache = fromStageCache;
  report.startup = startup;
  report.steps = std::move(timed->steps);
  report.firstCallUs = timed->us;
  report.windowFaults = windowFaults;
  report.kernelUs = timed->kernelUs;
  if (second) {
    auto secondTimed = timeTilecWindow(*context, *autotuner, options, *second,
                                       Clock::now(), TilecWindow());
    if (!secondTimed)
      return fail(secondTimed.message());
    report.secondCallUs = secondTimed->us;
    report.secondKernelUs = secondTimed->kernelUs;
    report.secondKey = secondTimed->selected.key;
  }
  if (tilec::Status status =
          writeReport(options, context->properties(), report);
      !status.ok())
    return fail(status.message());
  return 0;
}
