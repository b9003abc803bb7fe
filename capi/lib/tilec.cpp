//===- tilec.cpp - tilec's C API over the runtime and the JIT -------------===//
//
// Every entry point catches nothing and throws nothing (the libraries do not
// use exceptions); errors go to the thread's last-error message.
//
//===----------------------------------------------------------------------===//

#include "tilec/tilec.h"

#include "tilec/JIT/TilecJIT.h"
#include "tilec/runtime/Bundle.h"
#include "tilec/runtime/Context.h"
#include "tilec/runtime/Driver.h"
#include "tilec/runtime/Launch.h"
#include "tilec/runtime/Module.h"
#include "tilec/runtime/Session.h"
#include "tilec/sparse/SparseConv.h"
#include "tilec/sparse/VoxelScenes.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>

using namespace tilec;

struct tilec_runtime {
  std::unique_ptr<rt::Session> session;

  rt::Context &context() { return session->context(); }
  sparse::SparseEngine &engine() { return session->sparse(); }
};

struct tilec_kernel {
  tilec_runtime *runtime;
  rt::Kernel kernel;
  rt::ArgPack args;
};

struct tilec_sparse_tensor {
  tilec_runtime *runtime;
  sparse::SparseTensor tensor;
};

namespace {

thread_local std::string lastError;

tilec_status fail(tilec_status status, const std::string &message) {
  lastError = message;
  return status;
}

tilec_status succeed() {
  lastError.clear();
  return TILEC_OK;
}

// The runtime's context, current on the calling thread for one call, and
// the context that was current before current again after it: a call may
// come from any thread (PyTorch runs autograd's backward on threads of its
// own, where no context is current), and the CUDA runtime's current device
// (torch.cuda.current_device()) follows the current context, so a call on
// cuda:1 must not leave device 1 current for the caller.
class EnteredContext {
public:
  explicit EnteredContext(const rt::Context &context)
      : EnteredContext(context.driver()) {
    if (!status_.ok() || previous_ == context.handle()) {
      restore_ = false;
      return;
    }
    status_ = context.makeCurrent();
    restore_ = status_.ok();
  }
  // Only keeps the caller's context, for a step that makes a context of its
  // own current (Session::create).
  explicit EnteredContext(const rt::Driver &driver) : driver_(driver) {
    status_ = driver_.check(driver_.api().cuCtxGetCurrent(&previous_),
                            "cuCtxGetCurrent");
    restore_ = status_.ok();
  }
  ~EnteredContext() {
    if (restore_)
      (void)driver_.api().cuCtxSetCurrent(previous_);
  }
  EnteredContext(const EnteredContext &) = delete;
  EnteredContext &operator=(const EnteredContext &) = delete;

  const Status &status() const { return status_; }

private:
  const rt::Driver &driver_;
  CUcontext previous_ = nullptr;
  bool restore_ = false;
  Status status_;
};

// Statuses of the libraries do not carry a category: an invalid-argument
// check comes first in each entry point, so what fails later is the device,
// the input or the compiler, told apart by the message's origin.
/// `status`'s own kind where the error has one, else what the call's context
/// implies (`fallback`).
tilec_status failFrom(const Status &status, tilec_status fallback) {
  switch (status.kind()) {
  case ErrorKind::InvalidArgument:
    return fail(TILEC_ERROR_INVALID_ARGUMENT, status.message());
  case ErrorKind::InvalidInput:
    return fail(TILEC_ERROR_INVALID_INPUT, status.message());
  case ErrorKind::Device:
    return fail(TILEC_ERROR_DEVICE, status.message());
  case ErrorKind::Compile:
  case ErrorKind::Resources:
    return fail(TILEC_ERROR_COMPILE, status.message());
  case ErrorKind::Unspecified:
    break;
  }
  return fail(fallback, status.message());
}

tilec_status readDType(tilec_dtype dtype, sparse::DType &out) {
  switch (dtype) {
  case TILEC_F16:
    out = sparse::DType::F16;
    return TILEC_OK;
  case TILEC_BF16:
    out = sparse::DType::BF16;
    return TILEC_OK;
  case TILEC_F32:
    out = sparse::DType::F32;
    return TILEC_OK;
  }
  return fail(TILEC_ERROR_INVALID_ARGUMENT,
              "dtype " + std::to_string(int(dtype)) +
                  " is not TILEC_F16, TILEC_BF16 or TILEC_F32");
}

rt::DevicePtr deviceAddress(const void *pointer) {
  return rt::DevicePtr{reinterpret_cast<CUdeviceptr>(pointer)};
}

tilec_status returnCloud(const sparse::VoxelCloud &cloud, int32_t **coords,
                         int64_t *n) {
  if (!coords || !n)
    return fail(TILEC_ERROR_INVALID_ARGUMENT, "coords and n must not be NULL");
  size_t bytes = std::max<size_t>(cloud.coords.size(), 1) * sizeof(int32_t);
  *coords = static_cast<int32_t *>(std::malloc(bytes));
  if (!*coords)
    return fail(TILEC_ERROR_INTERNAL, "out of host memory");
  std::memcpy(*coords, cloud.coords.data(),
              cloud.coords.size() * sizeof(int32_t));
  *n = cloud.size();
  return succeed();
}

/// One argument of a loaded kernel set by `set`, its refusal the caller's.
template <typename Set>
tilec_status setArgument(tilec_kernel *kernel, Set set) {
  if (!kernel)
    return fail(TILEC_ERROR_INVALID_ARGUMENT, "kernel must not be NULL");
  Status status = set(kernel->args);
  return status.ok() ? succeed()
                     : failFrom(status, TILEC_ERROR_INVALID_ARGUMENT);
}

} // namespace

