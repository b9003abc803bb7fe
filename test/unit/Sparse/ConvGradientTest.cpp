//===- ConvGradientTest.cpp - The convolution's float64 gradients ---------===//
//
// The host oracle of the submanifold convolution's backward pass
// (hostConvBackward, test/reference/SparseConvReference.h), checked against
// central differences of the forward oracle, and the identity the GPU's
// input gradient is planned on (docs/sparse-conv.md): on a submanifold map,
// dx is the forward convolution of dy with each offset's weights transposed
// and taken from the mirrored offset, W'[c, u, o] = W[o, V - 1 - u, c].
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace tilec;

namespace {

struct Problem {
  harness::HostMaps maps;
  int64_t n = 0, v = 0, ci = 0, co = 0;
  std::vector<double> x, w, bias, dy;
};

Problem makeProblem(int64_t voxels, const sparse::Window &window, int64_t ci,
                    int64_t co, unsigned seed) {
  Problem problem;
  auto maps = harness::buildHostMaps(harness::testCloud(voxels), window, 64);
  EXPECT_TRUE(maps.ok()) << maps.message();
  problem.maps = std::move(*maps);
  problem.n = voxels;
  problem.v = window.offsets();
  problem.ci = ci;
  problem.co = co;
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  auto fill = [&](std::vector<double> &values, int64_t count) {
    values.resize(count);
    for (double &value : values)
      value = uniform(engine);
  };
  fill(problem.x, voxels * ci);
  fill(problem.w, co * problem.v * ci);
  fill(problem.bias, co);
  fill(problem.dy, voxels * co);
  return problem;
}

Problem makeProblem(int64_t voxels, int kernelSize, int dilation, int64_t ci,
                    int64_t co, unsigned seed) {
  return makeProblem(voxels, sparse::Window::cube(kernelSize, dilation), ci, co,
                     seed);
}


// L = sum of y * dy, whose gradient is what hostConvBackward gives.
double loss(const Problem &p, const std::vector<double> &x,
            const std::vector<double> &w, const std::vector<double> &bias) {
  std::vector<double> y =
      harness::hostConvForward(p.maps.nb, p.v, x, w, bias, p.ci, p.co);
  double sum = 0;
  for (size_t i = 0; i < y.size(); ++i)
    sum += y[i] * p.dy[i];
  return sum;
}

// Every element of `analytic` against the central difference of the loss
// in `values` (L is linear in each, so the difference is exact up to
// rounding).
void expectCentralDifferences(const Problem &p, std::vector<double> &values,
                              const std::vector<double> &analytic,
                              const char *what) {
  ASSERT_EQ(values.size(), analytic.size()) << what;
  const double h = 0.5;
  size_t wrong = 0;
  for (size_t e = 0; e < values.size(); ++e) {
    double saved = values[e];
    values[e] = saved + h;
    double up = loss(p, p.x, p.w, p.bias);
    values[e] = saved - h;
    double down = loss(p, p.x, p.w, p.bias);
    values[e] = saved;
    double numeric = (up - down) / (2 * h);
    if (std::abs(numeric - analytic[e]) > 1e-9 * (1 + std::abs(numeric)) &&
        wrong++ < 5)
      ADD_FAILURE() << what << "[" << e << "] = " << analytic[e]
                    << ", central difference " << numeric;
  }
  EXPECT_EQ(wrong, 0u) << what;
}

TEST(ConvGradientTest, MatchesCentralDifferencesOfTheForward) {
  for (auto [kernelSize, dilation] : {std::pair{3, 1}, std::pair{5, 2}}) {
    Problem p = makeProblem(90, kernelSize, dilation, 3, 2, 7 + kernelSize);
    harness::HostConvGradients g =
        harness::hostConvBackward(p.maps.nb, p.v, p.x, p.w, p.dy, p.ci, p.co);
    // The perturbed vectors are the problem's own (loss reads p).
    expectCentralDifferences(p, p.x, g.dx, "dx");
    expectCentralDifferences(p, p.w, g.dw, "dw");
    expectCentralDifferences(p, p.bias, g.db, "db");
  }
}

// Cubic windows, and the non-cubic ones of Cylinder3D-like networks with a
// dilation along one axis: every window of odd extents is symmetric.
std::vector<sparse::Window> windows() {
  return {sparse::Window::cube(3), sparse::Window::cube(3, 2),
          sparse::Window::cube(5), sparse::Window{{1, 3, 3}, {1, 1, 1}},
          sparse::Window{{3, 1, 5}, {1, 1, 2}},
          sparse::Window{{5, 3, 1}, {1, 2, 1}}};
}

TEST(ConvGradientTest, InputGradientIsTheForwardWithMirroredTransposedWeights) {
  for (const sparse::Window &window : windows()) {
    Problem p = makeProblem(400, window, 5, 4, 3 + unsigned(window.offsets()));
    harness::HostConvGradients g =
        harness::hostConvBackward(p.maps.nb, p.v, p.x, p.w, p.dy, p.ci, p.co);
    // W'[c, u, o] = W[o, V - 1 - u, c]: co' = ci, ci' = co.
    std::vector<double> mirrored(p.w.size());
    for (int64_t o = 0; o < p.co; ++o)
      for (int64_t u = 0; u < p.v; ++u)
        for (int64_t c = 0; c < p.ci; ++c)
          mirrored[(c * p.v + u) * p.co + o] =
              p.w[(o * p.v + (p.v - 1 - u)) * p.ci + c];
    std::vector<double> dx = harness::hostConvForward(p.maps.nb, p.v, p.dy,
                                                      mirrored, {}, p.co, p.ci);
    ASSERT_EQ(dx.size(), g.dx.size());
    for (size_t e = 0; e < dx.size(); ++e)
      ASSERT_NEAR(dx[e], g.dx[e], 1e-12 * (1 + std::abs(g.dx[e])))
          << "dx[" << e << "], window " << window.str();

    // The kernels' reference reads W itself in that layout (TRANSPOSE_W),
    // with rows of dy and dx further apart than their channels.
    harness::HostConvLayout layout{p.co + 3, p.ci + 2, true};
    std::vector<double> dyRows(p.n * layout.xRowStride, NAN);
    for (int64_t i = 0; i < p.n; ++i)
      for (int64_t o = 0; o < p.co; ++o)
        dyRows[i * layout.xRowStride + o] = p.dy[i * p.co + o];
    std::vector<double> dxRows(p.n * layout.yRowStride, -7.0);
    harness::hostConvForwardRows(p.maps.nb, p.v, dyRows.data(), p.w.data(),
                                 nullptr, p.co, p.ci, layout, 0, p.n,
                                 dxRows.data());
    for (int64_t j = 0; j < p.n; ++j) {
      for (int64_t c = 0; c < p.ci; ++c)
        ASSERT_NEAR(dxRows[j * layout.yRowStride + c], g.dx[j * p.ci + c],
                    1e-12 * (1 + std::abs(g.dx[j * p.ci + c])))
            << "dx[" << j << ", " << c << "] read through TRANSPOSE_W";
      // Between rows: untouched.
      for (int64_t c = p.ci; c < layout.yRowStride; ++c)
        ASSERT_EQ(dxRows[j * layout.yRowStride + c], -7.0);
    }
  }
}

// The identity rests on the map's symmetry: j at offset v of i exactly when
// i is at offset V - 1 - v of j.
TEST(ConvGradientTest, TheSubmanifoldMapIsSymmetric) {
  for (const sparse::Window &window : windows()) {
    SCOPED_TRACE(window.str());
    Problem p = makeProblem(500, window, 1, 1, 1);
    int64_t checked = 0;
    for (int64_t i = 0; i < p.n; ++i) {
      // The centre is the voxel itself.
      ASSERT_EQ(p.maps.nb[i * p.v + (p.v - 1) / 2], i);
      for (int64_t k = 0; k < p.v; ++k) {
        int32_t j = p.maps.nb[i * p.v + k];
        if (j < 0)
          continue;
        ASSERT_EQ(p.maps.nb[j * p.v + (p.v - 1 - k)], i);
        ++checked;
      }
    }
    EXPECT_GT(checked, p.n) << "the test cloud has neighbours";
  }
}

// A dilation along an axis of extent 1 changes nothing: such windows are
// one window (their maps and calls are shared).
TEST(ConvGradientTest, WindowsNormalizeTheDilationOfUnitAxes) {
  sparse::Window a{{1, 3, 3}, {4, 1, 2}}, b{{1, 3, 3}, {1, 1, 2}};
  EXPECT_TRUE(a.normalized() == b);
  EXPECT_TRUE(a.normalized() == b.normalized());
  EXPECT_EQ(a.normalized().str(), "k1x3x3,d1x1x2");
  Problem p = makeProblem(300, a, 1, 1, 1), q = makeProblem(300, b, 1, 1, 1);
  EXPECT_EQ(p.maps.nb, q.maps.nb);
}

// The oracle refuses a window its loops cannot visit (an even extent would
// visit K + 1 offsets of V).
TEST(ConvGradientTest, TheOracleRefusesEvenWindows) {
  auto maps = harness::buildHostMaps(harness::testCloud(50),
                                     sparse::Window::cube(2), 64);
  ASSERT_FALSE(maps.ok());
  EXPECT_NE(maps.message().find("must be odd"), std::string::npos)
      << maps.message();
}

// The weight gradient's plan: each offset's pair list (in sorted row order)
// cut into weightGradSplit's parts, each part's sums added in part order,
// gives dw; every pair is in exactly one part, and the parts' partial sums
// stay within their memory bound.
TEST(ConvGradientTest, WeightGradientPartsCoverEveryPairOnce) {
  // Enough voxels for several parts.
  Problem p = makeProblem(20000, 3, 1, 3, 2, 11);
  harness::HostOffsetPairs pairs =
      harness::hostOffsetPairs(p.maps.nbt, p.maps.order, p.n, p.v);
  harness::HostConvGradients g =
      harness::hostConvBackward(p.maps.nb, p.v, p.x, p.w, p.dy, p.ci, p.co);
  {
    sparse::WeightGradSplit split =
        sparse::weightGradSplit(p.n, p.v, p.ci, p.co);
    ASSERT_GT(split.parts, 1);
    std::vector<double> dw(p.co * p.v * p.ci, 0.0);
    std::vector<int> seen(pairs.in.size(), 0);
    for (int64_t v = 0; v < p.v; ++v)
      for (int64_t part = 0; part < split.parts; ++part) {
        int64_t end = pairs.start[v + 1];
        int64_t first =
            std::min<int64_t>(pairs.start[v] + part * split.pairsPerPart, end);
        int64_t last = std::min(first + split.pairsPerPart, end);
        for (int64_t q = first; q < last; ++q) {
          ++seen[q];
          for (int64_t o = 0; o < p.co; ++o)
            for (int64_t c = 0; c < p.ci; ++c)
              dw[(o * p.v + v) * p.ci + c] +=
                  p.dy[pairs.out[q] * p.co + o] * p.x[pairs.in[q] * p.ci + c];
        }
      }
    for (size_t q = 0; q < seen.size(); ++q)
      ASSERT_EQ(seen[q], 1) << "pair " << q;
    for (size_t e = 0; e < dw.size(); ++e)
      ASSERT_NEAR(dw[e], g.dw[e], 1e-9 * (1 + std::abs(g.dw[e])));
  }
  // Every list fits its parts; the partial sums stay under 64 MiB unless a
  // single part is left.
  for (int64_t voxels : {1, 4095, 4096, 100000, 500000, 1 << 27})
    for (int64_t channels : {3, 64, 256, 1024}) {
      sparse::WeightGradSplit split =
          sparse::weightGradSplit(voxels, 27, channels, channels);
      EXPECT_GE(split.parts, 1);
      EXPECT_GE(split.parts * split.pairsPerPart, voxels);
      EXPECT_TRUE(split.parts == 1 ||
                  split.parts * 27 * channels * channels * 4 <= (64 << 20))
          << voxels << " voxels, " << channels << " channels";
    }
}

} // namespace
