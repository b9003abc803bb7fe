//===- SparseConvGpuTest.cpp - maps and convolution of tilec_sparse -------===//
//
// The maps built on the GPU equal the host oracle's element by element
// (test/reference/SparseConvReference.h) for shells, uniform clouds, dense
// blocks and batches, kernel sizes 3 and 5, dilations; duplicates and
// coordinates out of range are errors; the convolution matches float64 for
// every dtype, channels that do not divide the blocks, bias, an empty input
// and a single voxel; a second build and a second run give the same bits.
//
//===----------------------------------------------------------------------===//

#include "GpuSuite.h"
#include "SparseConvReference.h"

#include "tilec/JIT/TilecJIT.h"
#include "tilec/runtime/AutotuneCache.h"
#include "tilec/runtime/Autotuner.h"
#include "tilec/runtime/Device.h"
#include "tilec/runtime/Driver.h"
#include "tilec/runtime/KernelProvider.h"
#include "tilec/runtime/Pack.h"
#include "tilec/runtime/Session.h"
#include "tilec/runtime/StageCache.h"
#include "tilec/runtime/Stream.h"
#include "tilec/sparse/SparseConv.h"
#include "tilec/sparse/VoxelScenes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <set>

namespace rt = tilec::rt;
namespace harness = tilec::harness;
namespace sparse = tilec::sparse;

namespace {

class SparseConvGpuTest : public tilec::test::GpuSuite<> {
protected:
  void SetUp() override {
    GpuSuite::SetUp();
    if (IsSkipped())
      return;
    folder = std::make_unique<tilec::test::TemporaryFolder>("tilec-sparse-gpu");
    ASSERT_FALSE(folder->path().empty());
    directory = folder->path();
    openSession();
  }
  void TearDown() override {
    session.reset();
    folder.reset();
  }

  rt::DeviceBuffer upload(const std::vector<int32_t> &values) {
    auto buffer = rt::DeviceBuffer::allocate(
        *context, std::max<size_t>(values.size(), 4) * sizeof(int32_t));
    EXPECT_TRUE(buffer.ok()) << buffer.message();
    EXPECT_TRUE(buffer->copyFromHost(values).ok());
    return std::move(*buffer);
  }
  static std::vector<int32_t> download(const rt::DeviceBuffer &buffer,
                                       size_t count) {
    std::vector<int32_t> values(count);
    EXPECT_TRUE(buffer.copyToHost(values).ok());
    return values;
  }
  // The maps' buffers are views of one allocation each.
  std::vector<int32_t> download(rt::DevicePtr pointer, size_t count) const {
    std::vector<int32_t> values(count);
    const rt::Driver &driver = context->driver();
    EXPECT_TRUE(
        driver
            .check(driver.api().cuMemcpyDtoH(values.data(), pointer.address,
                                             count * sizeof(int32_t)),
                   "cuMemcpyDtoH")
            .ok());
    return values;
  }

  // The GPU's maps against the oracle's, every buffer.
  void expectMapsMatch(
      const sparse::VoxelCloud &cloud, int kernelSize, int dilation,
      int64_t blockRows,
      sparse::RowOrder rowOrder = sparse::RowOrder::LeanGroups) {
    expectMapsMatch(cloud, sparse::Window::cube(kernelSize, dilation),
                    blockRows, rowOrder);
  }
  void expectMapsMatch(const sparse::VoxelCloud &cloud,
                       const sparse::Window &window, int64_t blockRows,
                       sparse::RowOrder rowOrder = sparse::RowOrder::LeanGroups,
                       int64_t coordsOffset = 0) {
    bool lean = rowOrder == sparse::RowOrder::LeanGroups;
    SCOPED_TRACE("N " + std::to_string(cloud.size()) + " " + window.str() +
                 " BLOCK_M " + std::to_string(blockRows) +
                 (lean ? "" : " key order"));
    auto expected = harness::buildHostMaps(cloud, window, blockRows,
                                           lean ? sparse::kCoverRounds : 0);
    ASSERT_TRUE(expected.ok()) << expected.message();
    rt::DeviceBuffer coords = upload(cloud.coords);
    auto tensor =
        sparse::SparseTensor::create(*engine, coords.ptr(), cloud.size());
    ASSERT_TRUE(tensor.ok()) << tensor.message();
    ASSERT_TRUE(tensor->setRowOrder(rowOrder).ok());
    auto maps = tensor->maps(window, blockRows, nullptr);
    ASSERT_TRUE(maps.ok()) << maps.message();
    // The built maps keep their order.
    sparse::RowOrder other =
        lean ? sparse::RowOrder::Key : sparse::RowOrder::LeanGroups;
    tilec::Status late = tensor->setRowOrder(other);
    EXPECT_FALSE(late.ok());
    EXPECT_NE(late.message().find("before the first maps"), std::string::npos);
    EXPECT_TRUE(tensor->setRowOrder(rowOrder).ok());
    expectMapsEqual(**maps, *expected, cloud.size());
  }

  // `maps` (of `n` voxels) against the host oracle's.
  void expectMapsEqual(const sparse::NeighbourMaps &maps,
                       const harness::HostMaps &expected, int64_t n) {
    EXPECT_EQ(download(maps.map->order, n), expected.order);
    EXPECT_EQ(download(maps.map->nbt, n * expected.offsets), expected.nbt);
    EXPECT_EQ(download(maps.map->rowMasks, n * ((expected.offsets + 31) / 32)),
              expected.rowMasks);
    EXPECT_EQ(download(maps.blkCount, expected.blkCount.size()),
              expected.blkCount);
    // Block b's list at b * V, its entries past the count unwritten.
    std::vector<int32_t> lists = download(maps.blkOff, expected.blkOff.size());
    for (size_t b = 0; b < expected.blkCount.size(); ++b)
      for (int64_t k = expected.blkCount[b]; k < expected.offsets; ++k)
        lists[b * expected.offsets + k] = harness::kUnlisted;
    EXPECT_EQ(lists, expected.blkOff);
    EXPECT_EQ(download(maps.blkOrder, expected.blkOrder.size()),
              expected.blkOrder);
    int64_t pairs = 0;
    for (int32_t entry : expected.nb)
      pairs += entry != -1;
    EXPECT_EQ(maps.map->activePairs, pairs);
  }

