//===- WorkloadSparseTest.cpp - What tilec_sparse gives a workload --------===//
//
// A convolution's layer as a workload records it and back, the kernel calls
// a layer makes (the keys it fills), and the shells `tilec warmup` runs a
// layer on. No GPU.
//
//===----------------------------------------------------------------------===//

#include "tilec/sparse/SparseConv.h"
#include "tilec/sparse/VoxelScenes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace rt = tilec::rt;
namespace sparse = tilec::sparse;

namespace {

TEST(WorkloadSparseTest, ALayerRoundTripsThroughTheConvolutionsArguments) {
  sparse::ConvArguments arguments;
  arguments.ci = 32;
  arguments.co = 48;
  arguments.window = sparse::Window::cube(5, 2);
  arguments.dtype = sparse::DType::F32;
  arguments.allowTf32 = true;
  arguments.bias = rt::DevicePtr{0x1000};
  arguments.yRowStride = 64;
  rt::ConvLayer layer = sparse::convLayerOf(arguments, 1234);
  EXPECT_EQ(layer.voxels, 1234);
  EXPECT_EQ(layer.inChannels, 32);
  EXPECT_EQ(layer.outChannels, 48);
  EXPECT_EQ(layer.kernelSize, (std::array<int, 3>{5, 5, 5}));
  EXPECT_EQ(layer.dilation, (std::array<int, 3>{2, 2, 2}));
  EXPECT_EQ(layer.dtype, "f32");
  EXPECT_TRUE(layer.bias);
  EXPECT_TRUE(layer.allowTf32);
  EXPECT_EQ(layer.xRowStride, 0);
  EXPECT_EQ(layer.yRowStride, 64);

  auto back = sparse::convArgumentsOf(layer);
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->ci, 32);
  EXPECT_EQ(back->co, 48);
  EXPECT_TRUE(back->window == sparse::Window::cube(5, 2));
  EXPECT_EQ(back->dtype, sparse::DType::F32);
  EXPECT_TRUE(back->allowTf32);
  EXPECT_EQ(back->yStride(), 64);
  EXPECT_EQ(back->xStride(), 32);
  // Buffers are the caller's.
  EXPECT_EQ(back->x.address, 0u);
  EXPECT_EQ(back->bias.address, 0u);

  // A window per axis (it was recorded as its x extent's cube).
  arguments.window = sparse::Window{{1, 3, 5}, {1, 2, 1}};
  layer = sparse::convLayerOf(arguments, 1234);
  EXPECT_EQ(layer.kernelSize, (std::array<int, 3>{1, 3, 5}));
  EXPECT_EQ(layer.dilation, (std::array<int, 3>{1, 2, 1}));
  auto window = sparse::convArgumentsOf(layer);
  ASSERT_TRUE(window.ok()) << window.message();
  EXPECT_TRUE(window->window == arguments.window);

  layer.dtype = "f64";
  auto bad = sparse::convArgumentsOf(layer);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(),
            "submanifold_conv3d: the dtype must be f16, bf16 or f32, got 'f64'");
}

// The sparse_conv_fwd calls of a 64 -> 32 layer with a bias over 64,160
// voxels.
std::vector<std::pair<std::string, tilec::Call>> biasedLayerCalls() {
  sparse::ConvArguments arguments;
  arguments.ci = 64;
  arguments.co = 32;
  arguments.bias = rt::DevicePtr{0x1000};
  return sparse::convKernelCalls(arguments, 64160);
}

TEST(WorkloadSparseTest, ALayerCallsTheConvolutionKernelOncePerRowBlock) {
  auto calls = biasedLayerCalls();
  ASSERT_EQ(calls.size(), 2u);
  for (size_t i = 0; i < calls.size(); ++i) {
    const auto &[kernel, call] = calls[i];
    EXPECT_EQ(kernel, "sparse_conv_fwd");
    EXPECT_EQ(call.params.at("BLOCK_M"), sparse::convRowBlocks(64160)[i]);
    EXPECT_EQ(call.params.at("HAS_BIAS"), 1);
    EXPECT_EQ(call.params.at("ALLOW_TF32"), 0);
    EXPECT_EQ(call.types.at("DTYPE"), "f16");
    EXPECT_EQ(call.sizes, (std::map<std::string, int64_t>{{"CI", 64},
                                                          {"CO", 32},
                                                          {"N", 64160},
                                                          {"V", 27},
                                                          {"stride_x", 64},
                                                          {"stride_y", 32}}));
  }
}

