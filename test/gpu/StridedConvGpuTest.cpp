//===- StridedConvGpuTest.cpp - strided and inverse convolutions ----------===//
//
// SparseTensor::strided's outputs and maps on the GPU against the float64
// oracle (check/reference/StridedConvReference.h) for spconv's downsampling
// shapes (2 / 2, 3 / 2 with padding, (3, 1, 1) / (2, 1, 1), a dilation, odd
// grids, batches); the strided and the inverse convolution and their
// gradients against float64 in f16, bf16 and f32 (tf32), channels that
// divide no block; the same bits from a second run and a second tensor;
// voxels outside the grid and bad geometries are errors.
//
//===----------------------------------------------------------------------===//

#include "GpuSuite.h"
#include "StridedConvReference.h"

#include "tilec/JIT/TilecJIT.h"
#include "tilec/runtime/Device.h"
#include "tilec/runtime/Driver.h"
#include "tilec/runtime/Session.h"
#include "tilec/runtime/Stream.h"
#include "tilec/sparse/SparseConv.h"
#include "tilec/sparse/VoxelScenes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

namespace rt = tilec::rt;
namespace harness = tilec::harness;
namespace sparse = tilec::sparse;

namespace {

sparse::ConvGeometry geometry(std::array<int, 3> k, std::array<int, 3> s,
                              std::array<int, 3> p = {0, 0, 0},
                              std::array<int, 3> d = {1, 1, 1}) {
  sparse::ConvGeometry g;
  g.kernel = k;
  g.stride = s;
  g.padding = p;
  g.dilation = d;
  return g;
}

// A cloud, its grid and batch count.
struct Scene {
  std::string name;
  sparse::VoxelCloud cloud;
  std::array<int64_t, 3> shape;
  int64_t batches;
};

std::vector<Scene> scenes() {
  return {{"shell13x2", sparse::shellScene(13, 2), {13, 13, 13}, 2},
          {"shell64", sparse::shellScene(64), {64, 64, 64}, 1},
          {"uniform", sparse::uniformScene(5000, 45, 3, 7), {45, 45, 45}, 3}};
}

class StridedConvGpuTest : public tilec::test::GpuSuite<> {
protected:
  void SetUp() override {
    GpuSuite::SetUp();
    if (IsSkipped())
      return;
    folder =
        std::make_unique<tilec::test::TemporaryFolder>("tilec-strided-gpu");
    ASSERT_FALSE(folder->path().empty());
    const std::string &directory = folder->path();
    rt::SessionOptions options;
    options.stageCacheDirectory = directory + "/cache";
    options.autotuneCachePath = directory + "/tuned.json";
    options.compiler = tilec::jit::compilerFactory();
    options.tuning.benchmark.warmupMs = 1;
    options.tuning.benchmark.budgetMs = 3;
    options.tuning.progress = rt::ProgressMode::Never;
    auto created = rt::Session::create(std::move(options));
    ASSERT_TRUE(created.ok()) << created.message();
    session = std::move(*created);
    engine = &session->sparse();
  }
  void TearDown() override {
    session.reset();
    folder.reset();
  }

  rt::DeviceBuffer toDevice(const void *bytes, size_t size) {
    auto buffer =
        rt::DeviceBuffer::allocate(*context, std::max<size_t>(size, 16));
    EXPECT_TRUE(buffer.ok()) << buffer.message();
    if (size > 0) {
      EXPECT_TRUE(buffer->copyFromHost(bytes, size).ok());
    }
    return std::move(*buffer);
  }
  rt::DeviceBuffer toDevice(const harness::HostTensor &host) {
    return toDevice(host.bytes.data(), host.bytes.size());
  }
  std::vector<int32_t> download(rt::DevicePtr pointer, size_t count) const {
    std::vector<int32_t> values(count);
    const rt::Driver &driver = context->driver();
    if (count > 0) {
      EXPECT_TRUE(
          driver
              .check(driver.api().cuMemcpyDtoH(values.data(), pointer.address,
                                               count * sizeof(int32_t)),
                     "cuMemcpyDtoH")
              .ok());
    }
    return values;
  }

