//===- neighbour_transpose.cpp - reference of kernels/neighbour_transpose.cpp
//
// A random map (a fifth of the entries -1) and a random row order.
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

#include <numeric>

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(neighbour_transpose)(const ReferenceRequest &request) {
  auto n = request.value("N");
  auto v = request.value("V");
  for (const auto *value : {&n, &v})
    if (!*value)
      return value->status();
  std::vector<int32_t> nb(*n * *v), order(*n);
  for (int32_t &entry : nb)
    entry = request.rng.below(5) == 0
                ? -1
                : static_cast<int32_t>(request.rng.below(*n));
  std::iota(order.begin(), order.end(), 0);
  for (int64_t i = *n - 1; i > 0; --i)
    std::swap(order[i], order[request.rng.below(i + 1)]);
  ReferenceProblem problem;
  problem.tensors["count_ptr"] = int32Tensor({static_cast<int32_t>(*n)});
  problem.tensors["nb_ptr"] = int32Tensor(nb);
  problem.tensors["order_ptr"] = int32Tensor(order);
  problem.tensors["nbt_ptr"] = HostTensor(ElementFormat::I32, *n * *v);
  // The rows' masks, checked through block_offsets (which reads them) and
  // the maps' tests: a problem has one output.
  problem.tensors["row_masks_ptr"] =
      HostTensor(ElementFormat::I32, *n * ((*v + 31) / 32));
  problem.output = "nbt_ptr";
  if (request.withReference) {
    problem.expected.resize(*n * *v);
    for (int64_t r = 0; r < *n; ++r)
      for (int64_t o = 0; o < *v; ++o)
        problem.expected[o * *n + r] = nb[order[r] * *v + o];
  }
  return problem;
}
