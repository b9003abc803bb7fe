//===- StridedReferenceTest.cpp - The strided convolution's oracle --------===//
//
// buildHostStridedPairs (check/reference/StridedConvReference.h) finds each
// output voxel from its inputs (scatter); these tests find them the other
// way, the way a dense convolution indexes (every output position of the
// grid gathers from o * stride - padding + k * dilation), and compare the
// two for downsampling shapes of spconv's networks (2 / 2, 3 / 2 with
// padding, (3, 1, 1) / (2, 1, 1), dilation, kernel 1). The forward is
// checked against the gathered dense sum, the backward by the adjoint
// identities of a linear map, and the inverse convolution against the
// input gradient with the weights transposed.
//
//===----------------------------------------------------------------------===//

#include "StridedConvReference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <map>
#include <random>
#include <string>

using namespace tilec;
using harness::ConvGeometry;
using harness::HostConvPairs;

namespace {

using Voxel = std::array<int64_t, 4>;

struct Case {
  std::string name;
  ConvGeometry geometry;
};

std::vector<Case> cases() {
  auto make = [](std::array<int, 3> k, std::array<int, 3> s,
                 std::array<int, 3> p, std::array<int, 3> d) {
    ConvGeometry g;
    g.kernel = k;
    g.stride = s;
    g.padding = p;
    g.dilation = d;
    return g;
  };
  return {{"k2s2", make({2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1})},
          {"k3s2p1", make({3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1})},
          {"k311s211p100", make({3, 1, 1}, {2, 1, 1}, {1, 0, 0}, {1, 1, 1})},
          {"k3s2p2d2", make({3, 3, 3}, {2, 2, 2}, {2, 2, 2}, {2, 2, 2})},
          {"k1s1", make({1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1})},
          {"k3s1p1", make({3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1})},
          {"k133s122", make({1, 3, 3}, {1, 2, 2}, {0, 1, 1}, {1, 1, 1})}};
}

// Two batches of a res-13 shell: an odd grid, so that strides leave
// remainders.
sparse::VoxelCloud cloud() { return sparse::shellScene(13, 2); }
const std::array<int64_t, 3> kShape{13, 13, 13};

// The pairs by gathering: for every output position of the grid, in
// ascending (batch, x, y, z) order, the active input each offset reads.
HostConvPairs gather(const sparse::VoxelCloud &cloud, const ConvGeometry &g) {
  std::map<Voxel, int32_t> active;
  int64_t batches = 0;
  for (int64_t i = 0; i < cloud.size(); ++i) {
    const int32_t *c = &cloud.coords[4 * i];
    active[{c[0], c[1], c[2], c[3]}] = int32_t(i);
    batches = std::max<int64_t>(batches, c[0] + 1);
  }
  std::array<int64_t, 3> out = *g.outputShape(kShape);
  HostConvPairs pairs;
  pairs.pairs.resize(g.offsets());
  int32_t output = 0;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t x = 0; x < out[0]; ++x)
      for (int64_t y = 0; y < out[1]; ++y)
        for (int64_t z = 0; z < out[2]; ++z) {
          bool any = false;
          std::array<int64_t, 3> o{x, y, z};
          for (int64_t v = 0; v < g.offsets(); ++v) {
            std::array<int64_t, 3> k{v / (g.kernel[1] * g.kernel[2]),
                                     v / g.kernel[2] % g.kernel[1],
                                     v % g.kernel[2]};
            Voxel in{b, 0, 0, 0};
            for (int axis = 0; axis < 3; ++axis)
              in[axis + 1] = o[axis] * g.stride[axis] - g.padding[axis] +
                             k[axis] * g.dilation[axis];
            auto found = active.find(in);
            if (found == active.end())
              continue;
            pairs.pairs[v].emplace_back(found->second, output);
            any = true;
          }
          if (!any)
            continue;
          for (int64_t value : {b, x, y, z})
            pairs.outCoords.push_back(int32_t(value));
          ++output;
        }
  return pairs;
}

std::vector<double> random(size_t count, unsigned seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<double> values(count);
  for (double &value : values)
    value = uniform(engine);
  return values;
}

double dot(const std::vector<double> &a, const std::vector<double> &b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i)
    sum += a[i] * b[i];
  return sum;
}

// Runs `check(geometry, cloud, pairs)` for each case on cloud().
template <typename Check> void forEachCase(Check check) {
  sparse::VoxelCloud input = cloud();
  for (const Case &c : cases()) {
    SCOPED_TRACE(c.name);
    auto pairs = harness::buildHostStridedPairs(input, kShape, c.geometry);
    ASSERT_TRUE(pairs.ok()) << pairs.message();
    check(c.geometry, input, *pairs);
  }
}

