//===- RowOrderTest.cpp - The convolution's row order saves work ----------===//
//
// A row block of the masked implicit GEMM loops over every offset any of its
// rows has a neighbour at, so its work is (offsets in the union) x (rows).
// The rows are sorted by voxel_neighbours' key (maskSortKey), then moved to
// lean groups in rounds (mask_cover): these tests measure that work, over
// the useful pairs, for the oracle's order, for the key's order alone and
// for rows sorted by the plain bitmask (bit v for offset v), on the
// benchmark's scenes, and require each step to do less.
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>

using namespace tilec;

namespace {

/// Pairs the row blocks of `blockRows` compute, over the useful pairs, when
/// the rows run in `order`.
double computedOverUseful(const harness::HostMaps &maps,
                          const std::vector<int32_t> &order,
                          int64_t blockRows) {
  int64_t n = maps.voxels, v = maps.offsets, computed = 0, useful = 0;
  for (int64_t start = 0; start < n; start += blockRows) {
    int64_t end = std::min(n, start + blockRows);
    for (int64_t o = 0; o < v; ++o) {
      int64_t rows = 0;
      for (int64_t r = start; r < end; ++r)
        rows += maps.nb[order[r] * v + o] != -1;
      useful += rows;
      computed += rows ? end - start : 0;
    }
  }
  return static_cast<double>(computed) / static_cast<double>(useful);
}

/// The rows stably sorted by their plain bitmask.
std::vector<int32_t> plainMaskOrder(const harness::HostMaps &maps) {
  std::vector<uint32_t> masks(maps.voxels, 0);
  for (int64_t i = 0; i < maps.voxels; ++i)
    for (int64_t o = 0; o < maps.offsets; ++o)
      if (maps.nb[i * maps.offsets + o] != -1)
        masks[i] |= 1u << o;
  std::vector<int32_t> order(maps.voxels);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return masks[a] < masks[b]; });
  return order;
}

/// The share of voxels with a neighbour at an offset, averaged over the
/// offsets of each class (by the number of axes an offset moves along).
std::string activityByAxes(const harness::HostMaps &maps) {
  double active[4] = {}, offsets[4] = {};
  for (int64_t o = 0; o < maps.offsets; ++o) {
    int axes = (o / 9 != 1) + (o / 3 % 3 != 1) + (o % 3 != 1);
    for (int64_t i = 0; i < maps.voxels; ++i)
      active[axes] += maps.nb[i * maps.offsets + o] != -1;
    offsets[axes] += static_cast<double>(maps.voxels);
  }
  char text[96];
  std::snprintf(text, sizeof(text), "faces %.2f, edges %.2f, corners %.2f",
                active[1] / offsets[1], active[2] / offsets[2],
                active[3] / offsets[3]);
  return text;
}

struct Scene {
  const char *name;
  sparse::VoxelCloud cloud;
};

TEST(RowOrderTest, SortKeyComputesLessThanThePlainMask) {
  Scene scenes[] = {{"shell64", sparse::shellScene(64)},
                    {"shell128", sparse::shellScene(128)},
                    {"lidar", sparse::lidarScene(1)}};
  std::printf("scene       N  block rows  plain mask  sort key\n");
  for (const Scene &scene : scenes) {
    auto maps = harness::buildHostMaps(scene.cloud, 3, 1, 64, 0);
    ASSERT_TRUE(maps.ok()) << maps.message();
    std::printf("%s: active %s\n", scene.name, activityByAxes(*maps).c_str());
    std::vector<int32_t> plain = plainMaskOrder(*maps);
    for (int64_t blockRows : {64, 128}) {
      double before = computedOverUseful(*maps, plain, blockRows);
      double after = computedOverUseful(*maps, maps->order, blockRows);
      std::printf("%-8s %7lld  %10lld  %10.3f  %8.3f\n", scene.name,
                  static_cast<long long>(maps->voxels),
                  static_cast<long long>(blockRows), before, after);
      EXPECT_LT(after, before) << scene.name << ", " << blockRows << " rows";
    }
  }
}

