//===- voxel_neighbours.cpp - reference of kernels/voxel_neighbours.cpp ---===//
//
// The table of a test cloud filled on the host (buildHostVoxelTable), and
// the neighbour map of the host oracle (buildHostMaps) as the expected nb.
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(voxel_neighbours)(const ReferenceRequest &request) {
  const char *names[9] = {"N",  "LOG2_T", "KX", "KY", "KZ",
                          "DX", "DY",     "DZ", "V"};
  int64_t sizes[9];
  for (int i = 0; i < 9; ++i) {
    auto value = request.value(names[i]);
    if (!value)
      return value.status();
    sizes[i] = *value;
  }
  int64_t n = sizes[0], log2Slots = sizes[1], v = sizes[8];
  sparse::Window window;
  for (int axis = 0; axis < 3; ++axis) {
    window.kernel[axis] = static_cast<int>(sizes[2 + axis]);
    window.dilation[axis] = static_cast<int>(sizes[5 + axis]);
  }
  if (v != window.offsets())
    return Status::error("V must be KX * KY * KZ");
  if ((int64_t(1) << log2Slots) < 2 * n)
    return Status::error("the reference needs 2^LOG2_T >= 2N");
  sparse::VoxelCloud cloud = testCloud(n);
  HostVoxelTable table =
      buildHostVoxelTable(cloud, static_cast<int>(log2Slots));

  ReferenceProblem problem;
  HostTensor keys(ElementFormat::I64, table.keys.size());
  for (size_t i = 0; i < table.keys.size(); ++i)
    keys.setInteger(i, table.keys[i]);
  problem.tensors["count_ptr"] = int32Tensor({static_cast<int32_t>(n)});
  problem.tensors["coords_ptr"] = int32Tensor(cloud.coords);
  problem.tensors["keys_ptr"] = std::move(keys);
  problem.tensors["vals_ptr"] = int32Tensor(table.vals);
  problem.tensors["probes_ptr"] = int32Tensor({table.longestProbe});
  problem.tensors["nb_ptr"] = HostTensor(ElementFormat::I32, n * v);
  problem.tensors["sort_key_ptr"] = HostTensor(ElementFormat::I32, n);
  HostTensor pairs(ElementFormat::I64, 1);
  pairs.set(0, 0);
  problem.tensors["pairs_ptr"] = std::move(pairs);
  problem.output = "nb_ptr";
  if (request.withReference) {
    auto maps = buildHostMaps(cloud, window, 64);
    if (!maps)
      return maps.status();
    problem.expected.assign(maps->nb.begin(), maps->nb.end());
  }
  return problem;
}