// Up to 4096 rows only the 64-row block is tuned (and its lists built);
// the rule follows the rows' bucket, so every size of a bucket agrees.
TEST(WorkloadSparseTest, SmallLayersTuneTheSixtyFourRowBlockAlone) {
  sparse::ConvArguments arguments;
  arguments.ci = arguments.co = 256;
  for (int64_t voxels : {1, 777, 2049, 4096}) {
    auto calls = sparse::convKernelCalls(arguments, voxels);
    ASSERT_EQ(calls.size(), 1u) << voxels;
    EXPECT_EQ(calls[0].second.params.at("BLOCK_M"), 64);
    auto build = sparse::mapBuildCalls(voxels, arguments.window, false);
    EXPECT_EQ(
        std::count_if(build.begin(), build.end(),
                      [](const auto &c) { return c.first == "block_offsets"; }),
        1)
        << voxels;
  }
  for (int64_t voxels : {4097, 8192, 500000})
    EXPECT_EQ(sparse::convKernelCalls(arguments, voxels).size(), 2u) << voxels;
}

// A network's layers planned before they run: each layer's forward row
// blocks (the calls the convolution tunes: convKernelCalls), then its input
// gradient's (the weight transposed, read mirrored where submanifold, the
// channels swapped, no bias), then its weight gradient over the window's
// offsets.
TEST(WorkloadSparseTest, PlannedLayersCallWhatTheirFirstCallsTune) {
  sparse::LayerPlan submanifold;
  submanifold.layer.voxels = 64160;
  submanifold.layer.inChannels = 64;
  submanifold.layer.outChannels = 32;
  submanifold.layer.bias = true;
  submanifold.inputGradient = submanifold.weightGradient = true;
  sparse::LayerPlan strided;
  strided.layer.voxels = 3000;
  strided.layer.inChannels = 32;
  strided.layer.outChannels = 48;
  strided.layer.kernelSize = {2, 2, 2};
  strided.layer.dtype = "bf16";
  strided.strided = true;
  strided.inputGradient = true;
  auto calls = sparse::layerPlanCalls({submanifold, strided});
  ASSERT_TRUE(calls.ok()) << calls.message();
  std::vector<std::string> kernels;
  for (const auto &[kernel, call] : *calls)
    kernels.push_back(kernel + " " +
                      std::to_string(call.params.count("BLOCK_M")
                                         ? call.params.at("BLOCK_M")
                                         : 0));
  EXPECT_EQ(kernels, (std::vector<std::string>{
                         "sparse_conv_fwd 64", "sparse_conv_fwd 128",
                         "sparse_conv_fwd 64", "sparse_conv_fwd 128",
                         "sparse_conv_wgrad 0", "sparse_conv_fwd 64",
                         "sparse_conv_fwd 64"}));
  // The forward is the convolution's own.
  auto forward = biasedLayerCalls();
  ASSERT_EQ(forward.size(), 2u);
  for (size_t i = 0; i < forward.size(); ++i) {
    EXPECT_EQ((*calls)[i].second.sizes, forward[i].second.sizes);
    EXPECT_EQ((*calls)[i].second.params, forward[i].second.params);
    EXPECT_EQ((*calls)[i].second.types, forward[i].second.types);
  }
  const tilec::Call &inputGradient = (*calls)[2].second;
  EXPECT_EQ(inputGradient.sizes.at("CI"), 32);
  EXPECT_EQ(inputGradient.sizes.at("CO"), 64);
  EXPECT_EQ(inputGradient.params.at("TRANSPOSE_W"), 1);
  EXPECT_EQ(inputGradient.params.at("HAS_BIAS"), 0);
  const tilec::Call &weightGradient = (*calls)[4].second;
  EXPECT_EQ(weightGradient.sizes.at("V"), 27);
  EXPECT_EQ(weightGradient.sizes.at("CI"), 64);
  EXPECT_EQ(weightGradient.sizes.at("CO"), 32);
  EXPECT_EQ((*calls)[5].second.sizes.at("V"), 8);
  EXPECT_EQ((*calls)[5].second.types.at("DTYPE"), "bf16");
  EXPECT_EQ((*calls)[5].second.params.at("TRANSPOSE_W"), 0);
  EXPECT_EQ((*calls)[6].second.params.at("TRANSPOSE_W"), 2);
}