// Moving each row to the group with the fewest offsets that already runs
// its own (a round of mask_cover over 64-row groups) cuts the work of both
// row blocks by 2% or more on every scene (at 128 rows: the res-64 shell
// 1.60 -> 1.52, the res-128 shell 1.29 -> 1.25, the street 1.35 -> 1.27).
TEST(RowOrderTest, CoverRoundsComputeLessThanTheKey) {
  Scene scenes[] = {{"shell64", sparse::shellScene(64)},
                    {"shell128", sparse::shellScene(128)},
                    {"lidar", sparse::lidarScene(1)}};
  std::printf("scene     block rows  key order  covered\n");
  for (const Scene &scene : scenes) {
    auto keyOrder = harness::buildHostMaps(scene.cloud, 3, 1, 64, 0);
    auto covered = harness::buildHostMaps(scene.cloud, 3, 1, 64);
    ASSERT_TRUE(keyOrder.ok()) << keyOrder.message();
    ASSERT_TRUE(covered.ok()) << covered.message();
    std::vector<int32_t> sorted = covered->order;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < covered->voxels; ++i)
      ASSERT_EQ(sorted[i], i) << "the covered order is a permutation";
    for (int64_t blockRows : {64, 128}) {
      double before = computedOverUseful(*keyOrder, keyOrder->order, blockRows);
      double after = computedOverUseful(*covered, covered->order, blockRows);
      std::printf("%-8s  %10lld  %9.3f  %7.3f\n", scene.name,
                  static_cast<long long>(blockRows), before, after);
      EXPECT_LT(after, before * 0.98) << scene.name << ", " << blockRows
                                       << " rows";
    }
  }
}

// A row moves only to a group whose union holds its bitmask, the leanest
// such within the window, ties to the lowest index: its own group always
// qualifies.
TEST(RowOrderTest, CoverPicksTheLeanestGroupThatHoldsTheRow) {
  // Rows 0-1 (group 0): bitmasks 0b011, 0b001; rows 2-3 (group 1): 0b111,
  // 0b100; rows 4-5 (group 2): 0b001, 0b001. Keys are Gray ranks: the
  // bitmask is key ^ (key >> 1).
  auto keyOf = [](uint32_t code) {
    uint32_t key = code;
    for (uint32_t above = code >> 1; above != 0; above >>= 1)
      key ^= above;
    return key;
  };
  std::vector<uint32_t> keys = {keyOf(0b011), keyOf(0b001), keyOf(0b111),
                                keyOf(0b100), keyOf(0b001), keyOf(0b001)};
  std::vector<int32_t> order = {0, 1, 2, 3, 4, 5};
  harness::CoverRound round = harness::coverRound(keys, order, 2, 8);
  EXPECT_EQ(round.unions, (std::vector<int32_t>{0b011, 0b111, 0b001}));
  EXPECT_EQ(round.cover, (std::vector<int32_t>{0, 2, 1, 1, 2, 2}));
  // Within a window of 0 groups every row stays.
  EXPECT_EQ(harness::coverRound(keys, order, 2, 0).cover,
            (std::vector<int32_t>{0, 0, 1, 1, 2, 2}));
}

// The key is the Gray rank of the ranked bitmask: masks one offset apart
// get adjacent keys where the plain mask puts them far apart.
TEST(RowOrderTest, KeyOfRankedGrayCode) {
  std::vector<bool> centreOnly(27, false);
  centreOnly[13] = true;
  // The centre ranks last (bit 26); its Gray rank sets bits 26 down to 0.
  EXPECT_EQ(harness::maskSortKey(centreOnly), (1u << 27) - 1);
  std::vector<bool> none(27, false);
  EXPECT_EQ(harness::maskSortKey(none), 0u);
  // Corner (0, 0, 0) is offset 0, rank 0; face (0, 1, 1) is offset 4, the
  // first face: rank 8 (after the 8 corners).
  std::vector<bool> corner(27, false), face(27, false);
  corner[0] = true;
  face[4] = true;
  EXPECT_EQ(harness::maskSortKey(corner), 1u);
  EXPECT_EQ(harness::maskSortKey(face), (1u << 9) - 1);
}

} // namespace

/// When the last of `work` (in launch order) ends if each of `slots` takes
/// the next item as soon as it is free: how the GPU hands out row blocks.
static double listScheduleMakespan(const std::vector<double> &work,
                                   int slots) {
  std::vector<double> freeAt(slots, 0.0);
  double end = 0;
  for (double item : work) {
    auto slot = std::min_element(freeAt.begin(), freeAt.end());
    *slot += item;
    end = std::max(end, *slot);
  }
  return end;
}

