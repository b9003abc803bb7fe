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
#include "tilec/runtime/Autotuner.h"
#include "tilec/runtime/DeviceBuffer.h"

#include <map>

#include <string>
#include <utility>
#include <vector>

namespace tilec::sparse {

/// Everything a call decides about a launch but its pointers: sizes,
/// parameters and types, as text.
std::string callKey(const Call &call);

/// Sets every integer argument of `description`'s signature in `pack` from
/// the call; returns the pointer arguments' names and indices, for the
/// caller to set. A pack whose argument names are not the description's (a
/// cubin of another version of the kernel) is an error naming both.
Result<std::vector<std::pair<std::string, size_t>>>
bindIntegerArguments(rt::ArgPack &pack, const KernelDescription &description,
                     const Call &call);
/// bindIntegerArguments of values already evaluated
/// (KernelDescription::evaluateIntegerArguments, CallEvaluation).
Result<std::vector<std::pair<std::string, size_t>>> bindIntegerArguments(
    rt::ArgPack &pack, const KernelDescription &description,
    const std::vector<std::pair<std::string, int64_t>> &integers);

/// Binds every argument of `call`: the integers from the call, the pointers
/// from `pointers` by name (an error names one that is missing); returns
/// where the pointers went.
Result<std::vector<std::pair<std::string, size_t>>>
bindCall(rt::ArgPack &pack, const KernelDescription &description,
         const Call &call,
         const std::map<std::string, rt::DevicePtr> &pointers);

/// A call's own buffers, for tuning on the data it will run on.
class CallInputs : public rt::BenchmarkInputs {
public:
  CallInputs(KernelDescription description, Call call,
             std::map<std::string, rt::DevicePtr> pointers, double flops)
      : description(std::move(description)), call(std::move(call)),
        pointers(std::move(pointers)), usefulFlops(flops) {}
  Status bind(rt::ArgPack &pack) const override;
  double flops() const override { return usefulFlops; }

private:
  KernelDescription description;
  Call call;
  std::map<std::string, rt::DevicePtr> pointers;
  double usefulFlops;
};

} // namespace tilec::sparse

#endif // TILEC_SPARSE_LIB_CALLBINDING_H
