//===- CallBinding.h - A call's key and its integer arguments ---*- C++ -*-===//
//
// Private to tilec_sparse: what the engine's launch plans and the prepared
// convolutions share about turning a Call into a launch.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_SPARSE_LIB_CALLBINDING_H
#define TILEC_SPARSE_LIB_CALLBINDING_H

#include "tilec/contract/KernelDescription.h"
#include "tilec/contract/Status.h"
#include "tilec/runtime/ArgPack.h"

#include <string>
#include <utility>
#include <vector>

namespace tilec::sparse {

/// Everything a call decides about a launch but its pointers: sizes,
/// parameters and types, as text.
std::string callKey(const Call &call);

/// Sets every integer argument of `description`'s signature in `pack` from
/// the call; returns the pointer arguments' names and indices, for the
/// caller to set.
Result<std::vector<std::pair<std::string, size_t>>>
bindIntegerArguments(rt::ArgPack &pack, const KernelDescription &description,
                     const Call &call);

} // namespace tilec::sparse

#endif // TILEC_SPARSE_LIB_CALLBINDING_H
