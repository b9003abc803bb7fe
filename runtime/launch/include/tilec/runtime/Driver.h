//===- Driver.h - The CUDA driver, loaded at run time -----------*- C++ -*-===//
//
// Part of tilec_runtime, the launch library.
//
// libcuda is opened with dlopen instead of being linked: a program linked with
// -lcuda is killed by the loader before main() on a machine without a driver,
// while a dlopen failure is an ordinary error the caller can report or skip on.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_DRIVER_H
#define TILEC_RUNTIME_DRIVER_H

#include "tilec/contract/Status.h"

#include <cuda.h>

#include <memory>
#include <string>

namespace tilec::rt {

// Every driver entry point the runtime uses. cuda.h maps many names to their
// current ABI version with macros (cuMemAlloc -> cuMemAlloc_v2), so the member
// declared from `cuMemAlloc` gets the prototype of the version this header
// describes, and is resolved by that exported name (cuMemAlloc_v2).
#define TILEC_RT_DRIVER_FUNCTIONS(X)                                           \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDeviceTotalMem)                                                          \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease)                                                 \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxGetCurrent)                                                           \
  X(cuCtxSynchronize)                                                          \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemHostAlloc)                                                            \
  X(cuMemFreeHost)                                                             \
  X(cuMemcpyHtoD)                                                              \
  X(cuMemcpyDtoH)                                                              \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemcpyDtoHAsync)                                                         \
  X(cuMemcpyDtoDAsync)                                                         \
  X(cuMemsetD8)                                                                \
  X(cuMemsetD32)                                                               \
  X(cuMemsetD8Async)                                                           \
  X(cuMemsetD32Async)                                                          \
  X(cuMemPoolCreate)                                                           \
  X(cuMemPoolDestroy)                                                          \
  X(cuMemPoolSetAttribute)                                                     \
  X(cuMemPoolTrimTo)                                                           \
  X(cuMemAllocFromPoolAsync)                                                   \
  X(cuMemFreeAsync)                                                            \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuStreamWaitEvent)                                                         \
  X(cuEventElapsedTime)                                                        \
  X(cuModuleLoadData)                                                          \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncGetAttribute)                                                        \
  X(cuFuncSetAttribute)                                                        \
  X(cuFuncGetParamInfo)                                                        \
  X(cuTensorMapEncodeTiled)                                                    \
  X(cuLaunchKernel)                                                            \
  X(cuGraphCreate)                                                             \
  X(cuGraphAddKernelNode)                                                      \
  X(cuGraphAddMemsetNode)                                                      \
  X(cuGraphInstantiate)                                                        \
  X(cuGraphLaunch)                                                             \
  X(cuGraphExecKernelNodeSetParams)                                            \
  X(cuGraphExecDestroy)                                                        \
  X(cuGraphDestroy)

struct DriverApi {
#define TILEC_RT_DECLARE_DRIVER_FUNCTION(name) decltype(&::name) name = nullptr;
  TILEC_RT_DRIVER_FUNCTIONS(TILEC_RT_DECLARE_DRIVER_FUNCTION)
#undef TILEC_RT_DECLARE_DRIVER_FUNCTION
};

// "CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid)". Falls back to a
// built-in table when the driver cannot name the code (the toolkit's stub
// library answers every call, cuGetErrorName included, with an error).
std::string describeCudaError(const DriverApi *api, CUresult result);

class Driver {
public:
  // The process-wide driver: libcuda.so.1 opened, resolved and cuInit'ed once,
  // on first use, thread-safely. A failure is cached too, so every caller sees
  // the same message ("no CUDA driver: ...", "cuInit failed: ...").
  static Result<const Driver *> get();

  // Opens and resolves `library` without calling cuInit and without caching.
  // For tests (a missing library, the toolkit's stub) and for tools that time
  // the start-up steps separately.
  static Result<std::unique_ptr<Driver>> load(const std::string &library);

  // cuInit(0). Needed once per process before any other call.
  Status initialize() const;

  const DriverApi &api() const { return api_; }
  const std::string &library() const { return library_; }

  // Success when `result` is CUDA_SUCCESS, else "<call> failed: <name>
  // (<description>)". Inline so that the success path costs one compare.
  Status check(CUresult result, const char *call) const {
    if (result == CUDA_SUCCESS)
      return Status::success();
    return failure(result, call);
  }
  Status failure(CUresult result, const std::string &call) const;

  Driver(const Driver &) = delete;
  Driver &operator=(const Driver &) = delete;

private:
  Driver() = default;

  std::string library_;
  DriverApi api_;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_DRIVER_H
