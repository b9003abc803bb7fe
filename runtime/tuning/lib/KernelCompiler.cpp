//===- KernelCompiler.cpp - The compiler behind the runtime ---------------===//

#include "tilec/runtime/KernelCompiler.h"

namespace tilec::rt {

KernelCompiler::~KernelCompiler() = default;

} // namespace tilec::rt
