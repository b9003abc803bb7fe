//===- CApiGpuTest.cpp - compiled kernels through libtilec_c.so -----------===//
//
// A matmul compiled here (on Hopper: TMA tensor maps among its parameters)
// is loaded, bound and launched through the C API as an FFI would, and its
// output checked against float64. Skips without a GPU.
//
//===----------------------------------------------------------------------===//

#include "tilec/tilec.h"

#include "tilec/Harness/KernelHarness.h"
#include "tilec/JIT/TilecJIT.h"
#include "tilec/Kernel/KernelRegistry.h"
#include "tilec/contract/CompileMetadata.h"
#include "tilec/runtime/DeviceBuffer.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>

namespace {

struct CompiledMatmul {
  std::string cubin;
  std::string json;
  tilec::CompileMetadata metadata;
  tilec::harness::RunRequest request;
};

// f16 128x128x64 with 3 stages on sizes whose rows are 16-byte aligned
// (strides 72 and 136) and that end in tails: TMA on sm_90a. Compiled by the
// JIT, specialized for the call as the runtime does.
void compileMatmul(const tilec::rt::Context &context, CompiledMatmul &out) {
  const auto *definition = tilec::kernel::lookupKernel("matmul");
  ASSERT_NE(definition, nullptr);
  const tilec::KernelDescription &description = definition->getDescription();
  auto config = description.parseConfig(
      "BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,DTYPE=f16,num_warps=4,num_stages=3");
  ASSERT_TRUE(config.ok()) << config.message();
  out.request = tilec::harness::requestFor(description);
  out.request.call.types = config->types;
  out.request.call.params = config->params;
  out.request.config = *config;
  for (auto [name, value] : {std::pair{"M", 200}, {"N", 136}, {"K", 72}})
    out.request.call.sizes[name] = value;
  out.request.call.sizes["stride_am"] = 72;
  out.request.call.sizes["stride_bk"] = 136;
  out.request.call.sizes["stride_cm"] = 136;

  tilec::jit::TilecJIT compiler;
  auto artifact =
      compiler.compile("matmul", *config, context.properties().compileTarget(),
                       description.specializationOf(out.request.call));
  ASSERT_TRUE(artifact.ok()) << artifact.message();
  out.cubin = artifact->cubin;
  out.json = artifact->metadata.toJson();
  auto metadata = tilec::CompileMetadata::parse(out.json);
  ASSERT_TRUE(metadata.ok()) << metadata.message();
  out.metadata = *metadata;
}

// A device context and a C API runtime per test; skips without a GPU.
class CApiGpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto created = tilec::rt::Context::create();
    if (!created)
      GTEST_SKIP() << created.message();
    context.emplace(std::move(*created));
    ASSERT_EQ(tilec_runtime_create(&runtime), TILEC_OK) << tilec_last_error();
  }
  void TearDown() override {
    if (runtime)
      tilec_runtime_destroy(runtime);
  }

  std::optional<tilec::rt::Context> context;
  tilec_runtime *runtime = nullptr;
};

TEST_F(CApiGpuTest, LaunchesACompiledMatmulWithItsTensorMaps) {
  CompiledMatmul matmul;
  ASSERT_NO_FATAL_FAILURE(compileMatmul(*context, matmul));
  if (context->properties().compileTarget() == "sm_90a") {
    EXPECT_EQ(matmul.metadata.tensorMaps.size(), 2u);
  }

  tilec_kernel *kernel = nullptr;
  ASSERT_EQ(tilec_kernel_load(runtime, matmul.cubin.data(), matmul.cubin.size(),
                              matmul.json.c_str(), &kernel),
            TILEC_OK)
      << tilec_last_error();

  auto problem = tilec::harness::buildProblem(*context, matmul.request,
                                              /*withReference=*/true);
  ASSERT_TRUE(problem.ok()) << problem.message();
  auto grid = matmul.request.kernel->evaluateGrid(matmul.request.config,
                                                  matmul.request.call);
  ASSERT_TRUE(grid.ok()) << grid.message();
  // Not every argument set: refused, nothing launched.
  EXPECT_EQ(tilec_kernel_launch(kernel, grid->x, grid->y, grid->z, nullptr),
            TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tilec_last_error()).find("never set"),
            std::string::npos)
      << tilec_last_error();
  const auto &arguments = (*problem)->arguments;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const auto &argument = arguments[i];
    tilec_status set =
        argument.isPointer
            ? tilec_kernel_set_pointer(
                  kernel, i,
                  reinterpret_cast<const void *>(
                      (*problem)->buffers[argument.buffer].ptr().address))
            : tilec_kernel_set_int(kernel, i, argument.value);
    ASSERT_EQ(set, TILEC_OK) << i << ": " << tilec_last_error();
  }
  // An index past the signature, a pointer for an integer argument and a
  // row stride that breaks the specialization (A's rows were compiled
  // 16-byte aligned) are refused, the values set before kept.
  EXPECT_EQ(tilec_kernel_set_int(kernel, arguments.size(), 1),
            TILEC_ERROR_INVALID_ARGUMENT);
  size_t strideAm = 0;
  while (strideAm < matmul.metadata.signature.size() &&
         matmul.metadata.signature[strideAm].name != "stride_am")
    ++strideAm;
  ASSERT_LT(strideAm, arguments.size());
  EXPECT_EQ(tilec_kernel_set_pointer(kernel, strideAm, nullptr),
            TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tilec_kernel_set_int(kernel, strideAm, 71),
            TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tilec_last_error()).find("stride_am"),
            std::string::npos)
      << tilec_last_error();

  ASSERT_EQ(tilec_kernel_launch(kernel, grid->x, grid->y, grid->z, nullptr),
            TILEC_OK)
      << tilec_last_error();
  ASSERT_TRUE(context->synchronize().ok());
  auto report = (*problem)->check();
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_TRUE(report->passed) << report->describe();

  tilec_kernel_destroy(kernel);
}