  // Runs the convolution on `cloud` and compares it with float64.
  void expectConvMatches(const sparse::VoxelCloud &cloud, int64_t ci,
                         int64_t co, int kernelSize, sparse::DType dtype,
                         bool tf32, bool bias, CUstream stream = nullptr,
                         CUstream repeatStream = nullptr) {
    expectConvMatches(cloud, ci, co, sparse::Window::cube(kernelSize), dtype,
                      tf32, bias, stream, repeatStream);
  }
  void expectConvMatches(const sparse::VoxelCloud &cloud, int64_t ci,
                         int64_t co, const sparse::Window &window,
                         sparse::DType dtype,
                         bool tf32, bool bias, CUstream stream = nullptr,
                         CUstream repeatStream = nullptr) {
    SCOPED_TRACE("N " + std::to_string(cloud.size()) + " " +
                 std::to_string(ci) + "->" + std::to_string(co) + " " +
                 window.str() + " " + sparse::dtypeName(dtype) +
                 (tf32 ? " tf32" : "") + (bias ? " bias" : ""));
    int64_t n = cloud.size(), v = window.offsets();
    auto format = harness::formatOf(sparse::dtypeName(dtype));
    ASSERT_TRUE(format.ok());
    harness::Random rng(ci * 1000 + co);
    harness::HostTensor x(*format, std::max<int64_t>(n * ci, 1));
    harness::HostTensor w(*format, co * v * ci), b(*format, co);
    harness::fillUniform(x, rng, -1, 1, true);
    harness::fillUniform(w, rng, -1, 1, true);
    harness::fillUniform(b, rng, -1, 1, true);
    auto toDevice = [&](const harness::HostTensor &host) {
      auto buffer = rt::DeviceBuffer::allocate(*context, host.bytes.size());
      EXPECT_TRUE(buffer.ok());
      EXPECT_TRUE(
          buffer->copyFromHost(host.bytes.data(), host.bytes.size()).ok());
      return std::move(*buffer);
    };
    rt::DeviceBuffer coords = upload(cloud.coords), xd = toDevice(x);
    rt::DeviceBuffer wd = toDevice(w), bd = toDevice(b);
    harness::HostTensor y(*format, std::max<int64_t>(n * co, 1));
    rt::DeviceBuffer yd = toDevice(y);
    ASSERT_TRUE(yd.memset8(0xFF).ok()); // poisoned
    auto tensor = sparse::SparseTensor::create(*engine, coords.ptr(), n);
    ASSERT_TRUE(tensor.ok()) << tensor.message();
    sparse::ConvArguments arguments;
    arguments.x = xd.ptr();
    arguments.weight = wd.ptr();
    arguments.bias = bias ? bd.ptr() : rt::DevicePtr{};
    arguments.y = yd.ptr();
    arguments.ci = ci;
    arguments.co = co;
    arguments.window = window;
    arguments.dtype = dtype;
    arguments.allowTf32 = tf32;
    tilec::Status ran =
        sparse::submanifoldConv3d(*engine, *tensor, arguments, stream);
    ASSERT_TRUE(ran.ok()) << ran.message();
    // A blocking stream: the synchronous copy waits for it.
    ASSERT_TRUE(yd.copyToHost(y.bytes.data(), y.bytes.size()).ok());
    if (n == 0)
      return;
    auto maps = harness::buildHostMaps(cloud, window, 64);
    ASSERT_TRUE(maps.ok());
    harness::Tolerance tolerance =
        harness::toleranceFor(*format, tf32, std::sqrt(double(v * ci)));
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t o = 0; o < co; ++o) {
        double want = bias ? b.get(o) : 0;
        for (int64_t k = 0; k < v; ++k)
          if (int32_t j = maps->nb[i * v + k]; j >= 0)
            for (int64_t c = 0; c < ci; ++c)
              want += x.get(j * ci + c) * w.get((o * v + k) * ci + c);
        double got = y.get(i * co + o);
        if (!(std::abs(got - want) <=
              tolerance.atol + tolerance.rtol * std::abs(want)))
          if (bad++ < 5)
            ADD_FAILURE() << "y[" << i << ", " << o << "] = " << got
                          << ", want " << want;
      }
    EXPECT_EQ(bad, 0);

    // The same call again (on `repeatStream`): the same bits.
    std::vector<uint8_t> first = y.bytes;
    ASSERT_TRUE(yd.memset8(0xFF).ok());
    ran = sparse::submanifoldConv3d(*engine, *tensor, arguments, repeatStream);
    ASSERT_TRUE(ran.ok()) << ran.message();
    ASSERT_TRUE(yd.copyToHost(y.bytes.data(), y.bytes.size()).ok());
    EXPECT_EQ(y.bytes, first);
  }

  // The gradients of a convolution on `cloud` (after its forward, as in
  // training) against float64, then the same bits from a second call.
  struct BackwardCase {
    int64_t ci = 32, co = 32;
    sparse::Window window;
    sparse::DType dtype = sparse::DType::F16;
    bool tf32 = false, weightGradF32 = false;
  };
  void expectBackwardMatches(const sparse::VoxelCloud &cloud,
                             const BackwardCase &c, CUstream stream = nullptr) {
    SCOPED_TRACE("N " + std::to_string(cloud.size()) + " " +
                 std::to_string(c.ci) + "->" + std::to_string(c.co) + " " +
                 c.window.str() + " " + sparse::dtypeName(c.dtype) +
                 (c.tf32 ? " tf32" : "") + (c.weightGradF32 ? " f32 dW" : ""));
    int64_t n = cloud.size();
    int64_t v = c.window.offsets();
    auto format = harness::formatOf(sparse::dtypeName(c.dtype));
    ASSERT_TRUE(format.ok());
    auto gradFormat =
        c.weightGradF32 ? tilec::harness::ElementFormat::F32 : *format;
    harness::Random rng(c.ci * 7919 + c.co);
    auto host = [&](harness::ElementFormat f, int64_t count, bool fill) {
      harness::HostTensor t(f, std::max<int64_t>(count, 1));
      if (fill)
        harness::fillUniform(t, rng, -1, 1, true);
      return t;
    };
    harness::HostTensor x = host(*format, n * c.ci, true);
    harness::HostTensor w = host(*format, c.co * v * c.ci, true);
    harness::HostTensor dy = host(*format, n * c.co, true);
    harness::HostTensor y = host(*format, n * c.co, false);
    harness::HostTensor dx = host(*format, n * c.ci, false);
    harness::HostTensor dw = host(gradFormat, c.co * v * c.ci, false);
    harness::HostTensor db = host(gradFormat, c.co, false);
    auto toDevice = [&](const harness::HostTensor &t) {
      auto buffer = rt::DeviceBuffer::allocate(*context, t.bytes.size());
      EXPECT_TRUE(buffer.ok());
      EXPECT_TRUE(buffer->copyFromHost(t.bytes.data(), t.bytes.size()).ok());
      return std::move(*buffer);
    };
    rt::DeviceBuffer coords = upload(cloud.coords), xd = toDevice(x);
    rt::DeviceBuffer wd = toDevice(w), dyd = toDevice(dy), yd = toDevice(y);
    rt::DeviceBuffer dxd = toDevice(dx), dwd = toDevice(dw), dbd = toDevice(db);
    auto tensor = sparse::SparseTensor::create(*engine, coords.ptr(), n);
    ASSERT_TRUE(tensor.ok()) << tensor.message();
    sparse::ConvBackwardArguments arguments;
    sparse::ConvArguments &forward = arguments.forward;
    forward.x = xd.ptr();
    forward.weight = wd.ptr();
    forward.y = yd.ptr();
    forward.ci = c.ci;
    forward.co = c.co;
    forward.window = c.window;
    forward.dtype = c.dtype;
    forward.allowTf32 = c.tf32;
    arguments.dy = dyd.ptr();
    arguments.dx = dxd.ptr();
    arguments.dw = dwd.ptr();
    arguments.db = dbd.ptr();
    arguments.weightGradF32 = c.weightGradF32;
    tilec::Status ran =
        sparse::submanifoldConv3d(*engine, *tensor, forward, stream);
    ASSERT_TRUE(ran.ok()) << ran.message();
    auto runBackward = [&]() {
      for (rt::DeviceBuffer *poisoned : {&dxd, &dwd, &dbd})
        ASSERT_TRUE(poisoned->memset8(0xFF).ok());
      tilec::Status status = sparse::submanifoldConv3dBackward(
          *engine, *tensor, arguments, stream);
      ASSERT_TRUE(status.ok()) << status.message();
      ASSERT_TRUE(context->synchronize().ok());
      for (auto [device, hostTensor] :
           {std::pair{&dxd, &dx}, std::pair{&dwd, &dw}, std::pair{&dbd, &db}})
        ASSERT_TRUE(
            device
                ->copyToHost(hostTensor->bytes.data(), hostTensor->bytes.size())
                .ok());
    };
    runBackward();
    auto maps = harness::buildHostMaps(cloud, c.window, 64);
    ASSERT_TRUE(maps.ok());
    std::vector<double> xs(n * c.ci), ws(c.co * v * c.ci), dys(n * c.co);
    for (size_t i = 0; i < xs.size(); ++i)
      xs[i] = x.get(i);
    for (size_t i = 0; i < ws.size(); ++i)
      ws[i] = w.get(i);
    for (size_t i = 0; i < dys.size(); ++i)
      dys[i] = dy.get(i);
    harness::HostConvGradients want =
        harness::hostConvBackward(maps->nb, v, xs, ws, dys, c.ci, c.co);
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
    if (n > 0)
      expectClose(
          "dx", dx, want.dx,
          harness::toleranceFor(*format, c.tf32, std::sqrt(double(v * c.co))));
    // dW and db sum over the voxels in f32.
    harness::Tolerance sums = harness::toleranceFor(
        gradFormat, c.tf32, std::sqrt(double(std::max<int64_t>(n, 1))));
    expectClose("dw", dw, want.dw, sums);
    expectClose("db", db, want.db, sums);

    // The same call again: the same bits.
    std::vector<uint8_t> first[3] = {dx.bytes, dw.bytes, db.bytes};
    runBackward();
    EXPECT_EQ(dx.bytes, first[0]);
    EXPECT_EQ(dw.bytes, first[1]);
    EXPECT_EQ(db.bytes, first[2]);
  }

