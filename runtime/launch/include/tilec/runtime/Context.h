//===- Context.h - The primary context of one device ------------*- C++ -*-===//
//
// Part of tilec_runtime, the launch library.
//
// The runtime uses the device's primary context, the one the CUDA runtime and
// frameworks (torch, Triton) also use, so that buffers and streams can be
// shared with them within one process.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_CONTEXT_H
#define TILEC_RUNTIME_CONTEXT_H

#include "tilec/runtime/Device.h"
#include "tilec/runtime/Driver.h"
#include "tilec/contract/Status.h"

#include <cuda.h>

#include <utility>

namespace tilec::rt {

class Context {
public:
  // Retains the primary context of device `ordinal` and makes it current on
  // the calling thread. The first form uses the process driver (Driver::get).
  static Result<Context> create(int ordinal = 0);
  static Result<Context> create(const Driver &driver, int ordinal);

  // Releases the primary context; buffers, streams, events and modules of
  // this context must be destroyed first.
  ~Context();
  Context(Context &&other) noexcept;
  Context &operator=(Context &&other) noexcept;
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  // Other threads must call this before using objects of this context.
  Status makeCurrent() const;
  // Waits for all work of this context (cuCtxSynchronize).
  Status synchronize() const;

  const Driver &driver() const { return *driver_; }
  const Device &device() const { return device_; }
  const DeviceProperties &properties() const { return device_.properties(); }
  CUcontext handle() const { return context_; }

private:
  Context(const Driver &driver, Device device, CUcontext context)
      : driver_(&driver), device_(std::move(device)), context_(context) {}

  const Driver *driver_;
  Device device_;
  CUcontext context_;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_CONTEXT_H
