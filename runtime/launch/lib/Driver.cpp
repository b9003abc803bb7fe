//===- Driver.cpp - The CUDA driver, loaded at run time -------------------===//

#include "tilec/runtime/Driver.h"

#include <dlfcn.h>

#include <vector>

namespace tilec::rt {
namespace {

// The stringified argument of a macro after expansion: turns `cuMemAlloc`
// into "cuMemAlloc_v2", the exported name of the ABI version cuda.h declares.
#define TILEC_RT_STRINGIFY_EXPANDED(x) TILEC_RT_STRINGIFY(x)
#define TILEC_RT_STRINGIFY(x) #x

struct KnownError {
  CUresult code;
  const char *name;
  const char *description;
};

// Used only when the driver cannot describe its own error: the stub library
// answers cuGetErrorName with CUDA_ERROR_STUB_LIBRARY, and a half-loaded
// driver may lack the entry points. Descriptions are the driver's own words.
constexpr KnownError kKnownErrors[] = {
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
     "initialization error"},
    {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY",
     "CUDA driver is a stub library"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
     "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
     "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE",
     "device kernel image is invalid"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX",
     "a PTX JIT compilation failed"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "system has unsupported display driver / cuda driver combination"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

Result<const Driver *> loadProcessDriver() {
  Result<std::unique_ptr<Driver>> driver = Driver::load("libcuda.so.1");
  if (!driver)
    return driver.status();
  TILEC_RETURN_IF_ERROR((*driver)->initialize());
  // Never destroyed: unloading libcuda while its threads run, or during static
  // destruction after other objects released their resources, crashes.
  return static_cast<const Driver *>(driver->release());
}

} // namespace

std::string describeCudaError(const DriverApi *api, CUresult result) {
  const char *name = nullptr;
  const char *description = nullptr;
  if (api && api->cuGetErrorName &&
      api->cuGetErrorName(result, &name) != CUDA_SUCCESS)
    name = nullptr;
  if (api && api->cuGetErrorString &&
      api->cuGetErrorString(result, &description) != CUDA_SUCCESS)
    description = nullptr;
  for (const KnownError &known : kKnownErrors) {
    if (known.code != result)
      continue;
    if (!name)
      name = known.name;
    if (!description)
      description = known.description;
  }
  std::string text =
      name ? std::string(name) : "CUresult " + std::to_string(result);
  text += " (";
  text += description ? description : "no description from the driver";
  text += ")";
  return text;
}

Result<const Driver *> Driver::get() {
  static const Result<const Driver *> driver = loadProcessDriver();
  return driver;
}

Result<std::unique_ptr<Driver>> Driver::load(const std::string &library) {
  // The handle is never closed, for the same reason the process driver is
  // never destroyed; dlopen reference-counts repeated loads.
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *reason = dlerror();
    return Status::error(ErrorKind::Device,
                         "no CUDA driver: " + library + " not found (" +
                             (reason ? reason : "dlopen failed") + ")");
  }

  std::unique_ptr<Driver> driver(new Driver());
  driver->library_ = library;

  // Symbols are looked up by the exported name cuda.h declares (after its
  // versioning macros), never through cuGetProcAddress: asked for CUDA_VERSION,
  // cuGetProcAddress returns the newest ABI up to that version, which is not
  // always the prototype cuda.h declares under the name. With CUDA 13,
  // "cuCtxSynchronize" resolves to the 13.0 ABI taking a CUcontext while
  // cuda.h declares cuCtxSynchronize(void); calling it through the header's
  // prototype passes a garbage context (CUDA_ERROR_CONTEXT_IS_DESTROYED).
  std::vector<std::string> missing;
#define TILEC_RT_RESOLVE_DRIVER_FUNCTION(name)                                 \
  driver->api_.name = reinterpret_cast<decltype(driver->api_.name)>(           \
      dlsym(handle, TILEC_RT_STRINGIFY_EXPANDED(name)));                       \
  if (!driver->api_.name)                                                      \
    missing.push_back(TILEC_RT_STRINGIFY_EXPANDED(name));
  TILEC_RT_DRIVER_FUNCTIONS(TILEC_RT_RESOLVE_DRIVER_FUNCTION)
#undef TILEC_RT_RESOLVE_DRIVER_FUNCTION

  if (!missing.empty()) {
    std::string list;
    for (const std::string &name : missing)
      list += (list.empty() ? "" : ", ") + name;
    return Status::error(
        ErrorKind::Device,
        "CUDA driver " + library + " lacks entry points the runtime needs (" +
            list + "); it is older than CUDA " +
            std::to_string(CUDA_VERSION / 1000) + "." +
            std::to_string(CUDA_VERSION % 1000 / 10) + " or not a CUDA driver");
  }
  return driver;
}

Status Driver::initialize() const {
  CUresult result = api_.cuInit(0);
  if (result == CUDA_ERROR_STUB_LIBRARY)
    return Status::error(
        ErrorKind::Device,
        failure(result, "cuInit").message() + ": " + library_ +
            " is the CUDA toolkit's stub library, not a driver "
            "(is the NVIDIA driver installed?)");
  return check(result, "cuInit");
}

Status Driver::failure(CUresult result, const std::string &call) const {
  return Status::error(ErrorKind::Device,
                       call + " failed: " + describeCudaError(&api_, result));
}

} // namespace tilec::rt