// blk_order is the blocks stably sorted by their count of offsets, and the
// convolution runs it from the end: in the model of one block per SM (132
// on the H200) taking the next block when free, with a block's time its
// offsets plus one (its epilogue), the busiest-first order ends the last
// wave sooner than the plain order wherever there is more than one wave.
TEST(RowOrderTest, BusiestBlocksFirstShortenTheLastWave) {
  Scene scenes[] = {{"shell128", sparse::shellScene(128)},
                    {"shell256", sparse::shellScene(256)},
                    {"lidar", sparse::lidarScene(1)}};
  constexpr int kSlots = 132;
  std::printf("scene     block rows  blocks  plain order  busiest first  "
              "bound\n");
  for (const Scene &scene : scenes) {
    for (int64_t blockRows : {64, 128}) {
      auto maps = harness::buildHostMaps(scene.cloud, 3, 1, blockRows);
      ASSERT_TRUE(maps.ok()) << maps.message();
      int64_t blocks = static_cast<int64_t>(maps->blkOrder.size());
      ASSERT_EQ(blocks, static_cast<int64_t>(maps->blkCount.size()));
      auto count = [&](int32_t b) { return maps->blkCount[b]; };
      std::vector<int32_t> sorted = maps->blkOrder;
      std::sort(sorted.begin(), sorted.end());
      for (int64_t b = 0; b < blocks; ++b)
        ASSERT_EQ(sorted[b], b) << "blk_order is a permutation";
      for (int64_t i = 1; i < blocks; ++i) {
        int32_t before = maps->blkOrder[i - 1], after = maps->blkOrder[i];
        ASSERT_TRUE(count(before) < count(after) ||
                    (count(before) == count(after) && before < after))
            << "blk_order is stable by count at " << i;
      }
      std::vector<double> plain, busiestFirst;
      double total = 0;
      for (int64_t b = 0; b < blocks; ++b) {
        plain.push_back(count(b) + 1.0);
        busiestFirst.push_back(count(maps->blkOrder[blocks - 1 - b]) + 1.0);
        total += count(b) + 1.0;
      }
      double before = listScheduleMakespan(plain, kSlots);
      double after = listScheduleMakespan(busiestFirst, kSlots);
      std::printf("%-8s  %10lld  %6lld  %11.0f  %13.0f  %5.0f\n", scene.name,
                  static_cast<long long>(blockRows),
                  static_cast<long long>(blocks), before, after,
                  std::ceil(total / kSlots));
      EXPECT_LT(after, before) << scene.name << ", " << blockRows << " rows";
    }
  }
}

// SPLIT_K = 2 runs each row block as two halves of its offsets, each with
// its own epilogue plus the partials' trip through memory (counted as half
// an offset here), in the model above with 128-row blocks in two column
// tiles each (CO = 256, 128-wide tiles). Under one wave (3000 voxels: 24
// blocks, 96 programs in halves) the launch ends with the busiest half
// instead of the busiest block; with more (the res-64 shell: 119 blocks,
// 476 programs in halves) the whole blocks busiest first end no later. The
// H200 agreed: 44.2 against 67.4 us, and 110.7 at best in halves against
// 101.3 whole (kernels/sparse_conv.cpp prunes halves past 66 tiles).
TEST(RowOrderTest, HalvesPayUnderOneWave) {
  constexpr int kSlots = 132;
  Scene scenes[] = {{"3000 voxels", harness::testCloud(3000)},
                    {"shell64", sparse::shellScene(64)}};
  double gain[2];
  for (int s = 0; s < 2; ++s) {
    auto maps = harness::buildHostMaps(scenes[s].cloud, 3, 1, 128);
    ASSERT_TRUE(maps.ok()) << maps.message();
    int64_t blocks = static_cast<int64_t>(maps->blkOrder.size());
    std::vector<double> whole, halves;
    for (int64_t launched = 0; launched < blocks; ++launched) {
      int32_t block = maps->blkOrder[blocks - 1 - launched];
      int32_t count = maps->blkCount[block];
      int32_t firstHalf = (count + 1) / 2;
      for (int column = 0; column < 2; ++column)
        whole.push_back(count + 1.0);
      for (int32_t half : {firstHalf, count - firstHalf})
        for (int column = 0; column < 2; ++column)
          halves.push_back(half + 1.5);
    }
    double unsplit = listScheduleMakespan(whole, kSlots);
    double split = listScheduleMakespan(halves, kSlots);
    gain[s] = unsplit / split;
    std::printf("%-11s  %lld programs: whole blocks %.1f, halves %.1f\n",
                scenes[s].name, static_cast<long long>(whole.size()), unsplit,
                split);
  }
  EXPECT_GT(gain[0], 1.3) << "under one wave";
  EXPECT_LE(gain[1], 1.0) << "two waves and more";
}
