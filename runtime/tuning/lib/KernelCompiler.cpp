//===- KernelCompiler.cpp - The compiler behind the runtime ---------------===//

#include "tilec/runtime/KernelCompiler.h"

namespace tilec::rt {

std::string compileKey(const std::string &kernel, const Config &config,
                       const Specialization &specialization) {
  return kernel + "\n" + config.str() + "\n" + specialization.str();
}

KernelCompiler::~KernelCompiler() = default;

} // namespace tilec::rt
