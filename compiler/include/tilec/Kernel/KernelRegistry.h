//===- KernelRegistry.h - the kernels of kernels/ ---------------*- C++ -*-===//
//
// Every file of kernels/ that defines a kernel with TILEC_KERNEL is in the
// registry: kernels/CMakeLists.txt finds them and generates the list, so that
// adding a kernel is adding its file (docs/kernels.md).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_KERNEL_KERNELREGISTRY_H
#define TILEC_KERNEL_KERNELREGISTRY_H

#include "tilec/Kernel/KernelDefinition.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace tilec::kernel {

/// The kernel named `name`, or null.
const KernelDefinition *lookupKernel(llvm::StringRef name);
/// All kernels, sorted by name.
llvm::ArrayRef<const KernelDefinition *> listKernels();
/// "gather_matmul, matmul, ...", for messages.
std::string knownKernelNames();

} // namespace tilec::kernel

/// Defines the kernel NAME (its file's one definition):
///   TILEC_KERNEL(matmul) {
///     static const KernelDefinition kernel(KernelDescription(...), body);
///     return kernel;
///   }
#define TILEC_KERNEL(NAME)                                                     \
  namespace tilec::kernel {                                                    \
  const KernelDefinition &registeredKernel_##NAME();                           \
  }                                                                            \
  const tilec::kernel::KernelDefinition &                                      \
      tilec::kernel::registeredKernel_##NAME()

#endif // TILEC_KERNEL_KERNELREGISTRY_H
