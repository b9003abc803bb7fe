//===- block_offsets.cpp - reference of kernels/block_offsets.cpp ---------===//
//
// The sorted, transposed map of a test cloud from the host oracle, given as
// its rows' offset masks; the expected output is its per-block offset
// counts (FILL = 0) or lists (FILL = 1, with the block starts as input).
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

#include <cmath>

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(block_offsets)(const ReferenceRequest &request) {
  auto n = request.value("N");
  auto v = request.value("V");
  for (const auto *value : {&n, &v})
    if (!*value)
      return value->status();
  int64_t blockM = request.paramOrDefault("BLOCK_M");
  bool fill = request.paramOrDefault("FILL");
  // A test cloud's maps where V is an odd cube, else a random map of V
  // offsets (a strided or non-cubic window's call).
  auto maps = conventionMaps(request, *n, *n, *v, blockM, 1);
  if (!maps)
    return maps.status();
  int64_t blocks = static_cast<int64_t>(maps->blkStart.size()) - 1;
  ReferenceProblem problem;
  problem.tensors["count_ptr"] = int32Tensor({static_cast<int32_t>(*n)});
  problem.tensors["row_masks_ptr"] = int32Tensor(maps->rowMasks);
  problem.tensors["counts_ptr"] = HostTensor(ElementFormat::I32, blocks);
  problem.tensors["blk_start_ptr"] = int32Tensor(maps->blkStart);
  problem.tensors["blk_off_ptr"] =
      HostTensor(ElementFormat::I32, std::max<size_t>(maps->blkOff.size(), 1));
  problem.output = fill ? "blk_off_ptr" : "counts_ptr";
  if (request.withReference) {
    if (fill)
      problem.expected.assign(maps->blkOff.begin(), maps->blkOff.end());
    else
      for (int64_t b = 0; b < blocks; ++b)
        problem.expected.push_back(maps->blkStart[b + 1] - maps->blkStart[b]);
    // An empty list still has its one (untouched) element.
    if (problem.expected.empty())
      problem.expected.push_back(NAN);
  }
  return problem;
}
