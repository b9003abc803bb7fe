//===- tilec-replay.cpp - A workload run the way it is deployed -----------===//
//
// Runs every call of a workload (tilec warmup's input) in a process that
// links the runtime, the tuning library and the sparse convolution only: no
// LLVM, no compiler. With --bundle it runs from that bundle alone (no stage
// cache, no autotune cache: what a deployed service does); without, from the
// caches. Each result is checked against float64 on the host (every output
// of a kernel call, through its reference; rows of a convolution layer, all
// of them for small layers and an even sample of large ones), with outputs
// poisoned first. Prints, per call, where its kernels came from, the first
// call's time (config lookup, load, launch, the kernel) and the kernel's own
// time; exits non-zero when any call fails or is wrong.
//
//   tilec-replay WORKLOAD.json [--bundle FILE] [--no-check] [--device N]
//                [--json FILE]
//
// --no-check skips the float64 checks (for timing fresh processes).
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

#include "tilec/Harness/KernelHarness.h"
#include "tilec/runtime/Autotuner.h"
#include "tilec/runtime/Bundle.h"
#include "tilec/runtime/Context.h"
#include "tilec/runtime/KernelProvider.h"
#include "tilec/runtime/Launch.h"
#include "tilec/runtime/Session.h"
#include "tilec/runtime/Workload.h"
#include "tilec/sparse/SparseConv.h"
#include "tilec/sparse/VoxelScenes.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace rt = tilec::rt;
namespace harness = tilec::harness;
namespace sparse = tilec::sparse;

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

int fail(const std::string &message) {
  std::fprintf(stderr, "tilec-replay: error: %s\n", message.c_str());
  return 1;
}

struct Options {
  std::string workloadPath;
  std::string bundlePath;
  std::string jsonPath;
  int device = 0;
  bool check = true;
};

bool parseOptions(int argc, char **argv, Options &options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    if (arg == "--no-check") {
      options.check = false;
      continue;
    }
    std::string device;
    bool ok = arg == "--bundle"   ? value(options.bundlePath)
              : arg == "--json"   ? value(options.jsonPath)
              : arg == "--device" ? value(device)
              : arg.rfind("--", 0) != 0 && options.workloadPath.empty()
                  ? (options.workloadPath = arg, true)
                  : false;
    if (!ok) {
      std::fprintf(stderr, "usage: tilec-replay WORKLOAD.json [--bundle FILE] "
                           "[--no-check] [--device N] [--json FILE]\n");
      return false;
    }
    if (!device.empty())
      options.device = std::atoi(device.c_str());
  }
  return !options.workloadPath.empty();
}

// What one call did.
struct Replayed {
  std::string call;
  std::string source;
  double firstCallMs = 0;
  double kernelUs = 0;
  bool correct = false;
  std::string problem;
};

// A call's own time: the median of 10, in microseconds.
tilec::Result<double> timeCalls(const rt::Context &context,
                                const std::function<tilec::Status()> &run) {
  auto ms = harness::medianEventMs(context, run, 10);
  if (!ms)
    return ms.status();
  return *ms * 1000;
}

// A kernel call: the harness builds its inputs and float64 reference.
Replayed replayKernel(const rt::Context &context, rt::Autotuner &autotuner,
                      const rt::WorkloadCall &call, bool check) {
  Replayed result{call.describe(), "", 0, 0, false, ""};
  auto description = autotuner.describe(call.kernel);
  if (!description)
    return result.problem = description.message(), result;
  harness::RunRequest request;
  request.kernel = &*description;
  request.call = call.call;
  // The inputs exist before the first call, as a program's tensors do; the
  // grid of the problem does not depend on the config here.
  auto problem = harness::buildProblem(context, request, check);
  if (!problem)
    return result.problem = problem.message(), result;
  if (tilec::Status status = context.synchronize(); !status.ok())
    return result.problem = status.message(), result;
  Clock::time_point start = Clock::now();
  auto selected = autotuner.select(call.kernel, call.call);
  if (!selected)
    return result.problem = selected.message(), result;
  result.source = rt::getConfigSourceName(selected->source);
  auto pack = selected->kernel->makeArgPack();
  if (!pack)
    return result.problem = pack.message(), result;
  tilec::Status status = (*problem)->bind(*pack);
  if (status.ok())
    status = rt::launch(*selected->kernel, selected->grid, *pack);
  if (status.ok())
    status = context.synchronize();
  result.firstCallMs = msSince(start);
  if (!status.ok())
    return result.problem = status.message(), result;
  if (check) {
    auto report = (*problem)->check();
    if (!report)
      return result.problem = report.message(), result;
    result.correct = report->passed;
    if (!report->passed)
      result.problem = report->describe();
  } else {
    result.correct = true;
  }
  auto us = timeCalls(context, [&] {
    return rt::launch(*selected->kernel, selected->grid, *pack);
  });
  if (us)
    result.kernelUs = *us;
  return result;
}