  // A session on the test's caches in `directory` with the JIT and short
  // tuning; with `bundle`, one served by it alone (no compiler, no caches,
  // an empty autotune file), as a deployed program runs.
  void openSession(std::shared_ptr<const rt::KernelBundle> bundle = nullptr,
                   rt::PinnedConfigs pins = {},
                   rt::CompilerFactory compiler = nullptr) {
    provider = nullptr;
    cache = nullptr;
    engine = nullptr;
    session.reset();
    rt::SessionOptions options;
    options.stageCacheDirectory = directory + "/cache";
    options.autotuneCachePath =
        directory + (bundle ? "/none.json" : "/tuned.json");
    options.bundle = std::move(bundle);
    options.bundlePolicy = rt::BundlePolicy::Strict;
    options.pins = std::move(pins);
    options.compiler =
        compiler ? std::move(compiler) : tilec::jit::compilerFactory();
    options.tuning.benchmark.warmupMs = 1;
    options.tuning.benchmark.budgetMs = 3;
    options.tuning.progress = rt::ProgressMode::Never;
    options.tuning.firstUse = firstUse;
    auto created = rt::Session::create(std::move(options));
    ASSERT_TRUE(created.ok()) << created.message();
    session = std::move(*created);
    provider = &session->provider();
    cache = &session->autotuneCache();
    engine = &session->sparse();
  }

  // What `tilec pack` would write from this session's caches, read back as
  // a deployment reads it.
  tilec::Result<std::shared_ptr<const rt::KernelBundle>>
  packSession(const std::string &origin) {
    auto packed =
        rt::packBundle(*cache, session->stageCache().get(), nullptr, {});
    if (!packed)
      return packed.status();
    return rt::KernelBundle::decode(rt::KernelBundle::encode(packed->contents),
                                    origin);
  }
  static std::set<std::string> kernelsOf(const rt::KernelBundle &bundle) {
    std::set<std::string> kernels;
    for (const rt::BundleSelection &selection : bundle.selections())
      kernels.insert(selection.kernel);
    return kernels;
  }

  // A session whose autotuner runs `pins` (TILEC_PIN_CONFIG's syntax).
  void pinConfigs(const std::string &pins) {
    auto pinned = rt::PinnedConfigs::parseSpec(pins);
    ASSERT_TRUE(pinned.ok()) << pinned.message();
    openSession(nullptr, std::move(*pinned));
  }

  std::unique_ptr<tilec::test::TemporaryFolder> folder;
  std::string directory;
  // What openSession's tuner does with a new key.
  rt::FirstUse firstUse = rt::FirstUse::Tune;
  std::unique_ptr<rt::Session> session;
  rt::KernelProvider *provider = nullptr;
  rt::AutotuneCache *cache = nullptr;
  sparse::SparseEngine *engine = nullptr;
};

TEST_F(SparseConvGpuTest, MapsMatchTheHostOracle) {
  expectMapsMatch(sparse::shellScene(32), 3, 1, 64);
  expectMapsMatch(sparse::shellScene(32), 3, 1, 128);
  expectMapsMatch(sparse::shellScene(24, 3), 3, 1, 64);
  expectMapsMatch(sparse::uniformScene(5000, 40, 1, 7), 3, 1, 64);
  expectMapsMatch(sparse::denseScene(13), 3, 1, 64);
  expectMapsMatch(sparse::denseScene(9), 5, 1, 128);
  expectMapsMatch(sparse::shellScene(40), 3, 2, 64);
  expectMapsMatch(sparse::uniformScene(1, 8, 1, 1), 3, 1, 64);
  // The block sort in one pass (V = 1) and in three (V = 343).
  expectMapsMatch(sparse::denseScene(9), 1, 1, 64);
  expectMapsMatch(sparse::denseScene(9), 7, 1, 64);
  // Enough voxels for several radix-sort programs, and enough 64-row blocks
  // (1728) for two in the block sort.
  expectMapsMatch(sparse::shellScene(96), 3, 1, 64);
  expectMapsMatch(sparse::denseScene(48), 3, 1, 64);
  // The key's order alone (no cover round).
  expectMapsMatch(sparse::shellScene(96), 3, 1, 128, sparse::RowOrder::Key);
  expectMapsMatch(sparse::denseScene(9), 5, 1, 64, sparse::RowOrder::Key);
  // Windows that are no cube (Cylinder3D's (1, 3, 3) and (3, 1, 3)), a
  // dilation along one axis.
  expectMapsMatch(sparse::shellScene(32), sparse::Window{{1, 3, 3}, {1, 1, 1}},
                  64);
  expectMapsMatch(sparse::uniformScene(5000, 40, 2, 7),
                  sparse::Window{{3, 1, 3}, {1, 1, 2}}, 128);
  expectMapsMatch(sparse::denseScene(12), sparse::Window{{5, 3, 1}, {1, 2, 1}},
                  64, sparse::RowOrder::Key);
}

// A size bucket's build is recorded once, at its capacity (the next power
// of two), and replayed for every voxel count in it: counts from just past
// half the capacity to the capacity itself, multiples of 16 among them,
// each equal to the oracle's maps, in both row orders and two block sizes,
// each replay after builds of other counts.
TEST_F(SparseConvGpuTest, OneRecordedBuildServesEveryCountOfItsBucket) {
  // The bucket of 4096 voxels, then one of 2048 (the sequences share one
  // scratch, which a larger bucket replaces).
  for (int64_t n : {4095, 4096, 2049, 3585, 2560, 2064})
    expectMapsMatch(sparse::uniformScene(n, 24, 1, uint64_t(n)), 3, 1, 64);
  EXPECT_EQ(engine->recordedMapBuilds(), 1u);
  for (int64_t n : {2048, 1100})
    expectMapsMatch(sparse::uniformScene(n, 20, 1, uint64_t(n)), 3, 1, 128,
                    sparse::RowOrder::Key);
  EXPECT_EQ(engine->recordedMapBuilds(), 2u);
}

