//===- Launch.cpp - Launching a kernel ------------------------------------===//

#include "tilec/runtime/Launch.h"
#include "tilec/runtime/Driver.h"
#include "tilec/runtime/Stream.h"

namespace tilec::rt {
namespace {

// Kept out of line so that launch() stays small; runs only on failure.
[[gnu::cold, gnu::noinline]] Status argumentError(const Kernel &kernel,
                                                  const ArgPack &args) {
  const std::string what = "launch of '" + kernel.metadata().kernelName + "'";
  if (args.signatureHash() != kernel.signatureHash()) {
    std::string given;
    for (const KernelArg &arg : args.signature())
      given += (given.empty() ? "" : ", ") + std::string(argTypeName(arg.type));
    std::string expected;
    for (const KernelArg &arg : kernel.metadata().signature)
      expected +=
          (expected.empty() ? "" : ", ") + std::string(argTypeName(arg.type));
    // The maps are named only where there are some, or the types alone would
    // read as equal.
    size_t givenMaps = args.tensorMapCount();
    size_t expectedMaps = kernel.metadata().tensorMaps.size();
    if (givenMaps != 0 || expectedMaps != 0) {
      given += ") and " + std::to_string(givenMaps) + " tensor map(s";
      expected += ") and " + std::to_string(expectedMaps) + " tensor map(s";
    }
    return Status::error(ErrorKind::InvalidArgument,
                         what + ": the ArgPack was built for (" + given +
                             ") but the kernel takes (" + expected + ")");
  }
  std::string unset;
  for (size_t i = 0; i < args.size(); ++i)
    if (!args.isSet(i))
      unset += (unset.empty() ? "" : ", ") + args.signature()[i].name;
  return Status::error(ErrorKind::InvalidArgument,
                       what + ": argument(s) never set: " + unset);
}

[[gnu::cold, gnu::noinline]] Status launchError(const Kernel &kernel, Dim3 grid,
                                                CUresult result) {
  return kernel.driver()
      .failure(result, "cuLaunchKernel")
      .withContext("launch of '" + kernel.metadata().kernelName + "' (grid " +
                   std::to_string(grid.x) + "x" + std::to_string(grid.y) + "x" +
                   std::to_string(grid.z) + ", block " +
                   std::to_string(kernel.blockThreads()) + ", shared " +
                   std::to_string(kernel.sharedBytes()) + " bytes)");
}

// Out of line: a kernel without tensor maps pays one branch for them.
[[gnu::noinline]] Status encodeTensorMaps(const Kernel &kernel,
                                          const ArgPack &args) {
  return args.encodeTensorMaps(kernel.driver())
      .withContext("launch of '" + kernel.metadata().kernelName + "'");
}

// Built for the kernel's signature and tensor maps, every argument set.
inline bool argumentsFit(const Kernel &kernel, const ArgPack &args) {
  return args.signatureHash() == kernel.signatureHash() && args.complete();
}

} // namespace

Status checkLaunchArguments(const Kernel &kernel, const ArgPack &args) {
  if (!argumentsFit(kernel, args))
    return argumentError(kernel, args);
  return Status::success();
}

Status memsetAsync(const Driver &driver, CUdeviceptr address, uint32_t value,
                   unsigned elementBytes, size_t count, CUstream stream) {
  if (elementBytes == 1)
    return driver.check(
        driver.api().cuMemsetD8Async(address, static_cast<uint8_t>(value),
                                     count, stream),
        "cuMemsetD8Async");
  if (elementBytes == 4)
    return driver.check(
        driver.api().cuMemsetD32Async(address, value, count, stream),
        "cuMemsetD32Async");
  return Status::error(ErrorKind::InvalidArgument,
                       "a memset sets 1- or 4-byte elements");
}

Status launch(const Kernel &kernel, Dim3 grid, const ArgPack &args,
              CUstream stream) {
  if (__builtin_expect(!argumentsFit(kernel, args), 0))
    return argumentError(kernel, args);
  // The hash matched, so the pack has the kernel's maps.
  if (__builtin_expect(args.hasTensorMaps(), 0))
    TILEC_RETURN_IF_ERROR(encodeTensorMaps(kernel, args));
  CUresult result = kernel.driver().api().cuLaunchKernel(
      kernel.function(), grid.x, grid.y, grid.z, kernel.blockThreads(), 1, 1,
      kernel.sharedBytes(), stream, args.kernelParams(), nullptr);
  if (__builtin_expect(result != CUDA_SUCCESS, 0))
    return launchError(kernel, grid, result);
  return Status::success();
}

Status launch(const Kernel &kernel, Dim3 grid, const ArgPack &args,
              const Stream &stream) {
  return launch(kernel, grid, args, stream.handle());
}

} // namespace tilec::rt
