//===- SparseConvReference.h - Neighbour maps computed on the host -*- C++
//-*-===//
//
// The test oracle of the sparse convolution's maps (docs/sparse-conv.md says
// what each is): written independently of the GPU kernels that build them in
// tilec_sparse, so that a test can compare the two element by element.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_TEST_REFERENCE_SPARSECONVREFERENCE_H
#define TILEC_TEST_REFERENCE_SPARSECONVREFERENCE_H

#include "tilec/Harness/Reference.h"
#include "tilec/contract/Status.h"
#include "tilec/sparse/SparseConv.h"
#include "tilec/sparse/VoxelScenes.h"

#include <array>
#include <cstdint>
#include <vector>

namespace tilec::harness {

/// An entry of HostMaps::blkOff past its block's count.
inline constexpr int32_t kUnlisted = -1;

struct HostMaps {
  int64_t voxels = 0, offsets = 0, blockRows = 0;
  /// nb[i * V + v]: the voxel at offset v of voxel i, or -1.
  std::vector<int32_t> nb;
  /// Each voxel's sort key (maskSortKey).
  std::vector<uint32_t> sortKeys;
  /// Sorted row r is voxel order[r]; nbt[v * N + r] = nb[order[r] * V + v].
  std::vector<int32_t> order, nbt;
  /// The sorted rows' offsets with a neighbour (rowOffsetMasks of nbt).
  std::vector<int32_t> rowMasks;
  /// Row block b loops over blkOff[b * V .. b * V + blkCount[b]): each
  /// entry is an offset v | groups << 16, bit g of groups set when some row
  /// of [64 g, 64 g + 64) of the block has a neighbour at v. The entries
  /// past a block's count are kUnlisted here (the GPU leaves them
  /// unwritten).
  std::vector<int32_t> blkCount, blkOff;
  /// The row blocks by ascending count of offsets, stably (equal counts by
  /// block index); the convolution runs them from the end.
  std::vector<int32_t> blkOrder;
};

/// The maps of `cloud` for a kernel of `kernelSize`^3 offsets (odd) with
/// `dilation`, and row blocks of `blockRows`: the rows sorted by their sort
/// keys, then `coverRounds` rounds of coverRound over groups of
/// sparse::kCoverRows rows within sparse::kCoverWindow groups, each followed
/// by a stable sort of the rows by the group chosen. Duplicate voxels are an
/// error.
Result<HostMaps> buildHostMaps(const sparse::VoxelCloud &cloud, int kernelSize,
                               int dilation, int64_t blockRows,
                               int coverRounds = sparse::kCoverRounds);
/// The same for any window (sparse::Window: odd extents per axis, a
/// dilation per axis).
Result<HostMaps> buildHostMaps(const sparse::VoxelCloud &cloud,
                               const sparse::Window &window,
                               int64_t blockRows,
                               int coverRounds = sparse::kCoverRounds);

/// The rest of a map from its `nb`, `sortKeys`, voxels, offsets and
/// blockRows: the rows sorted by key, `coverRounds` cover rounds, nbt, the
/// row blocks' lists and their order (buildHostMaps's second half).
void sortHostMaps(HostMaps &maps, int coverRounds);

/// Each sorted row's offsets with a neighbour in the offset-major map `nbt`
/// of `rows` rows and `v` offsets, as W = cdiv(v, 32) words a row: bit o % 32
/// of word r * W + o / 32 is set where nbt[o * rows + r] != -1
/// (neighbour_transpose's second output, what block_offsets reads).
std::vector<int32_t> rowOffsetMasks(const std::vector<int32_t> &nbt,
                                    int64_t rows, int64_t v);

/// A map of `rows` rows of V offsets whose entries are random rows of
/// [0, inputRows) (two in three) or -1, sorted as a window of `sortWindow`
/// offsets (V x 1 x 1 by default, {0, 1, 1}):
/// the shape of a strided convolution's maps, whose offsets are not an odd
/// cube and whose two sides differ in size.
HostMaps randomHostMaps(int64_t rows, int64_t inputRows, int64_t v,
                        int64_t blockRows, Random &rng,
                        std::array<int, 3> sortWindow = {0, 1, 1});

/// The maps a kernel's reference runs on: testCloud's for `dilation` where
/// V is an odd cube and X has the rows of Y (a submanifold convolution),
/// else randomHostMaps.
Result<HostMaps> conventionMaps(const ReferenceRequest &request, int64_t rows,
                                int64_t inputRows, int64_t v,
                                int64_t blockRows, int dilation);

/// One round of mask_unions and mask_cover over the rows in `order` (row r
/// is voxel order[r], its bitmask the Gray code of sortKeys[order[r]]):
/// unions[g] of the rows [g * rows, (g + 1) * rows), scores[g] =
/// popcount(unions[g]) << 25 | g, and cover[r], the group within `window`
/// of r's own whose union holds r's bitmask, fewest bits first, then the
/// lowest index.
struct CoverRound {
  std::vector<int32_t> unions, scores, cover;
};
CoverRound coverRound(const std::vector<uint32_t> &sortKeys,
                      const std::vector<int32_t> &order, int64_t rows,
                      int64_t window);

/// The sort key of a voxel's neighbour bitmask (`mask[v]` for each offset,
/// V = KS^3 of them): the offsets ranked by the number of axes they move
/// along (3, 1, 2, 0: corners lowest, the centre highest), ties by v;
/// bit rank (V <= 32), else floor(rank * 32 / V), set when the offset has a
/// neighbour; the key is that code's rank in the reflected Gray sequence.
uint32_t maskSortKey(const std::vector<bool> &mask);
/// The same for a window of kernel[0] x kernel[1] x kernel[2] offsets
/// (neighbour_keys' KX, KY, KZ).
uint32_t maskSortKey(const std::vector<bool> &mask,
                     const std::array<int, 3> &kernel);

/// The submanifold convolution in float64 over a neighbour map `nb` [N, V]
/// (HostMaps::nb, -1 where an offset has no neighbour): x [N, ci], w [co,
/// V, ci] (the weights' [Co, Kx, Ky, Kz, Ci] order), bias [co] or empty;
/// y[i, o] = bias[o] + sum over v, c of x[nb[i, v], c] * w[o, v, c].
std::vector<double> hostConvForward(const std::vector<int32_t> &nb, int64_t v,
                                    const std::vector<double> &x,
                                    const std::vector<double> &w,
                                    const std::vector<double> &bias, int64_t ci,
                                    int64_t co);

/// How hostConvForwardRows reads x and w and writes y: rows of x and y
/// `xRowStride` and `yRowStride` elements apart; with `transposedWeights`
/// the weights are those of the input gradient, w[c, V - 1 - v, o] ([ci,
/// V, co], the forward's mirrored and transposed: TRANSPOSE_W).
struct HostConvLayout {
  int64_t xRowStride = 0, yRowStride = 0;
  bool transposedWeights = false;
  /// With transposedWeights: offset k reads the weights of offset V - 1 - k
  /// (a submanifold convolution's input gradient); else of k (a strided
  /// convolution's, over its inverse map).
  bool mirroredOffsets = true;
};
/// Rows [begin, end) of hostConvForward in `layout` into y (bias: co
/// values or null); the kernels' reference runs row ranges in parallel.
void hostConvForwardRows(const std::vector<int32_t> &nb, int64_t v,
                         const double *x, const double *w, const double *bias,
                         int64_t ci, int64_t co, const HostConvLayout &layout,
                         int64_t begin, int64_t end, double *y);

/// The gradients of hostConvForward for an output gradient dy [N, co]:
/// dx[j, c] = sum over (i, v) with nb[i, v] = j of dy[i, o] * w[o, v, c];
/// dw[o, v, c] = sum over i of dy[i, o] * x[nb[i, v], c]; db[o] = sum over
/// i of dy[i, o]. Written from the definition, not from the kernels' plan
/// (dgrad as a forward with mirrored transposed weights), so that a test
/// can check that plan against it.
struct HostConvGradients {
  std::vector<double> dx, dw, db;
};
HostConvGradients hostConvBackward(const std::vector<int32_t> &nb, int64_t v,
                                   const std::vector<double> &x,
                                   const std::vector<double> &w,
                                   const std::vector<double> &dy, int64_t ci,
                                   int64_t co);

/// The voxel hash table of voxel_hash_insert, filled on the host by
/// inserting the voxels in order (the same slots the GPU gives when no two
/// voxels contend; lookups find the same voxels either way): key (b << 48 |
/// x << 32 | y << 16 | z) and index per slot, -1 when empty, and the longest
/// probe sequence used.
struct HostVoxelTable {
  std::vector<int64_t> keys;
  std::vector<int32_t> vals;
  int32_t longestProbe = 0;
};
HostVoxelTable buildHostVoxelTable(const sparse::VoxelCloud &cloud,
                                   int log2Slots);

/// The odd kernel size whose cube is `offsets`; an error otherwise.
Result<int> kernelSizeOf(int64_t offsets);

/// The maps (dilation 1, 64-row blocks) of testCloud(N) for a window of V
/// offsets, N and V the request's, or random ones where V is no odd cube
/// (conventionMaps): what the pair-list kernels' references read.
Result<HostMaps> testCloudMaps(const ReferenceRequest &request);

/// counts[v * chunks + c]: the sorted rows of chunk c (rows [c * block,
/// (c + 1) * block) below n) with a neighbour at offset v in `nbt`
/// (HostMaps::nbt), chunks = cdiv(n, block).
std::vector<int32_t> offsetPairCounts(const std::vector<int32_t> &nbt,
                                      int64_t n, int64_t v, int64_t block);

/// The request's test cloud maps (testCloudMaps) and their offsetPairCounts
/// for its BLOCK: what offset_pair_counts computes and offset_pairs reads.
struct TestCloudPairCounts {
  HostMaps maps;
  std::vector<int32_t> counts;
};
Result<TestCloudPairCounts>
testCloudPairCounts(const ReferenceRequest &request);

/// Each offset's pairs in sorted row order: for v, p in [start[v],
/// start[v + 1]), in[p] = nbt[v * n + r] (the neighbour) and out[p] =
/// order[r] (the voxel around it) for the rows r with one.
struct HostOffsetPairs {
  std::vector<int32_t> start, in, out;
};
HostOffsetPairs hostOffsetPairs(const std::vector<int32_t> &nbt,
                                const std::vector<int32_t> &order, int64_t n,
                                int64_t v);

/// An i32 host tensor of `values` (one element when empty: a kernel still
/// needs an address).
HostTensor int32Tensor(const std::vector<int32_t> &values);

/// `count` voxels for a test: the first `count` of a shell big enough to
/// hold them, so that neighbourhoods look like a real scene's.
sparse::VoxelCloud testCloud(int64_t count);

} // namespace tilec::harness

#endif // TILEC_TEST_REFERENCE_SPARSECONVREFERENCE_H
