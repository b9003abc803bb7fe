//===- mask_cover.cpp - reference of kernels/mask_cover.cpp ---------------===//
//
// The sort keys and the key-sorted row order of a test cloud from the host
// oracle, with its groups' unions and scores; the expected output is each
// row's covering group (coverRound). The values (order[r]) are checked by
// the maps' end-to-end test against the oracle (SparseConvGpuTest).
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(mask_cover)(const ReferenceRequest &request) {
  auto n = request.value("N");
  if (!n)
    return n.status();
  int64_t rows = request.paramOrDefault("ROWS");
  int64_t window = request.paramOrDefault("WINDOW");
  auto maps = buildHostMaps(testCloud(*n), 3, 1, 64, /*coverRounds=*/0);
  if (!maps)
    return maps.status();
  std::vector<int32_t> keys(maps->sortKeys.begin(), maps->sortKeys.end());
  CoverRound round = coverRound(maps->sortKeys, maps->order, rows, window);
  ReferenceProblem problem;
  problem.tensors["count_ptr"] = int32Tensor({static_cast<int32_t>(*n)});
  problem.tensors["order_ptr"] = int32Tensor(maps->order);
  problem.tensors["sort_key_ptr"] = int32Tensor(keys);
  problem.tensors["unions_ptr"] = int32Tensor(round.unions);
  problem.tensors["scores_ptr"] = int32Tensor(round.scores);
  problem.tensors["cover_ptr"] = HostTensor(ElementFormat::I32, *n);
  problem.tensors["values_ptr"] = HostTensor(ElementFormat::I32, *n);
  problem.output = "cover_ptr";
  if (request.withReference)
    problem.expected.assign(round.cover.begin(), round.cover.end());
  return problem;
}
