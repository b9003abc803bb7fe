//===- DevicePool.cpp - Stream-ordered device memory of one pool ----------===//

#include "tilec/runtime/DevicePool.h"

#include "tilec/runtime/Device.h"
#include "tilec/runtime/Driver.h"

#include <cstdint>
#include <utility>

namespace tilec::rt {

PoolBuffer::PoolBuffer(PoolBuffer &&other) noexcept
    : driver_(other.driver_), address_(std::exchange(other.address_, 0)),
      bytes_(std::exchange(other.bytes_, 0)), pooled_(other.pooled_) {}

PoolBuffer &PoolBuffer::operator=(PoolBuffer &&other) noexcept {
  if (this != &other) {
    releaseOn(nullptr);
    driver_ = other.driver_;
    address_ = std::exchange(other.address_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
    pooled_ = other.pooled_;
  }
  return *this;
}

void PoolBuffer::releaseOn(CUstream stream) {
  if (!address_)
    return;
  // A failed free leaves the memory to the pool (destroyed with the
  // context): nothing a destructor could report.
  if (pooled_)
    (void)driver_->api().cuMemFreeAsync(address_, stream);
  else
    (void)driver_->api().cuMemFree(address_);
  address_ = 0;
  bytes_ = 0;
}

Result<std::unique_ptr<DevicePool>> DevicePool::create(const Context &context) {
  const Driver &driver = context.driver();
  CUdevice device = context.device().handle();
  int supported = 0;
  TILEC_RETURN_IF_ERROR(driver.check(
      driver.api().cuDeviceGetAttribute(
          &supported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, device),
      "cuDeviceGetAttribute"));
  if (!supported)
    return std::unique_ptr<DevicePool>(new DevicePool(driver, nullptr));
  CUmemPoolProps props = {};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = static_cast<int>(device);
  CUmemoryPool pool = nullptr;
  TILEC_RETURN_IF_ERROR(driver.check(
      driver.api().cuMemPoolCreate(&pool, &props), "cuMemPoolCreate"));
  auto created = std::unique_ptr<DevicePool>(new DevicePool(driver, pool));
  // Keep every byte freed to the pool (the default, 0, hands memory back to
  // the device at each synchronization, and the next allocation maps it
  // again).
  cuuint64_t keepAll = UINT64_MAX;
  TILEC_RETURN_IF_ERROR(
      driver.check(driver.api().cuMemPoolSetAttribute(
                       pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keepAll),
                   "cuMemPoolSetAttribute"));
  return created;
}

DevicePool::~DevicePool() {
  // Memory still allocated keeps the pool until it is freed (cuda.h).
  if (pool_)
    (void)driver_->api().cuMemPoolDestroy(pool_);
}

Result<PoolBuffer> DevicePool::allocate(size_t bytes, CUstream stream) {
  bytes = bytes == 0 ? 1 : bytes;
  CUdeviceptr address = 0;
  const DriverApi &api = driver_->api();
  if (!pool_) {
    if (Status status =
            driver_->check(api.cuMemAlloc(&address, bytes), "cuMemAlloc");
        !status.ok())
      return status.withContext("allocating " + std::to_string(bytes) +
                                " bytes");
    return PoolBuffer(*driver_, address, bytes, /*pooled=*/false);
  }
  CUresult result = api.cuMemAllocFromPoolAsync(&address, bytes, pool_, stream);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) {
    // What the pool keeps may be what is missing.
    (void)api.cuMemPoolTrimTo(pool_, 0);
    result = api.cuMemAllocFromPoolAsync(&address, bytes, pool_, stream);
  }
  if (Status status = driver_->check(result, "cuMemAllocFromPoolAsync");
      !status.ok())
    return status.withContext("allocating " + std::to_string(bytes) + " bytes");
  return PoolBuffer(*driver_, address, bytes, /*pooled=*/true);
}

} // namespace tilec::rt
