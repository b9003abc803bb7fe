//===- Context.cpp - The primary context of one device --------------------===//

#include "tilec/runtime/Context.h"

#include <utility>

namespace tilec::rt {

Result<Context> Context::create(int ordinal) {
  Result<const Driver *> driver = Driver::get();
  if (!driver)
    return driver.status();
  return create(**driver, ordinal);
}

Result<Context> Context::create(const Driver &driver, int ordinal) {
  Result<Device> device = Device::get(driver, ordinal);
  if (!device)
    return device.status();
  CUcontext context = nullptr;
  TILEC_RETURN_IF_ERROR(driver.check(
      driver.api().cuDevicePrimaryCtxRetain(&context, device->handle()),
      "cuDevicePrimaryCtxRetain"));
  // From here the Context owns the retain and releases it on every path.
  Context result(driver, std::move(*device), context);
  TILEC_RETURN_IF_ERROR(result.makeCurrent());
  return result;
}

Context::~Context() {
  // A failure here cannot be reported; the process is usually ending.
  if (context_)
    (void)driver_->api().cuDevicePrimaryCtxRelease(device_.handle());
}

Context::Context(Context &&other) noexcept
    : driver_(other.driver_), device_(std::move(other.device_)),
      context_(std::exchange(other.context_, nullptr)) {}

Context &Context::operator=(Context &&other) noexcept {
  if (this != &other) {
    if (context_)
      (void)driver_->api().cuDevicePrimaryCtxRelease(device_.handle());
    driver_ = other.driver_;
    device_ = std::move(other.device_);
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

Status Context::makeCurrent() const {
  return driver_->check(driver_->api().cuCtxSetCurrent(context_),
                        "cuCtxSetCurrent");
}

Status Context::synchronize() const {
  return driver_->check(driver_->api().cuCtxSynchronize(), "cuCtxSynchronize");
}

} // namespace tilec::rt
