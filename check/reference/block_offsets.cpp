//===- block_offsets.cpp - reference of kernels/block_offsets.cpp ---------===//
//
// The sorted, transposed map of a test cloud from the host oracle, given as
// its rows' offset masks; the expected output is the blocks' lists at their
// stride of V (the entries past a block's count left poisoned), or with the
// size CHECK_COUNTS=1 the blocks' counts: the kernel writes both, and a
// problem has one output. With the size LIVE (below N) the live count is
// LIVE, as in a recorded build of a larger bucket: the lists and counts come
// from the first LIVE rows alone, and a block past them reads V + 1 with no
// list.
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

#include <algorithm>
#include <cmath>
#include <string>

using namespace tilec;
using namespace tilec::harness;

// The lists and counts of maps' blocks over its first `live` rows (each
// row's offsets from its masks), V + 1 for a block past them.
static void listLiveRows(HostMaps &maps, int64_t live) {
  int64_t v = maps.offsets, rows = maps.blockRows, words = (v + 31) / 32;
  int64_t blocks = static_cast<int64_t>(maps.blkCount.size());
  for (int64_t b = 0; b < blocks; ++b) {
    int32_t count = 0;
    for (int64_t k = 0; k < v; ++k) {
      int32_t groups = 0;
      for (int64_t r = b * rows; r < std::min((b + 1) * rows, live); ++r)
        if ((maps.rowMasks[r * words + k / 32] >> (k % 32)) & 1)
          groups |= 1 << ((r - b * rows) / 64);
      maps.blkOff[b * v + k] = kUnlisted;
      if (groups)
        maps.blkOff[b * v + count++] = static_cast<int32_t>(k | groups << 16);
    }
    maps.blkCount[b] = b * rows < live ? count : static_cast<int32_t>(v + 1);
  }
}

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
  auto liveSize = request.call.sizes.find("LIVE");
  int64_t live =
      liveSize != request.call.sizes.end() ? liveSize->second : int64_t(*n);
  if (live < 0 || live > *n)
    return Status::error("block_offsets: LIVE (" + std::to_string(live) +
                         ") is not in [0, N]");
  if (live < *n)
    listLiveRows(*maps, live);
  ReferenceProblem problem;
  problem.tensors["count_ptr"] = int32Tensor({static_cast<int32_t>(live)});
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
