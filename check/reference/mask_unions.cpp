//===- mask_unions.cpp - reference of kernels/mask_unions.cpp -------------===//
//
// The sort keys and the key-sorted row order of a test cloud from the host
// oracle; the expected output is each group's union (coverRound). The
// scores are checked by the maps' end-to-end test against the oracle
// (SparseConvGpuTest), which mask_cover's choices depend on.
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(mask_unions)(const ReferenceRequest &request) {
  auto n = request.value("N");
  if (!n)
    return n.status();
  int64_t rows = request.paramOrDefault("ROWS");
  auto maps = buildHostMaps(testCloud(*n), 3, 1, 64, /*coverRounds=*/0);
  if (!maps)
    return maps.status();
  std::vector<int32_t> keys(maps->sortKeys.begin(), maps->sortKeys.end());
  ReferenceProblem problem;
  problem.tensors["count_ptr"] = int32Tensor({static_cast<int32_t>(*n)});
  problem.tensors["order_ptr"] = int32Tensor(maps->order);
  problem.tensors["sort_key_ptr"] = int32Tensor(keys);
  problem.tensors["unions_ptr"] =
      HostTensor(ElementFormat::I32, (*n + rows - 1) / rows);
  problem.tensors["scores_ptr"] =
      HostTensor(ElementFormat::I32, (*n + rows - 1) / rows);
  problem.output = "unions_ptr";
  if (request.withReference) {
    CoverRound round = coverRound(maps->sortKeys, maps->order, rows, 0);
    problem.expected.assign(round.unions.begin(), round.unions.end());
  }
  return problem;
}
