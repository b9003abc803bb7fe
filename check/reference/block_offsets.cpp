//===- block_offsets.cpp - reference of kernels/block_offsets.cpp ---------===//
//
// The sorted, transposed map of a test cloud from the host oracle, given as
// its rows' offset masks; the expected output is the blocks' lists at their
// stride of V (the entries past a block's count left poisoned), or with the
// size CHECK_COUNTS=1 the blocks' counts: the kernel writes both, and a
// problem has one output.
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
  auto checkCounts = request.call.sizes.find("CHECK_COUNTS");
  bool counts =
      checkCounts != request.call.sizes.end() && checkCounts->second != 0;
  // A test cloud's maps where V is an odd cube, else a random map of V
  // offsets (a strided or non-cubic window's call).
  auto maps = conventionMaps(request, *n, *n, *v, blockM, 1);
  if (!maps)
    return maps.status();
  ReferenceProblem problem;
  problem.tensors["count_ptr"] = int32Tensor({static_cast<int32_t>(*n)});
  problem.tensors["row_masks_ptr"] = int32Tensor(maps->rowMasks);
  problem.tensors["blocks_ptr"] = int32Tensor({0});
  problem.tensors["blk_count_ptr"] =
      HostTensor(ElementFormat::I32, maps->blkCount.size());
  problem.tensors["blk_off_ptr"] =
      HostTensor(ElementFormat::I32, maps->blkOff.size());
  problem.output = counts ? "blk_count_ptr" : "blk_off_ptr";
  if (request.withReference) {
    if (counts)
      problem.expected.assign(maps->blkCount.begin(), maps->blkCount.end());
    else
      for (int32_t entry : maps->blkOff)
        problem.expected.push_back(entry == kUnlisted ? NAN : entry);
  }
  return problem;
}
