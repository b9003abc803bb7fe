//===- neighbour_keys.cpp - reference of kernels/neighbour_keys.cpp -------===//
//
// The neighbour map of a test cloud from the host oracle (buildHostMaps),
// and its sort keys (maskSortKey) as the expected output.
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

#include <algorithm>

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(neighbour_keys)(const ReferenceRequest &request) {
  const char *names[5] = {"N", "KX", "KY", "KZ", "V"};
  int64_t sizes[5];
  for (int i = 0; i < 5; ++i) {
    auto value = request.value(names[i]);
    if (!value)
      return value.status();
    sizes[i] = *value;
  }
  int64_t n = sizes[0], v = sizes[4];
  std::array<int, 3> kernel = {static_cast<int>(sizes[1]),
                               static_cast<int>(sizes[2]),
                               static_cast<int>(sizes[3])};
  if (v != int64_t(kernel[0]) * kernel[1] * kernel[2])
    return Status::error("V must be KX * KY * KZ");
  // A submanifold window's maps (a dilation of 2 for the larger ones, so
  // that rows differ); a strided convolution's window (even extents) sorts
  // its rows too: a random map of its offsets.
  bool odd = kernel[0] % 2 && kernel[1] % 2 && kernel[2] % 2;
  int dilation = *std::max_element(kernel.begin(), kernel.end()) > 3 ? 2 : 1;
  Result<HostMaps> maps =
      odd ? buildHostMaps(testCloud(n),
                          sparse::Window{kernel, {dilation, dilation, dilation}},
                          64)
          : Result<HostMaps>(
                randomHostMaps(n, n, v, 64, request.rng, kernel));
  if (!maps)
    return maps.status();

  ReferenceProblem problem;
  problem.tensors["count_ptr"] = int32Tensor({static_cast<int32_t>(n)});
  problem.tensors["nb_ptr"] = int32Tensor(maps->nb);
  problem.tensors["sort_key_ptr"] = HostTensor(ElementFormat::I32, n);
  HostTensor pairs(ElementFormat::I64, 1);
  pairs.set(0, 0);
  problem.tensors["pairs_ptr"] = std::move(pairs);
  problem.output = "sort_key_ptr";
  if (request.withReference)
    for (uint32_t key : maps->sortKeys)
      problem.expected.push_back(static_cast<int32_t>(key));
  return problem;
}
