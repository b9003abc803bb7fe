//===- VoxelScenes.h - Voxel clouds to test and measure with -----*- C++
//-*-===//
//
// Part of tilec_sparse. The inputs of the sparse-convolution tests and of
// `tilec bench spconv`, generated the same way in every process: integer
// coordinates (batch, x, y, z), four int32 per voxel, each voxel once, in
// raster order (batch, then x, y, z).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_SPARSE_VOXELSCENES_H
#define TILEC_SPARSE_VOXELSCENES_H

#include <cstdint>
#include <vector>

namespace tilec::sparse {

/// Coordinates of voxels, (batch, x, y, z) per voxel.
struct VoxelCloud {
  std::vector<int32_t> coords;
  int64_t size() const { return static_cast<int64_t>(coords.size() / 4); }
};

/// The voxels of a res^3 grid whose distance to the centre ((res - 1) / 2 on
/// each axis) lies in [res / 2 - 1.25, res / 2]: a thin spherical shell
/// (15,192 voxels at res 64, 64,160 at 128, 252,392 at 256), in each of
/// `batch` batches.
VoxelCloud shellScene(int res, int batch = 1);

/// Exactly `voxels` voxels of shells: the first res^3 shell (batch 0), from
/// res = sqrt(voxels / 4) up, that holds them, cut to its first `voxels` in
/// raster order (a shell missing a cap); beyond the res 256 shell (252,392
/// voxels), copies of it in batches 0, 1, ..., the last one cut. A plausible cloud of any size: a surface with a shell's
/// neighbour counts, as a layer of a point-cloud network meets (what
/// `tilec warmup` runs an op call's layer on).
VoxelCloud shellSceneOfSize(int64_t voxels);

/// `count` distinct voxels drawn uniformly from a res^3 grid (per batch,
/// `count` in each), from `seed`.
VoxelCloud uniformScene(int64_t count, int res, int batch, uint64_t seed);

/// Every voxel of a side^3 cube.
VoxelCloud denseScene(int side, int batch = 1);

/// A LiDAR-like street scene: a spinning sensor of `beams` beams (elevations
/// from -25 to +3 degrees) 1.8 m above the ground, `azimuthSteps` rays per
/// turn, ray-cast onto the ground plane, building fronts along both sides of
/// the street, cars (boxes) and poles and trees (cylinders) placed from
/// `seed`; hits within 80 m of `sweeps` sweeps taken `sweepStep` metres
/// apart along the street are voxelized at `voxelSize` metres and shifted to
/// non-negative coordinates. With the defaults: 106,860 voxels with 7.5 of
/// their 27 neighbours on average (surfaces seen from a few positions).
VoxelCloud lidarScene(uint64_t seed, int beams = 64, int azimuthSteps = 2048,
                      double voxelSize = 0.1, int sweeps = 5,
                      double sweepStep = 2);

} // namespace tilec::sparse

#endif // TILEC_SPARSE_VOXELSCENES_H
