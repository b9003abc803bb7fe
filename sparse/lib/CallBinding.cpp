//===- CallBinding.cpp - A call's key and its integer arguments -----------===//

#include "CallBinding.h"

#include <algorithm>
#include <charconv>

namespace tilec::sparse {

std::string callKey(const Call &call) {
  // Every launch of a map build looks its plan up by this key: appended in
  // place, without a temporary string a field.
  std::string key;
  key.reserve(160);
  auto field = [&](const char *mark, const std::string &name) {
    key.append(mark).append(name).push_back('=');
  };
  auto number = [&](int64_t value) {
    char digits[24];
    key.append(digits,
               std::to_chars(digits, digits + sizeof(digits), value).ptr);
  };
  for (const auto &[name, value] : call.sizes) {
    field(",", name);
    number(value);
  }
  for (const auto &[name, value] : call.params) {
    field(",@", name);
    number(value);
  }
  for (const auto &[name, value] : call.types) {
    field(",:", name);
    key.append(value);
  }
  return key;
}

Result<std::vector<std::pair<std::string, size_t>>>
bindIntegerArguments(rt::ArgPack &pack, const KernelDescription &description,
                     const Call &call) {
  auto integers = description.evaluateIntegerArguments(call);
  if (!integers)
    return integers.status().withContext(description.getName());
  return bindIntegerArguments(pack, description, *integers);
}

namespace {

// The pack is the loaded kernel's and the binding goes by the description's
// positions: a cubin of another version of the kernel (a bundle or cache
// from before its arguments changed) is refused rather than handed them.
Status checkSignature(const rt::ArgPack &pack,
                      const KernelDescription &description) {
  const std::vector<ArgumentDecl> &declared = description.getSignature();
  const std::vector<KernelArg> &loaded = pack.signature();
  if (description.takesArguments(loaded))
    return Status::success();
  auto join = [](const auto &arguments) {
    std::string names;
    for (const auto &argument : arguments)
      names += (names.empty() ? "" : ", ") + argument.name;
    return names;
  };
  return Status::error(description.getName() + ": the loaded cubin takes (" +
                       join(loaded) + ") where the kernel takes (" +
                       join(declared) +
                       "): a cubin of an older version of it, from a bundle "
                       "or the caches; tune and pack again");
}

} // namespace

Result<std::vector<std::pair<std::string, size_t>>> bindIntegerArguments(
    rt::ArgPack &pack, const KernelDescription &description,
    const std::vector<std::pair<std::string, int64_t>> &integers) {
  TILEC_RETURN_IF_ERROR(checkSignature(pack, description));
  const std::string &kernel = description.getName();
  std::vector<std::pair<std::string, size_t>> pointers;
  const std::vector<ArgumentDecl> &signature = description.getSignature();
  for (size_t index = 0; index < signature.size(); ++index) {
    const ArgumentDecl &argument = signature[index];
    if (argument.type.rfind("ptr<", 0) == 0) {
      pointers.emplace_back(argument.name, index);
      continue;
    }
    auto value = std::find_if(
        integers.begin(), integers.end(),
        [&](const auto &entry) { return entry.first == argument.name; });
    if (value == integers.end())
      return Status::error(kernel + ": no value for " + argument.name);
    if (Status status = pack.setInt(index, value->second); !status.ok())
      return status.withContext(kernel + " argument " + argument.name);
  }
  return pointers;
}

Result<std::vector<std::pair<std::string, size_t>>>
bindCall(rt::ArgPack &pack, const KernelDescription &description,
         const Call &call,
         const std::map<std::string, rt::DevicePtr> &pointers) {
  const std::string &kernel = description.getName();
  auto slots = bindIntegerArguments(pack, description, call);
  if (!slots)
    return slots.status();
  for (const auto &[name, index] : *slots) {
    auto pointer = pointers.find(name);
    if (pointer == pointers.end())
      return Status::error(kernel + ": no buffer for " + name);
    if (Status status = pack.setPointer(index, pointer->second); !status.ok())
      return status.withContext(kernel + " argument " + name);
  }
  return slots;
}

Status CallInputs::bind(rt::ArgPack &pack) const {
  auto bound = bindCall(pack, description, call, pointers);
  return bound ? Status::success() : bound.status();
}

} // namespace tilec::sparse