// Every row block's lists queued behind one unchecked build and one wait
// (buildRowBlockMaps, the C API's tilec_sparse_tensor_build_maps), recorded
// and launched, and with a table too small for its voxels (the unchecked
// build dropped with every row block's lists over it, then built again,
// checked): each row block's maps are the oracle's.
TEST_F(SparseConvGpuTest, EveryRowBlockQueuedBehindOneBuildMatchesTheOracle) {
  sparse::VoxelCloud cloud = sparse::shellScene(40);
  sparse::Window window = sparse::Window::cube(3, 1);
  rt::DeviceBuffer coords = upload(cloud.coords);
  for (int shrink : {0, 4}) {
    for (bool recorded : {true, false}) {
      SCOPED_TRACE("table shrink " + std::to_string(shrink) +
                   (recorded ? ", recorded" : ", launched"));
      engine->setTableShrinkForTesting(shrink);
      engine->setRecordedMapBuilds(recorded);
      sparse::RowOrder order =
          recorded ? sparse::RowOrder::LeanGroups : sparse::RowOrder::Key;
      auto tensor =
          sparse::SparseTensor::create(*engine, coords.ptr(), cloud.size());
      ASSERT_TRUE(tensor.ok()) << tensor.message();
      ASSERT_TRUE(tensor->setRowOrder(order).ok());
      size_t deferred = engine->deferredChecks();
      tilec::Status built =
          tensor->buildRowBlockMaps(window, {64, 128}, nullptr);
      ASSERT_TRUE(built.ok()) << built.message();
      EXPECT_EQ(engine->deferredChecks(), deferred + 1);
      for (int64_t rows : {64, 128}) {
        auto expected = harness::buildHostMaps(
            cloud, window, rows, recorded ? sparse::kCoverRounds : 0);
        ASSERT_TRUE(expected.ok()) << expected.message();
        auto maps = tensor->maps(window, rows, nullptr);
        ASSERT_TRUE(maps.ok()) << maps.message();
        expectMapsEqual(**maps, *expected, cloud.size());
      }
    }
  }
  engine->setTableShrinkForTesting(0);
  engine->setRecordedMapBuilds(true);
}

// The largest recorded buckets (2^18 and 2^19 voxels, MapSequence.cpp's
// kMaxSequenceVoxels): a shell of the 2^18 bucket, lean groups and the key's
// order, then a uniform cloud of the 2^19 bucket, each replayed build
// against the host oracle. (Not run by the interpreter device: too large.)
TEST_F(SparseConvGpuTest, TheLargestRecordedBucketsMatchTheHostOracle) {
  sparse::VoxelCloud shell = sparse::shellSceneOfSize(200000);
  expectMapsMatch(shell, 3, 1, 64);
  expectMapsMatch(shell, 3, 1, 128, sparse::RowOrder::Key);
  // A sequence per row order and block size.
  EXPECT_EQ(engine->recordedMapBuilds(), 2u);
  expectMapsMatch(sparse::uniformScene(400000, 256, 1, 11), 3, 1, 64,
                  sparse::RowOrder::Key);
  // The 2^19 bucket's scratch replaced the one the others shared.
  EXPECT_EQ(engine->recordedMapBuilds(), 1u);
}

// A table too full for the insert grows, also under the first call of a
// convolution, which checks its maps after its launch: the call is
// prepared again over maps built checked, and gives the bits of a call over
// maps that needed no growth. Recorded and launched builds.
TEST_F(SparseConvGpuTest, ATableThatGrowsUnderAConvolutionGivesItsBits) {
  sparse::VoxelCloud cloud = sparse::shellScene(16);
  int64_t n = cloud.size();
  std::vector<int32_t> halves(8 * n), weights(8 * 27 * 16);
  // Pairs of f16 in {-1, -0.5, 0.5, 1}: exact sums.
  const int32_t values[] = {0x3C00, 0xBC00, 0x3800, 0xB800};
  for (size_t i = 0; i < halves.size(); ++i)
    halves[i] = values[i % 4] | values[(i / 4 + i) % 4] << 16;
  for (size_t i = 0; i < weights.size(); ++i)
    weights[i] = values[(i / 3) % 4] | values[i % 4] << 16;
  rt::DeviceBuffer coords = upload(cloud.coords), x = upload(halves);
  rt::DeviceBuffer w = upload(weights), y = upload(halves);
  sparse::ConvArguments arguments;
  arguments.x = x.ptr();
  arguments.weight = w.ptr();
  arguments.y = y.ptr();
  arguments.ci = arguments.co = 16;
  auto convolved = [&]() -> std::vector<int32_t> {
    auto tensor = sparse::SparseTensor::create(*engine, coords.ptr(), n);
    EXPECT_TRUE(tensor.ok()) << tensor.message();
    if (!tensor.ok())
      return {};
    EXPECT_TRUE(y.memset8(0xff).ok());
    tilec::Status ran =
        sparse::submanifoldConv3d(*engine, *tensor, arguments, nullptr);
    EXPECT_TRUE(ran.ok()) << ran.message();
    EXPECT_TRUE(context->synchronize().ok());
    return download(y, 8 * n);
  };
  std::vector<int32_t> expected = convolved();
  // Each first call defers its build's check once (the second pass checks
  // before its launch).
  size_t deferred = engine->deferredChecks();
  EXPECT_EQ(convolved(), expected);
  EXPECT_EQ(engine->deferredChecks(), deferred + 1);
  // A recorded build of the smaller table (a sequence of its own) that
  // gives up, then the launched build that grows it.
  size_t recorded = engine->recordedMapBuilds();
  engine->setTableShrinkForTesting(4);
  EXPECT_EQ(convolved(), expected);
  EXPECT_EQ(engine->deferredChecks(), deferred + 2);
  EXPECT_EQ(engine->recordedMapBuilds(), recorded + 1);
  engine->setRecordedMapBuilds(false);
  EXPECT_EQ(convolved(), expected);
  EXPECT_EQ(engine->deferredChecks(), deferred + 3);
  engine->setTableShrinkForTesting(0);
}

// The build that launches its kernels one by one (buckets too large to
// record, a table that needs to grow) gives the oracle's maps too.
TEST_F(SparseConvGpuTest, MapsMatchTheHostOracleLaunchedOneByOne) {
  engine->setRecordedMapBuilds(false);
  expectMapsMatch(sparse::shellScene(32), 3, 1, 64);
  expectMapsMatch(sparse::shellScene(96), 3, 1, 128, sparse::RowOrder::Key);
  expectMapsMatch(sparse::denseScene(9), 7, 1, 64);
  expectMapsMatch(sparse::uniformScene(5000, 40, 2, 7),
                  sparse::Window{{3, 1, 3}, {1, 1, 2}}, 128);
  EXPECT_EQ(engine->recordedMapBuilds(), 0u);
}

// The host's work of the sparse convolution, for scripts/host-path-bench.sh
// (callgrind over the interpreter device, no GPU): not tests, so disabled.
// Each runs its unit of work twice (the bucket's compiles and plans), then
// the marker, then the measured runs; the script counts what runs after
// the marker outside the driver and divides by the count printed.
extern "C" __attribute__((noinline)) void tilecHostPathMeasureStart() {
  asm volatile("");
}

class HostPathTest : public SparseConvGpuTest {
protected:
  // Voxel counts 1000 down to 593, one bucket (ceil(log2 N) = 10), each a
  // prefix of one cloud uploaded on its own.
  void uploadNewSizes() {
    sparse::VoxelCloud cloud = sparse::uniformScene(1000, 24, 1, 3);
    for (int64_t n = 1000; n > 560; n -= 37) {
      sizes.push_back(n);
      coords.push_back(upload(std::vector<int32_t>(
          cloud.coords.begin(), cloud.coords.begin() + 4 * n)));
    }
  }
  // `elements` f16 zeros.
  rt::DeviceBuffer zeros(int64_t elements) {
    auto buffer = rt::DeviceBuffer::allocate(*context, 2 * elements);
    EXPECT_TRUE(buffer.ok());
    EXPECT_TRUE(buffer->memset8(0).ok());
    return std::move(*buffer);
  }
  void measure(size_t runs, const char *unit,
               const std::function<void(size_t)> &run) {
    run(0);
    run(1);
    ASSERT_TRUE(context->synchronize().ok());
    tilecHostPathMeasureStart();
    for (size_t i = 2; i < runs; ++i)
      run(i);
    ASSERT_TRUE(context->synchronize().ok());
    std::printf("host path: %zu %s after the marker\n", runs - 2, unit);
  }
  std::vector<int64_t> sizes;
  std::vector<rt::DeviceBuffer> coords;
};

