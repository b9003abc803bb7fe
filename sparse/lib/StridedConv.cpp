//===- StridedConv.cpp - Strided and inverse convolutions over their maps -===//
//
// stridedConv3d runs sparse_conv_fwd over the strided maps of its input
// tensor (StridedMaps.cpp): the strided convolution over the map whose rows
// are its outputs, the inverse over the map whose rows are the inputs.
// Each call shape and direction is tuned and prepared once per tensor, as
// a submanifold convolution is (SubmanifoldConv.cpp); the gradients are in
// ConvBackward.cpp.
//
//===----------------------------------------------------------------------===//

#include "CallBinding.h"
#include "PreparedConv.h"

#include "tilec/sparse/SparseConv.h"

namespace tilec::sparse {

Status checkStridedConv(const StridedConvArguments &a, int64_t xRows,
                        int64_t yRows, const std::string &function) {
  auto fail = [&](const std::string &why) {
    return Status::error(ErrorKind::InvalidArgument, function + ": " + why);
  };
  const ConvArguments &c = a.conv;
  if (c.ci < 1 || c.co < 1)
    return fail("ci and co must be positive, got " + std::to_string(c.ci) +
                " and " + std::to_string(c.co));
  if (c.allowTf32 && c.dtype != DType::F32)
    return fail("allow_tf32 applies to f32 only");
  if (c.xStride() < c.ci || c.yStride() < c.co)
    return fail("rows of x and y must not overlap (row strides " +
                std::to_string(c.xStride()) + ", " +
                std::to_string(c.yStride()) + ")");
  return checkDevicePointers(
      function,
      {{"x", xRows > 0 ? c.x : rt::DevicePtr{16}},
       {"weight", xRows > 0 && yRows > 0 ? c.weight : rt::DevicePtr{16}},
       {"y", yRows > 0 ? c.y : rt::DevicePtr{16}}},
      {{"bias", c.bias}});
}

Status SparseTensor::stridedGemm(SparseEngine &engine, StridedEntry &entry,
                                 const ConvArguments &arguments, bool up,
                                 int weightForm, CUstream stream) {
  const StridedMaps &maps = entry.maps;
  int64_t rows = up ? maps.inputs : maps.outputs;
  int64_t inputRows = up ? maps.outputs : maps.inputs;
  if (rows == 0)
    return Status::success();
  noteStream(stream);
  Call call =
      convCall(arguments, rows, maps.geometry.offsets(), inputRows, weightForm);
  std::string key = callKey(call) + (up ? ",up" : ",down");
  PreparedConv *conv = findPreparedConv(entry.convs, key, engine);
  if (!conv) {
    ConvMapsOf mapsOf = [&](int64_t blockRows, bool) {
      return stridedLists(entry, up, blockRows, stream);
    };
    Result<std::unique_ptr<PreparedConv>> prepared =
        prepareConv(engine, mapsOf, arguments, call, stream);
    if (!prepared)
      return prepared.status();
    conv = entry.convs.emplace(key, std::move(*prepared)).first->second.get();
  }
  return launchPrepared(engine, *conv, arguments, stream);
}

Status stridedConv3d(SparseEngine &engine, SparseTensor &input,
                     const StridedConvArguments &arguments, CUstream stream) {
  const char *function =
      arguments.inverse ? "sparse_inverse_conv3d" : "sparse_conv3d";
  Result<SparseTensor::StridedEntry *> entry = input.stridedEntry(
      arguments.geometry, arguments.spatialShape, arguments.batches, stream);
  if (!entry)
    return entry.status().withContext(function);
  const StridedMaps &maps = (*entry)->maps;
  int64_t xRows = arguments.inverse ? maps.outputs : maps.inputs;
  int64_t yRows = arguments.inverse ? maps.inputs : maps.outputs;
  TILEC_RETURN_IF_ERROR(checkStridedConv(arguments, xRows, yRows, function));
  return input.stridedGemm(engine, **entry, arguments.conv, arguments.inverse,
                           /*weightForm=*/0, stream);
}

} // namespace tilec::sparse
