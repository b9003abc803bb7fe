//===- voxel_hash_insert.cpp - reference of kernels/voxel_hash_insert.cpp -===//
//
// A test cloud with its last two voxels moved out of range (a negative and
// a too large coordinate, status 3) into an empty table: every other voxel
// is inserted (status 0). Duplicates are left to the maps' GPU test, since
// which copy of a duplicate wins depends on timing.
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(voxel_hash_insert)(const ReferenceRequest &request) {
  auto n = request.value("N");
  auto log2Slots = request.value("LOG2_T");
  auto v = request.value("V");
  for (const auto *value : {&n, &log2Slots, &v})
    if (!*value)
      return value->status();
  if (*n < 3 || (int64_t(1) << *log2Slots) < 2 * *n)
    return Status::error("the reference needs N >= 3 and 2^LOG2_T >= 2N");
  sparse::VoxelCloud cloud = testCloud(*n);
  cloud.coords[4 * (*n - 1) + 1] = -3;
  cloud.coords[4 * (*n - 2) + 3] = 1 << 16;

  ReferenceProblem problem;
  HostTensor keys(ElementFormat::I64, size_t(1) << *log2Slots);
  for (size_t i = 0; i < keys.size(); ++i)
    keys.set(i, -1);
  problem.tensors["count_ptr"] = int32Tensor({static_cast<int32_t>(*n)});
  problem.tensors["coords_ptr"] = int32Tensor(cloud.coords);
  problem.tensors["keys_ptr"] = std::move(keys);
  problem.tensors["vals_ptr"] =
      HostTensor(ElementFormat::I32, size_t(1) << *log2Slots);
  problem.tensors["status_ptr"] = HostTensor(ElementFormat::I32, *n);
  problem.tensors["probes_ptr"] = int32Tensor({0, 0});
  // The rows the lookups fill next, poisoned (the insert sets them to -1).
  problem.tensors["nb_ptr"] =
      int32Tensor(std::vector<int32_t>(size_t(*n * *v), 7));
  problem.output = "status_ptr";
  if (request.withReference) {
    problem.expected.assign(*n, 0);
    problem.expected[*n - 1] = problem.expected[*n - 2] = 3;
  }
  return problem;
}
