//===- RuntimeGpuTest.cpp - The runtime against a real GPU ----------------===//
//
// Runs the nvcc-built test kernels (runtime/fixtures/TestKernels.cu) through
// the runtime and checks their results. Every test skips, with the driver's
// reason, on a machine without a usable GPU.
//
//===----------------------------------------------------------------------===//

#include "tilec/runtime/Runtime.h"
#include "tilec/runtime/TensorMap.h"
#include "tilec/runtime/fixtures/TestKernels.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>

namespace {

namespace rt = tilec::rt;
namespace fixtures = tilec::rt::fixtures;

// A NaN bit pattern that no kernel computes, written over outputs first so
// that an element the kernel failed to write is caught.
constexpr uint32_t kPoison = 0x7FBADBAD;

struct GpuState {
  std::optional<rt::Context> context;
  std::string skipReason;
};

GpuState &gpu() {
  static GpuState state = [] {
    GpuState s;
    tilec::Result<rt::Context> context = rt::Context::create(0);
    if (context)
      s.context.emplace(std::move(*context));
    else
      s.skipReason = context.message();
    return s;
  }();
  return state;
}

std::string metadataJson(
    const char *kernel, int numWarps, uint32_t shared,
    const std::vector<std::pair<const char *, const char *>> &signature) {
  nlohmann::json document = {
      {"name", kernel},         {"kernel_name", kernel},
      {"target", "sm_90"},      {"num_warps", numWarps},
      {"threads_per_warp", 32}, {"num_stages", 1},
      {"shared_bytes", shared}, {"signature", nlohmann::json::array()}};
  for (const auto &[name, type] : signature)
    document["signature"].push_back({{"name", name}, {"type", type}});
  return document.dump();
}

tilec::CompileMetadata parseMetadata(const std::string &json) {
  tilec::Result<tilec::CompileMetadata> md = tilec::CompileMetadata::parse(json);
  EXPECT_TRUE(md.ok()) << md.message();
  return md.ok() ? std::move(*md) : tilec::CompileMetadata();
}

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> distribution(-100.0f, 100.0f);
  std::vector<float> values(n);
  for (float &v : values)
    v = distribution(engine);
  return values;
}

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

class RuntimeGpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!gpu().context)
      GTEST_SKIP() << gpu().skipReason;
    context = &*gpu().context;
  }

  // The embedded cubin is built for sm_90 only; PTX tests run on any newer
  // device through the JIT.
  bool skipUnlessCubinRuns() {
    const rt::DeviceProperties &device = context->properties();
    if (device.computeMajor == 9 && device.computeMinor == 0)
      return false;
    return true;
  }

  std::shared_ptr<rt::Module> loadCubin() {
    std::string_view cubin = fixtures::testKernelsCubin();
    tilec::Result<std::shared_ptr<rt::Module>> module =
        rt::Module::loadCubin(*context, cubin.data(), cubin.size());
    EXPECT_TRUE(module.ok()) << module.message();
    return module.ok() ? *module : nullptr;
  }

  std::optional<rt::Kernel> makeKernel(std::shared_ptr<rt::Module> module,
                                       const std::string &json) {
    tilec::Result<rt::Kernel> kernel =
        rt::Kernel::create(*context, std::move(module), parseMetadata(json));
    EXPECT_TRUE(kernel.ok()) << kernel.message();
    if (!kernel)
      return std::nullopt;
    return std::move(*kernel);
  }

  rt::DeviceBuffer allocate(size_t bytes) {
    tilec::Result<rt::DeviceBuffer> buffer =
        rt::DeviceBuffer::allocate(*context, bytes);
    EXPECT_TRUE(buffer.ok()) << buffer.message();
    if (!buffer)
      std::abort();
    return std::move(*buffer);
  }

  // Runs vector_add on random inputs of n elements, with a poisoned tail past
  // n that must stay untouched, and compares every element bit for bit.
  void checkVectorAdd(const rt::Kernel &kernel, size_t n,
                      CUstream stream = nullptr) {
    const size_t tail = 37;
    std::vector<float> a = randomFloats(n, 1), b = randomFloats(n, 2);
    rt::DeviceBuffer da = allocate(n * 4), db = allocate(n * 4),
                     dc = allocate((n + tail) * 4);
    ASSERT_TRUE(da.copyFromHost(a).ok());
    ASSERT_TRUE(db.copyFromHost(b).ok());
    ASSERT_TRUE(dc.memset32(kPoison).ok());

    tilec::Result<rt::ArgPack> args = kernel.makeArgPack();
    ASSERT_TRUE(args.ok()) << args.message();
    tilec::Status status = args->bind(da, db, dc, static_cast<int32_t>(n));
    ASSERT_TRUE(status.ok()) << status.message();
    uint32_t blocks = static_cast<uint32_t>((n + kernel.blockThreads() - 1) /
                                            kernel.blockThreads());
    status = rt::launch(kernel, {blocks, 1, 1}, *args, stream);
    ASSERT_TRUE(status.ok()) << status.message();

    std::vector<float> c(n + tail);
    ASSERT_TRUE(dc.copyToHost(c).ok());
    size_t wrong = 0;
    for (size_t i = 0; i < n; ++i)
      if (bitsOf(c[i]) != bitsOf(a[i] + b[i]) && wrong++ < 5)
        ADD_FAILURE() << "c[" << i << "] = " << c[i] << ", expected "
                      << a[i] + b[i];
    EXPECT_EQ(wrong, 0u);
    for (size_t i = n; i < n + tail; ++i)
      ASSERT_EQ(bitsOf(c[i]), kPoison) << "wrote past n at " << i;
  }

  rt::Context *context = nullptr;
};

