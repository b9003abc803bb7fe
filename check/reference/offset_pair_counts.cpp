//===- offset_pair_counts.cpp - reference of kernels/offset_pair_counts.cpp
//===//
//
// The sorted, transposed neighbour map of a test cloud from the host oracle
// (buildHostMaps) and each (offset, row chunk)'s count of neighbours.
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(offset_pair_counts)(const ReferenceRequest &request) {
  auto maps = testCloudMaps(request);
  if (!maps)
    return maps.status();
  int64_t n = maps->voxels, v = maps->offsets;
  int64_t block = request.paramOrDefault("BLOCK");
  std::vector<int32_t> counts = offsetPairCounts(maps->nbt, n, v, block);

  ReferenceProblem problem;
  problem.tensors["nbt_ptr"] = int32Tensor(maps->nbt);
  problem.tensors["counts_ptr"] = HostTensor(ElementFormat::I32, counts.size());
  problem.output = "counts_ptr";
  if (request.withReference)
    problem.expected.assign(counts.begin(), counts.end());
  return problem;
}
