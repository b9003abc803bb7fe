//===- StridedConvReference.cpp - Strided and inverse convolution ---------===//

#include "StridedConvReference.h"

#include <algorithm>
#include <map>
#include <string>

namespace tilec::harness {
namespace {

using Voxel = std::array<int64_t, 4>; // batch, x, y, z

} // namespace

Result<HostConvPairs>
buildHostStridedPairs(const sparse::VoxelCloud &cloud,
                      const std::array<int64_t, 3> &inputShape,
                      const ConvGeometry &geometry) {
  Result<std::array<int64_t, 3>> outShape = geometry.outputShape(inputShape);
  if (!outShape)
    return outShape.status();
  const std::vector<int32_t> &c = cloud.coords;
  std::map<Voxel, int32_t> inputs;
  for (int64_t i = 0; i < cloud.size(); ++i) {
    Voxel voxel{c[4 * i], c[4 * i + 1], c[4 * i + 2], c[4 * i + 3]};
    bool inside = voxel[0] >= 0;
    for (int axis = 0; axis < 3; ++axis)
      inside =
          inside && voxel[axis + 1] >= 0 && voxel[axis + 1] < inputShape[axis];
    if (!inside)
      return Status::error("voxel " + std::to_string(i) +
                           " is outside the input grid");
    if (!inputs.emplace(voxel, int32_t(i)).second)
      return Status::error("voxels " + std::to_string(inputs[voxel]) + " and " +
                           std::to_string(i) + " are the same");
  }

  // Every (output, offset, input) from the inputs: input x reaches output o
  // at offset k where o * stride = x + padding - k * dilation.
  const ConvGeometry &g = geometry;
  std::map<Voxel, std::map<int64_t, int32_t>> reads; // output -> v -> input
  for (const auto &[voxel, index] : inputs)
    for (int kx = 0; kx < g.kernel[0]; ++kx)
      for (int ky = 0; ky < g.kernel[1]; ++ky)
        for (int kz = 0; kz < g.kernel[2]; ++kz) {
          std::array<int, 3> k{kx, ky, kz};
          Voxel out{voxel[0], 0, 0, 0};
          bool valid = true;
          for (int axis = 0; axis < 3 && valid; ++axis) {
            int64_t at = voxel[axis + 1] + g.padding[axis] -
                         int64_t(k[axis]) * g.dilation[axis];
            valid = at >= 0 && at % g.stride[axis] == 0 &&
                    at / g.stride[axis] < (*outShape)[axis];
            out[axis + 1] = valid ? at / g.stride[axis] : 0;
          }
          if (valid)
            reads[out][(int64_t(kx) * g.kernel[1] + ky) * g.kernel[2] + kz] =
                index;
        }

  HostConvPairs pairs;
  pairs.pairs.resize(g.offsets());
  int32_t output = 0;
  for (const auto &[voxel, byOffset] : reads) {
    for (int64_t value : voxel)
      pairs.outCoords.push_back(int32_t(value));
    for (const auto &[v, input] : byOffset)
      pairs.pairs[v].emplace_back(input, output);
    ++output;
  }
  return pairs;
}

std::vector<double> hostPairForward(const HostConvPairs &pairs,
                                    const std::vector<double> &x,
                                    const std::vector<double> &w,
                                    const std::vector<double> &bias, int64_t ci,
                                    int64_t co) {
  int64_t outputs = pairs.outputs(), v = pairs.pairs.size();
  std::vector<double> y(outputs * co, 0.0);
  for (int64_t o = 0; o < outputs; ++o)
    for (int64_t q = 0; q < co; ++q)
      y[o * co + q] = bias.empty() ? 0.0 : bias[q];
  for (int64_t k = 0; k < v; ++k)
    for (const auto &[in, out] : pairs.pairs[k])
      for (int64_t q = 0; q < co; ++q)
        for (int64_t c = 0; c < ci; ++c)
          y[out * co + q] += x[in * ci + c] * w[(q * v + k) * ci + c];
  return y;
}

std::vector<double> hostPairInverse(const HostConvPairs &pairs, int64_t inputs,
                                    const std::vector<double> &x,
                                    const std::vector<double> &w,
                                    const std::vector<double> &bias, int64_t ci,
                                    int64_t co) {
  int64_t v = pairs.pairs.size();
  std::vector<double> y(inputs * co, 0.0);
  for (int64_t i = 0; i < inputs; ++i)
    for (int64_t q = 0; q < co; ++q)
      y[i * co + q] = bias.empty() ? 0.0 : bias[q];
  for (int64_t k = 0; k < v; ++k)
    for (const auto &[in, out] : pairs.pairs[k])
      for (int64_t q = 0; q < co; ++q)
        for (int64_t c = 0; c < ci; ++c)
          y[in * co + q] += x[out * ci + c] * w[(q * v + k) * ci + c];
  return y;
}

HostConvGradients hostPairBackward(const HostConvPairs &pairs, int64_t inputs,
                                   const std::vector<double> &x,
                                   const std::vector<double> &w,
                                   const std::vector<double> &dy, int64_t ci,
                                   int64_t co) {
  int64_t outputs = pairs.outputs(), v = pairs.pairs.size();
  HostConvGradients gradients;
  gradients.dx.assign(inputs * ci, 0.0);
  gradients.dw.assign(co * v * ci, 0.0);
  gradients.db.assign(co, 0.0);
  for (int64_t o = 0; o < outputs; ++o)
    for (int64_t q = 0; q < co; ++q)
      gradients.db[q] += dy[o * co + q];
  for (int64_t k = 0; k < v; ++k)
    for (const auto &[in, out] : pairs.pairs[k])
      for (int64_t q = 0; q < co; ++q) {
        double g = dy[out * co + q];
        for (int64_t c = 0; c < ci; ++c) {
          gradients.dx[in * ci + c] += g * w[(q * v + k) * ci + c];
          gradients.dw[(q * v + k) * ci + c] += g * x[in * ci + c];
        }
      }
  return gradients;
}

Result<HostStridedCandidates>
hostStridedCandidates(const sparse::VoxelCloud &cloud,
                      const std::array<int64_t, 3> &inputShape,
                      const ConvGeometry &geometry, int64_t batches) {
  Result<std::array<int64_t, 3>> outShape = geometry.outputShape(inputShape);
  if (!outShape)
    return outShape.status();
  const ConvGeometry &g = geometry;
  HostStridedCandidates result;
  result.outputShape = *outShape;
  std::array<int64_t, 3> along{};
  result.perVoxel = 1;
  for (int axis = 0; axis < 3; ++axis) {
    along[axis] = g.candidatesAlong(axis);
    result.perVoxel *= along[axis];
  }
  const std::array<int64_t, 3> &o = *outShape;
  result.cells = batches * o[0] * o[1] * o[2];
  int64_t v = g.offsets();
  for (int64_t i = 0; i < cloud.size(); ++i) {
    const int32_t *voxel = &cloud.coords[4 * i];
    bool inside = voxel[0] >= 0 && voxel[0] < batches;
    for (int axis = 0; axis < 3; ++axis)
      inside = inside && voxel[axis + 1] >= 0 &&
               voxel[axis + 1] < inputShape[axis];
    for (int64_t c = 0; c < result.perVoxel; ++c) {
      std::array<int64_t, 3> j = {c / (along[1] * along[2]),
                                  c / along[2] % along[1], c % along[2]};
      std::array<int64_t, 3> out{}, k{};
      bool exists = inside;
      for (int axis = 0; axis < 3 && exists; ++axis) {
        int64_t shifted = voxel[axis + 1] + g.padding[axis];
        out[axis] = shifted / g.stride[axis] - j[axis];
        int64_t reach = shifted - out[axis] * g.stride[axis];
        k[axis] = reach / g.dilation[axis];
        exists = out[axis] >= 0 && out[axis] < o[axis] &&
                 reach % g.dilation[axis] == 0 &&
                 reach < int64_t(g.kernel[axis]) * g.dilation[axis];
      }
      result.keys.push_back(
          exists ? int32_t(((voxel[0] * o[0] + out[0]) * o[1] + out[1]) * o[2] +
                           out[2])
                 : int32_t(result.cells));
      result.values.push_back(
          exists ? int32_t(i * v + (k[0] * g.kernel[1] + k[1]) * g.kernel[2] +
                           k[2])
                 : -1);
    }
  }
  return result;
}

HostPairMaps hostPairMaps(const HostConvPairs &pairs, int64_t inputs) {
  int64_t v = pairs.pairs.size();
  HostPairMaps maps;
  maps.nb.assign(pairs.outputs() * v, -1);
  maps.nbi.assign(inputs * v, -1);
  for (int64_t k = 0; k < v; ++k)
    for (const auto &[in, out] : pairs.pairs[k]) {
      maps.nb[out * v + k] = in;
      maps.nbi[in * v + k] = out;
    }
  return maps;
}

Result<StridedCallShape> stridedCallShape(const ReferenceRequest &request) {
  StridedCallShape shape;
  const char *axes = "XYZ";
  for (int axis = 0; axis < 3; ++axis) {
    std::pair<const char *, int *> fields[] = {
        {"K", &shape.geometry.kernel[axis]},
        {"S", &shape.geometry.stride[axis]},
        {"P", &shape.geometry.padding[axis]},
        {"D", &shape.geometry.dilation[axis]}};
    for (auto [prefix, field] : fields) {
      Result<int64_t> value = request.value(prefix + std::string(1, axes[axis]));
      if (!value)
        return value.status();
      *field = static_cast<int>(*value);
    }
    Result<int64_t> size = request.value("I" + std::string(1, axes[axis]));
    if (!size)
      return size.status();
    shape.inputShape[axis] = *size;
  }
  Result<int64_t> batches = request.value("B");
  shape.batches = batches ? *batches : 1;
  return shape;
}

} // namespace tilec::harness
