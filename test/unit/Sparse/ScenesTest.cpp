//===- ScenesTest.cpp - The voxel scenes' generators ----------------------===//
//
// The shell scene generated per row of the grid against the definition
// tested at every cell, and the uniform scene's exact counts, including
// more than half of a grid (drawn as the cells left out).
//
//===----------------------------------------------------------------------===//

#include "tilec/sparse/VoxelScenes.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <set>

using namespace tilec;

namespace {

// The definition: every cell of the grid tested.
sparse::VoxelCloud everyCellShell(int res) {
  sparse::VoxelCloud cloud;
  double centre = (res - 1) / 2.0, outer = res / 2.0, inner = outer - 1.25;
  for (int x = 0; x < res; ++x)
    for (int y = 0; y < res; ++y)
      for (int z = 0; z < res; ++z) {
        double dx = x - centre, dy = y - centre, dz = z - centre;
        double distance = std::sqrt(dx * dx + dy * dy + dz * dz);
        if (distance >= inner && distance <= outer)
          cloud.coords.insert(cloud.coords.end(), {0, x, y, z});
      }
  return cloud;
}

TEST(ScenesTest, ShellIsEveryCellOfTheDefinition) {
  for (int res = 1; res <= 70; ++res)
    ASSERT_EQ(sparse::shellScene(res).coords, everyCellShell(res).coords)
        << "res " << res;
  for (int res : {127, 128, 200, 256})
    ASSERT_EQ(sparse::shellScene(res).coords, everyCellShell(res).coords)
        << "res " << res;
  EXPECT_EQ(sparse::shellScene(64).size(), 15192);
  // Batches repeat the shell.
  sparse::VoxelCloud two = sparse::shellScene(16, 2);
  EXPECT_EQ(two.size(), 2 * sparse::shellScene(16).size());
}

TEST(ScenesTest, ShellWorkFollowsItsSize) {
  // res 2048: 16M voxels; testing each of the grid's 2^33 cells took about
  // a minute (res 4096: minutes).
  auto start = std::chrono::steady_clock::now();
  sparse::VoxelCloud shell = sparse::shellScene(2048);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_GT(shell.size(), 3 * 2048 * 2048);
  EXPECT_LT(shell.size(), 4 * 2048 * 2048);
  EXPECT_LT(seconds, 15) << "the shell's generation is not bounded by its size";
}

TEST(ScenesTest, UniformHasExactlyItsCountPerBatch) {
  for (int64_t count : {0, 1, 100, 500, 999, 1000, 5000}) {
    sparse::VoxelCloud cloud = sparse::uniformScene(count, 10, 2, 7);
    int64_t expected = std::min<int64_t>(count, 1000);
    ASSERT_EQ(cloud.size(), 2 * expected) << count;
    std::set<std::vector<int32_t>> distinct;
    for (int64_t i = 0; i < cloud.size(); ++i) {
      std::vector<int32_t> voxel(cloud.coords.begin() + 4 * i,
                                 cloud.coords.begin() + 4 * i + 4);
      ASSERT_TRUE(voxel[0] == 0 || voxel[0] == 1);
      for (int axis = 1; axis < 4; ++axis)
        ASSERT_TRUE(voxel[axis] >= 0 && voxel[axis] < 10);
      distinct.insert(voxel);
    }
    EXPECT_EQ(static_cast<int64_t>(distinct.size()), 2 * expected) << count;
  }
  // The same seed, the same cloud; another seed, another one.
  EXPECT_EQ(sparse::uniformScene(700, 10, 1, 3).coords,
            sparse::uniformScene(700, 10, 1, 3).coords);
  EXPECT_NE(sparse::uniformScene(700, 10, 1, 3).coords,
            sparse::uniformScene(700, 10, 1, 4).coords);
}

} // namespace