// A convolution layer over a shell of its size (as tilec warmup tuned it),
// checked against float64 on `rows` rows spread evenly over the output.
Replayed replayConv(const rt::Context &context, sparse::SparseEngine &engine,
                    const rt::WorkloadCall &call, bool check) {
  Replayed result{call.describe(), "", 0, 0, false, ""};
  auto arguments = sparse::convArgumentsOf(*call.conv);
  if (!arguments)
    return result.problem = arguments.message(), result;
  sparse::VoxelCloud cloud = sparse::shellSceneOfSize(call.conv->voxels);
  int64_t n = cloud.size(), ci = arguments->ci, co = arguments->co;
  int64_t v = arguments->window.offsets();
  auto format = harness::formatOf(sparse::dtypeName(arguments->dtype));
  if (!format)
    return result.problem = format.message(), result;
  harness::Random rng(uint64_t(n) * 31 + ci * 7 + co);
  harness::HostTensor x(*format, n * arguments->xStride());
  harness::HostTensor w(*format, co * v * ci), b(*format, co);
  harness::HostTensor y(*format, n * arguments->yStride());
  harness::fillUniform(x, rng, -1, 1, true);
  harness::fillUniform(w, rng, -1, 1, true);
  harness::fillUniform(b, rng, -1, 1, true);
  std::vector<rt::DeviceBuffer> buffers;
  auto upload = [&](const void *data, size_t bytes) -> tilec::Status {
    auto buffer = rt::DeviceBuffer::allocate(context, std::max<size_t>(bytes, 16));
    if (!buffer)
      return buffer.status();
    TILEC_RETURN_IF_ERROR(buffer->copyFromHost(data, bytes));
    buffers.push_back(std::move(*buffer));
    return tilec::Status::success();
  };
  for (auto [data, bytes] :
       {std::pair<const void *, size_t>{cloud.coords.data(),
                                        cloud.coords.size() * 4},
        {x.bytes.data(), x.bytes.size()},
        {w.bytes.data(), w.bytes.size()},
        {b.bytes.data(), b.bytes.size()},
        {y.bytes.data(), y.bytes.size()}})
    if (tilec::Status status = upload(data, bytes); !status.ok())
      return result.problem = status.message(), result;
  rt::DeviceBuffer &yd = buffers[4];
  if (tilec::Status status = yd.memset8(0xFF); !status.ok()) // poisoned
    return result.problem = status.message(), result;
  arguments->x = buffers[1].ptr();
  arguments->weight = buffers[2].ptr();
  arguments->bias = call.conv->bias ? buffers[3].ptr() : rt::DevicePtr{};
  arguments->y = yd.ptr();
  if (tilec::Status status = context.synchronize(); !status.ok())
    return result.problem = status.message(), result;

  // The first call: maps, the tuned kernel looked up and loaded, the kernel.
  int bundleLoads = engine.provider().bundleLoadCount();
  int cacheLoads = engine.provider().cachedLoadCount();
  Clock::time_point start = Clock::now();
  auto tensor = sparse::SparseTensor::create(engine, buffers[0].ptr(), n);
  if (!tensor)
    return result.problem = tensor.message(), result;
  tilec::Status status =
      sparse::submanifoldConv3d(engine, *tensor, *arguments, nullptr);
  if (status.ok())
    status = context.synchronize();
  result.firstCallMs = msSince(start);
  if (!status.ok())
    return result.problem = status.message(), result;
  result.source =
      std::to_string(engine.provider().bundleLoadCount() - bundleLoads) +
      " from the bundle, " +
      std::to_string(engine.provider().cachedLoadCount() - cacheLoads) +
      " from the stage cache";
  if (tilec::Status copied = yd.copyToHost(y.bytes.data(), y.bytes.size());
      !copied.ok())
    return result.problem = copied.message(), result;

  auto us = timeCalls(context, [&] {
    return sparse::submanifoldConv3d(engine, *tensor, *arguments, nullptr);
  });
  if (us)
    result.kernelUs = *us;
  if (!check) {
    result.correct = true;
    return result;
  }
  auto maps = harness::buildHostMaps(cloud, arguments->window, 64);
  if (!maps)
    return result.problem = maps.message(), result;
  harness::Tolerance tolerance = harness::toleranceFor(
      *format, arguments->allowTf32, std::sqrt(double(v * ci)));
  // Every row of a small layer; an even sample of 4096 rows of a large one.
  bool large = double(n) * double(v) * double(ci) * double(co) > 2e8;
  int64_t step = large ? std::max<int64_t>(1, n / 4096) : 1;
  int64_t bad = 0, checked = 0;
  for (int64_t i = 0; i < n; i += step, ++checked)
    for (int64_t o = 0; o < co; ++o) {
      double want = call.conv->bias ? b.get(o) : 0;
      for (int64_t k = 0; k < v; ++k)
        if (int32_t j = maps->nb[i * v + k]; j >= 0)
          for (int64_t c = 0; c < ci; ++c)
            want += x.get(j * arguments->xStride() + c) *
                    w.get((o * v + k) * ci + c);
      double got = y.get(i * arguments->yStride() + o);
      if (!(std::abs(got - want) <=
            tolerance.atol + tolerance.rtol * std::abs(want)) &&
          bad++ == 0)
        result.problem = "y[" + std::to_string(i) + ", " + std::to_string(o) +
                         "] = " + std::to_string(got) + ", want " +
                         std::to_string(want);
    }
  result.correct = bad == 0;
  if (bad)
    result.problem += " (" + std::to_string(bad) + " wrong in " +
                      std::to_string(checked) + " rows)";
  return result;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  if (!parseOptions(argc, argv, options))
    return 2;
  auto workload = rt::Workload::load(options.workloadPath);
  if (!workload)
    return fail(workload.message());
  // The bundle is checked before the driver is touched: a bad one gives
  // the same error with or without a GPU.
  // --bundle wins over TILEC_BUNDLE, which is then not opened.
  rt::Environment environment = rt::readEnvironment();
  if (!options.bundlePath.empty())
    environment.bundle.clear();
  auto sessionOptions = rt::SessionOptions::fromEnvironment(environment);
  if (!sessionOptions)
    return fail(sessionOptions.message());
  if (!options.bundlePath.empty()) {
    auto opened = rt::KernelBundle::open(options.bundlePath);
    if (!opened)
      return fail(opened.message());
    sessionOptions->bundle = *opened;
    sessionOptions->bundlePolicy = rt::BundlePolicy::Strict;
  }
  sessionOptions->device = options.device;
  sessionOptions->tuning.progress = rt::ProgressMode::Never;
  auto session = rt::Session::create(std::move(*sessionOptions));
  if (!session)
    return fail(session.message());
  rt::Context *context = &(*session)->context();
  rt::KernelProvider &provider = (*session)->provider();
  rt::Autotuner *autotuner = &(*session)->autotuner();
  sparse::SparseEngine &engine = (*session)->sparse();

  std::printf("tilec-replay: %zu calls of %s on %s, from %s\n",
              workload->calls.size(), options.workloadPath.c_str(),
              context->properties().name.c_str(),
              provider.bundle() ? provider.bundle()->origin().c_str()
                                : "the caches");
  std::vector<Replayed> results;
  int failures = 0;
  for (const rt::WorkloadCall &call : workload->calls) {
    Replayed result =
        call.isOp() ? replayConv(*context, engine, call, options.check)
                    : replayKernel(*context, *autotuner, call, options.check);
    failures += !result.correct;
    std::printf("%-4s %-58s %9.3f ms %10.1f us  %s\n",
                result.correct ? "ok" : "FAIL", result.call.c_str(),
                result.firstCallMs, result.kernelUs,
                result.correct ? result.source.c_str()
                               : result.problem.c_str());
    results.push_back(std::move(result));
  }
  std::printf("%d of %zu calls correct; kernels loaded: %d from the bundle, "
              "%d from the stage cache, %d compiled\n",
              int(results.size()) - failures, results.size(),
              provider.bundleLoadCount(), provider.cachedLoadCount(),
              provider.compileCount());

  if (!options.jsonPath.empty()) {
    nlohmann::ordered_json json;
    json["workload"] = options.workloadPath;
    json["bundle"] = options.bundlePath;
    json["device"] = context->properties().name;
    json["bundle_loads"] = provider.bundleLoadCount();
    json["stage_cache_loads"] = provider.cachedLoadCount();
    json["calls"] = nlohmann::ordered_json::array();
    for (const Replayed &result : results)
      json["calls"].push_back({{"call", result.call},
                               {"source", result.source},
                               {"first_call_ms", result.firstCallMs},
                               {"kernel_us", result.kernelUs},
                               {"correct", result.correct},
                               {"problem", result.problem}});
    std::ofstream out(options.jsonPath);
    out << json.dump(2) << "\n";
    if (!out)
      return fail("cannot write " + options.jsonPath);
  }
  return failures == 0 ? 0 : 1;
}