TEST(StridedReference, OutputShapes) {
  ConvGeometry g;
  g.kernel = {3, 2, 1};
  g.stride = {2, 2, 1};
  g.padding = {1, 0, 0};
  auto shape = g.outputShape({16, 16, 16});
  ASSERT_TRUE(shape.ok()) << shape.message();
  // (16 + 2 - 3) / 2 + 1, (16 - 2) / 2 + 1, 16.
  EXPECT_EQ(*shape, (std::array<int64_t, 3>{8, 8, 16}));
  g.kernel = {5, 1, 1};
  g.padding = {0, 0, 0};
  auto none = g.outputShape({4, 4, 4});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.message().find("axis x: the kernel spans 5 voxels"),
            std::string::npos)
      << none.message();
  g.kernel = {1, 1, 1};
  g.stride = {0, 1, 1};
  EXPECT_FALSE(g.outputShape({4, 4, 4}).ok());
}

TEST(StridedReference, ScatterFindsWhatGatherFinds) {
  sparse::VoxelCloud input = cloud();
  for (const Case &c : cases()) {
    SCOPED_TRACE(c.name);
    auto scattered = harness::buildHostStridedPairs(input, kShape, c.geometry);
    ASSERT_TRUE(scattered.ok()) << scattered.message();
    HostConvPairs gathered = gather(input, c.geometry);
    EXPECT_GT(gathered.outputs(), 0);
    EXPECT_EQ(scattered->outCoords, gathered.outCoords);
    ASSERT_EQ(scattered->pairs.size(), gathered.pairs.size());
    for (size_t v = 0; v < gathered.pairs.size(); ++v)
      EXPECT_EQ(scattered->pairs[v], gathered.pairs[v]) << "offset " << v;
    // The same input, the same outputs in the same order.
    auto again = harness::buildHostStridedPairs(input, kShape, c.geometry);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->outCoords, scattered->outCoords);
  }
}

TEST(StridedReference, ForwardIsTheGatheredSum) {
  int64_t ci = 5, co = 3;
  forEachCase([&](const ConvGeometry &g, const sparse::VoxelCloud &input,
                  const HostConvPairs &pairs) {
    int64_t v = g.offsets();
    std::vector<double> x = random(input.size() * ci, 1),
                        w = random(co * v * ci, 2), bias = random(co, 3);
    std::vector<double> y = harness::hostPairForward(pairs, x, w, bias, ci, co);
    // The gathered sum, output by output.
    HostConvPairs gathered = gather(input, g);
    std::vector<std::vector<std::pair<int64_t, int32_t>>> reads(
        gathered.outputs());
    for (int64_t k = 0; k < v; ++k)
      for (const auto &[in, out] : gathered.pairs[k])
        reads[out].emplace_back(k, in);
    for (int64_t o = 0; o < gathered.outputs(); ++o)
      for (int64_t q = 0; q < co; ++q) {
        double want = bias[q];
        for (const auto &[k, in] : reads[o])
          for (int64_t ch = 0; ch < ci; ++ch)
            want += x[in * ci + ch] * w[(q * v + k) * ci + ch];
        EXPECT_NEAR(y[o * co + q], want, 1e-12) << "output " << o;
      }
  });
}

// y = A(w) x is linear in x and in w: <y, dy> = <x, dx> = <w, dw>, and
// db is the sum of dy over the outputs.
TEST(StridedReference, BackwardIsTheAdjoint) {
  int64_t ci = 4, co = 6;
  forEachCase([&](const ConvGeometry &g, const sparse::VoxelCloud &input,
                  const HostConvPairs &pairs) {
    int64_t n = input.size(), v = g.offsets(), m = pairs.outputs();
    std::vector<double> x = random(n * ci, 4), w = random(co * v * ci, 5),
                        dy = random(m * co, 6);
    std::vector<double> y = harness::hostPairForward(pairs, x, w, {}, ci, co);
    harness::HostConvGradients grads =
        harness::hostPairBackward(pairs, n, x, w, dy, ci, co);
    double yDy = dot(y, dy);
    EXPECT_NEAR(dot(x, grads.dx), yDy, 1e-9 * std::max(1.0, std::abs(yDy)));
    EXPECT_NEAR(dot(w, grads.dw), yDy, 1e-9 * std::max(1.0, std::abs(yDy)));
    for (int64_t q = 0; q < co; ++q) {
      double sum = 0;
      for (int64_t o = 0; o < m; ++o)
        sum += dy[o * co + q];
      EXPECT_NEAR(grads.db[q], sum, 1e-12);
    }
  });
}

// The inverse convolution over a strided layer's map is that layer's input
// gradient with the weights' channels swapped: W'[c, v, q] = W[q, v, c].
TEST(StridedReference, InverseIsTheTransposedMap) {
  int64_t ci = 3, co = 7;
  forEachCase([&](const ConvGeometry &g, const sparse::VoxelCloud &input,
                  const HostConvPairs &pairs) {
    int64_t n = input.size(), v = g.offsets(), m = pairs.outputs();
    std::vector<double> w = random(co * v * ci, 7), z = random(m * co, 8);
    std::vector<double> transposed(ci * v * co);
    for (int64_t q = 0; q < co; ++q)
      for (int64_t k = 0; k < v; ++k)
        for (int64_t ch = 0; ch < ci; ++ch)
          transposed[(ch * v + k) * co + q] = w[(q * v + k) * ci + ch];
    std::vector<double> up =
        harness::hostPairInverse(pairs, n, z, transposed, {}, co, ci);
    harness::HostConvGradients grads = harness::hostPairBackward(
        pairs, n, std::vector<double>(n * ci, 0.0), w, z, ci, co);
    ASSERT_EQ(up.size(), grads.dx.size());
    for (size_t i = 0; i < up.size(); ++i)
      EXPECT_NEAR(up[i], grads.dx[i], 1e-12) << i;
  });
}

