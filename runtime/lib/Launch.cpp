//===- Launch.cpp - Launching a kernel ------------------------------------===//

#include "tilec/runtime/Launch.h"
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
    return Status::error(what + ": the ArgPack was built for (" + given +
                         ") but the kernel takes (" + expected + ")");
  }
  std::string unset;
  for (size_t i = 0; i < args.size(); ++i)
    if (!args.isSet(i))
      unset += (unset.empty() ? "" : ", ") + args.signature()[i].name;
  return Status::error(what + ": argument(s) never set: " + unset);
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

} // namespace

Status launch(const Kernel &kernel, Dim3 grid, const ArgPack &args,
              CUstream stream) {
  if (__builtin_expect(args.signatureHash() != kernel.signatureHash() ||
                           !args.complete(),
                       0))
    return argumentError(kernel, args);
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
