//===- SparseConvReference.cpp - Neighbour maps computed on the host ------===//

#include "SparseConvReference.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <tuple>

namespace tilec::harness {

uint32_t maskSortKey(const std::vector<bool> &mask) {
  int64_t offsets = static_cast<int64_t>(mask.size());
  int kernelSize = 1;
  while (int64_t(kernelSize) * kernelSize * kernelSize < offsets)
    ++kernelSize;
  return maskSortKey(mask, {kernelSize, kernelSize, kernelSize});
}

uint32_t maskSortKey(const std::vector<bool> &mask,
                     const std::array<int, 3> &kernel) {
  int64_t offsets = static_cast<int64_t>(mask.size());
  // An offset's class by the number of axes it moves along (offset K / 2 of
  // an axis stays): corners lowest, then faces, edges and the centre.
  auto classOf = [&](int64_t v) {
    int64_t coords[3] = {v / (kernel[1] * kernel[2]),
                         v / kernel[2] % kernel[1], v % kernel[2]};
    int axes = 0;
    for (int axis = 0; axis < 3; ++axis)
      axes += coords[axis] != kernel[axis] / 2;
    static const int kClassOfAxes[4] = {3, 1, 2, 0};
    return kClassOfAxes[axes];
  };
  std::vector<int64_t> byRank(offsets);
  std::iota(byRank.begin(), byRank.end(), 0);
  std::stable_sort(byRank.begin(), byRank.end(), [&](int64_t a, int64_t b) {
    return classOf(a) < classOf(b);
  });
  uint32_t code = 0;
  for (int64_t rank = 0; rank < offsets; ++rank)
    if (mask[byRank[rank]])
      code |= 1u << (offsets <= 32 ? rank : rank * 32 / offsets);
  // The code's place in the reflected Gray sequence.
  // Bit b of it is the XOR of the code's bits b and above.
  uint32_t key = code;
  for (uint32_t above = code >> 1; above != 0; above >>= 1)
    key ^= above;
  return key;
}

CoverRound coverRound(const std::vector<uint32_t> &sortKeys,
                      const std::vector<int32_t> &order, int64_t rows,
                      int64_t window) {
  int64_t n = static_cast<int64_t>(order.size());
  int64_t groups = (n + rows - 1) / rows;
  auto code = [&](int64_t r) {
    uint32_t key = sortKeys[order[r]];
    return key ^ (key >> 1);
  };
  CoverRound round;
  round.unions.assign(groups, 0);
  for (int64_t r = 0; r < n; ++r)
    round.unions[r / rows] |= static_cast<int32_t>(code(r));
  for (int64_t g = 0; g < groups; ++g)
    round.scores.push_back(
        __builtin_popcount(static_cast<uint32_t>(round.unions[g])) << 25 |
        static_cast<int32_t>(g));
  round.cover.resize(n);
  for (int64_t r = 0; r < n; ++r) {
    int64_t own = r / rows, best = own;
    for (int64_t g = std::max<int64_t>(0, own - window);
         g <= std::min(groups - 1, own + window); ++g) {
      auto bits = [&](int64_t group) {
        return __builtin_popcount(static_cast<uint32_t>(round.unions[group]));
      };
      bool holds = (code(r) & ~static_cast<uint32_t>(round.unions[g])) == 0;
      bool leaner =
          bits(g) < bits(best) || (bits(g) == bits(best) && g < best);
      if (holds && leaner)
        best = g;
    }
    round.cover[r] = static_cast<int32_t>(best);
  }
  return round;
}

Result<HostMaps> buildHostMaps(const sparse::VoxelCloud &cloud, int kernelSize,
                               int dilation, int64_t blockRows,
                               int coverRounds) {
  return buildHostMaps(cloud, sparse::Window::cube(kernelSize, dilation),
                       blockRows, coverRounds);
}

Result<HostMaps> buildHostMaps(const sparse::VoxelCloud &cloud,
                               const sparse::Window &window,
                               int64_t blockRows, int coverRounds) {
  // Its loops visit K / 2 on either side: an odd extent's offsets, never
  // more than V of them.
  TILEC_RETURN_IF_ERROR(window.check("the host oracle's maps"));
  using Key = std::tuple<int32_t, int32_t, int32_t, int32_t>;
  std::map<Key, int32_t> index;
  int64_t n = cloud.size();
  const std::vector<int32_t> &c = cloud.coords;
  for (int64_t i = 0; i < n; ++i)
    if (!index
             .emplace(Key{c[4 * i], c[4 * i + 1], c[4 * i + 2], c[4 * i + 3]},
                      static_cast<int32_t>(i))
             .second)
      return Status::error(
          "voxel " + std::to_string(i) + " repeats voxel " +
          std::to_string(
              index[Key{c[4 * i], c[4 * i + 1], c[4 * i + 2], c[4 * i + 3]}]));
  HostMaps maps;
  const std::array<int, 3> &k = window.kernel, &d = window.dilation;
  int64_t v = window.offsets();
  maps.voxels = n;
  maps.offsets = v;
  maps.blockRows = blockRows;
  maps.nb.assign(n * v, -1);
  std::vector<uint32_t> &keys = maps.sortKeys;
  keys.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<bool> mask(v);
    int64_t offset = 0;
    for (int dx = -k[0] / 2; dx <= k[0] / 2; ++dx)
      for (int dy = -k[1] / 2; dy <= k[1] / 2; ++dy)
        for (int dz = -k[2] / 2; dz <= k[2] / 2; ++dz, ++offset) {
          auto found = index.find(Key{c[4 * i], c[4 * i + 1] + dx * d[0],
                                      c[4 * i + 2] + dy * d[1],
                                      c[4 * i + 3] + dz * d[2]});
          if (found == index.end())
            continue;
          maps.nb[i * v + offset] = found->second;
          mask[offset] = true;
        }
    keys[i] = maskSortKey(mask, k);
  }
  sortHostMaps(maps, coverRounds);
  return maps;
}