TEST_F(RuntimeGpuTest, ReadsDeviceProperties) {
  const rt::DeviceProperties &device = context->properties();
  std::cout << "device " << device.ordinal << ": " << device.name << ", "
            << device.smName() << ", " << device.multiprocessorCount
            << " SMs, shared/block " << device.maxSharedBytesPerBlock
            << " (opt-in " << device.maxSharedBytesPerBlockOptin
            << "), registers/block " << device.maxRegistersPerBlock << ", L2 "
            << device.l2CacheBytes << " bytes, memory "
            << device.totalMemoryBytes << " bytes\n";
  EXPECT_FALSE(device.name.empty());
  EXPECT_GE(device.computeMajor, 7);
  EXPECT_GT(device.multiprocessorCount, 0);
  EXPECT_EQ(device.maxSharedBytesPerBlock, 48 * 1024);
  EXPECT_GE(device.maxSharedBytesPerBlockOptin, device.maxSharedBytesPerBlock);
  EXPECT_GE(device.maxRegistersPerBlock, 65536);
  EXPECT_GE(device.maxThreadsPerBlock, 1024);
  EXPECT_GT(device.l2CacheBytes, 0);
  EXPECT_GT(device.totalMemoryBytes, 0u);
}

TEST_F(RuntimeGpuTest, BuffersCopyAndFill) {
  const size_t n = 1 << 20;
  std::vector<float> host = randomFloats(n, 3);
  rt::DeviceBuffer buffer = allocate(n * 4);
  EXPECT_EQ(buffer.size(), n * 4);
  EXPECT_NE(buffer.address(), 0u);
  ASSERT_TRUE(buffer.copyFromHost(host).ok());
  std::vector<float> back(n);
  ASSERT_TRUE(buffer.copyToHost(back).ok());
  EXPECT_EQ(std::memcmp(host.data(), back.data(), n * 4), 0);

  // Offsets address sub-ranges.
  float value = 42.0f;
  ASSERT_TRUE(buffer.copyFromHost(&value, 4, 4 * 100).ok());
  float read = 0;
  ASSERT_TRUE(buffer.copyToHost(&read, 4, 4 * 100).ok());
  EXPECT_EQ(read, 42.0f);

  ASSERT_TRUE(buffer.memset32(kPoison).ok());
  std::vector<uint32_t> words(n);
  ASSERT_TRUE(buffer.copyToHost(words).ok());
  for (size_t i = 0; i < n; i += 4099)
    ASSERT_EQ(words[i], kPoison);
  ASSERT_TRUE(buffer.memset8(0xA5).ok());
  ASSERT_TRUE(buffer.copyToHost(words).ok());
  EXPECT_EQ(words[0], 0xA5A5A5A5u);
  EXPECT_EQ(words[n - 1], 0xA5A5A5A5u);

  tilec::Status status = buffer.copyToHost(back.data(), 8, n * 4 - 4);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "copyToHost: 8 bytes at offset 4194300 do not "
                              "fit in a buffer of 4194304 bytes");
  rt::DeviceBuffer odd = allocate(6);
  status = odd.memset32(0);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "memset32: buffer of 6 bytes is not a whole "
                              "number of 32-bit words");
  rt::DeviceBuffer empty = allocate(0);
  EXPECT_EQ(empty.address(), 0u);
  EXPECT_TRUE(empty.memset8(0).ok());
}

