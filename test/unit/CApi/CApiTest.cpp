//===- CApiTest.cpp - libtilec_c.so as an FFI sees it ---------------------===//
//
// Loaded with dlopen, as ctypes does: the header's functions are exported
// (and nothing of LLVM), the scenes come back through tilec_free's memory,
// bad arguments are status codes with messages, and without a GPU the
// runtime says so.
//
//===----------------------------------------------------------------------===//

#include "tilec/runtime/EmbeddedBundle.h"
#include "tilec/tilec.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <dlfcn.h>

#include <string>

namespace {

class CApiTest : public testing::Test {
protected:
  void SetUp() override {
    library = dlopen(TILEC_C_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library, nullptr) << dlerror();
  }
  void TearDown() override {
    if (library)
      dlclose(library);
  }
  template <typename F> F *function(const char *name) {
    void *symbol = dlsym(library, name);
    EXPECT_NE(symbol, nullptr) << name;
    return reinterpret_cast<F *>(symbol);
  }
  void *library = nullptr;
};

TEST_F(CApiTest, ExportsTheHeaderAndNothingOfLLVM) {
  for (const char *name : {"tilec_last_error",
                           "tilec_version",
                           "tilec_runtime_create",
                           "tilec_runtime_create_with_options",
                           "tilec_runtime_destroy",
                           "tilec_kernel_load",
                           "tilec_kernel_destroy",
                           "tilec_kernel_set_pointer",
                           "tilec_kernel_set_int",
                           "tilec_kernel_set_float",
                           "tilec_kernel_launch",
                           "tilec_sparse_tensor_create",
                           "tilec_sparse_tensor_destroy",
                           "tilec_sparse_tensor_set_row_order",
                           "tilec_sparse_tensor_build_maps",
                           "tilec_sparse_tensor_build_maps_rows",
                           "tilec_sparse_tensor_active_pairs",
                           "tilec_submanifold_conv3d",
                           "tilec_submanifold_conv3d_window",
                           "tilec_submanifold_conv3d_window_backward",
                           "tilec_sparse_tensor_strided",
                           "tilec_sparse_tensor_strided_coords",
                           "tilec_sparse_conv3d",
                           "tilec_sparse_conv3d_backward",
                           "tilec_compile_layers_ahead",
                           "tilec_scene_shell",
                           "tilec_scene_uniform",
                           "tilec_scene_lidar",
                           "tilec_free"})
    EXPECT_NE(dlsym(library, name), nullptr) << name;
  // LLVM may be a dependency (a shared LLVM in a development build), but
  // this library defines none of it for others to bind to.
  Dl_info info;
  void *llvm = dlsym(library, "LLVMContextCreate");
  ASSERT_NE(dladdr(dlsym(library, "tilec_free"), &info), 0);
  std::string self = info.dli_fname;
  if (llvm) {
    ASSERT_NE(dladdr(llvm, &info), 0);
    EXPECT_NE(std::string(info.dli_fname), self);
  }
}

TEST_F(CApiTest, VersionIsTheProjects) {
  auto version = function<decltype(tilec_version)>("tilec_version");
  ASSERT_NE(version, nullptr);
  EXPECT_STREQ(version(), TILEC_VERSION);
}

TEST_F(CApiTest, ScenesComeBackInTheCallersMemory) {
  auto shell = function<decltype(tilec_scene_shell)>("tilec_scene_shell");
  auto release = function<decltype(tilec_free)>("tilec_free");
  int32_t *coords = nullptr;
  int64_t n = 0;
  ASSERT_EQ(shell(64, 1, &coords, &n), TILEC_OK);
  EXPECT_EQ(n, 15192);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_TRUE(coords[4 * i] == 0 && coords[4 * i + 1] >= 0 &&
                coords[4 * i + 1] < 64);
  release(coords);
}

TEST_F(CApiTest, BadArgumentsAreStatusesWithMessages) {
  auto shell = function<decltype(tilec_scene_shell)>("tilec_scene_shell");
  auto lastError = function<decltype(tilec_last_error)>("tilec_last_error");
  auto convolve =
      function<decltype(tilec_submanifold_conv3d)>("tilec_submanifold_conv3d");
  int32_t *coords = nullptr;
  int64_t n = 0;
  EXPECT_EQ(shell(0, 1, &coords, &n), TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(lastError()).find("res must be"), std::string::npos);
  // Scenes larger than a sparse tensor holds are refused before any work.
  EXPECT_EQ(shell(4096, 5, &coords, &n), TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(lastError()).find("at most 2^28"), std::string::npos);
  auto uniform = function<decltype(tilec_scene_uniform)>("tilec_scene_uniform");
  EXPECT_EQ(uniform(int64_t(1) << 40, 65536, 1, 0, &coords, &n),
            TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(lastError()).find("at most 2^28 voxels"),
            std::string::npos)
      << lastError();
  EXPECT_EQ(uniform(int64_t(1) << 27, 65536, 3, 0, &coords, &n),
            TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(convolve(nullptr, nullptr, nullptr, nullptr, nullptr, 16, 16, 3, 1,
                     TILEC_F16, 0, nullptr),
            TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(lastError()).find("tensor must not be NULL"),
            std::string::npos);
  auto windowed = function<decltype(tilec_submanifold_conv3d_window)>(
      "tilec_submanifold_conv3d_window");
  int32_t window[3] = {1, 3, 3}, dilations[3] = {1, 1, 1};
  EXPECT_EQ(windowed(nullptr, nullptr, nullptr, nullptr, nullptr, 16, 16,
                     window, dilations, TILEC_F16, 0, nullptr),
            TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(lastError()).find("tensor must not be NULL"),
            std::string::npos);
  auto strided =
      function<decltype(tilec_sparse_conv3d)>("tilec_sparse_conv3d");
  tilec_conv_geometry geometry = {{2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}};
  int64_t shape[3] = {16, 16, 16};
  EXPECT_EQ(strided(nullptr, &geometry, shape, 1, 0, nullptr, nullptr,
                    nullptr, nullptr, 16, 16, TILEC_F16, 0, nullptr),
            TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(lastError()).find("tensor must not be NULL"),
            std::string::npos);
  auto stridedMaps = function<decltype(tilec_sparse_tensor_strided)>(
      "tilec_sparse_tensor_strided");
  EXPECT_EQ(stridedMaps(nullptr, &geometry, shape, 1, nullptr, nullptr,
                        nullptr),
            TILEC_ERROR_INVALID_ARGUMENT);
  auto setRowOrder = function<decltype(tilec_sparse_tensor_set_row_order)>(
      "tilec_sparse_tensor_set_row_order");
  EXPECT_EQ(setRowOrder(nullptr, TILEC_ROW_ORDER_KEY),
            TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(lastError()).find("tensor must not be NULL"),
            std::string::npos);
  auto createWith = function<decltype(tilec_runtime_create_with_options)>(
      "tilec_runtime_create_with_options");
  auto initOptions = function<decltype(tilec_runtime_options_init)>(
      "tilec_runtime_options_init");
  tilec_embedded_bundle table = {};
  tilec_runtime_options options;
  initOptions(&options);
  EXPECT_EQ(options.size, sizeof(options));
  EXPECT_EQ(options.device, 0);
  EXPECT_EQ(options.bundle_path, nullptr);
  options.bundle_path = "b.bundle";
  options.embedded_bundle = &table;
  tilec_runtime *runtime = nullptr;
  EXPECT_EQ(createWith(&options, &runtime), TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(lastError()).find("not both"), std::string::npos);
  EXPECT_EQ(runtime, nullptr);
  // A struct never initialized (size 0) and a negative device are refused
  // before the driver.
  tilec_runtime_options uninitialized = {};
  EXPECT_EQ(createWith(&uninitialized, &runtime), TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(lastError()).find("call tilec_runtime_options_init"),
            std::string::npos)
      << lastError();
  // A size that ends inside a field (half of bundle_path) is no struct's.
  tilec_runtime_options torn;
  initOptions(&torn);
  torn.size = 20;
  EXPECT_EQ(createWith(&torn, &runtime), TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(lastError()).find("size is 20, which no version"),
            std::string::npos)
      << lastError();
  tilec_runtime_options negative;
  initOptions(&negative);
  negative.device = -1;
  EXPECT_EQ(createWith(&negative, &runtime), TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(lastError())
                .find("device -1 is not a device "
                      "ordinal"),
            std::string::npos)
      << lastError();
  EXPECT_EQ(runtime, nullptr);
  // A bundle is checked before the driver: the same error with or without
  // a GPU.
  char path[] = "/tmp/tilec-capi-bad-bundle-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "not a bundle", 12), 12);
  ::close(fd);
  tilec_runtime_options fromFile;
  initOptions(&fromFile);
  fromFile.bundle_path = path;
  EXPECT_EQ(createWith(&fromFile, &runtime), TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(lastError()).find("not a tilec bundle"),
            std::string::npos)
      << lastError();
  EXPECT_EQ(runtime, nullptr);
  // TILEC_BUNDLE is opened, and a bad one named, before the driver too,
  // unless the options give a bundle of their own.
  ::setenv("TILEC_BUNDLE", "/nonexistent/env.bundle", 1);
  auto create =
      function<decltype(tilec_runtime_create)>("tilec_runtime_create");
  EXPECT_EQ(create(&runtime), TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(lastError()).find("TILEC_BUNDLE"), std::string::npos)
      << lastError();
  EXPECT_EQ(createWith(&fromFile, &runtime), TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(lastError()).find("not a tilec bundle"),
            std::string::npos)
      << lastError();
  EXPECT_EQ(std::string(lastError()).find("TILEC_BUNDLE"), std::string::npos)
      << lastError();
  ::unsetenv("TILEC_BUNDLE");
  EXPECT_EQ(runtime, nullptr);
  ::unlink(path);
  auto load = function<decltype(tilec_kernel_load)>("tilec_kernel_load");
  auto launch = function<decltype(tilec_kernel_launch)>("tilec_kernel_launch");
  auto setInt =
      function<decltype(tilec_kernel_set_int)>("tilec_kernel_set_int");
  tilec_kernel *kernel = nullptr;
  EXPECT_EQ(load(nullptr, "", 0, "{}", &kernel), TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(lastError()).find("must not be NULL"),
            std::string::npos);
  EXPECT_EQ(kernel, nullptr);
  EXPECT_EQ(setInt(nullptr, 0, 1), TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(launch(nullptr, 1, 1, 1, nullptr), TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(lastError()).find("kernel must not be NULL"),
            std::string::npos);
}

// A layer plan is checked before the runtime: a wrong one is named on any
// machine, and a right one without a runtime is refused for the runtime.
TEST_F(CApiTest, LayerPlansAreCheckedBeforeTheRuntime) {
  auto plan = function<decltype(tilec_compile_layers_ahead)>(
      "tilec_compile_layers_ahead");
  auto lastError = function<decltype(tilec_last_error)>("tilec_last_error");
  tilec_conv_layer_plan layers[2] = {};
  for (tilec_conv_layer_plan &layer : layers) {
    layer.voxels = 15192;
    layer.ci = layer.co = 32;
    for (int axis = 0; axis < 3; ++axis)
      layer.kernel[axis] = 3, layer.dilation[axis] = 1;
    layer.dtype = TILEC_F16;
    layer.input_gradient = layer.weight_gradient = 1;
  }
  size_t queued = 99;
  EXPECT_EQ(plan(nullptr, layers, 2, &queued), TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(lastError(), "runtime must not be NULL");
  EXPECT_EQ(plan(nullptr, nullptr, 1, &queued), TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(lastError(), "layers must not be NULL");
  layers[1].kernel[2] = 2;
  EXPECT_EQ(plan(nullptr, layers, 2, &queued), TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(lastError(), "layer plan 1: the kernel size along z must be "
                            "odd, 1 to 7, got 2");
  layers[1].strided = 1;
  EXPECT_EQ(plan(nullptr, layers, 2, &queued), TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(lastError(), "runtime must not be NULL");
  layers[1].dtype = static_cast<tilec_dtype>(7);
  EXPECT_EQ(plan(nullptr, layers, 2, &queued), TILEC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(lastError(), "layer plan 1: dtype 7 is not TILEC_F16, "
                            "TILEC_BF16 or TILEC_F32");
  EXPECT_EQ(queued, 99u);
}

TEST_F(CApiTest, WithoutAGpuTheRuntimeSaysSo) {
  auto create =
      function<decltype(tilec_runtime_create)>("tilec_runtime_create");
  auto destroy =
      function<decltype(tilec_runtime_destroy)>("tilec_runtime_destroy");
  auto lastError = function<decltype(tilec_last_error)>("tilec_last_error");
  tilec_runtime *runtime = nullptr;
  tilec_status status = create(&runtime);
  if (status == TILEC_OK) {
    destroy(runtime);
    GTEST_SKIP() << "a GPU is present";
  }
  EXPECT_EQ(status, TILEC_ERROR_DEVICE);
  EXPECT_FALSE(std::string(lastError()).empty());
}

} // namespace
