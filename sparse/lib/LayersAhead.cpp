//===- LayersAhead.cpp - A network's convolutions compiled ahead ----------===//
//
// A network's first pass tunes each convolution layer as it comes: the
// layer's candidates compile (one batch over the cores), then its timings
// run, then the next layer's compile. Given the layers up front, their
// candidates are queued at once and compile on every core while the first
// layers tune; each tuning then takes its compiles from the queue
// (KernelProvider::compile).
//
//===----------------------------------------------------------------------===//

#include "PreparedConv.h"

#include "tilec/runtime/Autotuner.h"

#include <algorithm>

namespace tilec::sparse {

namespace {

// A bias pointer for calls that are only keyed and compiled, never
// launched: HAS_BIAS follows whether a call has one.
constexpr uint64_t kPlannedBias = 16;

void appendCalls(std::vector<std::pair<std::string, Call>> &calls,
                 std::vector<std::pair<std::string, Call>> more) {
  calls.insert(calls.end(), std::make_move_iterator(more.begin()),
               std::make_move_iterator(more.end()));
}

// A plan's layer as its calls will check it: voxels a tensor can hold,
// channels, the window (odd extents where the layer is submanifold, 1 to 7
// either way), tf32 for f32 only.
Status checkPlan(const LayerPlan &plan, const ConvArguments &arguments,
                 size_t index) {
  std::string function = "layer plan " + std::to_string(index);
  if (plan.layer.voxels < 1 || plan.layer.voxels >= kVoxelLimit)
    return Status::error(ErrorKind::InvalidArgument,
                         function +
                             ": the voxels must be from 1 to 2^28 - 1, "
                             "got " +
                             std::to_string(plan.layer.voxels));
  if (!plan.strided)
    return checkConvShape(arguments, function);
  // A strided window needs no centre: its extents are checked here, the
  // rest as a submanifold one's.
  ConvArguments odd = arguments;
  for (int axis = 0; axis < 3; ++axis) {
    int &extent = odd.window.kernel[axis];
    if (extent < 1 || extent > 7)
      return Status::error(
          ErrorKind::InvalidArgument,
          function + ": the kernel size along " + std::string(1, "xyz"[axis]) +
              " must be 1 to 7, got " + std::to_string(extent));
    extent |= 1;
  }
  return checkConvShape(odd, function);
}

// Appends the calls of `plans[index]`'s first calls to `calls`: its forward
// row blocks, then its input gradient's, then its weight gradient; the
// predicted row blocks alone where the first use predicts.
Status appendPlanCalls(const std::vector<LayerPlan> &plans, size_t index,
                       std::vector<std::pair<std::string, Call>> &calls,
                       rt::FirstUse firstUse) {
  const LayerPlan &plan = plans[index];
  Result<ConvArguments> arguments = convArgumentsOf(plan.layer);
  if (!arguments)
    return arguments.status();
  TILEC_RETURN_IF_ERROR(checkPlan(plan, *arguments, index));
  if (plan.layer.bias)
    arguments->bias = rt::DevicePtr{kPlannedBias};
  int64_t rows = plan.layer.voxels;
  int64_t offsets = arguments->window.offsets();
  // The forward over a submanifold layer's maps or a strided one's (the
  // same kernel and key either way: the map is not part of it).
  appendCalls(calls, rowBlockCalls(convCall(*arguments, rows, offsets, rows,
                                            /*weightForm=*/0),
                                   firstUse));
  ConvBackwardArguments backward;
  backward.forward = *arguments;
  if (plan.inputGradient)
    appendCalls(
        calls,
        rowBlockCalls(convCall(inputGradientCall(backward), rows, offsets, rows,
                               /*weightForm=*/plan.strided ? 2 : 1),
                      firstUse));
  if (plan.weightGradient)
    calls.emplace_back(kWgradKernel, weightGradCall(rows, offsets, backward));
  return Status::success();
}

} // namespace

Result<std::vector<std::pair<std::string, Call>>>
layerPlanCalls(const std::vector<LayerPlan> &plans) {
  std::vector<std::pair<std::string, Call>> calls;
  for (size_t index = 0; index < plans.size(); ++index)
    TILEC_RETURN_IF_ERROR(
        appendPlanCalls(plans, index, calls, rt::FirstUse::Tune));
  return calls;
}

Result<size_t> compileLayersAhead(SparseEngine &engine,
                                  const std::vector<LayerPlan> &plans) {
  rt::Autotuner &autotuner = engine.autotuner();
  std::vector<std::pair<std::string, Call>> calls;
  size_t firstLayerCalls = 0;
  for (size_t index = 0; index < plans.size(); ++index) {
    TILEC_RETURN_IF_ERROR(
        appendPlanCalls(plans, index, calls, autotuner.firstUse()));
    if (index == 0)
      firstLayerCalls = calls.size();
  }
  // The first layer's calls decide: where the caches (or a bundle, or
  // pins) answer them, the network has most likely been tuned before, and
  // the later layers' planned sizes are guesses whose keys would miss.
  if (std::none_of(calls.begin(), calls.begin() + firstLayerCalls,
                   [&](const auto &call) {
                     return autotuner.wouldTune(call.first, call.second);
                   }))
    return size_t(0);
  return autotuner.compileAhead(calls);
}

} // namespace tilec::sparse
