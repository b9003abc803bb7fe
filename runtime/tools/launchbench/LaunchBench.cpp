//===- LaunchBench.cpp - Host cost of starting up and launching -----------===//
//
// tilec-rt-launchbench measures what the runtime adds on the host: the time of
// a launch() against a bare cuLaunchKernel of the same tiny kernel, and the
// start-up steps a fresh process pays (dlopen, cuInit, primary context, module
// load). Launch costs are host times of batches of asynchronous launches, the
// stream drained between batches, bare and runtime batches interleaved so that
// drift affects both alike; the median batch is reported. Batches stay short
// so that the launch queue never fills: a full queue would make both loops
// wait for the GPU and hide the host cost being measured.
//
//===----------------------------------------------------------------------===//

#include "tilec/runtime/Context.h"
#include "tilec/runtime/DeviceBuffer.h"
#include "tilec/runtime/Driver.h"
#include "tilec/runtime/Launch.h"
#include "tilec/runtime/Module.h"
#include "tilec/runtime/Stream.h"
#include "tilec/runtime/fixtures/TestKernels.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace rt = tilec::rt;

namespace {

using Clock = std::chrono::steady_clock;

double microsecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start)
      .count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

struct Options {
  int launchesPerBatch = 500;
  int batches = 200;
  int moduleLoads = 100;
  std::string jsonPath;
};

bool parseOptions(int argc, char **argv, Options &options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool hasValue = i + 1 < argc;
    if (arg == "--launches" && hasValue)
      options.launchesPerBatch = std::atoi(argv[++i]);
    else if (arg == "--batches" && hasValue)
      options.batches = std::atoi(argv[++i]);
    else if (arg == "--module-loads" && hasValue)
      options.moduleLoads = std::atoi(argv[++i]);
    else if (arg == "--json" && hasValue)
      options.jsonPath = argv[++i];
    else
      return false;
  }
  return options.launchesPerBatch > 0 && options.batches > 0 &&
         options.moduleLoads > 0;
}

int fail(const std::string &message) {
  std::fprintf(stderr, "tilec-rt-launchbench: %s\n", message.c_str());
  return 1;
}

constexpr const char *kNoopMetadata = R"({
  "name": "noop", "kernel_name": "noop", "target": "sm_90",
  "num_warps": 4, "threads_per_warp": 32, "num_stages": 1, "shared_bytes": 0,
  "signature": [{"name": "p", "type": "ptr<f32>"}, {"name": "n", "type": "i32"}]
})";

} // namespace

