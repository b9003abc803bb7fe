//===- ConvBackward.cpp - The convolution's gradients over cached maps ----===//
//
// dX is the forward kernel over the tensor's own maps with the weights read
// mirrored and transposed (sparse_conv_fwd with TRANSPOSE_W; submanifoldConv3d
// tunes and prepares it like a forward call). dW reduces each offset's pair
// list (SparseTensor::offsetPairs) in fixed parts (sparse_conv_wgrad, tuned
// on the call's own data), then adds the parts in order (split_sum); dB adds
// fixed row chunks of dY's columns (column_sums) the same way. The parts'
// partial sums live in the engine's pool, freed on the stream after the
// last kernel that reads them.
//
//===----------------------------------------------------------------------===//

#include "CallBinding.h"
#include "PreparedConv.h"

#include "tilec/sparse/SparseConv.h"

#include <algorithm>
#include <optional>

namespace tilec::sparse {
namespace {

// The parts' partial sums of one weight gradient take at most this much
// memory; fewer parts where the weights are large.
constexpr int64_t kWeightPartsBytes = int64_t(64) << 20;
// Parts of at least this many pairs: fewer make more partial sums to add
// than pairs to reduce.
constexpr int64_t kMinPairsPerPart = 4096;
constexpr int64_t kMaxWeightParts = 32;
// The bias gradient's row chunks: at least kMinBiasRows rows, at most
// kMaxBiasParts chunks (a function of N alone). 8192-row chunks ran 13
// programs at 107k voxels, C = 64, on the H200 (132 us); split_sum waits
// on one load per part, so the parts stay few.
constexpr int64_t kMinBiasRows = 1024;
constexpr int64_t kMaxBiasParts = 128;

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

Status fail(const std::string &why) {
  return Status::error(ErrorKind::InvalidArgument,
                       "submanifold_conv3d_backward: " + why);
}

// dx, dw and db, where given, must be 16-byte aligned.
Status checkGradientAlignment(const ConvBackwardArguments &a,
                              const char *function) {
  return checkDevicePointers(function, {},
                             {{"dx", a.dx}, {"dw", a.dw}, {"db", a.db}});
}

Status checkBackward(const ConvBackwardArguments &a, int64_t voxels) {
  const ConvArguments &f = a.forward;
  TILEC_RETURN_IF_ERROR(checkConvShape(f, "submanifold_conv3d_backward"));
  if (a.dw.address && f.xStride() < f.ci)
    return fail("rows of x must not overlap (row stride " +
                std::to_string(f.xStride()) + ")");
  if (a.forward.transposeWeight)
    return fail("the forward call is a forward convolution (transposeWeight "
                "unset)");
  if (a.dyStride() < a.forward.co)
    return fail("rows of dy must not overlap (row stride " +
                std::to_string(a.dyStride()) + ")");
  if (a.dxStride() < a.forward.ci)
    return fail("rows of dx must not overlap (row stride " +
                std::to_string(a.dxStride()) + ")");
  if (voxels == 0)
    return Status::success();
  TILEC_RETURN_IF_ERROR(checkDevicePointers(
      "submanifold_conv3d_backward",
      {{"dy", a.dy},
       {"weight (for dx)", a.dx.address ? a.forward.weight : rt::DevicePtr{16}},
       {"x (for dw)", a.dw.address ? a.forward.x : rt::DevicePtr{16}}}));
  return checkGradientAlignment(a, "submanifold_conv3d_backward");
}

// The input gradient: the forward kernel with the channels swapped and the
// weights transposed, over the same maps.
Status inputGradient(SparseEngine &engine, SparseTensor &tensor,
                     const ConvBackwardArguments &a, CUstream stream) {
  ConvArguments transposed = inputGradientCall(a);
  transposed.transposeWeight = true;
  return submanifoldConv3d(engine, tensor, transposed, stream);
}

const char *gradDtypeName(const ConvBackwardArguments &a) {
  return a.weightGradF32 ? "f32" : dtypeName(a.forward.dtype);
}

// Adds `parts` f32 partial sums of `total` elements each into `out`, in
// order, on `stream`, then frees them there.
Status addParts(SparseEngine &engine, rt::PoolBuffer parts, int64_t count,
                int64_t total, rt::DevicePtr out, const char *dtype,
                CUstream stream) {
  Status status =
      engine.launch("split_sum", splitSumCall(total, count, dtype),
                    {{"parts_ptr", parts.ptr()}, {"out_ptr", out}}, stream);
  parts.releaseOn(stream);
  return status;
}

// Whether the autotuner has dW's choice for `weightGradient`. On a new shape
// dX tunes its row blocks and dW its own kernel, one after another: their
// candidates compile in one batch first. `inputGradient` is dX's call
// before a row block is chosen, none where dX is not asked for.
bool compileGradientsAhead(SparseEngine &engine,
                           const std::optional<Call> &inputGradient,
                           const Call &weightGradient) {
  if (engine.hasChoice(kWgradKernel, weightGradient))
    return true;
  std::vector<std::pair<std::string, Call>> tunings;
  if (inputGradient)
    tunings =
        rowBlockCalls(*inputGradient, engine.autotuner().firstUse());
  tunings.emplace_back(kWgradKernel, weightGradient);
  engine.autotuner().compileAhead(tunings);
  return false;
}

// dW through `call` (weightGradCall over `pairs`' offsets); `chosen`: the
// autotuner has its choice (compileGradientsAhead said so).
Status weightGradient(SparseEngine &engine, const Call &call, bool chosen,
                      const OffsetPairs &pairs, const ConvBackwardArguments &a,
                      CUstream stream) {
  const ConvArguments &f = a.forward;
  int64_t v = pairs.map->offsets;
  int64_t parts = call.sizes.at("SPLITS");
  int64_t total = f.co * v * f.ci;
  Result<rt::PoolBuffer> partials =
      engine.allocateMaps(size_t(4 * parts * total), stream);
  if (!partials)
    return partials.status().withContext("the weight gradient's partial sums");
  std::map<std::string, rt::DevicePtr> pointers = {
      {"x_ptr", f.x},
      {"dy_ptr", a.dy},
      {"pair_start_ptr", pairs.start},
      {"pair_in_ptr", pairs.in},
      {"pair_out_ptr", pairs.out},
      {"ws_ptr", partials->ptr()}};
  // Tuned on the call's own pairs when no cache or bundle has a winner:
  // the pair lists must be done before the tuner's stream reads them. The
  // autotuner is held while it runs the factory: the description (the
  // engine's, described once) comes first.
  const KernelDescription *description = nullptr;
  if (!chosen) {
    Result<const KernelDescription *> described = engine.describe(kWgradKernel);
    if (!described)
      return described.status();
    description = *described;
  }
  rt::InputsFactory inputs =
      [&]() -> Result<std::shared_ptr<const rt::BenchmarkInputs>> {
    if (!description)
      return Status::error("sparse_conv_wgrad: tuning without a description");
    TILEC_RETURN_IF_ERROR(engine.synchronize(stream));
    double flops =
        2.0 * double(pairs.map->activePairs) * double(f.ci) * double(f.co);
    return std::shared_ptr<const rt::BenchmarkInputs>(
        std::make_shared<CallInputs>(*description, call, pointers, flops));
  };
  TILEC_RETURN_IF_ERROR(
      engine.launch(kWgradKernel, call, pointers, stream, inputs));
  return addParts(engine, std::move(*partials), parts, total, a.dw,
                  gradDtypeName(a), stream);
}

Status biasGradient(SparseEngine &engine, int64_t n,
                    const ConvBackwardArguments &a, CUstream stream) {
  int64_t co = a.forward.co, chunks = biasGradParts(n);
  Result<rt::PoolBuffer> parts =
      engine.allocateMaps(size_t(4 * chunks * co), stream);
  if (!parts)
    return parts.status().withContext("the bias gradient's partial sums");
  TILEC_RETURN_IF_ERROR(engine.launch(
      "column_sums",
      columnSumsCall(n, co, a.dyStride(), dtypeName(a.forward.dtype)),
      {{"y_ptr", a.dy}, {"parts_ptr", parts->ptr()}}, stream));
  return addParts(engine, std::move(*parts), chunks, co, a.db, gradDtypeName(a),
                  stream);
}

// No pair: dw and db are empty sums.
Status zeroParameterGradients(SparseEngine &engine,
                              const ConvBackwardArguments &a, int64_t v,
                              CUstream stream) {
  const ConvArguments &f = a.forward;
  const rt::Driver &driver = engine.context().driver();
  int64_t bytes = a.weightGradF32 || f.dtype == DType::F32 ? 4 : 2;
  for (auto [pointer, count] :
       {std::pair{a.dw, f.co * v * f.ci}, std::pair{a.db, f.co}})
    if (pointer.address)
      TILEC_RETURN_IF_ERROR(driver.check(
          driver.api().cuMemsetD8Async(pointer.address, 0,
                                       size_t(count * bytes), stream),
          "cuMemsetD8Async"));
  return Status::success();
}

} // namespace

ConvArguments inputGradientCall(const ConvBackwardArguments &a) {
  ConvArguments transposed = a.forward;
  transposed.x = a.dy;
  transposed.y = a.dx;
  transposed.bias = {};
  transposed.ci = a.forward.co;
  transposed.co = a.forward.ci;
  transposed.xRowStride = a.dyStride();
  transposed.yRowStride = a.dxStride();
  return transposed;
}

int64_t biasGradRows(int64_t n) {
  return std::max(kMinBiasRows, cdiv(n, kMaxBiasParts));
}

int64_t biasGradParts(int64_t n) { return cdiv(n, biasGradRows(n)); }

Call columnSumsCall(int64_t n, int64_t co, int64_t dyStride,
                    const std::string &dtype) {
  Call call;
  call.sizes = {{"N", n},
                {"C", co},
                {"ROWS_PER_PART", biasGradRows(n)},
                {"stride_y", dyStride}};
  call.types = {{"DTYPE", dtype}};
  return call;
}

Call splitSumCall(int64_t total, int64_t parts, const std::string &dtype) {
  Call call;
  call.sizes = {{"T", total}, {"S", parts}};
  call.types = {{"DTYPE", dtype}};
  return call;
}

Call weightGradCall(int64_t n, int64_t v, const ConvBackwardArguments &a) {
  const ConvArguments &f = a.forward;
  WeightGradSplit split = weightGradSplit(n, v, f.ci, f.co);
  Call call;
  call.sizes = {{"N", n},
                {"CI", f.ci},
                {"CO", f.co},
                {"V", v},
                {"SPLITS", split.parts},
                {"SPLIT_PAIRS", split.pairsPerPart},
                {"stride_x", f.xStride()},
                {"stride_dy", a.dyStride()}};
  call.types = {{"DTYPE", dtypeName(f.dtype)}};
  call.params = {{"ALLOW_TF32", f.allowTf32 ? 1 : 0}};
  return call;
}

WeightGradSplit weightGradSplit(int64_t voxels, int64_t offsets, int64_t ci,
                                int64_t co) {
  // Every offset has at most `voxels` pairs, so parts of cdiv(voxels,
  // parts) cover each list.
  int64_t byPairs =
      std::clamp<int64_t>(voxels / kMinPairsPerPart, 1, kMaxWeightParts);
  int64_t byMemory =
      std::max<int64_t>(1, kWeightPartsBytes / (4 * offsets * ci * co));
  WeightGradSplit split;
  split.parts = std::min(byPairs, byMemory);
  split.pairsPerPart = std::max<int64_t>(1, cdiv(voxels, split.parts));
  return split;
}

Status submanifoldConv3dBackward(SparseEngine &engine, SparseTensor &tensor,
                                 const ConvBackwardArguments &arguments,
                                 CUstream stream) {
  int64_t n = tensor.voxels();
  TILEC_RETURN_IF_ERROR(checkBackward(arguments, n));
  const ConvArguments &f = arguments.forward;
  int64_t v = f.window.offsets();
  if (n == 0)
    return zeroParameterGradients(engine, arguments, v, stream);
  Call weightCall = weightGradCall(n, v, arguments);
  bool weightChosen =
      arguments.dw.address &&
      compileGradientsAhead(
          engine,
          arguments.dx.address
              ? std::optional<Call>(convCall(inputGradientCall(arguments), n, v,
                                             n, /*weightForm=*/1))
              : std::nullopt,
          weightCall);
  if (arguments.dx.address)
    TILEC_RETURN_IF_ERROR(inputGradient(engine, tensor, arguments, stream));
  if (arguments.dw.address) {
    // The forward's checks (channels, kernel, dilation) come first.
    Result<const OffsetPairs *> pairs =
        tensor.offsetPairs(f.window, stream);
    if (!pairs)
      return pairs.status();
    TILEC_RETURN_IF_ERROR(weightGradient(engine, weightCall, weightChosen,
                                         **pairs, arguments, stream));
  }
  if (arguments.db.address)
    return biasGradient(engine, n, arguments, stream);
  return Status::success();
}

Status stridedConv3dBackward(SparseEngine &engine, SparseTensor &input,
                             const StridedConvBackwardArguments &arguments,
                             CUstream stream) {
  const StridedConvArguments &f = arguments.forward;
  const char *function = f.inverse ? "sparse_inverse_conv3d_backward"
                                   : "sparse_conv3d_backward";
  Result<SparseTensor::StridedEntry *> entry =
      input.stridedEntry(f.geometry, f.spatialShape, f.batches, stream);
  if (!entry)
    return entry.status().withContext(function);
  const StridedMaps &maps = (*entry)->maps;
  int64_t xRows = f.inverse ? maps.outputs : maps.inputs;
  int64_t yRows = f.inverse ? maps.inputs : maps.outputs;
  // The gradients as a submanifold convolution's, of this forward.
  ConvBackwardArguments a = arguments.gradients;
  a.forward = f.conv;
  a.forward.transposeWeight = false;
  StridedConvArguments checked = f;
  checked.conv.y = a.dy; // y is not read: dy has its rows
  checked.conv.yRowStride = a.dyRowStride;
  if (!a.dw.address)
    checked.conv.x = rt::DevicePtr{16}; // x is read for dw alone
  if (!a.dx.address)
    checked.conv.weight = rt::DevicePtr{16}; // and the weight for dx
  TILEC_RETURN_IF_ERROR(checkStridedConv(checked, xRows, yRows, function));
  auto fail = [&](const std::string &why) {
    return Status::error(ErrorKind::InvalidArgument,
                         std::string(function) + ": " + why);
  };
  if (a.dxStride() < f.conv.ci)
    return fail("rows of dx must not overlap (row stride " +
                std::to_string(a.dxStride()) + ")");
  TILEC_RETURN_IF_ERROR(checkGradientAlignment(a, function));
  int64_t v = maps.geometry.offsets();
  Call weightCall = weightGradCall(std::max(xRows, yRows), v, a);
  bool weightChosen =
      a.dw.address && xRows > 0 && yRows > 0 &&
      compileGradientsAhead(
          engine,
          a.dx.address ? std::optional<Call>(convCall(inputGradientCall(a),
                                                      xRows, v, yRows,
                                                      /*weightForm=*/2))
                       : std::nullopt,
          weightCall);
  if (a.dx.address && xRows > 0) {
    // dx: the forward kernel over the other map, dy as X, the weights
    // transposed per offset (the offsets are not mirrored: the maps are
    // not symmetric).
    TILEC_RETURN_IF_ERROR(input.stridedGemm(engine, **entry,
                                            inputGradientCall(a),
                                            /*up=*/!f.inverse,
                                            /*weightForm=*/2, stream));
  }
  if (a.dw.address) {
    ConvBackwardArguments weightOnly = a;
    weightOnly.db = {};
    if (xRows == 0 || yRows == 0) {
      TILEC_RETURN_IF_ERROR(
          zeroParameterGradients(engine, weightOnly, v, stream));
    } else {
      // The pairs (x's row, dy's row) of each offset: the map whose rows
      // are y's.
      Result<const OffsetPairs *> pairs =
          input.stridedPairs(**entry, /*up=*/f.inverse, stream);
      if (!pairs)
        return pairs.status();
      TILEC_RETURN_IF_ERROR(weightGradient(engine, weightCall, weightChosen,
                                           **pairs, weightOnly, stream));
    }
  }
  if (!a.db.address)
    return Status::success();
  if (yRows == 0) {
    ConvBackwardArguments biasOnly = a;
    biasOnly.dw = {};
    return zeroParameterGradients(engine, biasOnly, v, stream);
  }
  // Rows of y that read nothing still carry the bias: db sums every row.
  return biasGradient(engine, yRows, a, stream);
}

} // namespace tilec::sparse
