//===- VoxelScenes.cpp - Voxel clouds to test and measure with ------------===//

#include "tilec/sparse/VoxelScenes.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_set>

namespace tilec::sparse {
namespace {

using Voxel = std::array<int32_t, 4>;

// splitmix64, so that a seed gives the same scene on every platform.
class SceneRandom {
public:
  explicit SceneRandom(uint64_t seed) : state(seed * 0x9E3779B97F4A7C15ull) {}
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * (static_cast<double>(next() >> 11) * 0x1.0p-53);
  }

private:
  uint64_t state;
};

VoxelCloud sortedCloud(std::vector<Voxel> voxels) {
  std::sort(voxels.begin(), voxels.end());
  voxels.erase(std::unique(voxels.begin(), voxels.end()), voxels.end());
  VoxelCloud cloud;
  cloud.coords.reserve(voxels.size() * 4);
  for (const Voxel &voxel : voxels)
    cloud.coords.insert(cloud.coords.end(), voxel.begin(), voxel.end());
  return cloud;
}

} // namespace

VoxelCloud shellScene(int res, int batch) {
  std::vector<Voxel> voxels;
  double centre = (res - 1) / 2.0, outer = res / 2.0, inner = outer - 1.25;
  auto inShell = [&](double dx, double dy, double dz) {
    double distance = std::sqrt(dx * dx + dy * dy + dz * dz);
    return distance >= inner && distance <= outer;
  };
  // Per (x, y), only the z within a voxel of the shell's two crossings are
  // tested (with the same predicate as a test of every z): the work is the
  // shell's size, res^2, not the grid's, res^3.
  for (int b = 0; b < batch; ++b)
    for (int x = 0; x < res; ++x)
      for (int y = 0; y < res; ++y) {
        double dx = x - centre, dy = y - centre;
        double planar = dx * dx + dy * dy;
        if (planar > outer * outer + 1)
          continue;
        double far = std::sqrt(std::max(0.0, outer * outer - planar)) + 1;
        double near = std::sqrt(std::max(0.0, inner * inner - planar)) - 1;
        auto scan = [&](double from, double to) {
          int first = std::max(0, static_cast<int>(std::floor(centre + from)));
          int last =
              std::min(res - 1, static_cast<int>(std::ceil(centre + to)));
          for (int z = first; z <= last; ++z)
            if (inShell(dx, dy, z - centre))
              voxels.push_back({b, x, y, z});
        };
        // dz in [-far, -near] and [near, far]; one range where they meet.
        if (near <= 0) {
          scan(-far, far);
        } else {
          scan(-far, -near);
          scan(near, far);
        }
      }
  return sortedCloud(std::move(voxels));
}

VoxelCloud shellSceneOfSize(int64_t voxels) {
  constexpr int kLargestShell = 256;
  VoxelCloud cloud;
  if (voxels <= 0)
    return cloud;
  // A res^3 shell holds 3.7 to 3.95 res^2 voxels: start below and grow.
  int res = static_cast<int>(std::clamp<double>(std::sqrt(voxels / 4.0), 1,
                                                kLargestShell));
  while ((cloud = shellScene(res)).size() < voxels && res < kLargestShell)
    ++res;
  if (cloud.size() < voxels) {
    // Copies of the largest shell, one per batch.
    VoxelCloud shell = std::move(cloud);
    int64_t batches = (voxels + shell.size() - 1) / shell.size();
    cloud.coords.clear();
    cloud.coords.reserve(batches * shell.coords.size());
    for (int64_t b = 0; b < batches; ++b)
      for (size_t i = 0; i < shell.coords.size(); i += 4) {
        cloud.coords.push_back(static_cast<int32_t>(b));
        cloud.coords.insert(cloud.coords.end(), shell.coords.begin() + i + 1,
                            shell.coords.begin() + i + 4);
      }
  }
  cloud.coords.resize(voxels * 4);
  return cloud;
}

VoxelCloud uniformScene(int64_t count, int res, int batch, uint64_t seed) {
  SceneRandom random(seed);
  int64_t cells = static_cast<int64_t>(res) * res * res;
  count = std::min(count, cells);
  std::vector<Voxel> voxels;
  auto voxelOf = [&](int b, int64_t cell) {
    return Voxel{b, static_cast<int32_t>(cell / (int64_t(res) * res)),
                 static_cast<int32_t>(cell / res % res),
                 static_cast<int32_t>(cell % res)};
  };
  for (int b = 0; b < batch; ++b) {
    // More than half the grid: draw the cells left out instead, so that the
    // draws stay within twice the smaller set (a draw of every cell would
    // take about cells * ln(cells)).
    bool complement = count > cells / 2;
    int64_t drawn = complement ? cells - count : count;
    std::unordered_set<int64_t> taken;
    while (static_cast<int64_t>(taken.size()) < drawn) {
      int64_t cell = static_cast<int64_t>(random.next() % cells);
      if (taken.insert(cell).second && !complement)
        voxels.push_back(voxelOf(b, cell));
    }
    if (complement)
      for (int64_t cell = 0; cell < cells; ++cell)
        if (!taken.count(cell))
          voxels.push_back(voxelOf(b, cell));
  }
  return sortedCloud(std::move(voxels));
}