int main(int argc, char **argv) {
  Options options;
  if (!parseOptions(argc, argv, options)) {
    std::fprintf(stderr,
                 "usage: tilec-rt-launchbench [--launches N] [--batches N] "
                 "[--module-loads N] [--json PATH]\n");
    return 2;
  }

  // Start-up, step by step, as a fresh process pays it.
  Clock::time_point start = Clock::now();
  tilec::Result<std::unique_ptr<rt::Driver>> driver =
      rt::Driver::load("libcuda.so.1");
  if (!driver)
    return fail(driver.message());
  double dlopenUs = microsecondsSince(start);
  start = Clock::now();
  if (tilec::Status status = (*driver)->initialize(); !status.ok())
    return fail(status.message());
  double cuInitUs = microsecondsSince(start);
  start = Clock::now();
  tilec::Result<rt::Context> context = rt::Context::create(**driver, 0);
  if (!context)
    return fail(context.message());
  double contextUs = microsecondsSince(start);
  const rt::DriverApi &api = (*driver)->api();
  int driverVersion = 0;
  (void)api.cuDriverGetVersion(&driverVersion);

  std::string_view cubin = rt::fixtures::testKernelsCubin();
  std::vector<double> moduleLoadUs;
  for (int i = 0; i < options.moduleLoads; ++i) {
    start = Clock::now();
    tilec::Result<std::shared_ptr<rt::Module>> module =
        rt::Module::loadCubin(*context, cubin.data(), cubin.size());
    moduleLoadUs.push_back(microsecondsSince(start));
    if (!module)
      return fail(module.message());
  }

  tilec::Result<std::shared_ptr<rt::Module>> module =
      rt::Module::loadCubin(*context, cubin.data(), cubin.size());
  if (!module)
    return fail(module.message());
  tilec::Result<tilec::CompileMetadata> metadata =
      tilec::CompileMetadata::parse(kNoopMetadata);
  if (!metadata)
    return fail(metadata.message());
  tilec::Result<rt::Kernel> kernel =
      rt::Kernel::create(*context, *module, std::move(*metadata));
  if (!kernel)
    return fail(kernel.message());
  tilec::Result<rt::DeviceBuffer> buffer =
      rt::DeviceBuffer::allocate(*context, 256);
  if (!buffer)
    return fail(buffer.message());
  tilec::Result<rt::ArgPack> args = kernel->makeArgPack();
  if (!args)
    return fail(args.message());
  if (tilec::Status status = args->bind(*buffer, 0); !status.ok())
    return fail(status.message());
  tilec::Result<rt::Stream> stream = rt::Stream::create(*context);
  if (!stream)
    return fail(stream.message());

  // The bare loop passes its own parameter array, as hand-written driver code
  // would.
  CUdeviceptr bareAddress = buffer->address();
  int bareN = 0;
  void *bareParams[] = {&bareAddress, &bareN};
  CUfunction function = kernel->function();
  CUstream cuStream = stream->handle();
  unsigned block = kernel->blockThreads();

  auto bareBatch = [&](int launches) -> double {
    Clock::time_point begin = Clock::now();
    for (int i = 0; i < launches; ++i)
      if (api.cuLaunchKernel(function, 1, 1, 1, block, 1, 1, 0, cuStream,
                             bareParams, nullptr) != CUDA_SUCCESS)
        return -1.0;
    return microsecondsSince(begin) / launches;
  };
  auto tilecBatch = [&](int launches) -> double {
    Clock::time_point begin = Clock::now();
    for (int i = 0; i < launches; ++i)
      if (!rt::launch(*kernel, {1, 1, 1}, *args, cuStream).ok())
        return -1.0;
    return microsecondsSince(begin) / launches;
  };

  // Warm-up: first launches pay for lazy loading and queue set-up.
  if (bareBatch(1000) < 0 || tilecBatch(1000) < 0)
    return fail(rt::launch(*kernel, {1, 1, 1}, *args, cuStream).message());
  if (tilec::Status status = stream->synchronize(); !status.ok())
    return fail(status.message());

  std::vector<double> bareUs, tilecUs;
  for (int b = 0; b < options.batches; ++b) {
    double bare = bareBatch(options.launchesPerBatch);
    if (tilec::Status status = stream->synchronize(); !status.ok() || bare < 0)
      return fail("bare cuLaunchKernel batch failed: " + status.message());
    double ours = tilecBatch(options.launchesPerBatch);
    if (tilec::Status status = stream->synchronize(); !status.ok() || ours < 0)
      return fail("tilec launch batch failed: " + status.message());
    bareUs.push_back(bare);
    tilecUs.push_back(ours);
  }

  const rt::DeviceProperties &device = context->properties();
  double bareMedian = median(bareUs);
  double tilecMedian = median(tilecUs);
  double moduleLoadMedian = median(moduleLoadUs);
  std::printf("device: %s (%s, %d SMs), driver API %d\n", device.name.c_str(),
              device.smName().c_str(), device.multiprocessorCount,
              driverVersion);
  std::printf("start-up: dlopen %.2f ms, cuInit %.2f ms, primary context "
              "%.2f ms\n",
              dlopenUs / 1000, cuInitUs / 1000, contextUs / 1000);
  std::printf("module load (cuModuleLoadData, %zu-byte cubin): first %.1f us, "
              "median %.1f us of %d\n",
              cubin.size(), moduleLoadUs.front(), moduleLoadMedian,
              options.moduleLoads);
  std::printf("host time per launch, median of %d batches x %d launches:\n",
              options.batches, options.launchesPerBatch);
  std::printf("  bare cuLaunchKernel   %6.3f us\n", bareMedian);
  std::printf("  tilec::rt::launch     %6.3f us  (%.3fx)\n", tilecMedian,
              tilecMedian / bareMedian);

  if (!options.jsonPath.empty()) {
    nlohmann::json report = {
        {"device", device.name},
        {"sm", device.smName()},
        {"driver_api_version", driverVersion},
        {"dlopen_ms", dlopenUs / 1000},
        {"cu_init_ms", cuInitUs / 1000},
        {"primary_context_ms", contextUs / 1000},
        {"cubin_bytes", cubin.size()},
        {"module_load_first_us", moduleLoadUs.front()},
        {"module_load_median_us", moduleLoadMedian},
        {"module_loads", options.moduleLoads},
        {"batches", options.batches},
        {"launches_per_batch", options.launchesPerBatch},
        {"bare_launch_us_median", bareMedian},
        {"tilec_launch_us_median", tilecMedian},
        {"tilec_over_bare", tilecMedian / bareMedian},
        {"bare_launch_us_batches", bareUs},
        {"tilec_launch_us_batches", tilecUs},
    };
    std::ofstream out(options.jsonPath);
    out << report.dump(2) << "\n";
    if (!out)
      return fail("cannot write " + options.jsonPath);
  }
  return 0;
}
