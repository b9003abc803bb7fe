//===- Launch.h - Launching a kernel ----------------------------*- C++ -*-===//
//
// Part of tilec_runtime, the launch library.
//
// The host cost of a launch is the driver's cuLaunchKernel plus three
// compares: everything else (block size, shared memory, the parameter array)
// was computed when the Kernel and the ArgPack were built. A kernel with TMA
// tensor maps adds four compares per map, and an encode of each map whose
// arguments changed since the last launch of the same ArgPack.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_LAUNCH_H
#define TILEC_RUNTIME_LAUNCH_H

#include "tilec/runtime/ArgPack.h"
#include "tilec/runtime/Module.h"
#include "tilec/contract/KernelDescription.h"
#include "tilec/contract/Status.h"

#include <cuda.h>

#include <cstdint>

namespace tilec::rt {

class Driver;
class Stream;

// The contract's grid type: a description evaluates it, the launch takes it.
using Dim3 = GridSize;

// Launches `kernel` on `grid` blocks of num_warps * 32 threads with the
// metadata's shared_bytes of dynamic shared memory. `args` must have been
// built for the kernel's signature and tensor maps (Kernel::makeArgPack) and
// have every argument set; the maps are encoded here
// (ArgPack::encodeTensorMaps), and a map that cannot be is refused before
// the driver launches anything.
Status launch(const Kernel &kernel, Dim3 grid, const ArgPack &args,
              CUstream stream = nullptr);
// What launch() checks of `args` before the driver sees them: built for
// the kernel's signature and tensor maps, every argument set (a launch
// sequence checks its steps so before it builds them into a graph).
Status checkLaunchArguments(const Kernel &kernel, const ArgPack &args);
// Queues a memset of `count` elements of `elementBytes` (1 or 4) bytes at
// `address` on `stream`: cuMemsetD8Async or cuMemsetD32Async.
Status memsetAsync(const Driver &driver, CUdeviceptr address, uint32_t value,
                   unsigned elementBytes, size_t count, CUstream stream);
Status launch(const Kernel &kernel, Dim3 grid, const ArgPack &args,
              const Stream &stream);

} // namespace tilec::rt

#endif // TILEC_RUNTIME_LAUNCH_H