// The pool: memory written on one stream, freed after another stream's
// work, reused by the next allocation of its size without a new mapping,
// each allocation readable where it was ordered.
TEST_F(RuntimeGpuTest, PoolOrdersAllocationsAndFreesOnStreams) {
  tilec::Result<std::unique_ptr<rt::DevicePool>> pool =
      rt::DevicePool::create(*context);
  ASSERT_TRUE(pool.ok()) << pool.message();
  EXPECT_TRUE((*pool)->pooled()) << "an H100/H200-class GPU has memory pools";
  const rt::Driver &driver = context->driver();
  tilec::Result<rt::Stream> first = rt::Stream::create(*context);
  tilec::Result<rt::Stream> second = rt::Stream::create(*context);
  ASSERT_TRUE(first.ok() && second.ok());
  const size_t words = 1 << 18;
  CUdeviceptr freedAddress = 0;
  for (uint32_t round = 0; round < 3; ++round) {
    tilec::Result<rt::PoolBuffer> buffer =
        (*pool)->allocate(words * 4, first->handle());
    ASSERT_TRUE(buffer.ok()) << buffer.message();
    EXPECT_EQ(buffer->size(), words * 4);
    if (round > 0) {
      EXPECT_EQ(buffer->address(), freedAddress) << "the pool kept the memory";
    }
    const uint8_t fill = static_cast<uint8_t>(0x50 + round);
    ASSERT_EQ(driver.api().cuMemsetD8Async(buffer->address(), fill, words * 4,
                                           first->handle()),
              CUDA_SUCCESS);
    ASSERT_TRUE(first->synchronize().ok());
    std::vector<uint32_t> back(words);
    ASSERT_EQ(
        driver.api().cuMemcpyDtoH(back.data(), buffer->address(), words * 4),
        CUDA_SUCCESS);
    EXPECT_EQ(back.front(), fill * 0x01010101u);
    EXPECT_EQ(back.back(), fill * 0x01010101u);
    freedAddress = buffer->address();
    buffer->releaseOn(second->handle());
    EXPECT_EQ(buffer->address(), 0u);
    ASSERT_TRUE(second->synchronize().ok());
  }
  // Zero bytes still give an address; a buffer freed by its destructor goes
  // back on the legacy default stream.
  {
    tilec::Result<rt::PoolBuffer> tiny = (*pool)->allocate(0, nullptr);
    ASSERT_TRUE(tiny.ok()) << tiny.message();
    EXPECT_NE(tiny->address(), 0u);
  }
  ASSERT_EQ(driver.api().cuCtxSynchronize(), CUDA_SUCCESS);
  // More than the device holds is an error with the size, not a crash.
  tilec::Result<rt::PoolBuffer> huge =
      (*pool)->allocate(size_t(1) << 50, nullptr);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.message().find("allocating 1125899906842624 bytes"),
            std::string::npos)
      << huge.message();
}

// Tensor maps through the driver table (cuTensorMapEncodeTiled): the same
// array gives the same 128 bytes, another base address others, and a rule
// broken is refused before the driver, with its numbers. No kernel reads
// them yet.
TEST_F(RuntimeGpuTest, EncodesTensorMapsOfTiles) {
  if (context->properties().computeMajor < 9)
    GTEST_SKIP() << "tensor maps need sm_90, the device is "
                 << context->properties().smName();
  // 100 x 72 f16 in rows of 80, boxes of 64 x 64 (128-byte rows).
  rt::DeviceBuffer buffer = allocate(100 * 80 * 2);
  rt::TiledArray2D array{buffer.ptr(), rt::TmaElement::F16, 100, 72, 80 * 2,
                         64, 64, rt::TmaSwizzle::Bytes128};
  auto first = rt::encodeTiledArray2D(context->driver(), array);
  ASSERT_TRUE(first.ok()) << first.message();
  auto again = rt::encodeTiledArray2D(context->driver(), array);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(std::memcmp(&*first, &*again, sizeof(CUtensorMap)), 0);
  array.base.address += 16 * 80 * 2;
  auto moved = rt::encodeTiledArray2D(context->driver(), array);
  ASSERT_TRUE(moved.ok()) << moved.message();
  EXPECT_NE(std::memcmp(&*first, &*moved, sizeof(CUtensorMap)), 0);
  // 50 x 72 f32 in rows of 80, boxes of 64 x 32.
  array = {buffer.ptr(), rt::TmaElement::F32, 50, 72, 80 * 4, 64, 32,
           rt::TmaSwizzle::Bytes128};
  auto f32 = rt::encodeTiledArray2D(context->driver(), array);
  EXPECT_TRUE(f32.ok()) << f32.message();
  array.base.address += 8;
  auto refused = rt::encodeTiledArray2D(context->driver(), array);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("is not a multiple of 16 bytes"),
            std::string::npos)
      << refused.message();
}

