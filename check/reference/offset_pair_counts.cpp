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
  auto counted = testCloudPairCounts(request);
  if (!counted)
    return counted.status();
  const std::vector<int32_t> &counts = counted->counts;

  ReferenceProblem problem;
  problem.tensors["nbt_ptr"] = int32Tensor(counted->maps.nbt);
  problem.tensors["counts_ptr"] = HostTensor(ElementFormat::I32, counts.size());
  problem.output = "counts_ptr";
  if (request.withReference)
    problem.expected.assign(counts.begin(), counts.end());
  return problem;
}
