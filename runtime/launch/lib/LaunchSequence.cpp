//===- LaunchSequence.cpp - Launches recorded once, replayed --------------===//

#include "tilec/runtime/LaunchSequence.h"

#include "tilec/runtime/Context.h"
#include "tilec/runtime/Driver.h"

#include <algorithm>
#include <cstring>

namespace tilec::rt {

LaunchSequence::LaunchSequence(const Context &context) : context_(&context) {}

LaunchSequence::~LaunchSequence() { releaseGraph(); }

void LaunchSequence::releaseGraph() {
  const DriverApi &api = context_->driver().api();
  if (exec_)
    (void)api.cuGraphExecDestroy(exec_);
  if (graph_)
    (void)api.cuGraphDestroy(graph_);
  exec_ = nullptr;
  graph_ = nullptr;
}

Status LaunchSequence::addKernel(std::shared_ptr<const Kernel> kernel,
                                 Dim3 grid, const ArgPack &args) {
  if (sealed_)
    return Status::error("a launch sequence takes no step once instantiated");
  if (args.hasTensorMaps())
    return Status::error(ErrorKind::InvalidArgument,
                         "a launch sequence does not replay TMA tensor maps (" +
                             kernel->metadata().kernelName + ")");
  Step step;
  step.grid = grid;
  step.args = std::make_unique<ArgPack>(args);
  step.kernel = std::move(kernel);
  steps_.push_back(std::move(step));
  return Status::success();
}

Status LaunchSequence::addMemset(CUdeviceptr address, uint32_t value,
                                 unsigned elementBytes, size_t count) {
  if (sealed_)
    return Status::error("a launch sequence takes no step once instantiated");
  if (elementBytes != 1 && elementBytes != 4)
    return Status::error(ErrorKind::InvalidArgument,
                         "a memset step sets 1- or 4-byte elements");
  Step step;
  step.address = address;
  step.value = value;
  step.elementBytes = elementBytes;
  step.count = count;
  steps_.push_back(std::move(step));
  return Status::success();
}

Status LaunchSequence::queueStep(const Step &step, CUstream stream) const {
  if (step.kernel)
    return launch(*step.kernel, step.grid, *step.args, stream);
  if (step.count == 0)
    return Status::success();
  return memsetAsync(context_->driver(), step.address, step.value,
                     step.elementBytes, step.count, stream);
}

CUDA_KERNEL_NODE_PARAMS LaunchSequence::kernelNodeParams(const Step &step) {
  CUDA_KERNEL_NODE_PARAMS params{};
  params.func = step.kernel->function();
  params.gridDimX = step.grid.x;
  params.gridDimY = step.grid.y;
  params.gridDimZ = step.grid.z;
  params.blockDimX = step.kernel->blockThreads();
  params.blockDimY = 1;
  params.blockDimZ = 1;
  params.sharedMemBytes = step.kernel->sharedBytes();
  params.kernelParams = step.args->kernelParams();
  return params;
}

Status LaunchSequence::buildGraph() {
  const Driver &driver = context_->driver();
  const DriverApi &api = driver.api();
  TILEC_RETURN_IF_ERROR(
      driver.check(api.cuGraphCreate(&graph_, 0), "cuGraphCreate"));
  CUgraphNode previous = nullptr;
  for (Step &step : steps_) {
    if (!step.kernel && step.count == 0)
      continue;
    CUgraphNode node = nullptr;
    size_t dependencies = previous ? 1 : 0;
    if (step.kernel) {
      // Checked as a launch checks them; the driver copies the arguments.
      TILEC_RETURN_IF_ERROR(checkLaunchArguments(*step.kernel, *step.args));
      CUDA_KERNEL_NODE_PARAMS params = kernelNodeParams(step);
      TILEC_RETURN_IF_ERROR(
          driver.check(api.cuGraphAddKernelNode(&node, graph_, &previous,
                                                dependencies, &params),
                       "cuGraphAddKernelNode"));
      step.node = node;
    } else {
      CUDA_MEMSET_NODE_PARAMS params{};
      params.dst = step.address;
      params.value = step.value;
      params.elementSize = step.elementBytes;
      params.width = step.count;
      params.height = 1;
      TILEC_RETURN_IF_ERROR(driver.check(
          api.cuGraphAddMemsetNode(&node, graph_, &previous, dependencies,
                                   &params, context_->handle()),
          "cuGraphAddMemsetNode"));
    }
    previous = node;
  }
  return driver.check(api.cuGraphInstantiate(&exec_, graph_, 0),
                      "cuGraphInstantiate");
}

Status LaunchSequence::instantiate() {
  if (sealed_)
    return Status::success();
  sealed_ = true;
  Status built = buildGraph();
  if (built.ok())
    return built;
  // Replayed step by step instead: a graph is only the faster way.
  releaseGraph();
  return Status::success();
}

std::vector<LaunchSequence::Place>
LaunchSequence::placesOf(CUdeviceptr address) const {
  std::vector<Place> places;
  for (size_t stepIndex = 0; stepIndex < steps_.size(); ++stepIndex) {
    const Step &step = steps_[stepIndex];
    if (!step.kernel)
      continue;
    for (size_t index = 0; index < step.args->size(); ++index) {
      if (step.args->signature()[index].type != ArgType::Ptr)
        continue;
      CUdeviceptr held = 0;
      std::memcpy(&held, step.args->kernelParams()[index], sizeof(held));
      if (held == address)
        places.emplace_back(stepIndex, index);
    }
  }
  return places;
}

Status
LaunchSequence::setPointers(std::initializer_list<PointerUpdate> updates) {
  // Every pointer is checked before any is set: a refused one changes
  // nothing. (Copies of the packs, set and swapped in, cost a map build
  // 19k host instructions.)
  for (const PointerUpdate &update : updates) {
    for (auto [stepIndex, index] : update.places) {
      if (stepIndex >= steps_.size() || !steps_[stepIndex].kernel)
        return Status::error(ErrorKind::InvalidArgument,
                             "launch sequence: no pointer argument " +
                                 std::to_string(index) + " in step " +
                                 std::to_string(stepIndex));
      TILEC_RETURN_IF_ERROR(steps_[stepIndex].args->checkPointer(
          index, DevicePtr{update.address}));
    }
  }
  // A node none of whose pointers changes keeps its parameters: a stream
  // of builds that frees each one's buffers before the next gets the same
  // addresses from a pool again and again. A node whose update failed
  // before is updated again whatever changes (its pack is ahead of it).
  std::vector<size_t> touched;
  for (size_t stepIndex = 0; stepIndex < steps_.size(); ++stepIndex)
    if (steps_[stepIndex].nodeStale)
      touched.push_back(stepIndex);
  for (const PointerUpdate &update : updates) {
    for (auto [stepIndex, index] : update.places) {
      ArgPack &args = *steps_[stepIndex].args;
      if (args.holdsPointer(index, DevicePtr{update.address}))
        continue;
      TILEC_RETURN_IF_ERROR(args.setPointer(index, DevicePtr{update.address}));
      touched.push_back(stepIndex);
    }
  }
  if (!exec_)
    return Status::success();
  // A graph's node once per step.
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (size_t stepIndex : touched)
    steps_[stepIndex].nodeStale = true;
  const Driver &driver = context_->driver();
  for (size_t stepIndex : touched) {
    CUDA_KERNEL_NODE_PARAMS params = kernelNodeParams(steps_[stepIndex]);
    TILEC_RETURN_IF_ERROR(
        driver.check(driver.api().cuGraphExecKernelNodeSetParams(
                         exec_, steps_[stepIndex].node, &params),
                     "cuGraphExecKernelNodeSetParams"));
    steps_[stepIndex].nodeStale = false;
    ++nodeUpdates_;
  }
  return Status::success();
}

Status LaunchSequence::replay(CUstream stream) const {
  if (exec_) {
    const Driver &driver = context_->driver();
    return driver.check(driver.api().cuGraphLaunch(exec_, stream),
                        "cuGraphLaunch");
  }
  for (const Step &step : steps_)
    TILEC_RETURN_IF_ERROR(queueStep(step, stream));
  return Status::success();
}

} // namespace tilec::rt
