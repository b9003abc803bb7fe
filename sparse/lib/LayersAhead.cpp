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

#include "CallBinding.h"
#include "MapBuild.h"
#include "PreparedConv.h"

#include "tilec/runtime/Autotuner.h"

#include <algorithm>
#include <set>

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

// A strided plan's stride and padding: 0 (a stride not given) to
// kMaxStridedStep, as a strided build takes them; none for a submanifold
// layer.
Status checkSteps(const LayerPlan &plan, const std::string &function) {
  for (int axis = 0; axis < 3; ++axis)
    for (auto [name, value] : {std::pair{"stride", plan.stride[axis]},
                               std::pair{"padding", plan.padding[axis]}}) {
      std::string along =
          function + ": the " + name + " along " + std::string(1, "xyz"[axis]);
      if (!plan.strided && value != 0)
        return Status::error(ErrorKind::InvalidArgument,
                             along +
                                 " must be 0 (a submanifold layer has "
                                 "none), got " +
                                 std::to_string(value));
      if (value < 0 || value > kMaxStridedStep)
        return Status::error(ErrorKind::InvalidArgument,
                             along + " must be 0 to " +
                                 std::to_string(kMaxStridedStep) + ", got " +
                                 std::to_string(value));
    }
  return Status::success();
}

// A plan's layer as its calls will check it: voxels a tensor can hold,
// channels, the window (odd extents where the layer is submanifold, 1 to 7
// either way), tf32 for f32 only, the stride and padding (checkSteps).
Status checkPlan(const LayerPlan &plan, const ConvArguments &arguments,
                 size_t index) {
  std::string function = "layer plan " + std::to_string(index);
  if (plan.layer.voxels < 1 || plan.layer.voxels >= kVoxelLimit)
    return Status::error(ErrorKind::InvalidArgument,
                         function +
                             ": the voxels must be from 1 to 2^28 - 1, "
                             "got " +
                             std::to_string(plan.layer.voxels));
  TILEC_RETURN_IF_ERROR(checkSteps(plan, function));
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

// The smallest power of two of voxels a first use that predicts plans a
// layer's calls for (plannedCounts).
constexpr int kSmallestPlannedLog2 = 6;

// The voxel counts a layer's first calls are planned at: its planned count;
// where the first use predicts, then one count of each smaller power of
// two down to 2^kSmallestPlannedLog2. A network's layers after a strided
// one run on fewer voxels than the example (a stride-2 layer keeps about a
// quarter of a surface's, an eighth of a volume's), and the predictions
// change with the count's power of two: planned at every one, each level's
// prediction compiles at the start, on every core, instead of when the
// level's first layer runs. A tuning plans the count alone: every
// candidate of every power of two would be too many compiles.
std::vector<int64_t> plannedCounts(int64_t voxels, rt::FirstUse firstUse) {
  std::vector<int64_t> counts = {voxels};
  if (firstUse != rt::FirstUse::Predict)
    return counts;
  // 2^(log2 - 1) + 1, the smallest count whose ceil(log2) (the keys'
  // bucket) is log2.
  for (int log2 = ceilLog2(voxels) - 1; log2 >= kSmallestPlannedLog2; --log2)
    counts.push_back((int64_t(1) << (log2 - 1)) + 1);
  return counts;
}

// Appends the calls of `plans[index]`'s first calls over `rows` voxels to
// `calls`: its forward row blocks, then its input gradient's, then its
// weight gradient; the predicted row blocks alone where the first use
// predicts.
Status appendPlanCalls(const std::vector<LayerPlan> &plans, size_t index,
                       int64_t rows,
                       std::vector<std::pair<std::string, Call>> &calls,
                       rt::FirstUse firstUse) {
  const LayerPlan &plan = plans[index];
  Result<ConvArguments> arguments = convArgumentsOf(plan.layer);
  if (!arguments)
    return arguments.status();
  TILEC_RETURN_IF_ERROR(checkPlan(plan, *arguments, index));
  if (plan.layer.bias)
    arguments->bias = rt::DevicePtr{kPlannedBias};
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

// `calls` less the repeats of a call (layers of one shape), in order: a
// call is its kernel and callKey, as the engine's plans know it.
std::vector<std::pair<std::string, Call>>
withoutRepeats(std::vector<std::pair<std::string, Call>> calls) {
  std::set<std::string> seen;
  std::vector<std::pair<std::string, Call>> kept;
  for (auto &[kernel, call] : calls)
    if (seen.insert(kernel + callKey(call)).second)
      kept.emplace_back(std::move(kernel), std::move(call));
  return kept;
}

// The maps' kernels of a strided layer's first call over its planned
// count: its build's own where the plan gives the stride and padding (a
// grid the kernels accept: only the geometry specializes them), else those
// of its maps' sorts alone (an inverse layer builds nothing; their cubins
// serve its strided layer's build).
std::vector<std::pair<std::string, Call>>
stridedMapCalls(const LayerPlan &plan, const Window &window) {
  ConvGeometry geometry;
  geometry.kernel = window.kernel;
  geometry.dilation = window.dilation;
  int64_t n = plan.layer.voxels;
  if (std::all_of(plan.stride.begin(), plan.stride.end(),
                  [](int stride) { return stride >= 1; })) {
    geometry.stride = plan.stride;
    geometry.padding = plan.padding;
    // 64 cells an axis beyond the window's reach: an output on every axis.
    std::array<int64_t, 3> input;
    for (int axis = 0; axis < 3; ++axis)
      input[axis] =
          64 + int64_t(geometry.dilation[axis]) * (geometry.kernel[axis] - 1);
    if (Result<std::array<int64_t, 3>> output = geometry.outputShape(input))
      return stridedBuildCalls(n, geometry, input, *output, /*batches=*/1);
  }
  std::vector<std::pair<std::string, Call>> calls;
  appendSortedMapCalls(calls, n, geometry);
  return calls;
}

} // namespace

Result<std::vector<std::pair<std::string, Call>>>
layerPlanCalls(const std::vector<LayerPlan> &plans, rt::FirstUse firstUse) {
  std::vector<std::vector<int64_t>> counts;
  size_t deepest = 0;
  for (const LayerPlan &plan : plans) {
    counts.push_back(plannedCounts(plan.layer.voxels, firstUse));
    deepest = std::max(deepest, counts.back().size());
  }
  // Every layer at its planned count first, then every layer at each
  // smaller power of two in turn: the order a network's levels come in.
  std::vector<std::pair<std::string, Call>> calls;
  for (size_t depth = 0; depth < deepest; ++depth)
    for (size_t index = 0; index < plans.size(); ++index)
      if (depth < counts[index].size())
        TILEC_RETURN_IF_ERROR(appendPlanCalls(
            plans, index, counts[index][depth], calls, firstUse));
  return withoutRepeats(std::move(calls));
}

std::vector<std::pair<std::string, Call>>
layerSingleConfigCalls(const std::vector<LayerPlan> &plans) {
  std::vector<std::pair<std::string, Call>> calls;
  std::set<std::pair<Window, bool>> mapBuilds;
  for (const LayerPlan &plan : plans) {
    Result<ConvArguments> arguments = convArgumentsOf(plan.layer);
    if (!arguments)
      continue;
    const ConvArguments &f = *arguments;
    int64_t n = plan.layer.voxels;
    Window window = f.window.normalized();
    int64_t v = window.offsets();
    bool lean = f.ci * f.co >= kLeanGroupsMinChannels;
    // A radix pass's programs take keys by the size bucket
    // (radixPerProgram), so the builds at n and at each halving of it: one
    // count in every bucket below n.
    bool buildsMaps = plan.strided || mapBuilds.emplace(window, lean).second;
    for (int64_t count = n; buildsMaps && count >= 1; count /= 2) {
      LayerPlan atCount = plan;
      atCount.layer.voxels = count;
      appendCalls(calls, plan.strided ? stridedMapCalls(atCount, window)
                                      : mapBuildCalls(count, window, lean));
    }
    if (!plan.weightGradient)
      continue;
    appendCalls(calls, pairListCalls(n, v));
    // The sums are written in the features' dtype, or in f32 where the
    // weights are (autocast's f32 weights): the plan does not say which.
    const char *dtype = dtypeName(f.dtype);
    for (const char *sumType : {dtype, "f32"}) {
      calls.emplace_back("split_sum",
                         splitSumCall(f.co * v * f.ci,
                                      weightGradSplit(n, v, f.ci, f.co).parts,
                                      sumType));
      if (plan.layer.bias)
        calls.emplace_back("split_sum",
                           splitSumCall(f.co, biasGradParts(n), sumType));
    }
    if (plan.layer.bias)
      calls.emplace_back("column_sums", columnSumsCall(n, f.co, f.co, dtype));
  }
  return withoutRepeats(std::move(calls));
}

Result<size_t> compileLayersAhead(SparseEngine &engine,
                                  const std::vector<LayerPlan> &plans) {
  rt::Autotuner &autotuner = engine.autotuner();
  rt::FirstUse firstUse = autotuner.firstUse();
  Result<std::vector<std::pair<std::string, Call>>> calls =
      layerPlanCalls(plans, firstUse);
  if (!calls)
    return calls.status();
  // The first layer's calls decide: where the caches (or a bundle, or
  // pins) answer them, the network has most likely been tuned before, and
  // the later layers' planned sizes are guesses whose keys would miss.
  std::vector<std::pair<std::string, Call>> firstLayer;
  if (!plans.empty())
    TILEC_RETURN_IF_ERROR(
        appendPlanCalls(plans, 0, plans[0].layer.voxels, firstLayer, firstUse));
  if (std::none_of(firstLayer.begin(), firstLayer.end(), [&](const auto &call) {
        return autotuner.wouldTune(call.first, call.second);
      }))
    return size_t(0);
  // The convolutions first, so that the compile workers are limited to the
  // tuner's jobs before any starts; the single-config kernels still go to
  // the front of the queue, as a build's own precompile does.
  size_t queued = autotuner.compileAhead(*calls);
  engine.precompile(layerSingleConfigCalls(plans));
  return queued;
}

} // namespace tilec::sparse