// An ArgPack's hidden tensor map: encoded from the arguments it names into
// its slot, the bytes encodeTiledArray2D gives for the same array; the same
// values again leave the slot alone (the cache), another base re-encodes it.
TEST_F(RuntimeGpuTest, EncodesTheTensorMapsOfAnArgPack) {
  if (context->properties().computeMajor < 9)
    GTEST_SKIP() << "tensor maps need sm_90, the device is "
                 << context->properties().smName();
  // 100 x 72 f16 in rows of 80 elements, boxes of 64 x 64 (128-byte rows).
  rt::DeviceBuffer buffer = allocate(100 * 80 * 2);
  tilec::Result<rt::ArgPack> pack =
      rt::ArgPack::create({{"a", "ptr<f16>", tilec::ArgType::Ptr},
                           {"M", "i32", tilec::ArgType::I32},
                           {"K", "i64", tilec::ArgType::I64},
                           {"stride_am", "i32", tilec::ArgType::I32}},
                          {{"a", "M", "K", "stride_am", "f16", 64, 64, 128}});
  ASSERT_TRUE(pack.ok()) << pack.message();
  ASSERT_TRUE(pack->bind(buffer, 100, 72, 80).ok());
  const rt::Driver &driver = context->driver();
  tilec::Status status = pack->encodeTensorMaps(driver);
  ASSERT_TRUE(status.ok()) << status.message();

  rt::TiledArray2D array{
      buffer.ptr(), rt::TmaElement::F16,     100, 72, 80 * 2, 64,
      64,           rt::TmaSwizzle::Bytes128};
  auto expected = rt::encodeTiledArray2D(driver, array);
  ASSERT_TRUE(expected.ok()) << expected.message();
  auto *slot = static_cast<unsigned char *>(pack->kernelParams()[4]);
  ASSERT_EQ(slot, static_cast<const unsigned char *>(pack->buffer()) +
                      pack->tensorMapOffset(0));
  EXPECT_EQ(std::memcmp(slot, &*expected, 128), 0);

  // The same values: the slot is not written (a byte changed here stays).
  std::vector<unsigned char> encoded(slot, slot + 128);
  slot[0] ^= 0xFF;
  ASSERT_TRUE(pack->encodeTensorMaps(driver).ok());
  EXPECT_EQ(slot[0], static_cast<unsigned char>(encoded[0] ^ 0xFF));
  slot[0] = encoded[0];

  // Another base (16 rows on): encoded again, as encodeTiledArray2D does.
  rt::DevicePtr moved{buffer.address() + 16 * 80 * 2};
  ASSERT_TRUE(pack->setPointer(0, moved).ok());
  ASSERT_TRUE(pack->encodeTensorMaps(driver).ok());
  EXPECT_NE(std::memcmp(slot, encoded.data(), 128), 0);
  array.base = moved;
  auto movedMap = rt::encodeTiledArray2D(driver, array);
  ASSERT_TRUE(movedMap.ok()) << movedMap.message();
  EXPECT_EQ(std::memcmp(slot, &*movedMap, 128), 0);

  // A value the driver's rules refuse: named with the map, the slot zeroed.
  ASSERT_TRUE(pack->setInt(3, 60).ok());
  status = pack->encodeTensorMaps(driver);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "tensor map 0 (a: M x K, row stride "
                              "stride_am): row stride of 120 bytes is not a "
                              "multiple of 16");
  EXPECT_TRUE(
      std::all_of(slot, slot + 128, [](unsigned char c) { return c == 0; }));
}