// A first use that predicts plans each layer's predicted row block alone,
// at its planned count and then at one count of each smaller power of two
// down to 2^6 (the levels after strided layers), each call once however
// many layers share it.
TEST(WorkloadSparseTest, PredictedPlansCoverEachSmallerPowerOfTwo) {
  sparse::LayerPlan layer;
  layer.layer.voxels = 64160;
  layer.layer.inChannels = layer.layer.outChannels = 32;
  layer.inputGradient = layer.weightGradient = true;
  auto calls = sparse::layerPlanCalls({layer, layer}, rt::FirstUse::Predict);
  ASSERT_TRUE(calls.ok()) << calls.message();
  std::vector<int64_t> forwardCounts, expectedCounts = {64160};
  for (int log2 = 15; log2 >= 6; --log2)
    expectedCounts.push_back((int64_t(1) << (log2 - 1)) + 1);
  for (const auto &[kernel, call] : *calls) {
    if (kernel != "sparse_conv_fwd" || call.params.at("TRANSPOSE_W") != 0)
      continue;
    int64_t n = call.sizes.at("N");
    forwardCounts.push_back(n);
    EXPECT_EQ(call.params.at("BLOCK_M"), sparse::predictedRowBlock(n)) << n;
  }
  EXPECT_EQ(forwardCounts, expectedCounts);
  // Forward, input and weight gradient at each count; the second layer
  // repeats the first.
  EXPECT_EQ(calls->size(), 3 * expectedCounts.size());
  auto tuned = sparse::layerPlanCalls({layer}, rt::FirstUse::Tune);
  ASSERT_TRUE(tuned.ok()) << tuned.message();
  EXPECT_EQ(tuned->size(), 5u) << "both row blocks of the forward and dX, "
                                  "dW, at the planned count alone";
}

TEST(WorkloadSparseTest, APlanOutOfRangeNamesTheLayer) {
  sparse::LayerPlan good;
  good.layer.voxels = 100;
  good.layer.inChannels = good.layer.outChannels = 16;
  auto refused = [&](sparse::LayerPlan bad, const std::string &text) {
    auto calls = sparse::layerPlanCalls({good, bad});
    ASSERT_FALSE(calls.ok()) << text;
    EXPECT_NE(calls.message().find("layer plan 1: " + text), std::string::npos)
        << calls.message();
  };
  sparse::LayerPlan bad = good;
  bad.layer.voxels = 0;
  refused(bad, "the voxels must be from 1 to 2^28 - 1, got 0");
  bad = good;
  bad.layer.kernelSize = {2, 3, 3};
  refused(bad, "the kernel size along x must be odd, 1 to 7, got 2");
  bad.strided = true;
  EXPECT_TRUE(sparse::layerPlanCalls({good, bad}).ok());
  bad.layer.kernelSize = {3, 3, 8};
  refused(bad, "the kernel size along z must be 1 to 7, got 8");
  bad = good;
  bad.stride = {2, 2, 2};
  refused(bad, "the stride along x must be 0 (a submanifold layer has none), "
               "got 2");
  bad.strided = true;
  bad.layer.kernelSize = {2, 2, 2};
  EXPECT_TRUE(sparse::layerPlanCalls({good, bad}).ok());
  bad.padding = {0, -1, 0};
  refused(bad, "the padding along y must be 0 to 65536, got -1");
  bad = good;
  bad.layer.allowTf32 = true;
  refused(bad, "allow_tf32 applies to f32 only");
  bad = good;
  bad.layer.outChannels = 0;
  refused(bad, "ci and co must be positive");
}