// Bad input is a status with a message, before any device work.
TEST_F(CApiGpuTest, BadKernelsAreRefused) {
  tilec_kernel *kernel = nullptr;
  const char junk[] = "not a cubin";
  EXPECT_EQ(tilec_kernel_load(runtime, junk, sizeof junk, "{", &kernel),
            TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_FALSE(std::string(tilec_last_error()).empty());
  EXPECT_EQ(kernel, nullptr);
}

// The maps of one row block size, as a convolution whose winner runs it
// builds them; a size the convolution does not tune over is refused with
// the sizes it does. The pairs are those of every row block's maps.
TEST_F(CApiGpuTest, BuildsTheMapsOfOneRowBlock) {
  int32_t *coords = nullptr;
  int64_t n = 0;
  // 5,816 voxels: above 4,096, so 64- and 128-row blocks.
  ASSERT_EQ(tilec_scene_shell(40, 1, &coords, &n), TILEC_OK)
      << tilec_last_error();
  ASSERT_GT(n, 4096);
  auto device = tilec::rt::DeviceBuffer::allocate(*context, 16 * size_t(n));
  ASSERT_TRUE(device.ok()) << device.message();
  ASSERT_TRUE(device->copyFromHost(coords, 16 * size_t(n)).ok());
  tilec_free(coords);
  const auto *onDevice =
      reinterpret_cast<const int32_t *>(device->ptr().address);

  tilec_sparse_tensor *rows128 = nullptr, *every = nullptr;
  ASSERT_EQ(tilec_sparse_tensor_create(runtime, onDevice, n, &rows128),
            TILEC_OK)
      << tilec_last_error();
  ASSERT_EQ(tilec_sparse_tensor_create(runtime, onDevice, n, &every), TILEC_OK)
      << tilec_last_error();
  EXPECT_EQ(tilec_sparse_tensor_build_maps_rows(rows128, 3, 1, 32, nullptr),
            TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tilec_last_error()).find("64 or 128 rows"),
            std::string::npos)
      << tilec_last_error();
  EXPECT_EQ(tilec_sparse_tensor_build_maps_rows(nullptr, 3, 1, 64, nullptr),
            TILEC_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(tilec_sparse_tensor_build_maps_rows(rows128, 3, 1, 128, nullptr),
            TILEC_OK)
      << tilec_last_error();
  ASSERT_EQ(tilec_sparse_tensor_build_maps(every, 3, 1, nullptr), TILEC_OK)
      << tilec_last_error();
  int64_t pairs128 = 0, pairsEvery = 0;
  ASSERT_EQ(tilec_sparse_tensor_active_pairs(rows128, 3, 1, &pairs128),
            TILEC_OK)
      << tilec_last_error();
  ASSERT_EQ(tilec_sparse_tensor_active_pairs(every, 3, 1, &pairsEvery),
            TILEC_OK)
      << tilec_last_error();
  EXPECT_GT(pairs128, n); // every voxel is its own neighbour, and more
  EXPECT_EQ(pairs128, pairsEvery);
  tilec_sparse_tensor_destroy(rows128);
  tilec_sparse_tensor_destroy(every);
  ASSERT_TRUE(context->synchronize().ok());
}

} // namespace