  // The outputs and both maps against the oracle's: coordinates in order,
  // each map's (row, offset) -> voxel entries through its row order.
  void expectMapsMatch(const Scene &scene, const sparse::ConvGeometry &g) {
    SCOPED_TRACE(scene.name + " " + g.str());
    auto expected = harness::buildHostStridedPairs(scene.cloud, scene.shape, g);
    ASSERT_TRUE(expected.ok()) << expected.message();
    int64_t n = scene.cloud.size(), v = g.offsets();
    rt::DeviceBuffer coords = toDevice(scene.cloud.coords.data(), 16 * n);
    auto tensor = sparse::SparseTensor::create(*engine, coords.ptr(), n);
    ASSERT_TRUE(tensor.ok()) << tensor.message();
    auto maps = tensor->strided(g, scene.shape, scene.batches, nullptr);
    ASSERT_TRUE(maps.ok()) << maps.message();
    const sparse::StridedMaps &m = **maps;
    ASSERT_EQ(m.outputs, expected->outputs());
    EXPECT_EQ(m.inputs, n);
    EXPECT_EQ(download(m.outCoords, 4 * m.outputs), expected->outCoords);
    harness::HostPairMaps want = harness::hostPairMaps(*expected, n);
    int64_t pairs = 0;
    for (const auto &offsetPairs : expected->pairs)
      pairs += offsetPairs.size();
    for (const auto &[map, rowsWanted] : {std::pair{m.down.get(), &want.nb},
                                          std::pair{m.up.get(), &want.nbi}}) {
      int64_t rows = map->voxels;
      EXPECT_EQ(map->activePairs, pairs);
      std::vector<int32_t> order = download(map->order, rows);
      std::vector<int32_t> nbt = download(map->nbt, rows * v);
      std::vector<int32_t> unsorted(rows * v, -2);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < v; ++k)
          unsorted[int64_t(order[r]) * v + k] = nbt[k * rows + r];
      EXPECT_EQ(unsorted, *rowsWanted);
      // The rows' offset masks, of the map just checked.
      EXPECT_EQ(download(map->rowMasks, rows * ((v + 31) / 32)),
                harness::rowOffsetMasks(nbt, rows, v));
    }
    // The same voxels give the same outputs and maps, in the same order.
    auto again = sparse::SparseTensor::create(*engine, coords.ptr(), n);
    ASSERT_TRUE(again.ok());
    auto second = again->strided(g, scene.shape, scene.batches, nullptr);
    ASSERT_TRUE(second.ok()) << second.message();
    EXPECT_EQ(download((*second)->outCoords, 4 * m.outputs),
              download(m.outCoords, 4 * m.outputs));
    EXPECT_EQ(download((*second)->down->order, m.outputs),
              download(m.down->order, m.outputs));
    EXPECT_EQ(download((*second)->up->nbt, n * v), download(m.up->nbt, n * v));
  }

  struct ConvCase {
    int64_t ci = 32, co = 48;
    sparse::DType dtype = sparse::DType::F16;
    bool tf32 = false, bias = true, inverse = false;
  };

