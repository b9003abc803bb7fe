//===- KernelRegistry.h - the kernels tilec ships ---------------*- C++ -*-===//
//
// The kernel definitions under kernels/ (library TilecKernels), by name.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_KERNEL_KERNELREGISTRY_H
#define TILEC_KERNEL_KERNELREGISTRY_H

#include "tilec/Kernel/KernelDefinition.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace tilec::kernel {

/// The kernel called `name`, or null.
const KernelDefinition *lookupKernel(llvm::StringRef name);
/// Every kernel, sorted by name.
llvm::ArrayRef<const KernelDefinition *> listKernels();

// Each kernel's definition (one per file in kernels/).
const KernelDefinition &getVectorAddKernel();
const KernelDefinition &getSoftmaxKernel();
const KernelDefinition &getMatmulKernel();
const KernelDefinition &getGatherMatmulKernel();

} // namespace tilec::kernel

#endif // TILEC_KERNEL_KERNELREGISTRY_H