extern "C" {

const char *tilec_last_error(void) { return lastError.c_str(); }

const char *tilec_version(void) { return TILEC_VERSION; }

void tilec_runtime_options_init(tilec_runtime_options *options) {
  if (!options)
    return;
  std::memset(options, 0, sizeof(*options));
  options->size = sizeof(*options);
}

tilec_status tilec_runtime_create(tilec_runtime **runtime) {
  return tilec_runtime_create_with_options(nullptr, runtime);
}

tilec_status
tilec_runtime_create_with_options(const tilec_runtime_options *given,
                                  tilec_runtime **runtime) {
  if (!runtime)
    return fail(TILEC_ERROR_INVALID_ARGUMENT, "runtime must not be NULL");
  // The caller's struct may be shorter (built against an older header):
  // the fields past its size keep their defaults.
  tilec_runtime_options options;
  tilec_runtime_options_init(&options);
  if (given) {
    // The struct of some version of the header: it ends after one of the
    // fields (or is a later, longer one).
    const size_t fieldEnds[] = {
        offsetof(tilec_runtime_options, device) + sizeof(int),
        offsetof(tilec_runtime_options, bundle_path) + sizeof(const char *),
        offsetof(tilec_runtime_options, embedded_bundle) + sizeof(void *),
        offsetof(tilec_runtime_options, allow_jit) + sizeof(int)};
    if (given->size < sizeof(options) &&
        std::find(std::begin(fieldEnds), std::end(fieldEnds), given->size) ==
            std::end(fieldEnds))
      return fail(TILEC_ERROR_INVALID_ARGUMENT,
                  "tilec_runtime_options.size is " +
                      std::to_string(given->size) +
                      ", which no version of the struct has: call "
                      "tilec_runtime_options_init on the struct before "
                      "setting its fields");
    std::memcpy(&options, given, std::min(given->size, sizeof(options)));
    options.size = sizeof(options);
  }
  if (options.device < 0)
    return fail(TILEC_ERROR_INVALID_ARGUMENT,
                "device " + std::to_string(options.device) +
                    " is not a device ordinal");
  if (options.bundle_path && options.embedded_bundle)
    return fail(TILEC_ERROR_INVALID_ARGUMENT,
                "give a bundle file or an embedded bundle, not both");
  // The bundles (the options' and TILEC_BUNDLE's) are checked before the
  // driver is touched: a bad one gives the same error with or without a GPU.
  // The caller's bundle wins over TILEC_BUNDLE, which is then not opened.
  rt::Environment environment = rt::readEnvironment();
  if (options.bundle_path || options.embedded_bundle)
    environment.bundle.clear();
  auto sessionOptions = rt::SessionOptions::fromEnvironment(environment);
  if (!sessionOptions)
    return failFrom(sessionOptions.status(), TILEC_ERROR_INVALID_ARGUMENT);
  if (options.bundle_path || options.embedded_bundle) {
    auto opened =
        options.bundle_path
            ? rt::KernelBundle::open(options.bundle_path)
            : rt::KernelBundle::fromEmbedded(*options.embedded_bundle);
    if (!opened)
      return failFrom(opened.status(), TILEC_ERROR_INVALID_ARGUMENT);
    sessionOptions->bundle = std::move(*opened);
    sessionOptions->bundlePolicy = options.allow_jit
                                       ? rt::BundlePolicy::FallBack
                                       : rt::BundlePolicy::Strict;
  }
  sessionOptions->device = options.device;
  sessionOptions->compiler = jit::compilerFactory();
  sessionOptions->tuning.progress = rt::ProgressMode::Never;
  // Session::create makes the device's context current; the caller's is
  // current again after it. Without a driver, create says so itself.
  Result<const rt::Driver *> driver = rt::Driver::get();
  std::optional<EnteredContext> callers;
  if (driver)
    callers.emplace(**driver);
  auto session = rt::Session::create(std::move(*sessionOptions));
  if (!session)
    return failFrom(session.status(), TILEC_ERROR_DEVICE);
  *runtime = new tilec_runtime{std::move(*session)};
  return succeed();
}

void tilec_runtime_destroy(tilec_runtime *runtime) {
  if (!runtime)
    return;
  // The session frees its buffers and modules in its device's context.
  EnteredContext entered(runtime->context());
  delete runtime;
}

tilec_status tilec_kernel_load(tilec_runtime *runtime, const void *cubin,
                               size_t cubin_size, const char *metadata,
                               tilec_kernel **kernel) {
  if (!runtime || !cubin || !metadata || !kernel)
    return fail(TILEC_ERROR_INVALID_ARGUMENT,
                "runtime, cubin, metadata and kernel must not be NULL");
  auto parsed = CompileMetadata::parse(metadata);
  if (!parsed)
    return failFrom(parsed.status(), TILEC_ERROR_INVALID_ARGUMENT);
  EnteredContext entered(runtime->context());
  if (!entered.status().ok())
    return failFrom(entered.status(), TILEC_ERROR_DEVICE);
  auto module = rt::Module::loadCubin(runtime->context(), cubin, cubin_size);
  if (!module)
    return failFrom(module.status(), TILEC_ERROR_DEVICE);
  auto loaded =
      rt::Kernel::create(runtime->context(), *module, std::move(*parsed));
  if (!loaded)
    return failFrom(loaded.status(), TILEC_ERROR_DEVICE);
  auto args = loaded->makeArgPack();
  if (!args)
    return failFrom(args.status(), TILEC_ERROR_INVALID_ARGUMENT);
  *kernel = new tilec_kernel{runtime, std::move(*loaded), std::move(*args)};
  return succeed();
}

void tilec_kernel_destroy(tilec_kernel *kernel) {
  if (!kernel)
    return;
  EnteredContext entered(kernel->runtime->context());
  delete kernel;
}

tilec_status tilec_kernel_set_pointer(tilec_kernel *kernel, size_t index,
                                      const void *value) {
  return setArgument(kernel, [&](rt::ArgPack &args) {
    return args.setPointer(index,
                           rt::DevicePtr{reinterpret_cast<CUdeviceptr>(value)});
  });
}

tilec_status tilec_kernel_set_int(tilec_kernel *kernel, size_t index,
                                  int64_t value) {
  return setArgument(
      kernel, [&](rt::ArgPack &args) { return args.setInt(index, value); });
}

tilec_status tilec_kernel_set_float(tilec_kernel *kernel, size_t index,
                                    double value) {
  return setArgument(
      kernel, [&](rt::ArgPack &args) { return args.setFloat(index, value); });
}

tilec_status tilec_kernel_launch(tilec_kernel *kernel, uint32_t grid_x,
                                 uint32_t grid_y, uint32_t grid_z,
                                 void *stream) {
  if (!kernel)
    return fail(TILEC_ERROR_INVALID_ARGUMENT, "kernel must not be NULL");
  EnteredContext entered(kernel->runtime->context());
  if (!entered.status().ok())
    return failFrom(entered.status(), TILEC_ERROR_DEVICE);
  Status launched = rt::launch(kernel->kernel, rt::Dim3{grid_x, grid_y, grid_z},
                               kernel->args, static_cast<CUstream>(stream));
  return launched.ok() ? succeed() : failFrom(launched, TILEC_ERROR_DEVICE);
}

tilec_status tilec_sparse_tensor_create(tilec_runtime *runtime,
                                        const int32_t *coords, int64_t n,
                                        tilec_sparse_tensor **tensor) {
  if (!runtime || !tensor)
    return fail(TILEC_ERROR_INVALID_ARGUMENT,
                "runtime and tensor must not be NULL");
  EnteredContext entered(runtime->context());
  if (!entered.status().ok())
    return failFrom(entered.status(), TILEC_ERROR_DEVICE);
  auto created = sparse::SparseTensor::create(
      runtime->engine(), rt::DevicePtr{reinterpret_cast<CUdeviceptr>(coords)},
      n);
  if (!created)
    return failFrom(created.status(), TILEC_ERROR_INVALID_ARGUMENT);
  *tensor = new tilec_sparse_tensor{runtime, std::move(*created)};
  return succeed();
}

void tilec_sparse_tensor_destroy(tilec_sparse_tensor *tensor) {
  if (!tensor)
    return;
  // The maps' frees are queued on the runtime's context.
  EnteredContext entered(tensor->runtime->context());
  delete tensor;
}

tilec_status tilec_sparse_tensor_set_row_order(tilec_sparse_tensor *tensor,
                                               tilec_row_order order) {
  if (!tensor)
    return fail(TILEC_ERROR_INVALID_ARGUMENT, "tensor must not be NULL");
  if (order != TILEC_ROW_ORDER_KEY && order != TILEC_ROW_ORDER_LEAN_GROUPS &&
      order != TILEC_ROW_ORDER_AUTO)
    return fail(TILEC_ERROR_INVALID_ARGUMENT,
                "row order " + std::to_string(static_cast<int>(order)) +
                    " is not TILEC_ROW_ORDER_KEY, TILEC_ROW_ORDER_LEAN_GROUPS "
                    "or TILEC_ROW_ORDER_AUTO");
  Status set = tensor->tensor.setRowOrder(
      order == TILEC_ROW_ORDER_KEY           ? sparse::RowOrder::Key
      : order == TILEC_ROW_ORDER_LEAN_GROUPS ? sparse::RowOrder::LeanGroups
                                             : sparse::RowOrder::Auto);
  if (!set.ok())
    return failFrom(set, TILEC_ERROR_INVALID_ARGUMENT);
  return succeed();
}

namespace {
// The maps of a cubic window for each of `blockRows`, then the stream
// synchronized.
tilec_status buildMapsOf(tilec_sparse_tensor *tensor, int32_t kernelSize,
                         int32_t dilation,
                         const std::vector<int64_t> &blockRows, void *stream) {
  EnteredContext entered(tensor->runtime->context());
  if (!entered.status().ok())
    return failFrom(entered.status(), TILEC_ERROR_DEVICE);
  if (Status built = tensor->tensor.buildRowBlockMaps(
          sparse::Window::cube(kernelSize, dilation), blockRows,
          static_cast<CUstream>(stream));
      !built.ok())
    return failFrom(built, TILEC_ERROR_INVALID_INPUT);
  if (Status synced =
          tensor->runtime->engine().synchronize(static_cast<CUstream>(stream));
      !synced.ok())
    return failFrom(synced, TILEC_ERROR_DEVICE);
  return succeed();
}
} // namespace

tilec_status tilec_sparse_tensor_build_maps(tilec_sparse_tensor *tensor,
                                            int32_t kernel_size,
                                            int32_t dilation, void *stream) {
  if (!tensor)
    return fail(TILEC_ERROR_INVALID_ARGUMENT, "tensor must not be NULL");
  return buildMapsOf(tensor, kernel_size, dilation,
                     sparse::convRowBlocks(tensor->tensor.voxels()), stream);
}

tilec_status tilec_sparse_tensor_build_maps_rows(tilec_sparse_tensor *tensor,
                                                 int32_t kernel_size,
                                                 int32_t dilation,
                                                 int32_t block_rows,
                                                 void *stream) {
  if (!tensor)
    return fail(TILEC_ERROR_INVALID_ARGUMENT, "tensor must not be NULL");
  const std::vector<int64_t> &tuned =
      sparse::convRowBlocks(tensor->tensor.voxels());
  if (std::find(tuned.begin(), tuned.end(), block_rows) == tuned.end()) {
    std::string sizes;
    for (int64_t rows : tuned)
      sizes += (sizes.empty() ? "" : " or ") + std::to_string(rows);
    return fail(TILEC_ERROR_INVALID_ARGUMENT,
                "block_rows is " + std::to_string(block_rows) +
                    "; a convolution of " +
                    std::to_string(tensor->tensor.voxels()) +
                    " voxels runs row blocks of " + sizes + " rows");
  }
  return buildMapsOf(tensor, kernel_size, dilation, {block_rows}, stream);
}

tilec_status tilec_sparse_tensor_active_pairs(tilec_sparse_tensor *tensor,
                                              int32_t kernel_size,
                                              int32_t dilation,
                                              int64_t *pairs) {
  if (!tensor || !pairs)
    return fail(TILEC_ERROR_INVALID_ARGUMENT,
                "tensor and pairs must not be NULL");
  EnteredContext entered(tensor->runtime->context());
  if (!entered.status().ok())
    return failFrom(entered.status(), TILEC_ERROR_DEVICE);
  auto maps = tensor->tensor.maps(
      kernel_size, dilation,
      sparse::convRowBlocks(tensor->tensor.voxels()).front(), nullptr);
  if (!maps)
    return failFrom(maps.status(), TILEC_ERROR_INVALID_INPUT);
  *pairs = (*maps)->map->activePairs;
  return succeed();
}

namespace {

// A window from the C API's arrays, or an error.
tilec_status readWindow(const int32_t *kernel, const int32_t *dilation,
                        sparse::Window &window) {
  if (!kernel || !dilation)
    return fail(TILEC_ERROR_INVALID_ARGUMENT,
                "kernel and dilation must not be NULL");
  for (int axis = 0; axis < 3; ++axis) {
    window.kernel[axis] = kernel[axis];
    window.dilation[axis] = dilation[axis];
  }
  return TILEC_OK;
}

} // namespace

tilec_status tilec_submanifold_conv3d(tilec_sparse_tensor *tensor,
                                      const void *x, const void *weight,
                                      const void *bias, void *y, int32_t ci,
                                      int32_t co, int32_t kernel_size,
                                      int32_t dilation, tilec_dtype dtype,
                                      int32_t allow_tf32, void *stream) {
  int32_t kernel[3] = {kernel_size, kernel_size, kernel_size};
  int32_t dilations[3] = {dilation, dilation, dilation};
  return tilec_submanifold_conv3d_window(tensor, x, weight, bias, y, ci, co,
                                         kernel, dilations, dtype, allow_tf32,
                                         stream);
}

tilec_status tilec_submanifold_conv3d_window(
    tilec_sparse_tensor *tensor, const void *x, const void *weight,
    const void *bias, void *y, int32_t ci, int32_t co, const int32_t kernel[3],
    const int32_t dilation[3], tilec_dtype dtype, int32_t allow_tf32,
    void *stream) {
  if (!tensor)
    return fail(TILEC_ERROR_INVALID_ARGUMENT, "tensor must not be NULL");
  sparse::ConvArguments arguments;
  if (tilec_status read = readWindow(kernel, dilation, arguments.window);
      read != TILEC_OK)
    return read;
  EnteredContext entered(tensor->runtime->context());
  if (!entered.status().ok())
    return failFrom(entered.status(), TILEC_ERROR_DEVICE);
  if (tilec_status read = readDType(dtype, arguments.dtype); read != TILEC_OK)
    return read;
  arguments.x = deviceAddress(x);
  arguments.weight = deviceAddress(weight);
  arguments.bias = deviceAddress(bias);
  arguments.y = deviceAddress(y);
  arguments.ci = ci;
  arguments.co = co;
  arguments.allowTf32 = allow_tf32 != 0;
  Status status =
      sparse::submanifoldConv3d(tensor->runtime->engine(), tensor->tensor,
                                arguments, static_cast<CUstream>(stream));
  if (!status.ok())
    return failFrom(status, TILEC_ERROR_INTERNAL);
  return succeed();
}

tilec_status tilec_submanifold_conv3d_backward(
    tilec_sparse_tensor *tensor, const void *x, const void *weight,
    const void *dy, void *dx, void *dw, void *db, int32_t ci, int32_t co,
    int32_t kernel_size, int32_t dilation, tilec_dtype dtype,
    int32_t allow_tf32, int32_t weight_grad_f32, void *stream) {
  int32_t kernel[3] = {kernel_size, kernel_size, kernel_size};
  int32_t dilations[3] = {dilation, dilation, dilation};
  return tilec_submanifold_conv3d_window_backward(
      tensor, x, weight, dy, dx, dw, db, ci, co, kernel, dilations, dtype,
      allow_tf32, weight_grad_f32, stream);
}

tilec_status tilec_submanifold_conv3d_window_backward(
    tilec_sparse_tensor *tensor, const void *x, const void *weight,
    const void *dy, void *dx, void *dw, void *db, int32_t ci, int32_t co,
    const int32_t kernel[3], const int32_t dilation[3], tilec_dtype dtype,
    int32_t allow_tf32, int32_t weight_grad_f32, void *stream) {
  if (!tensor)
    return fail(TILEC_ERROR_INVALID_ARGUMENT, "tensor must not be NULL");
  sparse::ConvBackwardArguments arguments;
  sparse::ConvArguments &forward = arguments.forward;
  if (tilec_status read = readWindow(kernel, dilation, forward.window);
      read != TILEC_OK)
    return read;
  EnteredContext entered(tensor->runtime->context());
  if (!entered.status().ok())
    return failFrom(entered.status(), TILEC_ERROR_DEVICE);
  if (tilec_status read = readDType(dtype, forward.dtype); read != TILEC_OK)
    return read;
  forward.x = deviceAddress(x);
  forward.weight = deviceAddress(weight);
  forward.ci = ci;
  forward.co = co;
  forward.allowTf32 = allow_tf32 != 0;
  arguments.dy = deviceAddress(dy);
  arguments.dx = deviceAddress(dx);
  arguments.dw = deviceAddress(dw);
  arguments.db = deviceAddress(db);
  arguments.weightGradF32 = weight_grad_f32 != 0;
  Status status = sparse::submanifoldConv3dBackward(
      tensor->runtime->engine(), tensor->tensor, arguments,
      static_cast<CUstream>(stream));
  if (!status.ok())
    return failFrom(status, TILEC_ERROR_INTERNAL);
  return succeed();
}

tilec_status tilec_compile_layers_ahead(tilec_runtime *runtime,
                                        const tilec_conv_layer_plan *layers,
                                        size_t count, size_t *queued) {
  if (!layers && count > 0)
    return fail(TILEC_ERROR_INVALID_ARGUMENT, "layers must not be NULL");
  std::vector<sparse::LayerPlan> plans(count);
  for (size_t i = 0; i < count; ++i) {
    const tilec_conv_layer_plan &layer = layers[i];
    sparse::LayerPlan &plan = plans[i];
    sparse::DType dtype;
    if (tilec_status read = readDType(layer.dtype, dtype); read != TILEC_OK)
      return fail(read, "layer plan " + std::to_string(i) + ": " + lastError);
    plan.layer.dtype = sparse::dtypeName(dtype);
    plan.layer.voxels = layer.voxels;
    plan.layer.inChannels = layer.ci;
    plan.layer.outChannels = layer.co;
    for (int axis = 0; axis < 3; ++axis) {
      plan.layer.kernelSize[axis] = layer.kernel[axis];
      plan.layer.dilation[axis] = layer.dilation[axis];
      plan.stride[axis] = layer.stride[axis];
      plan.padding[axis] = layer.padding[axis];
    }
    plan.layer.bias = layer.has_bias != 0;
    plan.layer.allowTf32 = layer.allow_tf32 != 0;
    plan.strided = layer.strided != 0;
    plan.inputGradient = layer.input_gradient != 0;
    plan.weightGradient = layer.weight_gradient != 0;
  }
  // The plans first, so that a wrong one is named on any machine.
  if (auto calls = sparse::layerPlanCalls(plans); !calls)
    return failFrom(calls.status(), TILEC_ERROR_INVALID_ARGUMENT);
  if (!runtime)
    return fail(TILEC_ERROR_INVALID_ARGUMENT, "runtime must not be NULL");
  EnteredContext entered(runtime->context());
  if (!entered.status().ok())
    return failFrom(entered.status(), TILEC_ERROR_DEVICE);
  Result<size_t> done = sparse::compileLayersAhead(runtime->engine(), plans);
  if (!done)
    return failFrom(done.status(), TILEC_ERROR_INVALID_ARGUMENT);
  if (queued)
    *queued = *done;
  return succeed();
}

tilec_status tilec_retire_predictions(tilec_runtime *runtime, size_t *retired) {
  if (!runtime)
    return fail(TILEC_ERROR_INVALID_ARGUMENT, "runtime must not be NULL");
  EnteredContext entered(runtime->context());
  if (!entered.status().ok())
    return failFrom(entered.status(), TILEC_ERROR_DEVICE);
  size_t done = runtime->engine().retirePredictions();
  if (retired)
    *retired = done;
  return succeed();
}

namespace {

// The strided convolution a call names, checked for its pointers.
struct StridedCall {
  sparse::ConvGeometry geometry;
  std::array<int64_t, 3> shape{};
};

tilec_status readStrided(const tilec_conv_geometry *geometry,
                         const int64_t *spatialShape, StridedCall &call) {
  if (!geometry || !spatialShape)
    return fail(TILEC_ERROR_INVALID_ARGUMENT,
                "geometry and spatial_shape must not be NULL");
  for (int axis = 0; axis < 3; ++axis) {
    call.geometry.kernel[axis] = geometry->kernel[axis];
    call.geometry.stride[axis] = geometry->stride[axis];
    call.geometry.padding[axis] = geometry->padding[axis];
    call.geometry.dilation[axis] = geometry->dilation[axis];
    call.shape[axis] = spatialShape[axis];
  }
  return TILEC_OK;
}

// The forward convolution of a strided call, as the forward and the
// backward entry points read it (the backward finds the forward's maps).
tilec_status readStridedConv(const StridedCall &call, int64_t batches,
                             int32_t inverse, const void *x, const void *weight,
                             int32_t ci, int32_t co, tilec_dtype dtype,
                             int32_t allowTf32,
                             sparse::StridedConvArguments &out) {
  if (tilec_status read = readDType(dtype, out.conv.dtype); read != TILEC_OK)
    return read;
  out.conv.x = deviceAddress(x);
  out.conv.weight = deviceAddress(weight);
  out.conv.ci = ci;
  out.conv.co = co;
  out.conv.allowTf32 = allowTf32 != 0;
  out.geometry = call.geometry;
  out.spatialShape = call.shape;
  out.batches = batches;
  out.inverse = inverse != 0;
  return TILEC_OK;
}

// What the strided entry points do first, in this order: the tensor and
// the call checked, the runtime's context entered; then `body(call)`, in
// the context.
tilec_status
withStridedCall(tilec_sparse_tensor *tensor,
                const tilec_conv_geometry *geometry,
                const int64_t *spatialShape,
                const std::function<tilec_status(const StridedCall &)> &body) {
  if (!tensor)
    return fail(TILEC_ERROR_INVALID_ARGUMENT, "tensor must not be NULL");
  StridedCall call;
  if (tilec_status read = readStrided(geometry, spatialShape, call);
      read != TILEC_OK)
    return read;
  EnteredContext entered(tensor->runtime->context());
  if (!entered.status().ok())
    return failFrom(entered.status(), TILEC_ERROR_DEVICE);
  return body(call);
}

// withStridedCall, then the tensor's maps of that strided call (built on
// first use) for `body`.
tilec_status withStridedMaps(
    tilec_sparse_tensor *tensor, const tilec_conv_geometry *geometry,
    const int64_t *spatialShape, int64_t batches, void *stream,
    const std::function<tilec_status(const sparse::StridedMaps &)> &body) {
  return withStridedCall(
      tensor, geometry, spatialShape,
      [&](const StridedCall &call) -> tilec_status {
        auto maps = tensor->tensor.strided(call.geometry, call.shape, batches,
                                           static_cast<CUstream>(stream));
        if (!maps)
          return failFrom(maps.status(), TILEC_ERROR_INVALID_INPUT);
        return body(**maps);
      });
}

} // namespace

tilec_status tilec_sparse_tensor_strided(tilec_sparse_tensor *tensor,
                                         const tilec_conv_geometry *geometry,
                                         const int64_t spatial_shape[3],
                                         int64_t batches, void *stream,
                                         int64_t *outputs,
                                         int64_t output_shape[3]) {
  return withStridedMaps(tensor, geometry, spatial_shape, batches, stream,
                         [&](const sparse::StridedMaps &maps) -> tilec_status {
                           if (outputs)
                             *outputs = maps.outputs;
                           if (output_shape)
                             for (int axis = 0; axis < 3; ++axis)
                               output_shape[axis] = maps.outputShape[axis];
                           return succeed();
                         });
}

tilec_status tilec_sparse_tensor_strided_coords(
    tilec_sparse_tensor *tensor, const tilec_conv_geometry *geometry,
    const int64_t spatial_shape[3], int64_t batches, int32_t *coords,
    void *stream) {
  return withStridedMaps(
      tensor, geometry, spatial_shape, batches, stream,
      [&](const sparse::StridedMaps &maps) -> tilec_status {
        size_t bytes = 16 * size_t(maps.outputs);
        if (bytes == 0)
          return succeed();
        if (!coords)
          return fail(TILEC_ERROR_INVALID_ARGUMENT, "coords must not be NULL");
        const rt::Driver &driver = tensor->runtime->context().driver();
        Status copied = driver.check(
            driver.api().cuMemcpyDtoDAsync(deviceAddress(coords).address,
                                           maps.outCoords.address, bytes,
                                           static_cast<CUstream>(stream)),
            "cuMemcpyDtoDAsync");
        if (!copied.ok())
          return failFrom(copied, TILEC_ERROR_DEVICE);
        return succeed();
      });
}

tilec_status tilec_sparse_conv3d(tilec_sparse_tensor *tensor,
                                 const tilec_conv_geometry *geometry,
                                 const int64_t spatial_shape[3],
                                 int64_t batches, int32_t inverse,
                                 const void *x, const void *weight,
                                 const void *bias, void *y, int32_t ci,
                                 int32_t co, tilec_dtype dtype,
                                 int32_t allow_tf32, void *stream) {
  return withStridedCall(tensor, geometry, spatial_shape,
                         [&](const StridedCall &call) -> tilec_status {
                           sparse::StridedConvArguments arguments;
                           if (tilec_status read = readStridedConv(
                                   call, batches, inverse, x, weight, ci, co,
                                   dtype, allow_tf32, arguments);
                               read != TILEC_OK)
                             return read;
                           arguments.conv.bias = deviceAddress(bias);
                           arguments.conv.y = deviceAddress(y);
                           Status status = sparse::stridedConv3d(
                               tensor->runtime->engine(), tensor->tensor,
                               arguments, static_cast<CUstream>(stream));
                           if (!status.ok())
                             return failFrom(status, TILEC_ERROR_INTERNAL);
                           return succeed();
                         });
}

tilec_status tilec_sparse_conv3d_backward(
    tilec_sparse_tensor *tensor, const tilec_conv_geometry *geometry,
    const int64_t spatial_shape[3], int64_t batches, int32_t inverse,
    const void *x, const void *weight, const void *dy, void *dx, void *dw,
    void *db, int32_t ci, int32_t co, tilec_dtype dtype, int32_t allow_tf32,
    int32_t weight_grad_f32, void *stream) {
  return withStridedCall(tensor, geometry, spatial_shape,
                         [&](const StridedCall &call) -> tilec_status {
                           sparse::StridedConvBackwardArguments arguments;
                           if (tilec_status read = readStridedConv(
                                   call, batches, inverse, x, weight, ci, co,
                                   dtype, allow_tf32, arguments.forward);
                               read != TILEC_OK)
                             return read;
                           arguments.gradients.dy = deviceAddress(dy);
                           arguments.gradients.dx = deviceAddress(dx);
                           arguments.gradients.dw = deviceAddress(dw);
                           arguments.gradients.db = deviceAddress(db);
                           arguments.gradients.weightGradF32 =
                               weight_grad_f32 != 0;
                           Status status = sparse::stridedConv3dBackward(
                               tensor->runtime->engine(), tensor->tensor,
                               arguments, static_cast<CUstream>(stream));
                           if (!status.ok())
                             return failFrom(status, TILEC_ERROR_INTERNAL);
                           return succeed();
                         });
}

// What a sparse tensor holds at most (sparse::kVoxelLimit): a scene
// larger than that could not be used, and its generation would run for
// minutes or exhaust the host's memory.
constexpr int64_t kSceneVoxelLimit = sparse::kVoxelLimit;

tilec_status tilec_scene_shell(int32_t res, int32_t batch, int32_t **coords,
                               int64_t *n) {
  if (res < 1 || res > 4096 || batch < 1)
    return fail(TILEC_ERROR_INVALID_ARGUMENT,
                "res must be in [1, 4096] and batch at least 1");
  // A shell holds under 4 res^2 voxels a batch: bounded before any work.
  if (4 * int64_t(res) * res * batch > kSceneVoxelLimit)
    return fail(TILEC_ERROR_INVALID_ARGUMENT,
                "a shell of res " + std::to_string(res) + " in " +
                    std::to_string(batch) + " batches holds about " +
                    std::to_string(4 * int64_t(res) * res * batch) +
                    " voxels; a scene holds at most 2^28");
  return returnCloud(sparse::shellScene(res, batch), coords, n);
}

tilec_status tilec_scene_uniform(int64_t count, int32_t res, int32_t batch,
                                 uint64_t seed, int32_t **coords, int64_t *n) {
  if (count < 0 || res < 1 || res > 65536 || batch < 1)
    return fail(TILEC_ERROR_INVALID_ARGUMENT,
                "count >= 0, res in [1, 65536] and batch >= 1");
  int64_t perBatch = std::min(count, int64_t(res) * res * res);
  if (perBatch > kSceneVoxelLimit / batch)
    return fail(TILEC_ERROR_INVALID_ARGUMENT,
                std::to_string(perBatch) + " voxels in each of " +
                    std::to_string(batch) +
                    " batches: a scene holds at most 2^28 voxels");
  return returnCloud(sparse::uniformScene(count, res, batch, seed), coords, n);
}

tilec_status tilec_scene_lidar(uint64_t seed, int32_t **coords, int64_t *n) {
  return returnCloud(sparse::lidarScene(seed), coords, n);
}

void tilec_free(void *memory) { std::free(memory); }

} // extern "C"
