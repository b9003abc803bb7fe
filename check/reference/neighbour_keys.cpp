//===- neighbour_keys.cpp - reference of kernels/neighbour_keys.cpp -------===//
//
// The neighbour map of a test cloud from the host oracle (buildHostMaps),
// and its sort keys (maskSortKey) as the expected output.
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(neighbour_keys)(const ReferenceRequest &request) {
  auto n = request.value("N");
  auto kernelSize = request.value("KX");
  auto v = request.value("V");
  for (const auto *value : {&n, &kernelSize, &v})
    if (!*value)
      return value->status();
  // The oracle's maps are of cubic windows.
  for (const char *axis : {"KY", "KZ"}) {
    auto size = request.value(axis);
    if (!size || *size != *kernelSize)
      return Status::error("neighbour_keys' reference takes KX = KY = KZ");
  }
  sparse::VoxelCloud cloud = testCloud(*n);
  // A dilation of 2 for the larger window, so that rows differ.
  auto maps = buildHostMaps(cloud, static_cast<int>(*kernelSize),
                            *kernelSize > 3 ? 2 : 1, 64);
  if (!maps)
    return maps.status();

  ReferenceProblem problem;
  problem.tensors["nb_ptr"] = int32Tensor(maps->nb);
  problem.tensors["sort_key_ptr"] = HostTensor(ElementFormat::I32, *n);
  HostTensor pairs(ElementFormat::I64, 1);
  pairs.set(0, 0);
  problem.tensors["pairs_ptr"] = std::move(pairs);
  problem.output = "sort_key_ptr";
  if (request.withReference)
    for (uint32_t key : maps->sortKeys)
      problem.expected.push_back(static_cast<int32_t>(key));
  return problem;
}
