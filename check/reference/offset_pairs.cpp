//===- offset_pairs.cpp - reference of kernels/offset_pairs.cpp -----------===//
//
// The sorted, transposed neighbour map of a test cloud from the host oracle
// (buildHostMaps), the prefix sums of its (offset, row chunk) counts as the
// input, and each offset's neighbours in row order (pair_in) as the
// expected output; pair_out and pair_start are checked through
// sparse_conv_wgrad's tests, which read them.
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(offset_pairs)(const ReferenceRequest &request) {
  auto counted = testCloudPairCounts(request);
  if (!counted)
    return counted.status();
  const HostMaps &maps = counted->maps;
  const std::vector<int32_t> &counts = counted->counts;
  int64_t n = maps.voxels, v = maps.offsets;
  std::vector<int32_t> scan(counts.size() + 1, 0);
  for (size_t i = 0; i < counts.size(); ++i)
    scan[i + 1] = scan[i] + counts[i];
  HostOffsetPairs pairs = hostOffsetPairs(maps.nbt, maps.order, n, v);

  ReferenceProblem problem;
  problem.tensors["nbt_ptr"] = int32Tensor(maps.nbt);
  problem.tensors["order_ptr"] = int32Tensor(maps.order);
  problem.tensors["scan_ptr"] = int32Tensor(scan);
  problem.tensors["pair_start_ptr"] = HostTensor(ElementFormat::I32, v + 1);
  problem.tensors["pair_in_ptr"] =
      HostTensor(ElementFormat::I32, std::max<size_t>(1, pairs.in.size()));
  problem.tensors["pair_out_ptr"] =
      HostTensor(ElementFormat::I32, std::max<size_t>(1, pairs.out.size()));
  problem.output = "pair_in_ptr";
  if (request.withReference)
    problem.expected.assign(pairs.in.begin(), pairs.in.end());
  return problem;
}