// Map builds of new sizes, each a fresh tensor (counted in buildMaps).
TEST_F(HostPathTest, DISABLED_HostPathOfNewSizes) {
  uploadNewSizes();
  measure(sizes.size(), "builds", [&](size_t i) {
    auto tensor =
        sparse::SparseTensor::create(*engine, coords[i].ptr(), sizes[i]);
    ASSERT_TRUE(tensor.ok()) << tensor.message();
    auto built = tensor->maps(3, 1, 64, nullptr);
    ASSERT_TRUE(built.ok()) << built.message();
  });
}

// Stream frames (--frame): the same new sizes, each a new tensor and a 3^3
// convolution over it, which builds the maps it needs.
TEST_F(HostPathTest, DISABLED_HostPathOfFrames) {
  uploadNewSizes();
  constexpr int64_t c = 16;
  rt::DeviceBuffer x = zeros(1000 * c), w = zeros(c * 27 * c),
                   y = zeros(1000 * c);
  sparse::ConvArguments forward;
  forward.x = x.ptr();
  forward.weight = w.ptr();
  forward.y = y.ptr();
  forward.ci = forward.co = c;
  measure(sizes.size(), "frames", [&](size_t i) {
    auto tensor =
        sparse::SparseTensor::create(*engine, coords[i].ptr(), sizes[i]);
    ASSERT_TRUE(tensor.ok()) << tensor.message();
    tilec::Status ran =
        sparse::submanifoldConv3d(*engine, *tensor, forward, nullptr);
    ASSERT_TRUE(ran.ok()) << ran.message();
    ASSERT_TRUE(context->synchronize().ok());
  });
}

// Training steps over maps that exist (--step): the forward and its three
// gradients, as the PyTorch module's autograd calls them.
TEST_F(HostPathTest, DISABLED_HostPathOfATrainingStep) {
  sparse::VoxelCloud cloud = sparse::uniformScene(600, 16, 1, 3);
  int64_t n = cloud.size(), c = 16, v = 27;
  rt::DeviceBuffer points = upload(cloud.coords);
  rt::DeviceBuffer x = zeros(n * c), w = zeros(c * v * c), b = zeros(c),
                   y = zeros(n * c), dy = zeros(n * c), dx = zeros(n * c),
                   dw = zeros(c * v * c), db = zeros(c);
  auto tensor = sparse::SparseTensor::create(*engine, points.ptr(), n);
  ASSERT_TRUE(tensor.ok()) << tensor.message();
  sparse::ConvBackwardArguments arguments;
  sparse::ConvArguments &forward = arguments.forward;
  forward.x = x.ptr();
  forward.weight = w.ptr();
  forward.bias = b.ptr();
  forward.y = y.ptr();
  forward.ci = forward.co = c;
  arguments.dy = dy.ptr();
  arguments.dx = dx.ptr();
  arguments.dw = dw.ptr();
  arguments.db = db.ptr();
  measure(12, "steps", [&](size_t) {
    tilec::Status ran =
        sparse::submanifoldConv3d(*engine, *tensor, forward, nullptr);
    ASSERT_TRUE(ran.ok()) << ran.message();
    ran =
        sparse::submanifoldConv3dBackward(*engine, *tensor, arguments, nullptr);
    ASSERT_TRUE(ran.ok()) << ran.message();
  });
}

TEST_F(SparseConvGpuTest, BuildingTwiceGivesTheSameMaps) {
  sparse::VoxelCloud cloud = sparse::uniformScene(20000, 48, 2, 3);
  rt::DeviceBuffer coords = upload(cloud.coords);
  std::vector<int32_t> orders[2], maps[2];
  for (int run = 0; run < 2; ++run) {
    auto tensor =
        sparse::SparseTensor::create(*engine, coords.ptr(), cloud.size());
    ASSERT_TRUE(tensor.ok());
    auto built = tensor->maps(3, 1, 64, nullptr);
    ASSERT_TRUE(built.ok()) << built.message();
    orders[run] = download((*built)->map->order, cloud.size());
    maps[run] = download((*built)->map->nbt, cloud.size() * 27);
  }
  EXPECT_EQ(orders[0], orders[1]);
  EXPECT_EQ(maps[0], maps[1]);
}

TEST_F(SparseConvGpuTest, DuplicatesAndCoordinatesOutOfRangeAreErrors) {
  sparse::VoxelCloud cloud = sparse::shellScene(16);
  sparse::VoxelCloud twice = cloud;
  std::copy(cloud.coords.begin() + 4 * 5, cloud.coords.begin() + 4 * 6,
            twice.coords.begin() + 4 * 100);
  rt::DeviceBuffer coords = upload(twice.coords);
  auto tensor =
      sparse::SparseTensor::create(*engine, coords.ptr(), twice.size());
  ASSERT_TRUE(tensor.ok());
  auto maps = tensor->maps(3, 1, 64, nullptr);
  ASSERT_FALSE(maps.ok());
  EXPECT_NE(maps.message().find("is also voxel"), std::string::npos)
      << maps.message();

  sparse::VoxelCloud far = cloud;
  far.coords[4 * 7 + 2] = 70000;
  rt::DeviceBuffer farCoords = upload(far.coords);
  auto farTensor =
      sparse::SparseTensor::create(*engine, farCoords.ptr(), far.size());
  ASSERT_TRUE(farTensor.ok());
  auto farMaps = farTensor->maps(3, 1, 64, nullptr);
  ASSERT_FALSE(farMaps.ok());
  EXPECT_NE(farMaps.message().find("voxel 7"), std::string::npos)
      << farMaps.message();

  // The same errors from a convolution's first call on a new tensor, which
  // checks its maps after its launch (a tensor of the same size ran the
  // call first, so that nothing tunes): the call fails, and so does the
  // next one, the maps and the call prepared over them dropped.
  int64_t n = cloud.size();
  rt::DeviceBuffer x = upload(std::vector<int32_t>(8 * n, 0));
  rt::DeviceBuffer w = upload(std::vector<int32_t>(8 * 27 * 16, 0));
  rt::DeviceBuffer y = upload(std::vector<int32_t>(8 * n, 0));
  sparse::ConvArguments arguments;
  arguments.x = x.ptr();
  arguments.weight = w.ptr();
  arguments.y = y.ptr();
  arguments.ci = arguments.co = 16;
  rt::DeviceBuffer goodCoords = upload(cloud.coords);
  auto good = sparse::SparseTensor::create(*engine, goodCoords.ptr(), n);
  ASSERT_TRUE(good.ok());
  tilec::Status ran =
      sparse::submanifoldConv3d(*engine, *good, arguments, nullptr);
  ASSERT_TRUE(ran.ok()) << ran.message();
  for (auto [coordsOf, expected] :
       {std::pair{&coords, "is also voxel"}, {&farCoords, "voxel 7"}}) {
    auto bad = sparse::SparseTensor::create(*engine, coordsOf->ptr(), n);
    ASSERT_TRUE(bad.ok());
    for (int call = 0; call < 2; ++call) {
      size_t deferred = engine->deferredChecks();
      tilec::Status status =
          sparse::submanifoldConv3d(*engine, *bad, arguments, nullptr);
      ASSERT_FALSE(status.ok()) << "call " << call;
      EXPECT_NE(status.message().find(expected), std::string::npos)
          << status.message();
      EXPECT_EQ(engine->deferredChecks(), deferred + 1);
    }
    EXPECT_FALSE(bad->maps(3, 1, 64, nullptr).ok());
  }
  // The engine builds on: a valid tensor's maps and call after the errors.
  auto again = sparse::SparseTensor::create(*engine, goodCoords.ptr(), n);
  ASSERT_TRUE(again.ok());
  ran = sparse::submanifoldConv3d(*engine, *again, arguments, nullptr);
  EXPECT_TRUE(ran.ok()) << ran.message();
  ASSERT_TRUE(context->synchronize().ok());
}

