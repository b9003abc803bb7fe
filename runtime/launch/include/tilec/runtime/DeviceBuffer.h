//===- DeviceBuffer.h - Owned device memory ---------------------*- C++ -*-===//
//
// Part of tilec_runtime, the launch library.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_DEVICEBUFFER_H
#define TILEC_RUNTIME_DEVICEBUFFER_H

#include "tilec/runtime/Context.h"
#include "tilec/runtime/DevicePtr.h"
#include "tilec/contract/Status.h"

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tilec::rt {

class DeviceBuffer {
public:
  // cuMemAlloc; a zero-byte buffer is valid and has address 0, so that kernels
  // can be launched on empty problems without special cases.
  static Result<DeviceBuffer> allocate(const Context &context, size_t bytes);

  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  // Synchronous copies on the legacy default stream. A range outside the
  // buffer is an error, not a driver fault.
  Status copyFromHost(const void *source, size_t bytes, size_t offset = 0);
  Status copyToHost(void *destination, size_t bytes, size_t offset = 0) const;
  Status copyFromHostAsync(const void *source, size_t bytes, CUstream stream,
                           size_t offset = 0);
  Status copyToHostAsync(void *destination, size_t bytes, CUstream stream,
                         size_t offset = 0) const;

  template <typename T> Status copyFromHost(const std::vector<T> &source) {
    return copyFromHost(source.data(), source.size() * sizeof(T));
  }
  template <typename T> Status copyToHost(std::vector<T> &destination) const {
    return copyToHost(destination.data(), destination.size() * sizeof(T));
  }

  // Fill every byte / every 32-bit word, e.g. with NaN patterns to poison an
  // output before a kernel runs, so that unwritten elements are caught.
  Status memset8(uint8_t value);
  Status memset32(uint32_t value);
  // Every byte, ordered on `stream` (a stream that does not synchronize with
  // the legacy default stream sees it too).
  Status memset8Async(uint8_t value, CUstream stream);

  CUdeviceptr address() const { return address_; }
  DevicePtr ptr() const { return DevicePtr{address_}; }
  size_t size() const { return bytes_; }

private:
  DeviceBuffer(const Driver &driver, CUdeviceptr address, size_t bytes)
      : driver_(&driver), address_(address), bytes_(bytes) {}

  Status checkRange(const char *operation, size_t bytes, size_t offset) const;
  void release();

  const Driver *driver_;
  CUdeviceptr address_;
  size_t bytes_;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_DEVICEBUFFER_H
