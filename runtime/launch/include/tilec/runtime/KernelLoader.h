//===- KernelLoader.h - Loading a compiled kernel from disk -----*- C++ -*-===//
//
// Part of tilec_runtime, the launch library.
//
// The compiler writes <stem>.cubin, <stem>.ptx and <stem>.json into a kernel
// directory; this loads the pair that can run here without a compiler.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_KERNELLOADER_H
#define TILEC_RUNTIME_KERNELLOADER_H

#include "tilec/runtime/Context.h"
#include "tilec/runtime/Module.h"
#include "tilec/contract/Status.h"

#include <string>

namespace tilec::rt {

// Reads <directory>/<stem>.json and loads <directory>/<stem>.cubin, or
// <directory>/<stem>.ptx through the driver's JIT when there is no cubin.
// Errors name the file involved.
Result<Kernel> loadKernelFromDirectory(const Context &context,
                                       const std::string &directory,
                                       const std::string &stem);

} // namespace tilec::rt

#endif // TILEC_RUNTIME_KERNELLOADER_H