TEST_F(SparseConvGpuTest, ConvolutionMatchesFloat64) {
  using sparse::DType;
  expectConvMatches(sparse::shellScene(32), 64, 64, 3, DType::F16, false,
                    false);
  expectConvMatches(sparse::shellScene(24, 2), 32, 48, 3, DType::BF16, false,
                    true);
  expectConvMatches(sparse::uniformScene(3000, 24, 1, 5), 3, 17, 3, DType::F32,
                    false, true);
  expectConvMatches(sparse::denseScene(10), 16, 16, 5, DType::F16, false,
                    false);
  expectConvMatches(sparse::shellScene(20), 32, 32, 3, DType::F32, true, false);
  // Windows that are no cube.
  expectConvMatches(sparse::shellScene(32), 32, 48,
                    sparse::Window{{1, 3, 3}, {1, 1, 1}}, DType::F16, false,
                    true);
  expectConvMatches(sparse::uniformScene(4000, 30, 1, 9), 3, 17,
                    sparse::Window{{3, 1, 5}, {2, 1, 1}}, DType::BF16, false,
                    false);
}

TEST_F(SparseConvGpuTest, GradientsMatchFloat64) {
  using sparse::DType;
  BackwardCase c;
  expectBackwardMatches(sparse::shellScene(32), c);
  // Ci != Co, channels that divide no block, bf16 and f32 (tf32 too), f32
  // weight gradients, a 5^3 kernel, a dilation, a batch of two scenes, a
  // random cloud.
  c.ci = 3;
  c.co = 17;
  c.dtype = DType::F32;
  expectBackwardMatches(sparse::uniformScene(3000, 24, 1, 5), c);
  c.ci = 48;
  c.co = 32;
  c.dtype = DType::BF16;
  c.weightGradF32 = true;
  expectBackwardMatches(sparse::shellScene(24, 2), c);
  c = BackwardCase();
  c.ci = c.co = 16;
  c.window = sparse::Window::cube(5);
  expectBackwardMatches(sparse::denseScene(10), c);
  c = BackwardCase();
  c.window = sparse::Window::cube(3, 2);
  c.ci = 64;
  c.co = 128;
  expectBackwardMatches(sparse::shellScene(40), c);
  c = BackwardCase();
  c.dtype = DType::F32;
  c.tf32 = true;
  expectBackwardMatches(sparse::shellScene(20), c);
  // More voxels than one part of pairs (several parts per offset).
  c = BackwardCase();
  c.ci = c.co = 64;
  expectBackwardMatches(sparse::shellScene(96), c);
  // A window that is no cube, with a dilation along one axis: dX reads the
  // mirrored offset of each axis.
  c = BackwardCase();
  c.window = sparse::Window{{3, 1, 5}, {1, 1, 2}};
  c.ci = 24;
  c.co = 40;
  expectBackwardMatches(sparse::shellScene(40), c);
}

// The layers of a SpUNet that the cases above leave out: a 1^3 kernel (the
// blocks' projections and the head; V = 1, dX reads offset 0 as its own
// mirror) and the decoder's concatenated channels (384 -> 128).
TEST_F(SparseConvGpuTest, GradientsOfAPointwiseKernelAndWideChannels) {
  BackwardCase c;
  c.window = sparse::Window::cube(1);
  c.ci = 384;
  c.co = 128;
  expectBackwardMatches(sparse::shellScene(12), c);
  c.ci = 32;
  c.co = 13;
  c.dtype = sparse::DType::F32;
  expectBackwardMatches(sparse::shellScene(12, 2), c);
  c = BackwardCase();
  c.ci = 384;
  c.co = 128;
  expectBackwardMatches(sparse::shellScene(12), c);
}

TEST_F(SparseConvGpuTest, GradientsOfNoVoxelAndOneVoxel) {
  BackwardCase c;
  c.ci = 16;
  c.co = 24;
  expectBackwardMatches(sparse::VoxelCloud{}, c);
  expectBackwardMatches(sparse::uniformScene(1, 8, 1, 1), c);
}

TEST_F(SparseConvGpuTest, GradientsOnAStream) {
  auto stream = rt::Stream::create(*context);
  ASSERT_TRUE(stream.ok()) << stream.message();
  BackwardCase c;
  c.ci = 32;
  c.co = 64;
  expectBackwardMatches(sparse::shellScene(48), c, stream->handle());
}

// The convolution and its map kernels from a bundle alone: tuned through the
// JIT, packed, then run by an engine with no compiler and no caches.
TEST_F(SparseConvGpuTest, RunsFromABundleAlone) {
  using sparse::DType;
  sparse::VoxelCloud cloud = sparse::shellScene(24);
  expectConvMatches(cloud, 32, 32, 3, DType::F16, false, true);
  auto bundle = packSession("conv.bundle");
  ASSERT_TRUE(bundle.ok()) << bundle.message();
  // Both row blocks' kernels and every map kernel are in it.
  std::set<std::string> kernels = kernelsOf(**bundle);
  for (const char *kernel :
       {"sparse_conv_fwd", "voxel_hash_insert", "voxel_neighbours",
        "neighbour_keys", "radix_histogram", "exclusive_scan", "radix_scatter",
        "neighbour_transpose", "block_offsets"})
    EXPECT_TRUE(kernels.count(kernel)) << kernel;

  openSession(*bundle);
  if (HasFatalFailure())
    return;
  expectConvMatches(cloud, 32, 32, 3, DType::F16, false, true);
  EXPECT_EQ(provider->compileCount(), 0);
  EXPECT_GT(provider->bundleLoadCount(), 8);

  // A layer the bundle lacks is an error naming the kernel.
  rt::DeviceBuffer coords = upload(cloud.coords);
  auto tensor = sparse::SparseTensor::create(*engine, coords.ptr(), cloud.size());
  ASSERT_TRUE(tensor.ok()) << tensor.message();
  auto buffer = rt::DeviceBuffer::allocate(*context, cloud.size() * 64 * 4);
  ASSERT_TRUE(buffer.ok());
  sparse::ConvArguments arguments;
  arguments.x = arguments.y = buffer->ptr();
  arguments.weight = buffer->ptr();
  arguments.ci = 16;
  arguments.co = 16;
  tilec::Status status =
      sparse::submanifoldConv3d(*engine, *tensor, arguments, nullptr);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("no winner for sparse_conv_fwd"),
            std::string::npos)
      << status.message();
}

