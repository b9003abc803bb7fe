//===- Event.h - An owned CUDA event for timing -----------------*- C++ -*-===//
//
// Part of tilec_runtime, the launch library.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_EVENT_H
#define TILEC_RUNTIME_EVENT_H

#include "tilec/runtime/Context.h"
#include "tilec/contract/Status.h"

#include <cuda.h>

namespace tilec::rt {

class Stream;

class Event {
public:
  // A timing event (CU_EVENT_DEFAULT); benchmarks measure with pairs of them.
  // CU_EVENT_DISABLE_TIMING makes one that only orders work, cheaper to
  // record.
  static Result<Event> create(const Context &context,
                              unsigned flags = CU_EVENT_DEFAULT);

  ~Event();
  Event(Event &&other) noexcept;
  Event &operator=(Event &&other) noexcept;
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;

  Status record(CUstream stream = nullptr) const;
  Status record(const Stream &stream) const;
  Status synchronize() const;
  // Work queued on `stream` after this waits for the work recorded.
  Status makeWait(CUstream stream) const;

  // Milliseconds between two recorded events; waits for `stop`.
  static Result<float> elapsedMs(const Event &start, const Event &stop);

  CUevent handle() const { return event_; }

private:
  Event(const Driver &driver, CUevent event)
      : driver_(&driver), event_(event) {}

  const Driver *driver_;
  CUevent event_;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_EVENT_H
