//===- DevicePtr.h - A device address as a kernel argument ------*- C++ -*-===//
//
// Part of tilec_runtime, the launch library.
//
// CUdeviceptr is an unsigned integer type, so a bare CUdeviceptr could not be
// told apart from a u64 argument; wrapping it lets ArgPack reject an integer
// where the kernel expects a pointer and vice versa.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_DEVICEPTR_H
#define TILEC_RUNTIME_DEVICEPTR_H

#include <cuda.h>

namespace tilec::rt {

struct DevicePtr {
  CUdeviceptr address = 0;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_DEVICEPTR_H
