//===- Stream.h - An owned CUDA stream --------------------------*- C++ -*-===//
//
// Part of tilec_runtime, the launch library.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_STREAM_H
#define TILEC_RUNTIME_STREAM_H

#include "tilec/runtime/Context.h"
#include "tilec/contract/Status.h"

#include <cuda.h>

namespace tilec::rt {

class Stream {
public:
  // A blocking stream (CU_STREAM_DEFAULT): it stays ordered with the legacy
  // default stream, so the synchronous DeviceBuffer copies see the results of
  // kernels launched on it without an explicit synchronize.
  static Result<Stream> create(const Context &context);

  ~Stream();
  Stream(Stream &&other) noexcept;
  Stream &operator=(Stream &&other) noexcept;
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;

  Status synchronize() const;
  CUstream handle() const { return stream_; }

private:
  Stream(const Driver &driver, CUstream stream)
      : driver_(&driver), stream_(stream) {}

  const Driver *driver_;
  CUstream stream_;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_STREAM_H
