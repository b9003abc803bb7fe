//===- Stream.cpp - An owned CUDA stream ----------------------------------===//

#include "tilec/runtime/Stream.h"

#include <utility>

namespace tilec::rt {

Result<Stream> Stream::create(const Context &context) {
  const Driver &driver = context.driver();
  CUstream stream = nullptr;
  TILEC_RETURN_IF_ERROR(
      driver.check(driver.api().cuStreamCreate(&stream, CU_STREAM_DEFAULT),
                   "cuStreamCreate"));
  return Stream(driver, stream);
}

Stream::~Stream() {
  if (stream_)
    (void)driver_->api().cuStreamDestroy(stream_);
}

Stream::Stream(Stream &&other) noexcept
    : driver_(other.driver_), stream_(std::exchange(other.stream_, nullptr)) {}

Stream &Stream::operator=(Stream &&other) noexcept {
  if (this != &other) {
    if (stream_)
      (void)driver_->api().cuStreamDestroy(stream_);
    driver_ = other.driver_;
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

Status Stream::synchronize() const {
  return driver_->check(driver_->api().cuStreamSynchronize(stream_),
                        "cuStreamSynchronize");
}

} // namespace tilec::rt
