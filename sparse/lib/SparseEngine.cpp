//===- SparseEngine.cpp - Launching the sparse convolution's kernels ------===//

#include "tilec/sparse/SparseConv.h"

#include "tilec/runtime/Launch.h"

#include <algorithm>

namespace tilec::sparse {

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F32:
    return "f32";
  }
  return "?";
}

Status
SparseEngine::launch(const std::string &kernel, const Call &call,
                     const std::map<std::string, rt::DevicePtr> &pointers,
                     CUstream stream) {
  Result<KernelDescription> description = autotuner_.describe(kernel);
  if (!description)
    return description.status();
  if (description->getConfigs().empty())
    return Status::error(kernel + " declares no config");
  Result<Config> config =
      description->configForCall(description->getConfigs().front(), call);
  if (!config)
    return config.status();
  Result<GridSize> grid = description->evaluateGrid(*config, call);
  if (!grid)
    return grid.status().withContext(kernel);
  if (grid->x == 0 || grid->y == 0 || grid->z == 0)
    return Status::success();
  auto integers = description->evaluateIntegerArguments(call);
  if (!integers)
    return integers.status().withContext(kernel);
  Result<std::shared_ptr<const rt::Kernel>> loaded =
      provider_.get(kernel, *config, description->specializationOf(call));
  if (!loaded)
    return loaded.status();
  Result<rt::ArgPack> pack = (*loaded)->makeArgPack();
  if (!pack)
    return pack.status();
  const std::vector<ArgumentDecl> &signature = description->getSignature();
  for (size_t index = 0; index < signature.size(); ++index) {
    const ArgumentDecl &argument = signature[index];
    Status status;
    if (argument.type.rfind("ptr<", 0) == 0) {
      auto pointer = pointers.find(argument.name);
      if (pointer == pointers.end())
        return Status::error(kernel + ": no buffer for " + argument.name);
      status = pack->setPointer(index, pointer->second);
    } else {
      auto value = std::find_if(
          integers->begin(), integers->end(),
          [&](const auto &entry) { return entry.first == argument.name; });
      if (value == integers->end())
        return Status::error(kernel + ": no value for " + argument.name);
      status = pack->setInt(index, value->second);
    }
    if (!status.ok())
      return status.withContext(kernel + " argument " + argument.name);
  }
  return rt::launch(**loaded, *grid, *pack, stream);
}

} // namespace tilec::sparse