  // The forward and the gradients against float64, then the same bits again.
  void expectConvMatches(const Scene &scene, const sparse::ConvGeometry &g,
                         const ConvCase &c, CUstream stream = nullptr) {
    SCOPED_TRACE(scene.name + " " + g.str() + " " + std::to_string(c.ci) +
                 "->" + std::to_string(c.co) + " " +
                 sparse::dtypeName(c.dtype) + (c.tf32 ? " tf32" : "") +
                 (c.inverse ? " inverse" : ""));
    auto pairs = harness::buildHostStridedPairs(scene.cloud, scene.shape, g);
    ASSERT_TRUE(pairs.ok()) << pairs.message();
    int64_t inputs = scene.cloud.size(), outputs = pairs->outputs();
    int64_t v = g.offsets();
    int64_t xRows = c.inverse ? outputs : inputs;
    int64_t yRows = c.inverse ? inputs : outputs;
    auto format = harness::formatOf(sparse::dtypeName(c.dtype));
    ASSERT_TRUE(format.ok());
    harness::Random rng(c.ci * 31 + c.co);
    auto host = [&](int64_t count, bool fill) {
      harness::HostTensor t(*format, std::max<int64_t>(count, 1));
      if (fill)
        harness::fillUniform(t, rng, -1, 1, true);
      return t;
    };
    harness::HostTensor x = host(xRows * c.ci, true),
                        w = host(c.co * v * c.ci, true), b = host(c.co, true),
                        dy = host(yRows * c.co, true),
                        y = host(yRows * c.co, false),
                        dx = host(xRows * c.ci, false),
                        dw = host(c.co * v * c.ci, false),
                        db = host(c.co, false);
    rt::DeviceBuffer coords = toDevice(scene.cloud.coords.data(), 16 * inputs);
    rt::DeviceBuffer xd = toDevice(x), wd = toDevice(w), bd = toDevice(b),
                     dyd = toDevice(dy), yd = toDevice(y), dxd = toDevice(dx),
                     dwd = toDevice(dw), dbd = toDevice(db);
    auto tensor = sparse::SparseTensor::create(*engine, coords.ptr(), inputs);
    ASSERT_TRUE(tensor.ok()) << tensor.message();
    sparse::StridedConvBackwardArguments arguments;
    sparse::StridedConvArguments &forward = arguments.forward;
    forward.conv.x = xd.ptr();
    forward.conv.weight = wd.ptr();
    forward.conv.bias = c.bias ? bd.ptr() : rt::DevicePtr{};
    forward.conv.y = yd.ptr();
    forward.conv.ci = c.ci;
    forward.conv.co = c.co;
    forward.conv.dtype = c.dtype;
    forward.conv.allowTf32 = c.tf32;
    forward.geometry = g;
    forward.spatialShape = scene.shape;
    forward.batches = scene.batches;
    forward.inverse = c.inverse;
    arguments.gradients.dy = dyd.ptr();
    arguments.gradients.dx = dxd.ptr();
    arguments.gradients.dw = dwd.ptr();
    arguments.gradients.db = dbd.ptr();

    auto run = [&]() {
      for (rt::DeviceBuffer *poisoned : {&yd, &dxd, &dwd, &dbd})
        ASSERT_TRUE(poisoned->memset8(0xFF).ok());
      tilec::Status ran =
          sparse::stridedConv3d(*engine, *tensor, forward, stream);
      ASSERT_TRUE(ran.ok()) << ran.message();
      ran = sparse::stridedConv3dBackward(*engine, *tensor, arguments, stream);
      ASSERT_TRUE(ran.ok()) << ran.message();
      ASSERT_TRUE(context->synchronize().ok());
      for (auto [device, tensorOnHost] :
           {std::pair{&yd, &y}, std::pair{&dxd, &dx}, std::pair{&dwd, &dw},
            std::pair{&dbd, &db}})
        ASSERT_TRUE(device
                        ->copyToHost(tensorOnHost->bytes.data(),
                                     tensorOnHost->bytes.size())
                        .ok());
    };
    run();

    std::vector<double> xs = x.toDoubles(), ws = w.toDoubles(),
                        bs = b.toDoubles(), dys = dy.toDoubles();
    xs.resize(xRows * c.ci);
    dys.resize(yRows * c.co);
    std::vector<double> noBias;
    std::vector<double> wantY =
        c.inverse ? harness::hostPairInverse(*pairs, inputs, xs, ws,
                                             c.bias ? bs : noBias, c.ci, c.co)
                  : harness::hostPairForward(*pairs, xs, ws,
                                             c.bias ? bs : noBias, c.ci, c.co);
    harness::HostConvGradients want;
    if (!c.inverse) {
      want = harness::hostPairBackward(*pairs, inputs, xs, ws, dys, c.ci, c.co);
    } else {
      // y[i] = sum over the pairs (i, o) of v of x[o] . w[v]: the forward
      // over the pairs swapped, x's rows the outputs.
      harness::HostConvPairs swapped;
      swapped.pairs.resize(v);
      for (int64_t k = 0; k < v; ++k)
        for (const auto &[in, out] : pairs->pairs[k])
          swapped.pairs[k].emplace_back(out, in);
      swapped.outCoords.assign(4 * inputs, 0);
      want =
          harness::hostPairBackward(swapped, outputs, xs, ws, dys, c.ci, c.co);
    }
    auto expectClose = [&](const char *name, const harness::HostTensor &got,
                           const std::vector<double> &expected,
                           harness::Tolerance tolerance) {
      int64_t bad = 0;
      for (size_t i = 0; i < expected.size(); ++i) {
        double value = got.get(i);
        if (!(std::abs(value - expected[i]) <=
              tolerance.atol + tolerance.rtol * std::abs(expected[i])))
          if (bad++ < 5)
            ADD_FAILURE() << name << "[" << i << "] = " << value << ", want "
                          << expected[i];
      }
      EXPECT_EQ(bad, 0) << name;
    };
    expectClose(
        "y", y, wantY,
        harness::toleranceFor(*format, c.tf32, std::sqrt(double(v * c.ci))));
    expectClose(
        "dx", dx, want.dx,
        harness::toleranceFor(*format, c.tf32, std::sqrt(double(v * c.co))));
    harness::Tolerance sums = harness::toleranceFor(
        *format, c.tf32, std::sqrt(double(std::max<int64_t>(yRows, 1))));
    expectClose("dw", dw, want.dw, sums);
    if (c.bias)
      expectClose("db", db, want.db, sums);

    std::vector<uint8_t> first[4] = {y.bytes, dx.bytes, dw.bytes, db.bytes};
    run();
    EXPECT_EQ(y.bytes, first[0]);
    EXPECT_EQ(dx.bytes, first[1]);
    EXPECT_EQ(dw.bytes, first[2]);
    EXPECT_EQ(db.bytes, first[3]);
  }

  std::unique_ptr<tilec::test::TemporaryFolder> folder;
  std::unique_ptr<rt::Session> session;
  sparse::SparseEngine *engine = nullptr;
};