std::vector<int32_t> rowOffsetMasks(const std::vector<int32_t> &nbt,
                                    int64_t rows, int64_t v) {
  int64_t words = (v + 31) / 32;
  std::vector<int32_t> masks(rows * words, 0);
  for (int64_t o = 0; o < v; ++o)
    for (int64_t r = 0; r < rows; ++r)
      if (nbt[o * rows + r] != -1)
        masks[r * words + o / 32] |= int32_t(uint32_t(1) << (o % 32));
  return masks;
}

void sortHostMaps(HostMaps &maps, int coverRounds) {
  int64_t n = maps.voxels, v = maps.offsets, blockRows = maps.blockRows;
  const std::vector<uint32_t> &keys = maps.sortKeys;
  maps.order.resize(n);
  std::iota(maps.order.begin(), maps.order.end(), 0);
  std::stable_sort(maps.order.begin(), maps.order.end(),
                   [&](int32_t a, int32_t b) { return keys[a] < keys[b]; });
  for (int round = 0; round < coverRounds; ++round) {
    std::vector<int32_t> cover =
        coverRound(keys, maps.order, sparse::kCoverRows, sparse::kCoverWindow)
            .cover;
    std::vector<int32_t> rows(n);
    std::iota(rows.begin(), rows.end(), 0);
    std::stable_sort(rows.begin(), rows.end(), [&](int32_t a, int32_t b) {
      return cover[a] < cover[b];
    });
    std::vector<int32_t> order(n);
    for (int64_t r = 0; r < n; ++r)
      order[r] = maps.order[rows[r]];
    maps.order = std::move(order);
  }
  maps.nbt.resize(n * v);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t o = 0; o < v; ++o)
      maps.nbt[o * n + r] = maps.nb[maps.order[r] * v + o];
  maps.rowMasks = rowOffsetMasks(maps.nbt, n, v);
  int64_t blocks = (n + blockRows - 1) / blockRows;
  maps.blkCount.assign(blocks, 0);
  maps.blkOff.assign(blocks * v, kUnlisted);
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t o = 0; o < v; ++o) {
      uint32_t groups = 0;
      for (int64_t r = b * blockRows; r < std::min(n, (b + 1) * blockRows); ++r)
        if (maps.nbt[o * n + r] != -1)
          groups |= 1u << ((r - b * blockRows) / 64);
      if (groups)
        maps.blkOff[b * v + maps.blkCount[b]++] =
            static_cast<int32_t>(o | groups << 16);
    }
  }
  maps.blkOrder.resize(blocks);
  std::iota(maps.blkOrder.begin(), maps.blkOrder.end(), 0);
  std::stable_sort(maps.blkOrder.begin(), maps.blkOrder.end(),
                   [&](int32_t a, int32_t b) {
                     return maps.blkCount[a] < maps.blkCount[b];
                   });
}