// A training step (forward, dX, dW, db) from a bundle packed after one step
// of each dtype: no compile, no module loaded after the first step, and
// another size of the same bucket (ceil(log2 N) = 12) served too.
TEST_F(SparseConvGpuTest, TrainsFromABundleAlone) {
  BackwardCase f16, bf16f32;
  bf16f32.dtype = sparse::DType::BF16;
  bf16f32.weightGradF32 = true;
  sparse::VoxelCloud cloud = sparse::shellSceneOfSize(3001);
  for (const BackwardCase &c : {f16, bf16f32}) {
    expectBackwardMatches(cloud, c);
    if (HasFatalFailure())
      return;
  }
  auto bundle = packSession("train.bundle");
  ASSERT_TRUE(bundle.ok()) << bundle.message();
  std::set<std::string> kernels = kernelsOf(**bundle);
  for (const char *kernel : {"sparse_conv_fwd", "sparse_conv_wgrad"})
    EXPECT_TRUE(kernels.count(kernel)) << kernel;

  openSession(*bundle);
  if (HasFatalFailure())
    return;
  for (const BackwardCase &c : {f16, bf16f32}) {
    expectBackwardMatches(cloud, c);
    if (HasFatalFailure())
      return;
  }
  int loads = provider->bundleLoadCount();
  for (const BackwardCase &c : {f16, bf16f32}) {
    expectBackwardMatches(sparse::shellSceneOfSize(4000), c);
    if (HasFatalFailure())
      return;
  }
  EXPECT_EQ(provider->compileCount(), 0);
  EXPECT_EQ(provider->bundleLoadCount(), loads)
      << "a new size of a served bucket loaded a module";
}

// A stream of clouds of new sizes from a bundle: packed after three sizes
// of one ceil(log2 N) bucket, it serves 100 other sizes of that bucket
// (multiples of 16 among them) with no compiler, loading no module past the
// first size's, because neither the map kernels nor the convolution
// specialize on the voxel count; a size of a bucket it lacks is an error
// that names the bucket.
TEST_F(SparseConvGpuTest, BundleServesEverySizeOfItsBuckets) {
  using sparse::DType;
  // ceil(log2 N) = 12: 2049 to 4096 voxels.
  std::set<int64_t> sizes = {2100, 3001, 4000};
  for (int64_t n : sizes) {
    expectConvMatches(sparse::shellSceneOfSize(n), 16, 16, 3, DType::F16, false,
                      true);
    if (HasFatalFailure())
      return;
  }
  auto bundle = packSession("stream.bundle");
  ASSERT_TRUE(bundle.ok()) << bundle.message();
  openSession(*bundle);
  if (HasFatalFailure())
    return;

  std::vector<int64_t> stream = {2064, 4096, 4080, 2049, 3008};
  for (int64_t n : stream)
    sizes.insert(n);
  uint64_t state = 7;
  while (stream.size() < 100) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    int64_t n = 2049 + int64_t((state >> 33) % 2048);
    if (sizes.insert(n).second)
      stream.push_back(n);
  }
  int multiplesOf16 = 0, loadsOfTheFirst = 0;
  for (size_t i = 0; i < stream.size(); ++i) {
    expectConvMatches(sparse::shellSceneOfSize(stream[i]), 16, 16, 3,
                      DType::F16, false, true);
    if (HasFatalFailure())
      return;
    if (i == 0)
      loadsOfTheFirst = provider->bundleLoadCount();
    multiplesOf16 += stream[i] % 16 == 0;
  }
  EXPECT_GE(multiplesOf16, 5);
  EXPECT_EQ(provider->compileCount(), 0);
  EXPECT_EQ(provider->bundleLoadCount(), loadsOfTheFirst)
      << "a new size of a served bucket loaded a module";

  sparse::VoxelCloud other = sparse::shellSceneOfSize(5000);
  rt::DeviceBuffer coords = upload(other.coords);
  auto tensor = sparse::SparseTensor::create(*engine, coords.ptr(), 5000);
  ASSERT_TRUE(tensor.ok()) << tensor.message();
  auto maps = tensor->maps(3, 1, 64, nullptr);
  ASSERT_FALSE(maps.ok());
  EXPECT_NE(maps.message().find("no winner for"), std::string::npos)
      << maps.message();
  EXPECT_NE(maps.message().find("LOG2_N=13"), std::string::npos)
      << maps.message();
}

// Row blocks in halves: the second half to arrive adds the first's partial
// sums, and sets the tile's count back to zero, so that a second call (and
// one on another stream, which waits for the last launch on the shared
// workspace) gives the same bits.
TEST_F(SparseConvGpuTest, SplitRowBlocksMatchAndRepeat) {
  using sparse::DType;
  pinConfigs("sparse_conv_fwd=BLOCK_N=64,BLOCK_K=32,SPLIT_K=2,num_warps=4,"
             "num_stages=3");
  if (HasFatalFailure())
    return;
  auto stream = rt::Stream::create(*context);
  ASSERT_TRUE(stream.ok()) << stream.message();
  expectConvMatches(sparse::shellScene(32), 64, 64, 3, DType::F16, false,
                    true, nullptr, stream->handle());
  expectConvMatches(sparse::shellScene(28), 48, 80, 3, DType::BF16, false,
                    false, stream->handle(), stream->handle());
  expectConvMatches(sparse::uniformScene(3000, 24, 1, 5), 3, 17, 3, DType::F32,
                    true, true, stream->handle(), nullptr);
}

// The JIT, counting its compiles by kernel.
class CountingCompiler final : public rt::KernelCompiler {
public:
  explicit CountingCompiler(std::unique_ptr<rt::KernelCompiler> jit)
      : jit_(std::move(jit)) {}
  tilec::Result<rt::CompiledArtifact>
  compile(const std::string &kernel, const tilec::Config &config,
          const std::string &target,
          const tilec::Specialization &specialization) override {
    {
      std::lock_guard<std::mutex> lock(mutex);
      ++compiles[kernel];
    }
    return jit_->compile(kernel, config, target, specialization);
  }
  tilec::Result<tilec::KernelDescription>
  describe(const std::string &kernel) override {
    return jit_->describe(kernel);
  }
  int count(const std::string &kernel) {
    std::lock_guard<std::mutex> lock(mutex);
    return compiles[kernel];
  }
  // The JIT's factory, counted: `made` is set to the compiler it makes.
  static rt::CompilerFactory factory(CountingCompiler *&made) {
    return [&made](std::shared_ptr<rt::StageCache> stageCache) {
      auto compiler = std::make_unique<CountingCompiler>(
          tilec::jit::compilerFactory()(std::move(stageCache)));
      made = compiler.get();
      return compiler;
    };
  }
  std::mutex mutex;
  std::map<std::string, int> compiles;

private:
  std::unique_ptr<rt::KernelCompiler> jit_;
};

// Two layers planned before they run (a network's first pass): every
// convolution candidate their forward, input and weight gradient tune was
// queued by the plan and compiles once; the tunings compile nothing more.
TEST_F(SparseConvGpuTest, LayersCompiledAheadServeTheFirstPass) {
  CountingCompiler *counting = nullptr;
  openSession(nullptr, {}, CountingCompiler::factory(counting));
  ASSERT_NE(counting, nullptr);
  sparse::VoxelCloud cloud = sparse::shellScene(48);
  std::vector<sparse::LayerPlan> plans(2);
  for (sparse::LayerPlan &plan : plans) {
    plan.layer.voxels = cloud.size();
    plan.layer.inChannels = 32;
    plan.inputGradient = plan.weightGradient = true;
  }
  plans[0].layer.outChannels = 32;
  plans[1].layer.outChannels = 16;
  auto queued = sparse::compileLayersAhead(*engine, plans);
  ASSERT_TRUE(queued.ok()) << queued.message();
  EXPECT_GT(*queued, 0u);
  BackwardCase first, second;
  second.co = 16;
  expectBackwardMatches(cloud, first);
  expectBackwardMatches(cloud, second);
  EXPECT_EQ(counting->count("sparse_conv_fwd") +
                counting->count("sparse_conv_wgrad"),
            int(*queued))
      << "a tuning compiled what the plan did not queue, or a candidate "
         "compiled twice";
  auto again = sparse::compileLayersAhead(*engine, plans);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(*again, 0u) << "chosen: nothing to tune";
}

