//===- SubmanifoldConv.cpp - The convolution over cached maps -------------===//
//
// For a call: each row block of convRowBlocks(rows) has its maps and its tuned
// config (the autotuner tunes sparse_conv_fwd over the other parameters on
// the call's own data, or serves the autotune cache); the row block whose
// winner measured fastest runs. The choice is remembered per autotune key.
// A layer's first call on a tensor is recorded in the workload file when
// TILEC_RECORD_WORKLOAD is set (tilec/runtime/Workload.h), before the
// kernel calls it makes, so that `tilec warmup` can replay it.
//
//===----------------------------------------------------------------------===//

#include "CallBinding.h"
#include "PreparedConv.h"

#include "tilec/sparse/SparseConv.h"

#include "tilec/runtime/Launch.h"

#include <algorithm>
#include <limits>

namespace tilec::sparse {
namespace {

// The kernel's pointer arguments for one call over `maps`, with the split
// workspace when there is one.
std::map<std::string, rt::DevicePtr>
convPointers(const ConvArguments &arguments, const NeighbourMaps &maps,
             const SplitWorkspace *workspace) {
  // Unread (no bias, SPLIT_K = 1): any aligned address will do.
  rt::DevicePtr unread = arguments.y;
  return {{"x_ptr", arguments.x},
          {"w_ptr", arguments.weight},
          {"bias_ptr", arguments.bias.address ? arguments.bias : unread},
          {"y_ptr", arguments.y},
          {"nbt_ptr", maps.map->nbt},
          {"order_ptr", maps.map->order},
          {"blk_count_ptr", maps.blkCount},
          {"blk_off_ptr", maps.blkOff},
          {"blk_order_ptr", maps.blkOrder},
          {"ws_ptr", workspace ? workspace->partials.ptr() : unread},
          {"arrivals_ptr", workspace ? workspace->arrivals.ptr() : unread}};
}

bool splitsRowBlocks(const Config &config) {
  auto split = config.params.find("SPLIT_K");
  return split != config.params.end() && split->second > 1;
}

// Whether the tuning of `call` may run a config that splits row blocks: one
// of the configs the autotuner tries that does survives the kernel's
// pruning.
Result<bool> maySplit(const rt::Autotuner &autotuner,
                      const KernelDescription &description, const Call &call) {
  for (const Config &candidate : autotuner.configsToTry(description)) {
    if (!splitsRowBlocks(candidate))
      continue;
    Result<Config> config = description.configForCall(candidate, call);
    if (!config)
      continue; // the tuner reports it
    Result<std::optional<std::string>> pruned =
        description.pruneReason(*config, call);
    if (!pruned)
      return pruned.status();
    if (!*pruned)
      return true;
  }
  return false;
}

// SPLIT_K = 2's buffers at `size`, the counts zeroed on `stream`.
Result<SplitWorkspace> allocateSplitWorkspace(const rt::Context &context,
                                              SplitWorkspaceSize size,
                                              CUstream stream) {
  Result<rt::DeviceBuffer> partials =
      rt::DeviceBuffer::allocate(context, size_t(size.partialFloats) * 4);
  if (!partials)
    return partials.status().withContext("submanifold_conv3d: partial sums");
  Result<rt::DeviceBuffer> arrivals =
      rt::DeviceBuffer::allocate(context, size_t(size.arrivalCounts) * 4);
  if (!arrivals)
    return arrivals.status().withContext("submanifold_conv3d: tile counts");
  TILEC_RETURN_IF_ERROR(arrivals->memset8Async(0, stream));
  return SplitWorkspace{std::move(*partials), std::move(*arrivals)};
}

SplitWorkspaceSize splitWorkspaceSizeOf(const NeighbourMaps &maps,
                                        int64_t co) {
  return splitWorkspaceSize(maps.blocks, maps.blockRows, co);
}

Status checkArguments(const SparseTensor &tensor, const ConvArguments &a) {
  auto fail = [](const std::string &why) {
    return Status::error(ErrorKind::InvalidArgument,
                         "submanifold_conv3d: " + why);
  };
  TILEC_RETURN_IF_ERROR(checkConvShape(a, "submanifold_conv3d"));
  if (a.xStride() < a.ci || a.yStride() < a.co)
    return fail("rows of x and y must not overlap (row strides " +
                std::to_string(a.xStride()) + ", " +
                std::to_string(a.yStride()) + ")");
  if (tensor.voxels() == 0)
    return Status::success();
  return checkDevicePointers("submanifold_conv3d",
                             {{"x", a.x}, {"weight", a.weight}, {"y", a.y}},
                             {{"bias", a.bias}});
}

} // namespace

Status checkDevicePointers(const std::string &function,
                           std::initializer_list<NamedPointer> read,
                           std::initializer_list<NamedPointer> given) {
  auto fail = [&](const std::string &why) {
    return Status::error(ErrorKind::InvalidArgument, function + ": " + why);
  };
  for (const auto &[name, pointer] : read)
    if (pointer.address == 0 || pointer.address % 16)
      return fail(std::string(name) +
                  " must be a 16-byte aligned device pointer");
  for (const auto &[name, pointer] : given)
    if (pointer.address % 16)
      return fail(std::string(name) + " must be 16-byte aligned");
  return Status::success();
}

Status checkConvShape(const ConvArguments &a, const std::string &function) {
  auto fail = [&](const std::string &why) {
    return Status::error(ErrorKind::InvalidArgument, function + ": " + why);
  };
  if (a.ci < 1 || a.co < 1)
    return fail("ci and co must be positive, got " + std::to_string(a.ci) +
                " and " + std::to_string(a.co));
  TILEC_RETURN_IF_ERROR(a.window.check(function));
  if (a.allowTf32 && a.dtype != DType::F32)
    return fail("allow_tf32 applies to f32 only");
  return Status::success();
}

Call convCall(const ConvArguments &arguments, int64_t rows, int64_t offsets,
              int64_t inputRows, int weightForm) {
  Call call;
  call.sizes = {{"N", rows},
                {"CI", arguments.ci},
                {"CO", arguments.co},
                {"V", offsets},
                {"stride_x", arguments.xStride()},
                {"stride_y", arguments.yStride()}};
  // A submanifold convolution's X has its N rows (NI's default).
  if (inputRows != rows)
    call.sizes["NI"] = inputRows;
  call.types = {{"DTYPE", dtypeName(arguments.dtype)}};
  call.params = {{"HAS_BIAS", arguments.bias.address ? 1 : 0},
                 {"TRANSPOSE_W", weightForm},
                 {"ALLOW_TF32", arguments.allowTf32 ? 1 : 0}};
  return call;
}

namespace {

// sparse_conv_fwd's call for a submanifold convolution over `voxels`
// voxels.
Call submanifoldCall(const ConvArguments &arguments, int64_t voxels) {
  return convCall(arguments, voxels, arguments.window.offsets(), voxels,
                  arguments.transposeWeight ? 1 : 0);
}

// The call of one row block: the maps' blocks are the kernel's.
Call rowBlockCall(Call call, int64_t rows) {
  call.params["BLOCK_M"] = rows;
  return call;
}

} // namespace

std::vector<std::pair<std::string, Call>> rowBlockCalls(const Call &call,
                                                        rt::FirstUse firstUse) {
  int64_t n = call.sizes.at("N");
  if (firstUse == rt::FirstUse::Predict)
    return {{kConvKernel, rowBlockCall(call, predictedRowBlock(n))}};
  std::vector<std::pair<std::string, Call>> calls;
  for (int64_t rows : convRowBlocks(n))
    calls.emplace_back(kConvKernel, rowBlockCall(call, rows));
  return calls;
}

// 128-row blocks won 9 of the 18 layers of 2^16 voxels in a SpUNet's
// first-call tunings (H100, f16; up to 1.3x faster where they did), none
// of the 33 layers of 2^15 voxels or fewer (1.05x slower on the median):
// sparse_conv.cpp's predictions are counted with these.
int64_t predictedRowBlock(int64_t rows) {
  const std::vector<int64_t> &blocks = convRowBlocks(rows);
  return rows > (int64_t(1) << 15) ? blocks.back() : blocks.front();
}

const std::vector<int64_t> &convRowBlocks(int64_t rows) {
  static const std::vector<int64_t> small = {64}, both = {64, 128};
  return rows <= 4096 ? small : both;
}

// The row blocks prepareConv chooses between: every one, except where the
// first use predicts and a block is new (no memo, pin, bundle or autotune
// cache entry answers it): then those answered where there are, else the
// predicted one alone.
static std::vector<std::pair<std::string, Call>>
firstUseRowBlocks(SparseEngine &engine, const Call &call) {
  std::vector<std::pair<std::string, Call>> blockCalls = rowBlockCalls(call);
  rt::Autotuner &autotuner = engine.autotuner();
  if (autotuner.firstUse() != rt::FirstUse::Predict)
    return blockCalls;
  std::vector<std::pair<std::string, Call>> answered;
  for (const auto &blockCall : blockCalls)
    if (engine.hasChoice(blockCall.first, blockCall.second) ||
        !autotuner.wouldTune(blockCall.first, blockCall.second))
      answered.push_back(blockCall);
  if (!answered.empty())
    return answered;
  return rowBlockCalls(call, rt::FirstUse::Predict);
}

// A row block whose winner this process already chose needs no maps to
// choose: a new tensor in a known bucket builds the winner's lists alone.
Result<std::unique_ptr<PreparedConv>>
prepareConv(SparseEngine &engine, const ConvMapsOf &mapsOf,
            const ConvArguments &arguments, const Call &call, CUstream stream) {
  // The engine's own description: a new tensor in a known bucket prepares
  // its convolution without describing the kernel anew (a parse and a copy
  // of the description, about 100k host instructions a tensor).
  Result<const KernelDescription *> description = engine.describe(kConvKernel);
  if (!description)
    return description.status();
  // Each row block's tuned kernel and its measured time.
  struct Choice {
    rt::TuneResult tuned;
    int64_t rows = 0;
    Call call;
    std::optional<SplitWorkspace> workspace;
    double medianUs = std::numeric_limits<double>::infinity();
  };
  // The row blocks without a choice tune one after another: their
  // candidates compile in one batch first.
  std::vector<std::pair<std::string, Call>> blockCalls =
      firstUseRowBlocks(engine, call);
  std::vector<bool> chosen;
  std::vector<std::pair<std::string, Call>> tunings;
  for (const auto &[kernel, blockCall] : blockCalls) {
    chosen.push_back(engine.hasChoice(kernel, blockCall));
    if (!chosen.back())
      tunings.emplace_back(kernel, blockCall);
  }
  if (!tunings.empty())
    engine.autotuner().compileAhead(tunings);
  std::optional<Choice> best;
  for (size_t block = 0; block < blockCalls.size(); ++block) {
    Choice choice;
    choice.call = blockCalls[block].second;
    choice.rows = choice.call.params.at("BLOCK_M");
    // The maps are built before select() may tune (which holds the
    // autotuner while it runs the inputs factory, so the map kernels'
    // launches cannot select there).
    const NeighbourMaps *maps = nullptr;
    if (!chosen[block]) {
      Result<const NeighbourMaps *> built = mapsOf(choice.rows, true);
      if (!built)
        return built.status();
      maps = *built;
    }
    // Called only when the tuning runs (not for a pinned, memoized or
    // cached winner), so `maps` is set: the workspace is allocated then,
    // its counts zeroed on the legacy stream, which the benchmarker's
    // launches follow.
    rt::InputsFactory inputs =
        [&]() -> Result<std::shared_ptr<const rt::BenchmarkInputs>> {
      if (!maps)
        return Status::error("sparse_conv_fwd: tuning without maps");
      // Tuning launches on the benchmarker's stream: the maps must be done.
      TILEC_RETURN_IF_ERROR(engine.synchronize(stream));
      // Asked only here: a choice made before needs no workspace yet (and
      // the configs' pruning is evaluated once per tuning, not per tensor).
      Result<bool> split =
          maySplit(engine.autotuner(), **description, choice.call);
      if (!split)
        return split.status();
      if (*split && !choice.workspace) {
        Result<SplitWorkspace> workspace = allocateSplitWorkspace(
            engine.context(), splitWorkspaceSizeOf(*maps, arguments.co),
            nullptr);
        if (!workspace)
          return workspace.status();
        choice.workspace = std::move(*workspace);
      }
      double flops = 2.0 * double(maps->map->activePairs) *
                     double(arguments.ci) * double(arguments.co);
      return std::shared_ptr<const rt::BenchmarkInputs>(
          std::make_shared<CallInputs>(
              **description, choice.call,
              convPointers(arguments, *maps,
                           choice.workspace ? &*choice.workspace : nullptr),
              flops));
    };
    Result<rt::TuneResult> tuned =
        engine.select(kConvKernel, choice.call, inputs);
    if (!tuned)
      return tuned.status();
    choice.tuned = std::move(*tuned);
    if (choice.tuned.medianUs > 0)
      choice.medianUs = choice.tuned.medianUs;
    if (!best || choice.medianUs < best->medianUs)
      best = std::move(choice);
  }
  Result<const NeighbourMaps *> bestMaps = mapsOf(best->rows, false);
  if (!bestMaps)
    return bestMaps.status();
  Result<rt::ArgPack> pack = best->tuned.kernel->makeArgPack();
  if (!pack)
    return pack.status();
  auto slots = bindCall(*pack, **description, best->call,
                        convPointers(arguments, **bestMaps, nullptr));
  if (!slots)
    return slots.status();
  auto prepared = std::make_unique<PreparedConv>(
      best->tuned.kernel, best->tuned.grid, std::move(*pack));
  prepared->generation = engine.choiceGeneration();
  for (const auto &[name, index] : *slots) {
    if (name == "x_ptr")
      prepared->x = index;
    else if (name == "w_ptr")
      prepared->weight = index;
    else if (name == "bias_ptr")
      prepared->bias = index;
    else if (name == "y_ptr")
      prepared->y = index;
    else if (name == "ws_ptr")
      prepared->partials = index;
    else if (name == "arrivals_ptr")
      prepared->arrivals = index;
  }
  prepared->hasBias = arguments.bias.address != 0;
  prepared->split = splitsRowBlocks(best->tuned.config);
  prepared->splitSize = splitWorkspaceSizeOf(**bestMaps, arguments.co);
  // The tuning's launches, all done, left the counts at zero.
  if (prepared->split)
    prepared->workspace = std::move(best->workspace);
  return prepared;
}

namespace {

// A launch of a prepared conv whose winner splits row blocks: the calls
// share one workspace, so a launch on another stream than the last one's
// waits for that one.
Status launchSplit(SparseEngine &engine, PreparedConv &conv, CUstream stream) {
  if (!conv.workspace) {
    Result<SplitWorkspace> workspace =
        allocateSplitWorkspace(engine.context(), conv.splitSize, stream);
    if (!workspace)
      return workspace.status();
    conv.workspace = std::move(*workspace);
  }
  if (!conv.lastLaunch) {
    Result<rt::Event> event =
        rt::Event::create(engine.context(), CU_EVENT_DISABLE_TIMING);
    if (!event)
      return event.status();
    conv.lastLaunch = std::move(*event);
  } else if (stream != conv.lastStream) {
    TILEC_RETURN_IF_ERROR(conv.lastLaunch->makeWait(stream));
  }
  for (auto [index, pointer] :
       {std::pair{conv.partials, conv.workspace->partials.ptr()},
        std::pair{conv.arrivals, conv.workspace->arrivals.ptr()}})
    TILEC_RETURN_IF_ERROR(conv.pack.setPointer(index, pointer));
  TILEC_RETURN_IF_ERROR(rt::launch(*conv.kernel, conv.grid, conv.pack, stream));
  conv.lastStream = stream;
  return conv.lastLaunch->record(stream);
}

} // namespace

PreparedConv *
findPreparedConv(std::map<std::string, std::unique_ptr<PreparedConv>> &convs,
                 const std::string &key, const SparseEngine &engine) {
  auto found = convs.find(key);
  if (found == convs.end())
    return nullptr;
  if (found->second->generation == engine.choiceGeneration())
    return found->second.get();
  convs.erase(found);
  return nullptr;
}

Status launchPrepared(SparseEngine &engine, PreparedConv &conv,
                      const ConvArguments &arguments, CUstream stream) {
  for (auto [index, pointer] : {std::pair{conv.x, arguments.x},
                                std::pair{conv.weight, arguments.weight},
                                std::pair{conv.y, arguments.y}})
    TILEC_RETURN_IF_ERROR(conv.pack.setPointer(index, pointer));
  TILEC_RETURN_IF_ERROR(conv.pack.setPointer(
      conv.bias, conv.hasBias ? arguments.bias : arguments.y));
  if (conv.split)
    return launchSplit(engine, conv, stream);
  return rt::launch(*conv.kernel, conv.grid, conv.pack, stream);
}

SplitWorkspaceSize splitWorkspaceSize(int64_t blocks, int64_t blockRows,
                                      int64_t co) {
  constexpr int64_t kNarrowestColumnTile = 16;
  return {2 * blocks * blockRows * co,
          blocks * ((co + kNarrowestColumnTile - 1) / kNarrowestColumnTile)};
}

Status submanifoldConv3d(SparseEngine &engine, SparseTensor &tensor,
                         const ConvArguments &arguments, CUstream stream) {
  TILEC_RETURN_IF_ERROR(checkArguments(tensor, arguments));
  int64_t n = tensor.voxels();
  if (n == 0)
    return Status::success();
  tensor.noteStream(stream);
  Call call = submanifoldCall(arguments, n);
  // The maps differ by the window's shape and dilation, the kernel only by
  // its count of offsets.
  std::string key = callKey(call) + "," + arguments.window.normalized().str();
  if (PreparedConv *prepared = findPreparedConv(tensor.convs_, key, engine))
    return launchPrepared(engine, *prepared, arguments, stream);
  // The input gradient's kernel calls record themselves (a workload layer
  // is a forward convolution). Windows that differ by a dilation along an
  // axis of extent 1 are one layer: recorded once.
  if (!arguments.transposeWeight) {
    ConvArguments recorded = arguments;
    recorded.window = arguments.window.normalized();
    rt::WorkloadRecorder::process().recordConvLayer(convLayerOf(recorded, n));
  }
  // The first call of the layer on this tensor: its maps (built, where this
  // call is the first to need them, with their check deferred: the
  // convolution is queued behind the build before the host waits for it),
  // the prepared call, its launch, then the maps' check. Where the table
  // took not every voxel, the maps and the call are prepared again, the
  // build checked before the launch (it grows the table).
  for (bool deferCheck : {true, false}) {
    ConvMapsOf mapsOf = [&](int64_t rows, bool tuning) {
      return tensor.findOrBuildMaps(arguments.window, rows, stream,
                                    arguments.ci * arguments.co,
                                    deferCheck && !tuning);
    };
    Result<std::unique_ptr<PreparedConv>> prepared =
        prepareConv(engine, mapsOf, arguments, call, stream);
    Status launched = prepared.status();
    auto found = tensor.convs_.end();
    if (prepared) {
      found = tensor.convs_.emplace(key, std::move(*prepared)).first;
      launched = launchPrepared(engine, *found->second, arguments, stream);
    }
    Result<bool> settled = tensor.settleMaps();
    if (settled && *settled)
      return launched;
    // The maps are dropped: so is the call prepared over them.
    if (prepared)
      tensor.convs_.erase(found);
    if (!settled)
      return settled.status();
  }
  // Not reached: the second pass checks its build before its launch, so
  // settleMaps has nothing to drop.
  return Status::error("submanifold_conv3d: the maps' table did not grow");
}

std::vector<std::pair<std::string, Call>>
convKernelCalls(const ConvArguments &arguments, int64_t voxels) {
  return rowBlockCalls(submanifoldCall(arguments, voxels));
}

rt::ConvLayer convLayerOf(const ConvArguments &arguments, int64_t voxels) {
  rt::ConvLayer layer;
  layer.voxels = voxels;
  layer.inChannels = arguments.ci;
  layer.outChannels = arguments.co;
  layer.kernelSize = arguments.window.kernel;
  layer.dilation = arguments.window.dilation;
  layer.dtype = dtypeName(arguments.dtype);
  layer.bias = arguments.bias.address != 0;
  layer.allowTf32 = arguments.allowTf32;
  // WorkloadCall::convCall spells dense rows one way.
  layer.xRowStride = arguments.xRowStride;
  layer.yRowStride = arguments.yRowStride;
  return layer;
}

Result<ConvArguments> convArgumentsOf(const rt::ConvLayer &layer) {
  ConvArguments arguments;
  if (layer.dtype == "f16")
    arguments.dtype = DType::F16;
  else if (layer.dtype == "bf16")
    arguments.dtype = DType::BF16;
  else if (layer.dtype == "f32")
    arguments.dtype = DType::F32;
  else
    return Status::error(ErrorKind::InvalidArgument,
                         "submanifold_conv3d: the dtype must be f16, bf16 or "
                         "f32, got '" +
                             layer.dtype + "'");
  arguments.ci = layer.inChannels;
  arguments.co = layer.outChannels;
  arguments.xRowStride = layer.xRowStride;
  arguments.yRowStride = layer.yRowStride;
  arguments.window = Window{layer.kernelSize, layer.dilation};
  arguments.allowTf32 = layer.allowTf32;
  return arguments;
}

} // namespace tilec::sparse