TEST_F(StridedConvGpuTest, OutputsAndMapsMatchTheOracle) {
  for (const Scene &scene : scenes())
    for (const sparse::ConvGeometry &g :
         {geometry({2, 2, 2}, {2, 2, 2}),
          geometry({3, 3, 3}, {2, 2, 2}, {1, 1, 1}),
          geometry({3, 1, 1}, {2, 1, 1}, {1, 0, 0}),
          geometry({3, 3, 3}, {2, 2, 2}, {2, 2, 2}, {2, 2, 2}),
          geometry({1, 3, 3}, {1, 2, 2}, {0, 1, 1}),
          geometry({3, 3, 3}, {1, 1, 1}, {1, 1, 1})})
      expectMapsMatch(scene, g);
}

TEST_F(StridedConvGpuTest, ConvolutionAndGradientsMatchFloat64) {
  std::vector<Scene> all = scenes();
  sparse::ConvGeometry down = geometry({3, 3, 3}, {2, 2, 2}, {1, 1, 1});
  sparse::ConvGeometry pool = geometry({2, 2, 2}, {2, 2, 2});
  for (bool inverse : {false, true}) {
    expectConvMatches(all[0], pool,
                      {32, 48, sparse::DType::F16, false, true, inverse});
    expectConvMatches(all[1], down,
                      {64, 64, sparse::DType::F16, false, true, inverse});
    expectConvMatches(all[2], down,
                      {3, 17, sparse::DType::BF16, false, true, inverse});
    expectConvMatches(all[1], geometry({3, 1, 1}, {2, 1, 1}, {1, 0, 0}),
                      {16, 32, sparse::DType::F32, true, false, inverse});
  }
}

TEST_F(StridedConvGpuTest, BadInputsAreClearErrors) {
  sparse::VoxelCloud cloud = sparse::shellScene(13);
  rt::DeviceBuffer coords =
      toDevice(cloud.coords.data(), 4 * cloud.coords.size());
  auto tensor =
      sparse::SparseTensor::create(*engine, coords.ptr(), cloud.size());
  ASSERT_TRUE(tensor.ok());
  sparse::ConvGeometry g = geometry({3, 3, 3}, {2, 2, 2}, {1, 1, 1});
  // A grid smaller than the cloud.
  auto outside = tensor->strided(g, {12, 13, 13}, 1, nullptr);
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.message().find("lies outside the grid"), std::string::npos)
      << outside.message();
  // No output along an axis.
  auto none =
      tensor->strided(geometry({5, 5, 5}, {1, 1, 1}), {4, 13, 13}, 1, nullptr);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.message().find("axis x"), std::string::npos) << none.message();
  auto batches = tensor->strided(g, {13, 13, 13}, 0, nullptr);
  ASSERT_FALSE(batches.ok());
  EXPECT_NE(batches.message().find("batch count"), std::string::npos)
      << batches.message();
  // The tensor still builds good maps after the errors.
  auto good = tensor->strided(g, {13, 13, 13}, 1, nullptr);
  ASSERT_TRUE(good.ok()) << good.message();
  EXPECT_GT((*good)->outputs, 0);
}

TEST_F(StridedConvGpuTest, DuplicateVoxelsAreAnError) {
  sparse::VoxelCloud cloud = sparse::shellScene(13);
  // Voxel 7 again, at the end.
  cloud.coords.insert(cloud.coords.end(), cloud.coords.begin() + 28,
                      cloud.coords.begin() + 32);
  rt::DeviceBuffer coords =
      toDevice(cloud.coords.data(), 4 * cloud.coords.size());
  auto tensor =
      sparse::SparseTensor::create(*engine, coords.ptr(), cloud.size());
  ASSERT_TRUE(tensor.ok());
  auto maps = tensor->strided(geometry({3, 3, 3}, {2, 2, 2}, {1, 1, 1}),
                              {13, 13, 13}, 1, nullptr);
  ASSERT_FALSE(maps.ok());
  EXPECT_NE(maps.message().find("two voxels of the tensor are the same"),
            std::string::npos)
      << maps.message();
}

TEST_F(StridedConvGpuTest, OnAStream) {
  auto stream = rt::Stream::create(*context);
  ASSERT_TRUE(stream.ok()) << stream.message();
  std::vector<Scene> all = scenes();
  expectConvMatches(all[1], geometry({2, 2, 2}, {2, 2, 2}),
                    {32, 32, sparse::DType::F16, false, true, false},
                    stream->handle());
}

TEST_F(StridedConvGpuTest, EmptyTensorHasNoOutputs) {
  auto tensor = sparse::SparseTensor::create(*engine, rt::DevicePtr{}, 0);
  ASSERT_TRUE(tensor.ok());
  auto maps =
      tensor->strided(geometry({2, 2, 2}, {2, 2, 2}), {8, 8, 8}, 1, nullptr);
  ASSERT_TRUE(maps.ok()) << maps.message();
  EXPECT_EQ((*maps)->outputs, 0);
}

} // namespace