// A kernel that reads a tile through its hidden tensor map (tma_tile_copy,
// whose map parameter is declared as tilec's compiler declares it): launched
// through launch() (kernelParams) and through the packed buffer, with the
// array changed between launches; and the packs launch() refuses.
TEST_F(RuntimeGpuTest, LaunchesAKernelWithAHiddenTensorMap) {
  if (skipUnlessCubinRuns())
    GTEST_SKIP() << "the test cubin is sm_90";
  nlohmann::json document =
      nlohmann::json::parse(metadataJson("tma_tile_copy", 4, 0,
                                         {{"out", "ptr<f32>"},
                                          {"in", "ptr<f32>"},
                                          {"rows", "i32"},
                                          {"cols", "i32"},
                                          {"stride", "i32"}}));
  document["tensor_maps"] = {{{"base", "in"},
                              {"rows", "rows"},
                              {"cols", "cols"},
                              {"row_stride", "stride"},
                              {"element", "f32"},
                              {"box_rows", 16},
                              {"box_cols", 16},
                              {"swizzle", 0}}};
  std::optional<rt::Kernel> kernel = makeKernel(loadCubin(), document.dump());
  ASSERT_TRUE(kernel);
  tilec::Result<rt::ArgPack> args = kernel->makeArgPack();
  ASSERT_TRUE(args.ok()) << args.message();
  ASSERT_EQ(args->tensorMapCount(), 1u);
  // The arguments end at 28 bytes. The PTX declares the map `.align 64`, and
  // ptxas puts it at a 64-byte aligned constant-bank address: on sm_90,
  // whose parameters start at c[0x0][0x210], that is 48 into the buffer.
  EXPECT_EQ(args->tensorMapOffset(0), 48u);
  EXPECT_EQ(args->bufferSize(), 176u);

  // 37 x 45 in rows of 48: neither side a whole number of 16 x 16 tiles, so
  // the last tiles hang over the array, where the map gives zeros.
  const int rows = 37, cols = 45, stride = 48, tiles = 3;
  const size_t outSide = tiles * 16;
  std::vector<float> first = randomFloats(rows * stride, 3);
  std::vector<float> second = randomFloats(rows * stride, 4);
  rt::DeviceBuffer in1 = allocate(first.size() * 4),
                   in2 = allocate(second.size() * 4),
                   out = allocate(outSide * outSide * 4);
  ASSERT_TRUE(in1.copyFromHost(first).ok());
  ASSERT_TRUE(in2.copyFromHost(second).ok());
  auto check = [&](const std::vector<float> &in, const char *how) {
    std::vector<float> result(outSide * outSide);
    ASSERT_TRUE(out.copyToHost(result).ok());
    size_t wrong = 0;
    for (size_t r = 0; r < outSide; ++r)
      for (size_t c = 0; c < outSide; ++c) {
        bool inside = r < size_t(rows) && c < size_t(cols);
        float expected = inside ? in[r * stride + c] : 0.0f;
        if (bitsOf(result[r * outSide + c]) != bitsOf(expected) && wrong++ < 5)
          ADD_FAILURE() << how << ": out[" << r << "][" << c
                        << "] = " << result[r * outSide + c] << ", expected "
                        << expected;
      }
    EXPECT_EQ(wrong, 0u) << how;
  };
  const rt::Dim3 grid{tiles, tiles, 1};

  ASSERT_TRUE(args->bind(out, in1, rows, cols, stride).ok());
  ASSERT_TRUE(out.memset32(kPoison).ok());
  tilec::Status status = rt::launch(*kernel, grid, *args);
  ASSERT_TRUE(status.ok()) << status.message();
  check(first, "first array");

  // Another base: launch() encodes the map again.
  ASSERT_TRUE(args->setPointer(1, in2.ptr()).ok());
  ASSERT_TRUE(out.memset32(kPoison).ok());
  status = rt::launch(*kernel, grid, *args);
  ASSERT_TRUE(status.ok()) << status.message();
  check(second, "second array");

  // The packed buffer holds the map at the function's offset, so that the
  // driver takes it as it is (a buffer of another size it refuses).
  ASSERT_TRUE(args->setPointer(1, in1.ptr()).ok());
  ASSERT_TRUE(args->encodeTensorMaps(context->driver()).ok());
  ASSERT_TRUE(out.memset32(kPoison).ok());
  size_t size = args->bufferSize();
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER,
                   const_cast<void *>(args->buffer()),
                   CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  ASSERT_EQ(context->driver().api().cuLaunchKernel(
                kernel->function(), tiles, tiles, 1, kernel->blockThreads(), 1,
                1, 0, nullptr, nullptr, extra),
            CUDA_SUCCESS);
  check(first, "packed buffer");
  ASSERT_TRUE(context->synchronize().ok());

  // A pack built without the kernel has its map at 64: launch() passes
  // kernelParams, which the driver lays out itself, so it runs the same.
  tilec::Result<rt::ArgPack> own = rt::ArgPack::create(
      kernel->metadata().signature, kernel->metadata().tensorMaps);
  ASSERT_TRUE(own.ok()) << own.message();
  EXPECT_EQ(own->tensorMapOffset(0), 64u);
  ASSERT_TRUE(own->bind(out, in2, rows, cols, stride).ok());
  ASSERT_TRUE(out.memset32(kPoison).ok());
  status = rt::launch(*kernel, grid, *own);
  ASSERT_TRUE(status.ok()) << status.message();
  check(second, "pack built without the kernel");

  // An empty array has no map: refused before the driver launches.
  ASSERT_TRUE(args->setInt(2, 0).ok());
  status = rt::launch(*kernel, {tiles, 0, 1}, *args);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "launch of 'tma_tile_copy': tensor map 0 (in: rows x cols, row "
            "stride stride): rows 'rows' is 0: a tensor map's array needs at "
            "least one row and one column (skip the launch of an empty "
            "problem)");

  // A pack without the kernel's map would pass one parameter too few.
  tilec::Result<rt::ArgPack> bare =
      rt::ArgPack::create(kernel->metadata().signature);
  ASSERT_TRUE(bare.ok());
  ASSERT_TRUE(bare->bind(out, in1, rows, cols, stride).ok());
  status = rt::launch(*kernel, grid, *bare);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "launch of 'tma_tile_copy': the ArgPack was built for (ptr, ptr, "
            "i32, i32, i32) and 0 tensor map(s) but the kernel takes (ptr, "
            "ptr, i32, i32, i32) and 1 tensor map(s)");
}

TEST_F(RuntimeGpuTest, VectorAddFromTheCubin) {
  if (skipUnlessCubinRuns())
    GTEST_SKIP() << "the test cubin is sm_90, the device is "
                 << context->properties().smName();
  std::string_view json = fixtures::vectorAddJson();
  std::optional<rt::Kernel> kernel =
      makeKernel(loadCubin(), std::string(json.data(), json.size()));
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->blockThreads(), 128u);
  EXPECT_GT(kernel->registers(), 0);
  EXPECT_EQ(kernel->localBytes(), 0);
  EXPECT_GE(kernel->maxThreadsPerBlock(), 128);
  std::cout << "vector_add: " << kernel->registers() << " registers, "
            << kernel->localBytes() << " local bytes\n";
  checkVectorAdd(*kernel, 1000003);
  checkVectorAdd(*kernel, 1);
}