HostMaps randomHostMaps(int64_t rows, int64_t inputRows, int64_t v,
                        int64_t blockRows, Random &rng,
                        std::array<int, 3> sortWindow) {
  if (sortWindow[0] == 0)
    sortWindow = {static_cast<int>(v), 1, 1};
  HostMaps maps;
  maps.voxels = rows;
  maps.offsets = v;
  maps.blockRows = blockRows;
  maps.nb.assign(rows * v, -1);
  maps.sortKeys.resize(rows);
  for (int64_t i = 0; i < rows; ++i) {
    std::vector<bool> mask(v);
    for (int64_t o = 0; o < v; ++o)
      if (inputRows > 0 && rng.below(3) != 0) {
        maps.nb[i * v + o] = static_cast<int32_t>(rng.below(inputRows));
        mask[o] = true;
      }
    maps.sortKeys[i] = maskSortKey(mask, sortWindow);
  }
  sortHostMaps(maps, 0);
  return maps;
}

Result<HostMaps> conventionMaps(const ReferenceRequest &request, int64_t rows,
                                int64_t inputRows, int64_t v,
                                int64_t blockRows, int dilation) {
  Result<int> kernelSize = kernelSizeOf(v);
  if (kernelSize && inputRows == rows)
    return buildHostMaps(testCloud(rows), *kernelSize, dilation, blockRows);
  return randomHostMaps(rows, inputRows, v, blockRows, request.rng);
}

void hostConvForwardRows(const std::vector<int32_t> &nb, int64_t v,
                         const double *x, const double *w, const double *bias,
                         int64_t ci, int64_t co, const HostConvLayout &layout,
                         int64_t begin, int64_t end, double *y) {
  for (int64_t i = begin; i < end; ++i)
    for (int64_t o = 0; o < co; ++o) {
      double sum = bias ? bias[o] : 0.0;
      for (int64_t k = 0; k < v; ++k) {
        int32_t source = nb[i * v + k];
        if (source < 0)
          continue;
        const double *xRow = x + source * layout.xRowStride;
        if (layout.transposedWeights) {
          for (int64_t c = 0; c < ci; ++c)
            sum += xRow[c] *
                   w[(c * v + (layout.mirroredOffsets ? v - 1 - k : k)) * co +
                     o];
          continue;
        }
        const double *wRow = w + (o * v + k) * ci;
        for (int64_t c = 0; c < ci; ++c)
          sum += xRow[c] * wRow[c];
      }
      y[i * layout.yRowStride + o] = sum;
    }
}

std::vector<double> hostConvForward(const std::vector<int32_t> &nb, int64_t v,
                                    const std::vector<double> &x,
                                    const std::vector<double> &w,
                                    const std::vector<double> &bias, int64_t ci,
                                    int64_t co) {
  int64_t n = static_cast<int64_t>(nb.size()) / v;
  std::vector<double> y(n * co);
  hostConvForwardRows(nb, v, x.data(), w.data(),
                      bias.empty() ? nullptr : bias.data(), ci, co,
                      HostConvLayout{ci, co, false}, 0, n, y.data());
  return y;
}

HostConvGradients hostConvBackward(const std::vector<int32_t> &nb, int64_t v,
                                   const std::vector<double> &x,
                                   const std::vector<double> &w,
                                   const std::vector<double> &dy, int64_t ci,
                                   int64_t co) {
  int64_t n = static_cast<int64_t>(nb.size()) / v;
  HostConvGradients gradients;
  gradients.dx.assign(n * ci, 0.0);
  gradients.dw.assign(co * v * ci, 0.0);
  gradients.db.assign(co, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t o = 0; o < co; ++o) {
      double g = dy[i * co + o];
      gradients.db[o] += g;
      for (int64_t k = 0; k < v; ++k) {
        int32_t source = nb[i * v + k];
        if (source < 0)
          continue;
        for (int64_t c = 0; c < ci; ++c) {
          gradients.dx[source * ci + c] += g * w[(o * v + k) * ci + c];
          gradients.dw[(o * v + k) * ci + c] += g * x[source * ci + c];
        }
      }
    }
  return gradients;
}

