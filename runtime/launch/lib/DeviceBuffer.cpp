//===- DeviceBuffer.cpp - Owned device memory -----------------------------===//

#include "tilec/runtime/DeviceBuffer.h"

#include <utility>

namespace tilec::rt {

Result<DeviceBuffer> DeviceBuffer::allocate(const Context &context,
                                            size_t bytes) {
  const Driver &driver = context.driver();
  CUdeviceptr address = 0;
  if (bytes != 0) {
    if (Status status = driver.check(driver.api().cuMemAlloc(&address, bytes),
                                     "cuMemAlloc");
        !status.ok())
      return status.withContext("allocating " + std::to_string(bytes) +
                                " bytes");
  }
  return DeviceBuffer(driver, address, bytes);
}

DeviceBuffer::~DeviceBuffer() { release(); }

void DeviceBuffer::release() {
  if (address_)
    (void)driver_->api().cuMemFree(address_);
  address_ = 0;
  bytes_ = 0;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept
    : driver_(other.driver_), address_(std::exchange(other.address_, 0)),
      bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    release();
    driver_ = other.driver_;
    address_ = std::exchange(other.address_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

Status DeviceBuffer::checkRange(const char *operation, size_t bytes,
                                size_t offset) const {
  if (offset > bytes_ || bytes > bytes_ - offset)
    return Status::error(std::string(operation) + ": " + std::to_string(bytes) +
                         " bytes at offset " + std::to_string(offset) +
                         " do not fit in a buffer of " +
                         std::to_string(bytes_) + " bytes");
  return Status::success();
}

Status DeviceBuffer::copyFromHost(const void *source, size_t bytes,
                                  size_t offset) {
  TILEC_RETURN_IF_ERROR(checkRange("copyFromHost", bytes, offset));
  if (bytes == 0)
    return Status::success();
  return driver_->check(
      driver_->api().cuMemcpyHtoD(address_ + offset, source, bytes),
      "cuMemcpyHtoD");
}

Status DeviceBuffer::copyToHost(void *destination, size_t bytes,
                                size_t offset) const {
  TILEC_RETURN_IF_ERROR(checkRange("copyToHost", bytes, offset));
  if (bytes == 0)
    return Status::success();
  return driver_->check(
      driver_->api().cuMemcpyDtoH(destination, address_ + offset, bytes),
      "cuMemcpyDtoH");
}

Status DeviceBuffer::copyFromHostAsync(const void *source, size_t bytes,
                                       CUstream stream, size_t offset) {
  TILEC_RETURN_IF_ERROR(checkRange("copyFromHostAsync", bytes, offset));
  if (bytes == 0)
    return Status::success();
  return driver_->check(driver_->api().cuMemcpyHtoDAsync(address_ + offset,
                                                         source, bytes, stream),
                        "cuMemcpyHtoDAsync");
}

Status DeviceBuffer::copyToHostAsync(void *destination, size_t bytes,
                                     CUstream stream, size_t offset) const {
  TILEC_RETURN_IF_ERROR(checkRange("copyToHostAsync", bytes, offset));
  if (bytes == 0)
    return Status::success();
  return driver_->check(driver_->api().cuMemcpyDtoHAsync(
                            destination, address_ + offset, bytes, stream),
                        "cuMemcpyDtoHAsync");
}

Status DeviceBuffer::memset8(uint8_t value) {
  if (bytes_ == 0)
    return Status::success();
  return driver_->check(driver_->api().cuMemsetD8(address_, value, bytes_),
                        "cuMemsetD8");
}

Status DeviceBuffer::memset8Async(uint8_t value, CUstream stream) {
  if (bytes_ == 0)
    return Status::success();
  return driver_->check(
      driver_->api().cuMemsetD8Async(address_, value, bytes_, stream),
      "cuMemsetD8Async");
}

Status DeviceBuffer::memset32(uint32_t value) {
  if (bytes_ % 4 != 0)
    return Status::error("memset32: buffer of " + std::to_string(bytes_) +
                         " bytes is not a whole number of 32-bit words");
  if (bytes_ == 0)
    return Status::success();
  return driver_->check(driver_->api().cuMemsetD32(address_, value, bytes_ / 4),
                        "cuMemsetD32");
}

} // namespace tilec::rt
