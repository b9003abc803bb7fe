//===- Device.h - A CUDA device and the limits kernels must fit -*- C++ -*-===//
//
// Part of tilec_runtime, the launch library.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_DEVICE_H
#define TILEC_RUNTIME_DEVICE_H

#include "tilec/runtime/Driver.h"
#include "tilec/contract/Status.h"

#include <cuda.h>

#include <cstddef>
#include <string>

namespace tilec::rt {

// Read once when the device is opened: kernel loading checks shared memory
// against these, the autotuner prunes configs with them, and caches key on
// the name and compute capability.
struct DeviceProperties {
  int ordinal = 0;
  std::string name;
  int computeMajor = 0;
  int computeMinor = 0;
  int multiprocessorCount = 0;
  // Without opting in (48 KiB) and with cuFuncSetAttribute's opt-in.
  int maxSharedBytesPerBlock = 0;
  int maxSharedBytesPerBlockOptin = 0;
  int maxRegistersPerBlock = 0;
  int maxThreadsPerBlock = 0;
  int l2CacheBytes = 0;
  size_t totalMemoryBytes = 0;

  // "sm_90", the device's compute capability.
  std::string smName() const;
  // The target tilec compiles for on this device, the compile json's
  // "target": smName(), with the "a" suffix on 9.0, whose arch-specific
  // features (wgmma) run only there; "interp" on the interpreter device
  // (tilec/contract/InterpreterDevice.h).
  std::string compileTarget() const;
};

class Device {
public:
  static Result<int> count(const Driver &driver);
  static Result<Device> get(const Driver &driver, int ordinal);

  CUdevice handle() const { return handle_; }
  const DeviceProperties &properties() const { return properties_; }

private:
  Device() = default;

  CUdevice handle_ = 0;
  DeviceProperties properties_;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_DEVICE_H