TEST(StridedReference, BadInputsAreErrors) {
  ConvGeometry g;
  sparse::VoxelCloud outside;
  outside.coords = {0, 1, 2, 13};
  auto far = harness::buildHostStridedPairs(outside, kShape, g);
  ASSERT_FALSE(far.ok());
  EXPECT_NE(far.message().find("voxel 0 is outside the input grid"),
            std::string::npos);
  sparse::VoxelCloud twice;
  twice.coords = {0, 1, 2, 3, 0, 4, 4, 4, 0, 1, 2, 3};
  auto duplicate = harness::buildHostStridedPairs(twice, kShape, g);
  ASSERT_FALSE(duplicate.ok());
  EXPECT_NE(duplicate.message().find("voxels 0 and 2 are the same"),
            std::string::npos)
      << duplicate.message();
}

} // namespace

// What strided_candidates and output_voxels compute on the GPU, done on the
// host: the candidates of every input voxel, sorted by key stably and
// deduplicated, are the oracle's output voxels in its order, and their
// values are its maps. Every pair is some candidate (none is lost to the
// per-axis count), and no candidate is a pair twice.
TEST(StridedReference, SortedCandidatesAreTheOutputsAndMaps) {
  forEachCase([&](const ConvGeometry &g, const sparse::VoxelCloud &input,
                  const HostConvPairs &pairs) {
    auto candidates = harness::hostStridedCandidates(input, kShape, g, 2);
    ASSERT_TRUE(candidates.ok()) << candidates.message();
    const std::vector<int32_t> &keys = candidates->keys;
    ASSERT_EQ(int64_t(keys.size()), input.size() * candidates->perVoxel);
    std::vector<size_t> order(keys.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return keys[a] < keys[b]; });
    int64_t v = g.offsets();
    std::vector<int32_t> coords, nb, nbi(input.size() * v, -1);
    const std::array<int64_t, 3> &o = candidates->outputShape;
    int64_t outputs = 0, written = 0;
    for (size_t s = 0; s < order.size(); ++s) {
      int32_t key = keys[order[s]];
      if (key == candidates->cells)
        break;
      if (s == 0 || key != keys[order[s - 1]]) {
        int64_t z = key % o[2], y = key / o[2] % o[1],
                x = key / (o[2] * o[1]) % o[0], b = key / (o[2] * o[1] * o[0]);
        for (int64_t value : {b, x, y, z})
          coords.push_back(int32_t(value));
        nb.resize(nb.size() + v, -1);
        ++outputs;
      }
      int32_t value = candidates->values[order[s]];
      ASSERT_GE(value, 0);
      int32_t &entry = nb[(outputs - 1) * v + value % v];
      EXPECT_EQ(entry, -1) << "an output reads two inputs at an offset";
      entry = value / v;
      EXPECT_EQ(nbi[value], -1) << "an input is read twice at an offset";
      nbi[value] = int32_t(outputs - 1);
      ++written;
    }
    EXPECT_EQ(coords, pairs.outCoords);
    harness::HostPairMaps maps = harness::hostPairMaps(pairs, input.size());
    EXPECT_EQ(nb, maps.nb);
    EXPECT_EQ(nbi, maps.nbi);
    int64_t pairCount = 0;
    for (const auto &offsetPairs : pairs.pairs)
      pairCount += offsetPairs.size();
    EXPECT_EQ(written, pairCount);
  });
}

// A voxel outside the grid or past the batch count has no candidate.
TEST(StridedReference, CandidatesOfVoxelsOutsideTheGridAreNone) {
  ConvGeometry g;
  g.stride = {2, 2, 2};
  g.padding = {1, 1, 1};
  sparse::VoxelCloud outside;
  outside.coords = {0, 13, 0, 0, 2, 1, 1, 1, 0, 1, 1, 1};
  auto candidates = harness::hostStridedCandidates(outside, kShape, g, 2);
  ASSERT_TRUE(candidates.ok()) << candidates.message();
  int64_t c = candidates->perVoxel;
  EXPECT_EQ(c, 8);
  for (int64_t i = 0; i < 2 * c; ++i) {
    EXPECT_EQ(candidates->keys[i], candidates->cells) << i;
    EXPECT_EQ(candidates->values[i], -1) << i;
  }
  int64_t existing = 0;
  for (int64_t i = 2 * c; i < 3 * c; ++i)
    existing += candidates->values[i] >= 0;
  // (1, 1, 1) with padding 1 and stride 2 reaches outputs 0 and 1 on each
  // axis.
  EXPECT_EQ(existing, 8);
}
