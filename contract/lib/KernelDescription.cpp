//===- KernelDescription.cpp - Everything about a kernel but its body -----===//

#include "tilec/contract/KernelDescription.h"

#include "tilec/contract/Expression.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>

namespace tilec {
namespace {

std::string join(const std::vector<std::string> &items) {
  std::string text;
  for (const std::string &item : items)
    text += (text.empty() ? "" : ", ") + item;
  return text;
}

bool isPowerOfTwo(int64_t value) {
  return value > 0 && (value & (value - 1)) == 0;
}

/// `type` with a type parameter name replaced by its value: "ptr<DTYPE>" ->
/// "ptr<f16>".
std::string substituteTypeParams(const std::string &type,
                                 const Config &config) {
  std::string_view inner = type;
  bool isPointer = inner.size() > 5 && inner.substr(0, 4) == "ptr<" &&
                   inner.back() == '>';
  if (isPointer)
    inner = inner.substr(4, inner.size() - 5);
  auto it = config.types.find(std::string(inner));
  std::string resolved = it == config.types.end() ? std::string(inner)
                                                  : it->second;
  return isPointer ? "ptr<" + resolved + ">" : resolved;
}

} // namespace

//===----------------------------------------------------------------------===//
// Declaration
//===----------------------------------------------------------------------===//

KernelDescription::KernelDescription(std::string name, std::string sourceFile,
                                     unsigned line)
    : name(std::move(name)), sourceFile(std::move(sourceFile)), line(line) {}

KernelDescription &KernelDescription::param(MetaParameter parameter) {
  params.push_back(std::move(parameter));
  return *this;
}

KernelDescription &KernelDescription::typeParam(TypeParameter parameter) {
  typeParams.push_back(std::move(parameter));
  return *this;
}

KernelDescription &KernelDescription::arg(ArgumentDecl argument) {
  if (!isSpecializationDivisor(argument.specializedFrom)) {
    // A kernel's own declaration is wrong: its facts would mean nothing.
    std::fprintf(stderr,
                 "kernel description '%s' (%s): argument '%s' specializes "
                 "from %lld, not a power of two from 2 to 16\n",
                 name.c_str(), sourceFile.c_str(), argument.name.c_str(),
                 static_cast<long long>(argument.specializedFrom));
    std::abort();
  }
  for (const ArgumentDecl &earlier : signature)
    if (earlier.name == argument.name) {
      // Two values of one name: a call could not say which it gives.
      std::fprintf(stderr,
                   "kernel description '%s' (%s): argument '%s' is declared "
                   "twice\n",
                   name.c_str(), sourceFile.c_str(), argument.name.c_str());
      std::abort();
    }
  signature.push_back(std::move(argument));
  return *this;
}

KernelDescription &
KernelDescription::args(std::vector<ArgumentDecl> arguments) {
  for (ArgumentDecl &argument : arguments)
    arg(std::move(argument));
  return *this;
}

KernelDescription &KernelDescription::candidate(std::string_view configText) {
  Result<Config> parsed = Config::parse(configText);
  if (!parsed) {
    std::fprintf(stderr, "kernel description '%s' (%s): bad candidate: %s\n",
                 name.c_str(), sourceFile.c_str(), parsed.message().c_str());
    std::abort();
  }
  return candidate(std::move(*parsed));
}

KernelDescription &KernelDescription::candidate(Config candidateConfig) {
  Result<Config> config = resolveConfig(candidateConfig);
  if (!config) {
    // A kernel's own literal is wrong: nothing sensible can run with it.
    std::fprintf(stderr, "kernel description '%s' (%s): bad candidate: %s\n",
                 name.c_str(), sourceFile.c_str(), config.message().c_str());
    std::abort();
  }
  configs.push_back(std::move(*config));
  return *this;
}

KernelDescription &KernelDescription::key(std::string keyName,
                                          std::string derivation) {
  autotuneKey.push_back({std::move(keyName), std::move(derivation)});
  return *this;
}

KernelDescription &KernelDescription::grid(std::vector<std::string> axes) {
  gridAxes = std::move(axes);
  return *this;
}

KernelDescription &KernelDescription::require(std::string condition,
                                              std::string why) {
  requirements.emplace_back(std::move(condition), std::move(why));
  return *this;
}

KernelDescription &KernelDescription::pruneUnless(std::string condition,
                                                  std::string why) {
  pruneConditions.emplace_back(std::move(condition), std::move(why));
  return *this;
}

KernelDescription &
KernelDescription::predictWhen(std::vector<std::string> conditions,
                               std::string_view configText) {
  Result<Config> parsed = Config::parse(configText);
  if (!parsed) {
    std::fprintf(stderr, "kernel description '%s' (%s): bad prediction: %s\n",
                 name.c_str(), sourceFile.c_str(), parsed.message().c_str());
    std::abort();
  }
  return predictWhen(std::move(conditions), std::move(*parsed));
}

KernelDescription &
KernelDescription::predictWhen(std::vector<std::string> conditions,
                               Config predicted) {
  Result<Config> config = resolveConfig(predicted);
  // A prediction is one of the configs a tuning would try: a first use
  // runs nothing a tuning could not have chosen.
  if (!config ||
      std::find(configs.begin(), configs.end(), *config) == configs.end()) {
    std::fprintf(stderr,
                 "kernel description '%s' (%s): the prediction %s is not a "
                 "candidate declared before it%s\n",
                 name.c_str(), sourceFile.c_str(), predicted.str().c_str(),
                 config ? "" : (" (" + config.message() + ")").c_str());
    std::abort();
  }
  predictions.push_back({std::move(conditions), std::move(*config)});
  return *this;
}

KernelDescription &KernelDescription::flops(std::string expression) {
  flopsExpression = std::move(expression);
  return *this;
}

KernelDescription &
KernelDescription::testSizes(std::map<std::string, int64_t> defaults,
                             std::map<std::string, int64_t> tails) {
  defaultSizes = std::move(defaults);
  tailSizes = std::move(tails);
  return *this;
}

//===----------------------------------------------------------------------===//
// Configs and signature
//===----------------------------------------------------------------------===//

std::vector<std::string> KernelDescription::getMetaParameterNames() const {
  std::vector<std::string> names;
  for (const MetaParameter &parameter : params)
    names.push_back(parameter.name);
  for (const TypeParameter &parameter : typeParams)
    names.push_back(parameter.name);
  return names;
}

std::map<std::string, int64_t> KernelDescription::getIntegerArguments() const {
  std::map<std::string, int64_t> arguments;
  for (const ArgumentDecl &argument : signature)
    if (isIntegerTypeName(argument.type))
      arguments[argument.name] = std::max<int64_t>(1, argument.divisibilityHint);
  return arguments;
}

/// Checks one integer meta-parameter's value against its declaration.
static Status checkParameter(const MetaParameter &parameter, int64_t value) {
  auto bound = [&](const char *which, int64_t limit, const std::string &why) {
    return Status::error("'" + parameter.name + "' must be " + which + " " +
                         std::to_string(limit) +
                         (why.empty() ? "" : " (" + why + ")") + ", got " +
                         std::to_string(value));
  };
  // The kernels compute with a meta-parameter as an i32 constant: a value
  // outside its range would wrap into another number, a wrong kernel
  // rather than an error.
  if (value < std::numeric_limits<int32_t>::min() ||
      value > std::numeric_limits<int32_t>::max())
    return Status::error("'" + parameter.name +
                         "' must fit in a signed "
                         "32-bit integer (the kernels compute in i32), got " +
                         std::to_string(value));
  if (parameter.mustBePowerOfTwo && !isPowerOfTwo(value))
    return Status::error("'" + parameter.name +
                         "' must be a power of two, got " +
                         std::to_string(value));
  if (value < parameter.minValue)
    return bound("at least", parameter.minValue, parameter.minReason);
  if (value > parameter.maxValue)
    return bound("at most", parameter.maxValue, parameter.maxReason);
  return Status::success();
}

Result<Config> KernelDescription::resolveConfig(const Config &config) const {
  auto fail = [&](const std::string &message) {
    return Status::error("kernel '" + name + "': " + message);
  };
  auto findParam = [&](const std::string &key) {
    return std::find_if(params.begin(), params.end(),
                        [&](const MetaParameter &p) { return p.name == key; });
  };
  auto findTypeParam = [&](const std::string &key) {
    return std::find_if(typeParams.begin(), typeParams.end(),
                        [&](const TypeParameter &p) { return p.name == key; });
  };
  std::string known = join(getMetaParameterNames());
  for (const auto &[key, value] : config.params) {
    if (findParam(key) != params.end())
      continue;
    if (findTypeParam(key) != typeParams.end())
      return fail("'" + key + "' is a type parameter, got the number " +
                  std::to_string(value));
    return fail("unknown meta-parameter '" + key + "' (known: " + known + ")");
  }
  for (const auto &[key, value] : config.types) {
    if (findTypeParam(key) != typeParams.end())
      continue;
    if (findParam(key) != params.end())
      return fail("'" + key + "' takes an integer, got '" + value + "'");
    return fail("unknown meta-parameter '" + key + "' (known: " + known + ")");
  }

  Config resolved;
  resolved.numWarps = config.numWarps;
  resolved.numStages = config.numStages;
  resolved.minBlocksPerSM = config.minBlocksPerSM;
  for (const MetaParameter &parameter : params) {
    auto given = config.params.find(parameter.name);
    std::optional<int64_t> value = parameter.defaultValue;
    if (given != config.params.end())
      value = given->second;
    if (!value)
      return fail("missing meta-parameter '" + parameter.name + "'" +
                  (parameter.derivation.empty()
                       ? ""
                       : " (" + parameter.derivation + ")"));
    if (Status status = checkParameter(parameter, *value); !status.ok())
      return fail(status.message());
    resolved.params[parameter.name] = *value;
  }
  for (const TypeParameter &parameter : typeParams) {
    auto given = config.types.find(parameter.name);
    std::optional<std::string> value = parameter.defaultValue;
    if (given != config.types.end())
      value = given->second;
    std::string allowed = join(parameter.allowed);
    if (!value)
      return fail("missing type parameter '" + parameter.name + "' (one of " +
                  allowed + ")");
    if (std::find(parameter.allowed.begin(), parameter.allowed.end(),
                  *value) == parameter.allowed.end())
      return fail("'" + parameter.name + "' must be one of " + allowed +
                  ", got '" + *value + "'");
    resolved.types[parameter.name] = *value;
  }
  return resolved;
}

Result<Config> KernelDescription::parseConfig(std::string_view text) const {
  Result<Config> config = Config::parse(text);
  if (!config)
    return config.status();
  return resolveConfig(*config);
}

bool KernelDescription::takesArguments(
    const std::vector<KernelArg> &loaded) const {
  return std::equal(signature.begin(), signature.end(), loaded.begin(),
                    loaded.end(),
                    [](const ArgumentDecl &declared, const KernelArg &arg) {
                      return declared.name == arg.name;
                    });
}

Result<std::vector<ArgumentDecl>>
KernelDescription::getSignature(const Config &config) const {
  Result<Config> resolved = resolveConfig(config);
  if (!resolved)
    return resolved.status();
  std::vector<ArgumentDecl> result = signature;
  for (ArgumentDecl &argument : result)
    argument.type = substituteTypeParams(argument.type, *resolved);
  return result;
}

//===----------------------------------------------------------------------===//
// A call
//===----------------------------------------------------------------------===//

std::map<std::string, int64_t>
KernelDescription::callNames(const Call &call) const {
  std::map<std::string, int64_t> names = call.sizes;
  for (const MetaParameter &parameter : params)
    if (parameter.defaultValue)
      names.insert({parameter.name, *parameter.defaultValue});
  for (const auto &[key, value] : call.params)
    names[key] = value;
  return names;
}

Result<int64_t>
KernelDescription::argumentValue(const ArgumentDecl &argument,
                                 const Call &call,
                                 const std::map<std::string, int64_t> &names)
    const {
  if (auto given = call.sizes.find(argument.name); given != call.sizes.end())
    return given->second;
  if (argument.defaultValue.empty())
    return Status::error("a call of " + name + " gives no value for '" +
                         argument.name + "' (pass " + argument.name + "=...)");
  Result<int64_t> value = evaluateExpression(argument.defaultValue, names);
  if (!value)
    return value.status().withContext("argument '" + argument.name + "' of " +
                                      name);
  return value;
}

Result<std::vector<std::pair<std::string, int64_t>>>
KernelDescription::evaluateIntegerArguments(const Call &call) const {
  std::map<std::string, int64_t> names = callNames(call);
  std::vector<std::pair<std::string, int64_t>> values;
  for (const ArgumentDecl &argument : signature) {
    if (!isIntegerTypeName(argument.type))
      continue;
    Result<int64_t> value = argumentValue(argument, call, names);
    if (!value)
      return value.status();
    values.emplace_back(argument.name, *value);
  }
  return values;
}

std::map<std::string, int64_t> KernelDescription::determinedArguments(
    const Call &call, const std::map<std::string, int64_t> &names) const {
  std::map<std::string, int64_t> values;
  for (const ArgumentDecl &argument : signature)
    if (isIntegerTypeName(argument.type))
      if (Result<int64_t> value = argumentValue(argument, call, names))
        values[argument.name] = *value;
  return values;
}

Specialization KernelDescription::specializationOf(const Call &call) const {
  return specializationOfValues(determinedArguments(call, callNames(call)));
}

Specialization KernelDescription::specializationOfValues(
    const std::map<std::string, int64_t> &values) const {
  Specialization specialization;
  for (const ArgumentDecl &argument : signature) {
    auto value = values.find(argument.name);
    if (argument.specialized && value != values.end() &&
        isIntegerTypeName(argument.type))
      specialization.addFactOf(argument.name, value->second,
                               argument.specializedFrom,
                               std::max<int64_t>(1, argument.divisibilityHint));
  }
  return specialization;
}

Result<Specialization> KernelDescription::specializationOfArguments(
    const std::map<std::string, int64_t> &values) const {
  std::map<std::string, int64_t> arguments = getIntegerArguments();
  for (const auto &[key, value] : values)
    if (!arguments.count(key))
      return Status::error("names '" + key +
                           "', which is not an integer argument of " + name);
  Call call;
  call.sizes = values;
  return specializationOf(call);
}

Result<std::string>
KernelDescription::evaluateAutotuneKey(const Call &call) const {
  return autotuneKeyOver(call, callNames(call));
}

Result<std::string> KernelDescription::autotuneKeyOver(
    const Call &call, const std::map<std::string, int64_t> &names) const {
  std::string text;
  for (const AutotuneKeyEntry &entry : autotuneKey) {
    std::string value;
    auto typeParam = std::find_if(
        typeParams.begin(), typeParams.end(),
        [&](const TypeParameter &p) { return p.name == entry.name; });
    if (!entry.derivation.empty()) {
      Result<int64_t> derived = evaluateExpression(entry.derivation, names);
      if (!derived)
        return derived.status().withContext("autotune key '" + entry.name +
                                            "' of " + name);
      value = std::to_string(*derived);
    } else if (auto type = call.types.find(entry.name);
               type != call.types.end()) {
      value = type->second;
    } else if (auto size = names.find(entry.name); size != names.end()) {
      value = std::to_string(size->second);
    } else if (typeParam != typeParams.end() && typeParam->defaultValue) {
      value = *typeParam->defaultValue;
    } else {
      return Status::error("autotune key '" + entry.name + "' of " + name +
                           " has no value: give it as a size (M=...), a type "
                           "(DTYPE=...) or a parameter of the call");
    }
    text += (text.empty() ? "" : ",") + entry.name + "=" + value;
  }
  return text;
}

/// What the call fixes a key-named value to: its own, else `fallback`; a
/// candidate naming something else (other than the default every declared
/// candidate carries) would be tuned and stored under the wrong key.
template <typename T>
static Status fixToCall(const std::string &kernel, const std::string &key,
                        const std::map<std::string, T> &given,
                        const std::optional<T> &fallback,
                        std::map<std::string, T> &config) {
  auto fromCall = given.find(key);
  std::optional<T> want =
      fromCall != given.end() ? std::optional<T>(fromCall->second) : fallback;
  if (!want)
    return Status::success();
  auto candidate = config.find(key);
  if (candidate != config.end() && candidate->second != *want &&
      (!fallback || candidate->second != *fallback)) {
    std::ostringstream os;
    os << kernel << ": the candidate sets " << key << "=" << candidate->second
       << " but the call's " << key << " is " << *want
       << " (the autotune key would not describe the kernel); give it in the "
          "call instead";
    return Status::error(os.str());
  }
  config[key] = *want;
  return Status::success();
}

Result<Config> KernelDescription::configForCall(const Config &candidate,
                                                const Call &call) const {
  Config config = candidate;
  // Types and key-named parameters come from the call (else their defaults),
  // so that the config always matches the autotune key it is stored under.
  for (const TypeParameter &parameter : typeParams)
    TILEC_RETURN_IF_ERROR(fixToCall(name, parameter.name, call.types,
                                    parameter.defaultValue, config.types));
  std::map<std::string, int64_t> names = callNames(call);
  for (const MetaParameter &parameter : params) {
    bool keyed = std::any_of(
        autotuneKey.begin(), autotuneKey.end(), [&](const AutotuneKeyEntry &e) {
          return e.name == parameter.name && e.derivation.empty();
        });
    if (keyed) {
      TILEC_RETURN_IF_ERROR(fixToCall(name, parameter.name, call.params,
                                      parameter.defaultValue, config.params));
    } else if (auto given = call.params.find(parameter.name);
               given != call.params.end()) {
      config.params[parameter.name] = given->second;
    } else if (!parameter.derivation.empty()) {
      Result<int64_t> value = evaluateExpression(parameter.derivation, names);
      if (!value)
        return value.status().withContext("meta-parameter '" +
                                          parameter.name + "' of " + name);
      config.params[parameter.name] = *value;
    }
  }
  for (const auto &[key, value] : call.params)
    if (!config.params.count(key))
      return Status::error(name + " has no meta-parameter '" + key +
                           "' that a call can set");
  for (const auto &[key, value] : call.types)
    if (!config.types.count(key))
      return Status::error(name + " has no type parameter '" + key + "'");
  return resolveConfig(config);
}

std::map<std::string, int64_t>
KernelDescription::configNames(const Config &config, const Call &call) const {
  std::map<std::string, int64_t> names = callNames(call);
  addConfig(config, names);
  // Conditions speak of arguments too (strides), defaults included.
  for (const auto &[argument, value] : determinedArguments(call, names))
    names.insert({argument, value});
  return names;
}

void KernelDescription::addConfig(const Config &config,
                                  std::map<std::string, int64_t> &names) const {
  for (const auto &[key, value] : config.params)
    names[key] = value;
  names["num_warps"] = config.numWarps;
  names["num_stages"] = config.numStages;
  names["min_blocks_per_sm"] = config.minBlocksPerSM;
}

Result<KernelDescription::CallEvaluation>
KernelDescription::evaluateCall(const Call &call) const {
  CallEvaluation evaluation;
  evaluation.names = callNames(call);
  std::map<std::string, int64_t> arguments;
  for (const ArgumentDecl &argument : signature) {
    if (!isIntegerTypeName(argument.type))
      continue;
    Result<int64_t> value = argumentValue(argument, call, evaluation.names);
    if (!value)
      return value.status();
    evaluation.integerArguments.emplace_back(argument.name, *value);
    arguments[argument.name] = *value;
    if (call.sizes.count(argument.name))
      evaluation.given[argument.name] = *value;
    else
      evaluation.defaulted.push_back(&argument);
  }
  Result<std::string> key = autotuneKeyOver(call, evaluation.names);
  if (!key)
    return key.status();
  evaluation.autotuneKey = std::move(*key);
  evaluation.specialization = specializationOfValues(arguments);
  return evaluation;
}

Result<GridSize>
KernelDescription::evaluateGrid(const Config &config,
                                const CallEvaluation &evaluation) const {
  // configNames without evaluating the call again: the arguments the call
  // gives, and the defaults over the names with the config (a default may
  // name a meta-parameter).
  std::map<std::string, int64_t> names = evaluation.names;
  addConfig(config, names);
  std::map<std::string, int64_t> defaults;
  for (const ArgumentDecl *argument : evaluation.defaulted)
    if (Result<int64_t> value =
            evaluateExpression(argument->defaultValue, names))
      defaults[argument->name] = *value;
  for (const auto &[argument, value] : evaluation.given)
    names.insert({argument, value});
  for (const auto &[argument, value] : defaults)
    names.insert({argument, value});
  return gridOver(config, names);
}

Result<GridSize> KernelDescription::evaluateGrid(const Config &config,
                                                 const Call &call) const {
  return gridOver(config, configNames(config, call));
}

Result<GridSize>
KernelDescription::gridOver(const Config &config,
                            const std::map<std::string, int64_t> &names) const {
  if (gridAxes.empty() || gridAxes.size() > 3)
    return Status::error(name + " declares " + std::to_string(gridAxes.size()) +
                         " grid axes; a grid has 1 to 3");
  for (const auto &[condition, why] : requirements) {
    Result<int64_t> holds = evaluateExpression(condition, names);
    if (!holds)
      return holds.status().withContext("requirement of " + name);
    if (!*holds)
      return Status::error(name + " requires " + condition + " (" + why +
                           ") for config " + config.str());
  }
  uint32_t axes[3] = {1, 1, 1};
  for (size_t i = 0; i < gridAxes.size(); ++i) {
    Result<int64_t> value = evaluateExpression(gridAxes[i], names);
    if (!value)
      return value.status().withContext("grid of " + name);
    int64_t limit = i == 0 ? 2147483647 : 65535;
    if (*value < 0 || *value > limit)
      return Status::error("grid of " + name + ": axis " + std::to_string(i) +
                           " = " + std::to_string(*value) +
                           " is outside [0, " + std::to_string(limit) + "]");
    axes[i] = static_cast<uint32_t>(*value);
  }
  return GridSize{axes[0], axes[1], axes[2]};
}

Result<std::optional<std::string>>
KernelDescription::pruneReason(const Config &config, const Call &call) const {
  std::map<std::string, int64_t> names = configNames(config, call);
  for (const auto &[condition, why] : pruneConditions) {
    Result<int64_t> holds = evaluateExpression(condition, names);
    if (!holds)
      return holds.status().withContext("prune condition of " + name);
    if (!*holds)
      return std::optional<std::string>("not worth trying: " + condition +
                                        " does not hold (" + why + ")");
  }
  return std::optional<std::string>();
}

Result<std::vector<KernelDescription::CallCandidate>>
KernelDescription::candidatesForCall(const std::vector<Config> &declared,
                                     const Call &call) const {
  std::vector<CallCandidate> candidates;
  std::set<std::string> seen;
  for (const Config &candidate : declared) {
    Result<Config> config = configForCall(candidate, call);
    if (!config)
      return config.status();
    if (!seen.insert(config->str()).second)
      continue;
    Result<std::optional<std::string>> pruned = pruneReason(*config, call);
    if (!pruned)
      return pruned.status();
    candidates.push_back({std::move(*config), std::move(*pruned)});
  }
  if (std::all_of(candidates.begin(), candidates.end(),
                  [](const CallCandidate &candidate) {
                    return candidate.pruneReason.has_value();
                  }))
    for (CallCandidate &candidate : candidates)
      candidate.pruneReason.reset();
  return candidates;
}

Result<std::vector<Config>>
KernelDescription::predictedConfigs(const Call &call) const {
  Result<std::vector<CallCandidate>> candidates =
      candidatesForCall(configs, call);
  if (!candidates)
    return candidates.status();
  return predictedConfigs(*candidates, call);
}

Result<std::vector<Config>> KernelDescription::predictedConfigs(
    const std::vector<CallCandidate> &candidates, const Call &call) const {
  auto tried = [&](const Config &config) {
    return std::any_of(candidates.begin(), candidates.end(),
                       [&](const CallCandidate &candidate) {
                         return !candidate.pruneReason &&
                                candidate.config == config;
                       });
  };
  std::vector<Config> ordered;
  auto add = [&](const Config &config) {
    if (std::find(ordered.begin(), ordered.end(), config) == ordered.end())
      ordered.push_back(config);
  };
  for (const Prediction &prediction : predictions) {
    Result<Config> config = configForCall(prediction.config, call);
    if (!config)
      return config.status();
    if (!tried(*config))
      continue;
    std::map<std::string, int64_t> names = configNames(*config, call);
    bool holds = true;
    for (const std::string &condition : prediction.conditions) {
      Result<int64_t> value = evaluateExpression(condition, names);
      if (!value)
        return value.status().withContext("prediction condition of " + name);
      if (!*value) {
        holds = false;
        break;
      }
    }
    if (holds)
      add(*config);
  }
  for (const CallCandidate &candidate : candidates)
    if (!candidate.pruneReason)
      add(candidate.config);
  return ordered;
}

Result<double> KernelDescription::evaluateFlops(const Call &call) const {
  if (flopsExpression.empty())
    return 0.0;
  Result<int64_t> value = evaluateExpression(flopsExpression, callNames(call));
  if (!value)
    return value.status().withContext("flops of " + name);
  return static_cast<double>(*value);
}

} // namespace tilec