VoxelCloud denseScene(int side, int batch) {
  std::vector<Voxel> voxels;
  for (int b = 0; b < batch; ++b)
    for (int x = 0; x < side; ++x)
      for (int y = 0; y < side; ++y)
        for (int z = 0; z < side; ++z)
          voxels.push_back({b, x, y, z});
  return sortedCloud(std::move(voxels));
}

namespace {

struct Ray {
  double origin[3], direction[3];
};

// Distance along `ray` to an axis-aligned box [lo, hi], or infinity.
double hitBox(const Ray &ray, const double lo[3], const double hi[3]) {
  double near = 0, far = INFINITY;
  for (int axis = 0; axis < 3; ++axis) {
    double d = ray.direction[axis], o = ray.origin[axis];
    if (std::abs(d) < 1e-12) {
      if (o < lo[axis] || o > hi[axis])
        return INFINITY;
      continue;
    }
    double t0 = (lo[axis] - o) / d, t1 = (hi[axis] - o) / d;
    near = std::max(near, std::min(t0, t1));
    far = std::min(far, std::max(t0, t1));
  }
  return near <= far && near > 1e-6 ? near : INFINITY;
}

// Distance to a vertical cylinder at (x, y) of `radius`, from the ground to
// `height`, or infinity.
double hitCylinder(const Ray &ray, double x, double y, double radius,
                   double height) {
  double ox = ray.origin[0] - x, oy = ray.origin[1] - y;
  double dx = ray.direction[0], dy = ray.direction[1];
  double a = dx * dx + dy * dy, b = 2 * (ox * dx + oy * dy);
  double c = ox * ox + oy * oy - radius * radius;
  double discriminant = b * b - 4 * a * c;
  if (a < 1e-12 || discriminant < 0)
    return INFINITY;
  double t = (-b - std::sqrt(discriminant)) / (2 * a);
  double z = ray.origin[2] + t * ray.direction[2];
  return t > 1e-6 && z >= 0 && z <= height ? t : INFINITY;
}

} // namespace

VoxelCloud lidarScene(uint64_t seed, int beams, int azimuthSteps,
                      double voxelSize, int sweeps, double sweepStep) {
  SceneRandom random(seed);
  constexpr double kRange = 80, kStreetHalfWidth = 9, kPi = 3.14159265358979;
  // Walls: building fronts along both sides, with gaps between buildings.
  std::vector<std::array<double, 6>> boxes;
  for (int side = -1; side <= 1; side += 2)
    for (double x = -kRange; x < kRange;) {
      double length = random.uniform(8, 25), height = random.uniform(6, 20);
      double y = side * (kStreetHalfWidth + random.uniform(0, 2));
      boxes.push_back({x, side > 0 ? y : y - 10, 0, x + length,
                       side > 0 ? y + 10 : y, height});
      x += length + random.uniform(1, 6);
    }
  // Cars parked along both kerbs.
  for (int i = 0; i < 24; ++i) {
    double x = random.uniform(-60, 60);
    double y = (i % 2 ? 1 : -1) * random.uniform(4.5, 6.5);
    boxes.push_back({x, y - 0.9, 0, x + 4.5, y + 0.9, 1.5});
  }
  struct Cylinder {
    double x, y, radius, height;
  };
  std::vector<Cylinder> cylinders;
  for (int i = 0; i < 40; ++i)
    cylinders.push_back({random.uniform(-70, 70),
                         (i % 2 ? 1 : -1) * random.uniform(7, 8.5),
                         i % 3 ? 0.12 : 0.4, i % 3 ? 6.0 : 8.0});

  std::vector<Voxel> voxels;
  Ray ray{{0, 0, 1.8}, {0, 0, 0}};
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    ray.origin[0] = (sweep - (sweeps - 1) / 2.0) * sweepStep;
    for (int beam = 0; beam < beams; ++beam) {
      double elevation =
          (-25 + 28.0 * beam / std::max(1, beams - 1)) * kPi / 180;
      for (int step = 0; step < azimuthSteps; ++step) {
        double azimuth = 2 * kPi * step / azimuthSteps;
        ray.direction[0] = std::cos(elevation) * std::cos(azimuth);
        ray.direction[1] = std::cos(elevation) * std::sin(azimuth);
        ray.direction[2] = std::sin(elevation);
        double t =
            ray.direction[2] < 0 ? -ray.origin[2] / ray.direction[2] : INFINITY;
        for (const auto &box : boxes)
          t = std::min(t, hitBox(ray, &box[0], &box[3]));
        for (const Cylinder &c : cylinders)
          t = std::min(t, hitCylinder(ray, c.x, c.y, c.radius, c.height));
        if (t > kRange)
          continue;
        Voxel voxel{0};
        for (int axis = 0; axis < 3; ++axis) {
          double p = ray.origin[axis] + t * ray.direction[axis];
          double shifted = p + (axis == 2 ? 1.0 : kRange + 1);
          voxel[axis + 1] =
              static_cast<int32_t>(std::floor(shifted / voxelSize));
        }
        voxels.push_back(voxel);
      }
    }
  }
  return sortedCloud(std::move(voxels));
}

} // namespace tilec::sparse