HostVoxelTable buildHostVoxelTable(const sparse::VoxelCloud &cloud,
                                   int log2Slots) {
  HostVoxelTable table;
  uint64_t slots = uint64_t(1) << log2Slots;
  table.keys.assign(slots, -1);
  table.vals.assign(slots, -1);
  const std::vector<int32_t> &c = cloud.coords;
  for (int64_t i = 0; i < cloud.size(); ++i) {
    uint64_t key = uint64_t(c[4 * i]) << 48 | uint64_t(c[4 * i + 1]) << 32 |
                   uint64_t(c[4 * i + 2]) << 16 | uint64_t(c[4 * i + 3]);
    uint64_t home = (key * 0x9E3779B97F4A7C15ull) >> (64 - log2Slots);
    for (uint64_t probe = 0; probe < slots; ++probe) {
      uint64_t slot = (home + probe) & (slots - 1);
      if (table.keys[slot] != -1)
        continue;
      table.keys[slot] = static_cast<int64_t>(key);
      table.vals[slot] = static_cast<int32_t>(i);
      table.longestProbe =
          std::max(table.longestProbe, static_cast<int32_t>(probe + 1));
      break;
    }
  }
  return table;
}

Result<int> kernelSizeOf(int64_t offsets) {
  for (int size = 1; size <= 7; size += 2)
    if (int64_t(size) * size * size == offsets)
      return size;
  return Status::error("V = " + std::to_string(offsets) +
                       " is not the cube of an odd kernel size up to 7");
}

Result<HostMaps> testCloudMaps(const ReferenceRequest &request) {
  auto n = request.value("N");
  auto v = request.value("V");
  for (const auto *value : {&n, &v})
    if (!*value)
      return value->status();
  return conventionMaps(request, *n, *n, *v, 64, 1);
}

std::vector<int32_t> offsetPairCounts(const std::vector<int32_t> &nbt,
                                      int64_t n, int64_t v, int64_t block) {
  int64_t chunks = (n + block - 1) / block;
  std::vector<int32_t> counts(v * chunks, 0);
  for (int64_t offset = 0; offset < v; ++offset)
    for (int64_t r = 0; r < n; ++r)
      counts[offset * chunks + r / block] += nbt[offset * n + r] != -1;
  return counts;
}

Result<TestCloudPairCounts>
testCloudPairCounts(const ReferenceRequest &request) {
  auto maps = testCloudMaps(request);
  if (!maps)
    return maps.status();
  std::vector<int32_t> counts = offsetPairCounts(
      maps->nbt, maps->voxels, maps->offsets, request.paramOrDefault("BLOCK"));
  return TestCloudPairCounts{std::move(*maps), std::move(counts)};
}

HostOffsetPairs hostOffsetPairs(const std::vector<int32_t> &nbt,
                                const std::vector<int32_t> &order, int64_t n,
                                int64_t v) {
  HostOffsetPairs pairs;
  for (int64_t offset = 0; offset < v; ++offset) {
    pairs.start.push_back(static_cast<int32_t>(pairs.in.size()));
    for (int64_t r = 0; r < n; ++r)
      if (int32_t nb = nbt[offset * n + r]; nb != -1) {
        pairs.in.push_back(nb);
        pairs.out.push_back(order[r]);
      }
  }
  pairs.start.push_back(static_cast<int32_t>(pairs.in.size()));
  return pairs;
}

HostTensor int32Tensor(const std::vector<int32_t> &values) {
  HostTensor tensor(ElementFormat::I32, std::max<size_t>(values.size(), 1));
  for (size_t i = 0; i < values.size(); ++i)
    tensor.set(i, values[i]);
  return tensor;
}

sparse::VoxelCloud testCloud(int64_t count) {
  int res = 8;
  while (sparse::shellScene(res).size() < count)
    res *= 2;
  sparse::VoxelCloud cloud = sparse::shellScene(res);
  cloud.coords.resize(count * 4);
  return cloud;
}

} // namespace tilec::harness
