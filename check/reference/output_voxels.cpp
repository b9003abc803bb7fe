//===- output_voxels.cpp - reference of kernels/output_voxels.cpp ---------===//
//
// The candidates of a test cloud through the geometry the call names
// (hostStridedCandidates; N / C voxels, and candidates that are none up to
// N), sorted by key stably on the host. Expected: each program's count of
// outputs (FILL = 0), or the strided convolution's map of the float64
// oracle (FILL = 1, buildHostStridedPairs), which knows nothing of
// candidates.
//
//===----------------------------------------------------------------------===//

#include "StridedConvReference.h"

#include <algorithm>
#include <numeric>

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(output_voxels)(const ReferenceRequest &request) {
  auto n = request.value("N");
  if (!n)
    return n.status();
  auto shape = stridedCallShape(request);
  if (!shape)
    return shape.status();
  auto perVoxel = hostStridedCandidates({}, shape->inputShape, shape->geometry,
                                        shape->batches);
  if (!perVoxel)
    return perVoxel.status();
  sparse::VoxelCloud cloud = testCloud(*n / perVoxel->perVoxel);
  auto candidates = hostStridedCandidates(cloud, shape->inputShape,
                                          shape->geometry, shape->batches);
  if (!candidates)
    return candidates.status();
  std::vector<int32_t> keys = candidates->keys, values = candidates->values;
  keys.resize(*n, int32_t(candidates->cells));
  values.resize(*n, -1);
  std::vector<int64_t> order(*n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return keys[a] < keys[b]; });
  std::vector<int32_t> sortedKeys, sortedValues;
  for (int64_t index : order) {
    sortedKeys.push_back(keys[index]);
    sortedValues.push_back(values[index]);
  }
  // Each program's runs, and their exclusive scan.
  int64_t block = request.paramOrDefault("BLOCK");
  int64_t programs = (*n + block - 1) / block;
  std::vector<int32_t> counts(programs, 0), scan(programs + 1, 0);
  for (int64_t s = 0; s < *n; ++s)
    if (sortedKeys[s] != candidates->cells &&
        (s == 0 || sortedKeys[s] != sortedKeys[s - 1]))
      ++counts[s / block];
  std::partial_sum(counts.begin(), counts.end(), scan.begin() + 1);

  auto pairs = buildHostStridedPairs(cloud, shape->inputShape, shape->geometry);
  if (!pairs)
    return pairs.status();
  HostPairMaps maps = hostPairMaps(*pairs, cloud.size());
  if (scan.back() != pairs->outputs())
    return Status::error("output_voxels' reference: the candidates give " +
                         std::to_string(scan.back()) + " outputs, the " +
                         "oracle " + std::to_string(pairs->outputs()));
  bool fill = request.paramOrDefault("FILL");
  ReferenceProblem problem;
  problem.tensors["keys_ptr"] = int32Tensor(sortedKeys);
  problem.tensors["vals_ptr"] = int32Tensor(sortedValues);
  problem.tensors["counts_ptr"] = HostTensor(ElementFormat::I32, programs);
  problem.tensors["scan_ptr"] = int32Tensor(scan);
  problem.tensors["out_coords_ptr"] = HostTensor(
      ElementFormat::I32, std::max<size_t>(pairs->outCoords.size(), 1));
  problem.tensors["nb_ptr"] =
      HostTensor(ElementFormat::I32, std::max<size_t>(maps.nb.size(), 1));
  problem.tensors["nbi_ptr"] =
      HostTensor(ElementFormat::I32, std::max<size_t>(maps.nbi.size(), 1));
  HostTensor pairCount(ElementFormat::I64, 1);
  pairCount.setInteger(0, 0);
  problem.tensors["pairs_ptr"] = std::move(pairCount);
  problem.tensors["status_ptr"] = int32Tensor({0});
  problem.output = fill ? "nb_ptr" : "counts_ptr";
  if (request.withReference) {
    if (fill)
      problem.expected.assign(maps.nb.begin(), maps.nb.end());
    else
      problem.expected.assign(counts.begin(), counts.end());
    // An empty map still has its one (untouched, all bits set) element.
    if (problem.expected.empty())
      problem.expected.push_back(-1);
  }
  return problem;
}