TEST_F(RuntimeGpuTest, VectorAddThroughThePtxJit) {
  // Module::load tells PTX from a cubin by content.
  tilec::Result<std::shared_ptr<rt::Module>> module =
      rt::Module::load(*context, fixtures::testKernelsPtx());
  ASSERT_TRUE(module.ok()) << module.message();
  std::string_view json = fixtures::vectorAddJson();
  std::optional<rt::Kernel> kernel =
      makeKernel(*module, std::string(json.data(), json.size()));
  ASSERT_TRUE(kernel);
  checkVectorAdd(*kernel, 65536 + 5);
}

TEST_F(RuntimeGpuTest, LaunchesOnAStreamAndTimesWithEvents) {
  if (skipUnlessCubinRuns())
    GTEST_SKIP() << "the test cubin is sm_90";
  tilec::Result<std::shared_ptr<rt::Module>> module =
      rt::Module::load(*context, fixtures::testKernelsCubin());
  ASSERT_TRUE(module.ok()) << module.message();
  std::string_view json = fixtures::vectorAddJson();
  std::optional<rt::Kernel> kernel =
      makeKernel(*module, std::string(json.data(), json.size()));
  ASSERT_TRUE(kernel);
  tilec::Result<rt::Stream> stream = rt::Stream::create(*context);
  ASSERT_TRUE(stream.ok()) << stream.message();
  tilec::Result<rt::Event> start = rt::Event::create(*context);
  tilec::Result<rt::Event> stop = rt::Event::create(*context);
  ASSERT_TRUE(start.ok() && stop.ok());
  ASSERT_TRUE(start->record(*stream).ok());
  checkVectorAdd(*kernel, 1 << 22, stream->handle());
  ASSERT_TRUE(stop->record(*stream).ok());
  tilec::Result<float> ms = rt::Event::elapsedMs(*start, *stop);
  ASSERT_TRUE(ms.ok()) << ms.message();
  EXPECT_GT(*ms, 0.0f);
  EXPECT_TRUE(stream->synchronize().ok());
  EXPECT_TRUE(context->synchronize().ok());

  // Asynchronous copies on the stream.
  std::vector<int32_t> source(1000, 7), result(1000, 0);
  rt::DeviceBuffer buffer = allocate(4000);
  ASSERT_TRUE(
      buffer.copyFromHostAsync(source.data(), 4000, stream->handle()).ok());
  ASSERT_TRUE(
      buffer.copyToHostAsync(result.data(), 4000, stream->handle()).ok());
  ASSERT_TRUE(stream->synchronize().ok());
  EXPECT_EQ(result, source);
}

TEST_F(RuntimeGpuTest, PacksEveryArgumentTypeAsTheKernelReadsIt) {
  if (skipUnlessCubinRuns())
    GTEST_SKIP() << "the test cubin is sm_90";
  std::optional<rt::Kernel> kernel =
      makeKernel(loadCubin(), metadataJson("arg_probe", 1, 0,
                                           {{"out", "ptr<u64>"},
                                            {"a", "i8"},
                                            {"b", "i16"},
                                            {"c", "i32"},
                                            {"d", "i64"},
                                            {"e", "u8"},
                                            {"f", "u16"},
                                            {"g", "u32"},
                                            {"h", "u64"},
                                            {"i", "f16"},
                                            {"j", "bf16"},
                                            {"k", "f32"},
                                            {"l", "f64"}}));
  ASSERT_TRUE(kernel);
  rt::DeviceBuffer out = allocate(12 * 8);
  tilec::Result<rt::ArgPack> args = kernel->makeArgPack();
  ASSERT_TRUE(args.ok());
  tilec::Status status = args->bind(
      out, -7, -30000, -2000000000, int64_t(-5000000000000), 200u, 60000u,
      4000000000u, uint64_t(0xFEDCBA9876543210ull), 1.5, -2.5, 0.1f, 1e300);
  ASSERT_TRUE(status.ok()) << status.message();
  const uint64_t expected[12] = {
      uint64_t(int64_t(-7)),
      uint64_t(int64_t(-30000)),
      uint64_t(int64_t(-2000000000)),
      uint64_t(int64_t(-5000000000000)),
      200,
      60000,
      4000000000u,
      0xFEDCBA9876543210ull,
      0x3E00, // f16 1.5
      0xC020, // bf16 -2.5
      bitsOf(0.1f),
      0x7E37E43C8800759Cull, // 1e300
  };

  // Through kernelParams (what launch() uses).
  ASSERT_TRUE(out.memset32(kPoison).ok());
  ASSERT_TRUE(rt::launch(*kernel, {1, 1, 1}, *args).ok());
  std::vector<uint64_t> result(12);
  ASSERT_TRUE(out.copyToHost(result).ok());
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(result[i], expected[i]) << "argument " << i + 1;

  // Through the packed buffer: checks that ArgPack's offsets are the
  // kernel's parameter layout.
  ASSERT_TRUE(out.memset32(kPoison).ok());
  size_t size = args->bufferSize();
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER,
                   const_cast<void *>(args->buffer()),
                   CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  const rt::DriverApi &api = context->driver().api();
  ASSERT_EQ(api.cuLaunchKernel(kernel->function(), 1, 1, 1, 32, 1, 1, 0,
                               nullptr, nullptr, extra),
            CUDA_SUCCESS);
  ASSERT_TRUE(out.copyToHost(result).ok());
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(result[i], expected[i]) << "argument " << i + 1 << " (buffer)";
}