// A first use that predicts (TILEC_FIRST_USE=predict): a layer's forward,
// input and weight gradient each compile their prediction alone (one row
// block: 128 rows at 2^16 voxels), benchmark nothing, persist nothing, and
// are right. After retirePredictions() the same layer on a new tensor tunes
// every key (both row blocks), and is right again; a process that predicts
// over those caches predicts nothing.
TEST_F(SparseConvGpuTest, PredictedFirstUseThenTunedAfterRetiring) {
  CountingCompiler *counting = nullptr;
  firstUse = rt::FirstUse::Predict;
  openSession(nullptr, {}, CountingCompiler::factory(counting));
  ASSERT_NE(counting, nullptr);
  sparse::VoxelCloud cloud = sparse::shellScene(96);
  ASSERT_GT(cloud.size(), 32768u);
  BackwardCase c;
  c.ci = c.co = 64;
  expectBackwardMatches(cloud, c);
  EXPECT_EQ(counting->count("sparse_conv_fwd"), 2) << "forward and dX";
  EXPECT_EQ(counting->count("sparse_conv_wgrad"), 1);
  EXPECT_EQ(engine->autotuner().predictionCount(), 3u);
  auto entriesOf = [&](const std::string &kernel, const std::string &part) {
    int found = 0;
    for (const auto &[device, kernels] : cache->entries())
      if (auto entries = kernels.find(kernel); entries != kernels.end())
        for (const auto &[key, entry] : entries->second)
          found += key.find(part) != std::string::npos;
    return found;
  };
  EXPECT_EQ(entriesOf("sparse_conv_fwd", ""), 0) << "a prediction persisted";

  EXPECT_EQ(engine->retirePredictions(), 3u);
  EXPECT_EQ(engine->autotuner().predictionCount(), 0u);
  expectBackwardMatches(cloud, c);
  EXPECT_EQ(entriesOf("sparse_conv_fwd", "BLOCK_M=64,"), 2);
  EXPECT_EQ(entriesOf("sparse_conv_fwd", "BLOCK_M=128,"), 2);
  EXPECT_EQ(entriesOf("sparse_conv_wgrad", ""), 1);
  EXPECT_EQ(engine->autotuner().predictionCount(), 0u);

  // A new process that predicts, over those caches: the cache answers
  // every key (both row blocks, not the predicted one alone), nothing is
  // predicted or compiled.
  openSession(nullptr, {}, CountingCompiler::factory(counting));
  expectBackwardMatches(cloud, c);
  EXPECT_EQ(engine->autotuner().predictionCount(), 0u);
  EXPECT_EQ(counting->count("sparse_conv_fwd") +
                counting->count("sparse_conv_wgrad"),
            0);
}

// A small input (the res-32 shell, 3,900 voxels: under one wave; the
// 64-row block alone) is tuned with the candidates in halves among the
// others: they run (timed in full, or on the screening budget only), each on
// the workspace the tuning allocated, and the winner's result is right.
TEST_F(SparseConvGpuTest, TuningRunsHalvesOnSmallInputs) {
  expectConvMatches(sparse::shellScene(32), 128, 128, 3, sparse::DType::F16,
                    false, true);
  int halvesRan = 0;
  for (const auto &[device, kernels] : cache->entries())
    if (auto conv = kernels.find("sparse_conv_fwd"); conv != kernels.end())
      for (const auto &[key, entry] : conv->second)
        for (const rt::ConfigTiming &timing : entry.timings)
          if (timing.config.find("SPLIT_K=2") != std::string::npos &&
              timing.timed() && timing.medianUs > 0)
            ++halvesRan;
  EXPECT_GE(halvesRan, 2) << "the two candidates in halves that CO = 128 "
                             "leaves were not tuned";
}

// Two sessions of device 0 in one process, as a program with a runtime per
// device has them: each has its own context reference, provider, tuner and
// maps over the same cache files, the second takes the first's tuned
// winners from them, and calls interleave; the last ordinal the driver
// sees (CUDA_VISIBLE_DEVICES decides which) opens, the next is an error
// naming it.
TEST_F(SparseConvGpuTest, TwoSessionsInOneProcess) {
  using sparse::DType;
  sparse::VoxelCloud cloud = sparse::shellScene(24);
  expectConvMatches(cloud, 32, 32, 3, DType::F16, false, true);
  std::unique_ptr<rt::Session> first = std::move(session);
  openSession();
  if (HasFatalFailure())
    return;
  ASSERT_NE(&session->provider(), &first->provider());
  EXPECT_EQ(session->device(), 0);
  expectConvMatches(cloud, 32, 32, 3, DType::F16, false, true);
  EXPECT_EQ(session->provider().compileCount(), 0)
      << "the second session tuned or compiled what the first had";
  engine = &first->sparse();
  expectConvMatches(cloud, 32, 16, 3, DType::F16, false, false);
  engine = &session->sparse();
  expectConvMatches(cloud, 32, 16, 3, DType::F16, false, false);

  auto count = rt::Device::count(context->driver());
  ASSERT_TRUE(count.ok()) << count.message();
  rt::SessionOptions last;
  last.device = *count - 1;
  last.autotuneCachePath = directory + "/tuned.json";
  {
    auto opened = rt::Session::create(std::move(last));
    ASSERT_TRUE(opened.ok()) << opened.message();
    EXPECT_EQ((*opened)->context().properties().ordinal, *count - 1);
  }
  // The last device's session left its context current.
  ASSERT_TRUE(context->makeCurrent().ok());
  rt::SessionOptions missing;
  missing.device = *count;
  auto refused = rt::Session::create(std::move(missing));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("CUDA device " + std::to_string(*count) +
                                   " does not exist"),
            std::string::npos)
      << refused.message();
}

TEST_F(SparseConvGpuTest, EmptyInputAndSingleVoxel) {
  expectConvMatches(sparse::VoxelCloud{}, 16, 16, 3, sparse::DType::F16, false,
                    true);
  expectConvMatches(sparse::uniformScene(1, 4, 1, 1), 16, 32, 3,
                    sparse::DType::F16, false, true);
}

TEST_F(SparseConvGpuTest, BadArgumentsAreClearErrors) {
  sparse::VoxelCloud cloud = sparse::shellScene(8);
  rt::DeviceBuffer coords = upload(cloud.coords);
  auto tensor =
      sparse::SparseTensor::create(*engine, coords.ptr(), cloud.size());
  ASSERT_TRUE(tensor.ok());
  sparse::ConvArguments arguments;
  arguments.x = arguments.weight = arguments.y = coords.ptr();
  arguments.ci = 16;
  arguments.co = 16;
  arguments.window = sparse::Window::cube(4);
  tilec::Status status =
      sparse::submanifoldConv3d(*engine, *tensor, arguments, nullptr);
  EXPECT_NE(status.message().find("must be odd, 1 to 7, got 4"),
            std::string::npos)
      << status.message();
  arguments.window = sparse::Window::cube(3);
  arguments.allowTf32 = true;
  status = sparse::submanifoldConv3d(*engine, *tensor, arguments, nullptr);
  EXPECT_NE(status.message().find("allow_tf32 applies to f32"),
            std::string::npos)
      << status.message();
  arguments.allowTf32 = false;
  arguments.x = rt::DevicePtr{coords.address() + 4};
  status = sparse::submanifoldConv3d(*engine, *tensor, arguments, nullptr);
  EXPECT_NE(status.message().find("x must be a 16-byte aligned"),
            std::string::npos)
      << status.message();
}

} // namespace
