//===- CallPlan.cpp - A kernel's calls of one shape, planned once ---------===//

#include "tilec/contract/CallPlan.h"

#include "tilec/contract/ArgType.h"

#include <algorithm>
#include <charconv>

namespace tilec {

namespace {

std::optional<size_t> indexOf(const std::vector<std::string> &names,
                              const std::string &name) {
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end())
    return std::nullopt;
  return static_cast<size_t>(it - names.begin());
}

std::optional<CompiledExpression>
compiled(const std::string &text, const std::vector<std::string> &slots) {
  Result<CompiledExpression> expression =
      CompiledExpression::compile(text, slots);
  if (!expression)
    return std::nullopt;
  return std::move(*expression);
}

} // namespace

CallPlan::CallPlan(const KernelDescription &description, const Call &shape)
    : description(description), params(shape.params), types(shape.types) {
  // The slots are callNames' entries: a parameter's value or a
  // meta-parameter's default stays, a size comes from each call.
  for (const auto &[name, value] : description.callNames(shape)) {
    slotNames.push_back(name);
    constantSlots.push_back(value);
  }
  // A size the call's parameters override is a parameter's slot.
  for (const auto &[name, value] : shape.sizes) {
    if (!shape.params.count(name))
      sizeSlots.emplace_back(sizeNames.size(), *indexOf(slotNames, name));
    sizeNames.push_back(name);
  }
  // Integer arguments as evaluateCall takes them: the call's value of that
  // name, else the default over the call's names.
  for (const ArgumentDecl &argument : description.signature) {
    if (!isIntegerTypeName(argument.type))
      continue;
    IntegerArgument planned{argument.name,
                            std::nullopt,
                            std::nullopt,
                            argument.specialized,
                            argument.specializedFrom,
                            std::max<int64_t>(1, argument.divisibilityHint)};
    if (shape.sizes.count(argument.name))
      planned.size = indexOf(sizeNames, argument.name);
    else if (!argument.defaultValue.empty())
      planned.byDefault = compiled(argument.defaultValue, slotNames);
    usable = usable && (planned.size || planned.byDefault);
    arguments.push_back(std::move(planned));
  }
  // The key as autotuneKeyOver builds it, entry by entry.
  std::string text;
  for (const AutotuneKeyEntry &entry : description.autotuneKey) {
    text += (keyParts.empty() && text.empty() ? "" : ",") + entry.name + "=";
    auto typeParam = std::find_if(
        description.typeParams.begin(), description.typeParams.end(),
        [&](const TypeParameter &p) { return p.name == entry.name; });
    std::optional<size_t> slot = indexOf(slotNames, entry.name);
    if (!entry.derivation.empty()) {
      keyParts.push_back(
          {text, std::nullopt, compiled(entry.derivation, slotNames)});
      usable = usable && keyParts.back().derived;
      text.clear();
    } else if (auto type = shape.types.find(entry.name);
               type != shape.types.end()) {
      text += type->second;
    } else if (slot) {
      keyParts.push_back({text, slot, std::nullopt});
      text.clear();
    } else if (typeParam != description.typeParams.end() &&
               typeParam->defaultValue) {
      text += *typeParam->defaultValue;
    } else {
      usable = false;
    }
  }
  keyParts.push_back({text, std::nullopt, std::nullopt});
}

std::string CallPlan::shapeOf(const Call &call) {
  // A launch of a new size looks its shape up by this: appended in place.
  std::string key;
  key.reserve(128);
  for (const auto &[name, value] : call.sizes)
    key.append(",").append(name);
  for (const auto &[name, value] : call.params) {
    char digits[24];
    key.append(",@").append(name).push_back('=');
    key.append(digits,
               std::to_chars(digits, digits + sizeof(digits), value).ptr);
  }
  for (const auto &[name, value] : call.types)
    key.append(",:").append(name).append("=").append(value);
  return key;
}

bool CallPlan::fits(const Call &call) const {
  if (call.sizes.size() != sizeNames.size() || call.params != params ||
      call.types != types)
    return false;
  size_t i = 0;
  for (const auto &[name, value] : call.sizes)
    if (name != sizeNames[i++])
      return false;
  return true;
}