TEST_F(RuntimeGpuTest, OptsIntoLargeSharedMemoryAndRefusesTooMuch) {
  if (skipUnlessCubinRuns())
    GTEST_SKIP() << "the test cubin is sm_90";
  const uint32_t shared = 96 * 1024;
  const int n = shared / 4;
  const uint32_t blocks = 3;
  std::optional<rt::Kernel> kernel = makeKernel(
      loadCubin(),
      metadataJson("shared_reverse", 8, shared,
                   {{"in", "ptr<f32>"}, {"out", "ptr<f32>"}, {"n", "i32"}}));
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->sharedBytes(), shared);
  std::vector<float> input = randomFloats(size_t(n) * blocks, 4);
  rt::DeviceBuffer in = allocate(input.size() * 4),
                   out = allocate(input.size() * 4);
  ASSERT_TRUE(in.copyFromHost(input).ok());
  ASSERT_TRUE(out.memset32(kPoison).ok());
  tilec::Result<rt::ArgPack> args = kernel->makeArgPack();
  ASSERT_TRUE(args.ok());
  ASSERT_TRUE(args->bind(in, out, n).ok());
  tilec::Status status = rt::launch(*kernel, {blocks, 1, 1}, *args);
  ASSERT_TRUE(status.ok()) << status.message();
  std::vector<float> result(input.size());
  ASSERT_TRUE(out.copyToHost(result).ok());
  for (uint32_t b = 0; b < blocks; ++b)
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(result[b * n + i], input[b * n + (n - 1 - i)])
          << "block " << b << " element " << i;

  const rt::DeviceProperties &device = context->properties();
  uint32_t tooMuch = uint32_t(device.maxSharedBytesPerBlockOptin) + 4;
  tilec::Result<rt::Kernel> refused = rt::Kernel::create(
      *context, loadCubin(),
      parseMetadata(metadataJson(
          "shared_reverse", 8, tooMuch,
          {{"in", "ptr<f32>"}, {"out", "ptr<f32>"}, {"n", "i32"}})));
  ASSERT_FALSE(refused.ok());
  std::cout << refused.message() << "\n";
  EXPECT_EQ(refused.message(),
            "kernel 'shared_reverse' needs " + std::to_string(tooMuch) +
                " bytes of shared memory per block (shared_bytes " +
                std::to_string(tooMuch) + " + static 0) but " + device.name +
                " (" + device.smName() + ") allows at most " +
                std::to_string(device.maxSharedBytesPerBlockOptin));
}

TEST_F(RuntimeGpuTest, ReportsLoadErrorsWithTheDriversWords) {
  // An ELF header followed by garbage reaches the driver, which refuses it.
  std::string broken = "\x7f"
                       "ELF";
  broken.append(1000, '\x01');
  tilec::Result<std::shared_ptr<rt::Module>> module =
      rt::Module::loadCubin(*context, broken.data(), broken.size());
  ASSERT_FALSE(module.ok());
  std::cout << module.message() << "\n";
  EXPECT_EQ(module.message(), "cuModuleLoadData failed: "
                              "CUDA_ERROR_INVALID_IMAGE (device kernel image "
                              "is invalid)");

  module = rt::Module::loadCubin(*context, "hello", 5);
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.message(), "not a cubin: the image (5 bytes) has neither "
                              "an ELF nor a fatbin header");

  module = rt::Module::loadPtx(
      *context, ".version 8.0\n.target sm_90\n.address_size 64\n"
                ".visible .entry broken() {\n  add.f32 %f1, %f2;\n  ret;\n}\n");
  ASSERT_FALSE(module.ok());
  std::cout << module.message() << "\n";
  EXPECT_EQ(module.message().rfind("cuModuleLoadDataEx (PTX JIT) failed: "
                                   "CUDA_ERROR_INVALID_PTX (",
                                   0),
            0u)
      << module.message();
  EXPECT_NE(module.message().find("\nptxas"), std::string::npos)
      << "the JIT log is missing: " << module.message();

  if (skipUnlessCubinRuns())
    return;
  tilec::Result<rt::Kernel> kernel = rt::Kernel::create(
      *context, loadCubin(),
      parseMetadata(metadataJson("no_such_kernel", 4, 0, {})));
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.message(), "kernel 'no_such_kernel': cuModuleGetFunction "
                              "failed: CUDA_ERROR_NOT_FOUND (named symbol not "
                              "found)");
}

