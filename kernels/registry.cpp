//===- registry.cpp - the kernels tilec ships, by name --------------------===//

#include "tilec/Kernel/KernelRegistry.h"

#include "llvm/ADT/STLExtras.h"

#include <vector>

using namespace tilec::kernel;

llvm::ArrayRef<const KernelDefinition *> tilec::kernel::listKernels() {
  static const std::vector<const KernelDefinition *> kernels = [] {
    std::vector<const KernelDefinition *> all = {
        &getGatherMatmulKernel(), &getMatmulKernel(), &getSoftmaxKernel(),
        &getVectorAddKernel()};
    llvm::sort(all,
               [](const KernelDefinition *lhs, const KernelDefinition *rhs) {
                 return lhs->getName() < rhs->getName();
               });
    return all;
  }();
  return kernels;
}

const KernelDefinition *tilec::kernel::lookupKernel(llvm::StringRef name) {
  for (const KernelDefinition *kernel : listKernels())
    if (kernel->getName() == name)
      return kernel;
  return nullptr;
}