std::optional<CallPlan::Evaluation> CallPlan::evaluate(const Call &call) const {
  if (!usable || !fits(call))
    return std::nullopt;
  std::vector<int64_t> sizes;
  sizes.reserve(call.sizes.size());
  for (const auto &[name, value] : call.sizes)
    sizes.push_back(value);
  Evaluation evaluation;
  evaluation.plan = this;
  evaluation.slots = constantSlots;
  for (const auto &[size, slot] : sizeSlots)
    evaluation.slots[slot] = sizes[size];
  const int64_t *values = evaluation.slots.data();
  evaluation.integerArguments.reserve(arguments.size());
  for (const IntegerArgument &argument : arguments) {
    int64_t value;
    if (argument.size) {
      value = sizes[*argument.size];
    } else {
      Result<int64_t> computed = argument.byDefault->evaluate(values);
      if (!computed)
        return std::nullopt;
      value = *computed;
    }
    evaluation.integerArguments.emplace_back(argument.name, value);
    if (argument.specialized)
      evaluation.specialization.addFactOf(argument.name, value,
                                          argument.smallestDivisor,
                                          argument.declaredDivisor);
  }
  for (const KeyPart &part : keyParts) {
    evaluation.autotuneKey += part.text;
    if (part.slot) {
      evaluation.autotuneKey += std::to_string(values[*part.slot]);
    } else if (part.derived) {
      Result<int64_t> derived = part.derived->evaluate(values);
      if (!derived)
        return std::nullopt;
      evaluation.autotuneKey += std::to_string(*derived);
    }
  }
  return evaluation;
}

CallPlan::Grid CallPlan::grid(const Config &config) const {
  Grid grid;
  grid.plan = this;
  if (!usable)
    return grid;
  // evaluateGrid's names: the call's, with the config's over them, then the
  // defaulted arguments over those (where their defaults evaluate), never
  // over a name already there.
  std::vector<std::string> names = slotNames;
  std::map<std::string, int64_t> configNames;
  description.addConfig(config, configNames);
  for (const auto &[name, value] : configNames) {
    if (std::optional<size_t> slot = indexOf(names, name)) {
      grid.configOverCall.emplace_back(*slot, value);
    } else {
      names.push_back(name);
      grid.configOnly.push_back(value);
    }
  }
  std::vector<std::string> withDefaults = names;
  for (const IntegerArgument &argument : arguments) {
    if (argument.size || indexOf(withDefaults, argument.name))
      continue;
    const ArgumentDecl &declared = *std::find_if(
        description.signature.begin(), description.signature.end(),
        [&](const ArgumentDecl &a) { return a.name == argument.name; });
    // A default that does not compile over these names has no value there
    // (evaluateGrid leaves it out too): a grid that reads it does not
    // compile below.
    if (std::optional<CompiledExpression> byDefault =
            compiled(declared.defaultValue, names)) {
      grid.defaults.push_back(std::move(*byDefault));
      withDefaults.push_back(argument.name);
    }
  }
  const std::vector<std::string> &axes = description.gridAxes;
  if (axes.empty() || axes.size() > 3)
    return grid;
  for (const auto &[condition, why] : description.requirements) {
    std::optional<CompiledExpression> requirement =
        compiled(condition, withDefaults);
    if (!requirement)
      return grid;
    grid.requirements.push_back(std::move(*requirement));
  }
  for (const std::string &axis : axes) {
    std::optional<CompiledExpression> expression = compiled(axis, withDefaults);
    if (!expression)
      return grid;
    grid.axes.push_back(std::move(*expression));
  }
  for (size_t i = 0; i < grid.defaults.size(); ++i) {
    size_t slot = names.size() + i;
    auto reads = [&](const CompiledExpression &e) { return e.readsSlot(slot); };
    grid.defaultRead.push_back(
        std::any_of(grid.requirements.begin(), grid.requirements.end(),
                    reads) ||
        std::any_of(grid.axes.begin(), grid.axes.end(), reads));
  }
  grid.usable = true;
  return grid;
}

std::optional<GridSize>
CallPlan::Grid::evaluate(const Evaluation &evaluation) const {
  // An evaluation another plan (or none) made has other slots.
  if (!usable || evaluation.plan != plan)
    return std::nullopt;
  std::vector<int64_t> values = evaluation.slots;
  for (const auto &[slot, value] : configOverCall)
    values[slot] = value;
  values.insert(values.end(), configOnly.begin(), configOnly.end());
  // Each default over the names before any default (as evaluateGrid); one
  // that fails has no value, which matters only where it is read.
  for (size_t i = 0; i < defaults.size(); ++i) {
    Result<int64_t> value = defaults[i].evaluate(values.data());
    if (!value && defaultRead[i])
      return std::nullopt;
    values.push_back(value ? *value : 0);
  }
  for (const CompiledExpression &requirement : requirements) {
    Result<int64_t> holds = requirement.evaluate(values.data());
    if (!holds || !*holds)
      return std::nullopt;
  }
  uint32_t extent[3] = {1, 1, 1};
  for (size_t i = 0; i < axes.size(); ++i) {
    Result<int64_t> value = axes[i].evaluate(values.data());
    int64_t limit = i == 0 ? 2147483647 : 65535;
    if (!value || *value < 0 || *value > limit)
      return std::nullopt;
    extent[i] = static_cast<uint32_t>(*value);
  }
  return GridSize{extent[0], extent[1], extent[2]};
}

} // namespace tilec