// A map build's calls (what its first build precompiles, and what `tilec
// bench plans` plans): the table, the lookups of the window, its sort keys,
// the sort, both row blocks' lists (a launch each); the cover rounds only
// where lean; every call over the build's voxels or a count derived from
// them.
TEST(WorkloadSparseTest, AMapBuildsCallsFollowItsWindowAndRowOrder) {
  auto countOf =
      [](const std::vector<std::pair<std::string, tilec::Call>> &calls,
         const std::string &kernel) {
        return std::count_if(calls.begin(), calls.end(),
                             [&](const auto &c) { return c.first == kernel; });
      };
  sparse::Window flat{{1, 3, 3}, {1, 2, 1}};
  auto calls = sparse::mapBuildCalls(15192, flat, /*lean=*/false);
  EXPECT_EQ(countOf(calls, "voxel_hash_insert"), 1);
  EXPECT_EQ(countOf(calls, "mask_cover"), 0);
  EXPECT_EQ(countOf(calls, "block_offsets"),
            static_cast<long>(sparse::convRowBlocks(15192).size()));
  for (const auto &[kernel, call] : calls) {
    SCOPED_TRACE(kernel);
    ASSERT_TRUE(call.sizes.count("N"));
    EXPECT_LE(call.sizes.at("N"), 15192);
    if (kernel == "voxel_neighbours") {
      EXPECT_EQ(call.sizes.at("KX"), 1);
      EXPECT_EQ(call.sizes.at("KY"), 3);
      EXPECT_EQ(call.sizes.at("DY"), 2);
      EXPECT_EQ(call.sizes.at("V"), 9);
    }
  }
  auto lean = sparse::mapBuildCalls(15192, flat, /*lean=*/true);
  EXPECT_EQ(countOf(lean, "mask_unions"), 1);
  EXPECT_EQ(countOf(lean, "mask_cover"), 1);
  EXPECT_GT(lean.size(), calls.size());
  // One voxel has no groups to move rows between.
  EXPECT_EQ(countOf(sparse::mapBuildCalls(1, flat, true), "mask_cover"), 0);
}

TEST(WorkloadSparseTest, ShellsOfAnySizeHaveExactlyThatManyDistinctVoxels) {
  for (int64_t voxels : {1, 2, 27, 1000, 15192, 64160, 64161, 252392, 252393,
                         600000}) {
    SCOPED_TRACE(voxels);
    sparse::VoxelCloud cloud = sparse::shellSceneOfSize(voxels);
    ASSERT_EQ(cloud.size(), voxels);
    std::vector<std::array<int32_t, 4>> list;
    for (int64_t i = 0; i < voxels; ++i) {
      std::array<int32_t, 4> voxel;
      std::copy_n(cloud.coords.begin() + 4 * i, 4, voxel.begin());
      for (int32_t c : voxel)
        ASSERT_TRUE(c >= 0 && c < 65536);
      list.push_back(voxel);
    }
    // Raster order, each voxel once.
    EXPECT_TRUE(std::is_sorted(list.begin(), list.end()));
    EXPECT_EQ(std::adjacent_find(list.begin(), list.end()), list.end());
  }
  // The bench's shells are the ones of their size.
  EXPECT_EQ(sparse::shellSceneOfSize(64160).coords, sparse::shellScene(128).coords);
  EXPECT_EQ(sparse::shellSceneOfSize(15192).coords, sparse::shellScene(64).coords);
  // Beyond the res-256 shell: copies of it in further batches.
  sparse::VoxelCloud large = sparse::shellSceneOfSize(600000);
  EXPECT_EQ(large.coords[4 * 252392], 1);
  EXPECT_EQ(large.coords[4 * (600000 - 1)], 2);
  EXPECT_TRUE(sparse::shellSceneOfSize(0).coords.empty());
}

} // namespace