TEST_F(RuntimeGpuTest, RefusesArgPacksThatDoNotFitTheKernel) {
  if (skipUnlessCubinRuns())
    GTEST_SKIP() << "the test cubin is sm_90";
  std::string_view json = fixtures::vectorAddJson();
  std::optional<rt::Kernel> kernel =
      makeKernel(loadCubin(), std::string(json.data(), json.size()));
  ASSERT_TRUE(kernel);
  tilec::Result<rt::ArgPack> args = kernel->makeArgPack();
  ASSERT_TRUE(args.ok());
  rt::DeviceBuffer buffer = allocate(16);
  ASSERT_TRUE(args->setPointer(0, buffer.ptr()).ok());
  ASSERT_TRUE(args->setPointer(1, buffer.ptr()).ok());
  tilec::Status status = rt::launch(*kernel, {1, 1, 1}, *args);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "launch of 'vector_add': argument(s) never set: c, n");

  tilec::Result<rt::ArgPack> other = rt::ArgPack::create(
      {{"x", "ptr<f32>", tilec::ArgType::Ptr}, {"n", "i64", tilec::ArgType::I64}});
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(other->bind(buffer, 4).ok());
  status = rt::launch(*kernel, {1, 1, 1}, *other);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "launch of 'vector_add': the ArgPack was built "
                              "for (ptr, i64) but the kernel takes (ptr, ptr, "
                              "ptr, i32)");

  ASSERT_TRUE(args->bind(buffer, buffer, buffer, 4).ok());
  status = rt::launch(*kernel, {0, 1, 1}, *args);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "launch of 'vector_add' (grid 0x1x1, block 128, shared 0 bytes): "
            "cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE (invalid "
            "argument)");
}

class TempDir {
public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tilec-rt-XXXXXX").string();
    path_ = mkdtemp(pattern.data()) ? pattern : "";
  }
  ~TempDir() {
    if (!path_.empty())
      std::filesystem::remove_all(path_);
  }
  const std::string &path() const { return path_; }
  void write(const std::string &name, std::string_view contents) const {
    std::ofstream(path_ + "/" + name, std::ios::binary)
        .write(contents.data(), contents.size());
  }

private:
  std::string path_;
};

TEST_F(RuntimeGpuTest, LoadsKernelDirectories) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  dir.write("vector_add.json", fixtures::vectorAddJson());
  dir.write("vector_add.ptx", fixtures::testKernelsPtx());

  // Only PTX: the driver JIT compiles it.
  tilec::Result<rt::Kernel> kernel =
      rt::loadKernelFromDirectory(*context, dir.path(), "vector_add");
  ASSERT_TRUE(kernel.ok()) << kernel.message();
  checkVectorAdd(*kernel, 4097);

  if (!skipUnlessCubinRuns()) {
    // A cubin is preferred over the PTX.
    dir.write("vector_add.cubin", fixtures::testKernelsCubin());
    kernel = rt::loadKernelFromDirectory(*context, dir.path(), "vector_add");
    ASSERT_TRUE(kernel.ok()) << kernel.message();
    checkVectorAdd(*kernel, 4097);

    dir.write("vector_add.cubin", "\x7f"
                                  "ELF garbage");
    kernel = rt::loadKernelFromDirectory(*context, dir.path(), "vector_add");
    ASSERT_FALSE(kernel.ok());
    std::cout << kernel.message() << "\n";
    const rt::DeviceProperties &device = context->properties();
    EXPECT_EQ(kernel.message(),
              dir.path() + "/vector_add.cubin (target sm_90, device " +
                  device.smName() + " " + device.name +
                  "): cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE "
                  "(device kernel image is invalid)");
  }

  kernel = rt::loadKernelFromDirectory(*context, dir.path(), "matmul");
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.message(), dir.path() + "/matmul.json: cannot open: No "
                                           "such file or directory");

  dir.write("matmul.json", fixtures::vectorAddJson());
  kernel = rt::loadKernelFromDirectory(*context, dir.path(), "matmul");
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.message(), "no device code for kernel 'matmul' in " +
                                  dir.path() +
                                  ": neither matmul.cubin nor matmul.ptx "
                                  "exists");

  dir.write("broken.json", "{\"name\": \"broken\"}");
  kernel = rt::loadKernelFromDirectory(*context, dir.path(), "broken");
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.message(), dir.path() + "/broken.json: kernel metadata: "
                                           "field 'kernel_name' is missing");
}

} // namespace
