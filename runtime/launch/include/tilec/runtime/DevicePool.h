//===- DevicePool.h - Stream-ordered device memory of one pool --*- C++ -*-===//
//
// Part of tilec_runtime, the launch library.
//
// A CUDA memory pool of one device that keeps the memory freed to it, so
// that an allocation of a size met before maps nothing new: on the H200,
// cuMemAllocFromPoolAsync and cuMemFreeAsync cost a few microseconds where
// cuMemAlloc of a sparse tensor's maps took up to 250 us and cuMemFree
// waits for the whole device (docs/bench.md). Stream-ordered: memory is
// usable on the allocating stream at once and on another stream once that
// stream's work up to the allocation is done; a free happens when the work
// queued before it on its stream is done, so whoever frees orders it after
// every stream that used the memory (PoolBuffer::releaseOn). When the device
// is out of memory, the pool hands back what it keeps (cuMemPoolTrimTo) and
// tries once more. A device without memory pools gets cuMemAlloc and
// cuMemFree.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_DEVICEPOOL_H
#define TILEC_RUNTIME_DEVICEPOOL_H

#include "tilec/contract/Status.h"
#include "tilec/runtime/Context.h"
#include "tilec/runtime/DevicePtr.h"

#include <cuda.h>

#include <cstddef>
#include <memory>

namespace tilec::rt {

class DevicePool;

/// Memory of a DevicePool, freed by its destructor on the legacy default
/// stream (ordered after the work of every blocking stream) unless
/// releaseOn() freed it earlier.
class PoolBuffer {
public:
  PoolBuffer() = default;
  ~PoolBuffer() { releaseOn(nullptr); }
  PoolBuffer(PoolBuffer &&other) noexcept;
  PoolBuffer &operator=(PoolBuffer &&other) noexcept;
  PoolBuffer(const PoolBuffer &) = delete;
  PoolBuffer &operator=(const PoolBuffer &) = delete;

  CUdeviceptr address() const { return address_; }
  DevicePtr ptr() const { return DevicePtr{address_}; }
  size_t size() const { return bytes_; }

  /// Frees the memory once the work queued on `stream` so far is done.
  void releaseOn(CUstream stream);

private:
  friend class DevicePool;
  PoolBuffer(const Driver &driver, CUdeviceptr address, size_t bytes,
             bool pooled)
      : driver_(&driver), address_(address), bytes_(bytes), pooled_(pooled) {}

  const Driver *driver_ = nullptr;
  CUdeviceptr address_ = 0;
  size_t bytes_ = 0;
  bool pooled_ = false;
};

class DevicePool {
public:
  /// A pool of the context's device that keeps all it is given back.
  static Result<std::unique_ptr<DevicePool>> create(const Context &context);
  ~DevicePool();
  DevicePool(const DevicePool &) = delete;
  DevicePool &operator=(const DevicePool &) = delete;

  /// `bytes` (at least one) ordered on `stream`.
  Result<PoolBuffer> allocate(size_t bytes, CUstream stream);

  /// Whether allocations come from a CUDA memory pool (else cuMemAlloc).
  bool pooled() const { return pool_ != nullptr; }

private:
  DevicePool(const Driver &driver, CUmemoryPool pool)
      : driver_(&driver), pool_(pool) {}

  const Driver *driver_;
  CUmemoryPool pool_;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_DEVICEPOOL_H
