//===- Event.cpp - An owned CUDA event for timing -------------------------===//

#include "tilec/runtime/Event.h"
#include "tilec/runtime/Stream.h"

#include <utility>

namespace tilec::rt {

Result<Event> Event::create(const Context &context, unsigned flags) {
  const Driver &driver = context.driver();
  CUevent event = nullptr;
  TILEC_RETURN_IF_ERROR(
      driver.check(driver.api().cuEventCreate(&event, flags), "cuEventCreate"));
  return Event(driver, event);
}

Event::~Event() {
  if (event_)
    (void)driver_->api().cuEventDestroy(event_);
}

Event::Event(Event &&other) noexcept
    : driver_(other.driver_), event_(std::exchange(other.event_, nullptr)) {}

Event &Event::operator=(Event &&other) noexcept {
  if (this != &other) {
    if (event_)
      (void)driver_->api().cuEventDestroy(event_);
    driver_ = other.driver_;
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

Status Event::record(CUstream stream) const {
  return driver_->check(driver_->api().cuEventRecord(event_, stream),
                        "cuEventRecord");
}

Status Event::record(const Stream &stream) const {
  return record(stream.handle());
}

Status Event::synchronize() const {
  return driver_->check(driver_->api().cuEventSynchronize(event_),
                        "cuEventSynchronize");
}

Status Event::makeWait(CUstream stream) const {
  return driver_->check(driver_->api().cuStreamWaitEvent(stream, event_, 0),
                        "cuStreamWaitEvent");
}

Result<float> Event::elapsedMs(const Event &start, const Event &stop) {
  TILEC_RETURN_IF_ERROR(stop.synchronize());
  float ms = 0.0f;
  TILEC_RETURN_IF_ERROR(stop.driver_->check(
      stop.driver_->api().cuEventElapsedTime(&ms, start.event_, stop.event_),
      "cuEventElapsedTime"));
  return ms;
}

} // namespace tilec::rt
