//===- KernelDescriptionJson.cpp - A description's one writer and reader -===//
//
// Parsed with nlohmann::json without exceptions (the runtime is linked into
// -fno-exceptions tools): every access checks the type first.
//
//===----------------------------------------------------------------------===//

#include "tilec/contract/KernelDescription.h"

#include "JsonReader.h"

#include <algorithm>

namespace tilec {

using Json = nlohmann::ordered_json;
using contract_detail::JsonReader;

static Json encodeParameter(const MetaParameter &parameter) {
  Json json = {{"name", parameter.name}};
  if (parameter.defaultValue)
    json["default"] = *parameter.defaultValue;
  if (parameter.mustBePowerOfTwo)
    json["power_of_two"] = true;
  if (parameter.minValue != std::numeric_limits<int64_t>::min())
    json["min"] = {{"value", parameter.minValue},
                   {"reason", parameter.minReason}};
  if (parameter.maxValue != std::numeric_limits<int64_t>::max())
    json["max"] = {{"value", parameter.maxValue},
                   {"reason", parameter.maxReason}};
  if (!parameter.derivation.empty())
    json["derivation"] = parameter.derivation;
  return json;
}

std::string KernelDescription::toJson() const {
  Json json;
  json["name"] = name;
  json["source_file"] = sourceFile;
  json["line"] = line;
  json["params"] = Json::array();
  for (const MetaParameter &parameter : params)
    json["params"].push_back(encodeParameter(parameter));
  json["type_params"] = Json::array();
  for (const TypeParameter &parameter : typeParams) {
    Json entry = {{"name", parameter.name}, {"allowed", parameter.allowed}};
    if (parameter.defaultValue)
      entry["default"] = *parameter.defaultValue;
    json["type_params"].push_back(std::move(entry));
  }
  json["signature"] = Json::array();
  for (const ArgumentDecl &argument : signature) {
    Json entry = {{"name", argument.name}, {"type", argument.type}};
    if (argument.divisibilityHint)
      entry["divisibility"] = argument.divisibilityHint;
    if (!argument.defaultValue.empty())
      entry["default"] = argument.defaultValue;
    if (argument.specializedFrom != Specialization::kDivisor)
      entry["specialize_from"] = argument.specializedFrom;
    if (!argument.specialized)
      entry["specialize"] = false;
    json["signature"].push_back(std::move(entry));
  }
  json["configs"] = Json::array();
  for (const Config &config : configs)
    json["configs"].push_back(config.str());
  json["key"] = Json::array();
  for (const AutotuneKeyEntry &entry : autotuneKey) {
    Json item = {{"name", entry.name}};
    if (!entry.derivation.empty())
      item["derivation"] = entry.derivation;
    json["key"].push_back(std::move(item));
  }
  json["grid"] = gridAxes;
  if (!flopsExpression.empty())
    json["flops"] = flopsExpression;
  json["requirements"] = Json::array();
  for (const auto &[condition, why] : requirements)
    json["requirements"].push_back({{"condition", condition}, {"why", why}});
  if (!pruneConditions.empty()) {
    json["prune_unless"] = Json::array();
    for (const auto &[condition, why] : pruneConditions)
      json["prune_unless"].push_back({{"condition", condition}, {"why", why}});
  }
  if (!predictions.empty()) {
    json["predictions"] = Json::array();
    for (const Prediction &prediction : predictions)
      json["predictions"].push_back({{"when", prediction.conditions},
                                     {"config", prediction.config.str()}});
  }
  json["default_sizes"] = defaultSizes;
  json["tail_sizes"] = tailSizes;
  return json.dump();
}

static Status readParameter(JsonReader &reader, const Json &json,
                            const std::string &field,
                            std::vector<MetaParameter> &out) {
  std::string name;
  TILEC_RETURN_IF_ERROR(reader.string(json, "name", field, name));
  MetaParameter parameter(name);
  int64_t value = 0;
  if (reader.has(json, "default")) {
    TILEC_RETURN_IF_ERROR(reader.integer(json, "default", field, value));
    parameter.defaultValue = value;
  }
  TILEC_RETURN_IF_ERROR(reader.optionalBoolean(json, "power_of_two", field,
                                               parameter.mustBePowerOfTwo));
  for (auto [key, bound, reason] :
       {std::tuple("min", &parameter.minValue, &parameter.minReason),
        std::tuple("max", &parameter.maxValue, &parameter.maxReason)}) {
    if (!reader.has(json, key))
      continue;
    const Json &limit = json[key];
    std::string at = field + "." + key;
    TILEC_RETURN_IF_ERROR(reader.integer(limit, "value", at, *bound));
    TILEC_RETURN_IF_ERROR(reader.optionalString(limit, "reason", at, *reason));
  }
  TILEC_RETURN_IF_ERROR(
      reader.optionalString(json, "derivation", field, parameter.derivation));
  out.push_back(std::move(parameter));
  return Status::success();
}

static Status readTypeParameter(JsonReader &reader, const Json &json,
                                const std::string &field,
                                std::vector<TypeParameter> &out) {
  std::string name;
  std::vector<std::string> allowed;
  TILEC_RETURN_IF_ERROR(reader.string(json, "name", field, name));
  TILEC_RETURN_IF_ERROR(reader.strings(json, "allowed", field, allowed));
  TypeParameter parameter(name, allowed);
  if (reader.has(json, "default")) {
    std::string value;
    TILEC_RETURN_IF_ERROR(reader.string(json, "default", field, value));
    parameter.defaultValue = value;
  }
  out.push_back(std::move(parameter));
  return Status::success();
}

static Status readArgument(JsonReader &reader, const Json &json,
                           const std::string &field,
                           std::vector<ArgumentDecl> &out) {
  std::string name, type;
  TILEC_RETURN_IF_ERROR(reader.string(json, "name", field, name));
  TILEC_RETURN_IF_ERROR(reader.string(json, "type", field, type));
  for (const ArgumentDecl &earlier : out)
    if (earlier.name == name)
      return Status::error(field + ".name: '" + name +
                           "' names an earlier argument too");
  ArgumentDecl argument(name, type);
  if (reader.has(json, "divisibility"))
    TILEC_RETURN_IF_ERROR(
        reader.integer(json, "divisibility", field, argument.divisibilityHint));
  TILEC_RETURN_IF_ERROR(
      reader.optionalString(json, "default", field, argument.defaultValue));
  if (reader.has(json, "specialize_from")) {
    TILEC_RETURN_IF_ERROR(reader.integer(json, "specialize_from", field,
                                         argument.specializedFrom));
    if (!isSpecializationDivisor(argument.specializedFrom))
      return Status::error(field + ".specialize_from: a power of two from 2 "
                           "to 16, got " +
                           std::to_string(argument.specializedFrom));
  }
  TILEC_RETURN_IF_ERROR(
      reader.optionalBoolean(json, "specialize", field, argument.specialized));
  out.push_back(std::move(argument));
  return Status::success();
}

static Status readKeyEntry(JsonReader &reader, const Json &json,
                           const std::string &field,
                           std::vector<AutotuneKeyEntry> &out) {
  AutotuneKeyEntry entry;
  TILEC_RETURN_IF_ERROR(reader.string(json, "name", field, entry.name));
  TILEC_RETURN_IF_ERROR(
      reader.optionalString(json, "derivation", field, entry.derivation));
  out.push_back(std::move(entry));
  return Status::success();
}

Result<KernelDescription> KernelDescription::fromJson(std::string_view text) {
  JsonReader reader;
  Result<Json> root = reader.parse(text);
  if (!root)
    return root.status().withContext("kernel description");
  const Json &json = *root;
  std::string name, sourceFile;
  int64_t line = 0;
  Status status = reader.string(json, "name", "", name);
  if (status.ok())
    status = reader.optionalString(json, "source_file", "", sourceFile);
  if (status.ok() && reader.has(json, "line"))
    status = reader.integer(json, "line", "", line);
  KernelDescription description(name, sourceFile,
                                static_cast<unsigned>(line));
  if (status.ok())
    status = reader.objects(json, "params", [&](const Json &item,
                                                const std::string &field) {
      return readParameter(reader, item, field, description.params);
    });
  if (status.ok())
    status = reader.objects(json, "type_params", [&](const Json &item,
                                                     const std::string &field) {
      return readTypeParameter(reader, item, field, description.typeParams);
    });
  if (status.ok())
    status = reader.objects(json, "signature", [&](const Json &item,
                                                   const std::string &field) {
      return readArgument(reader, item, field, description.signature);
    });
  if (status.ok())
    status = reader.objects(json, "key", [&](const Json &item,
                                             const std::string &field) {
      return readKeyEntry(reader, item, field, description.autotuneKey);
    });
  std::vector<std::string> configs;
  if (status.ok())
    status = reader.strings(json, "configs", "", configs);
  for (size_t i = 0; status.ok() && i < configs.size(); ++i) {
    Result<Config> config = description.parseConfig(configs[i]);
    if (!config)
      status = Status::error("field 'configs[" + std::to_string(i) + "]' " +
                             config.message());
    else
      description.configs.push_back(std::move(*config));
  }
  if (status.ok())
    status = reader.strings(json, "grid", "", description.gridAxes);
  if (status.ok())
    status = reader.optionalString(json, "flops", "",
                                   description.flopsExpression);
  for (auto [field, conditions] :
       {std::pair{"requirements", &description.requirements},
        std::pair{"prune_unless", &description.pruneConditions}})
    if (status.ok() && reader.has(json, field))
      status = reader.objects(json, field, [&, conditions = conditions](
                                               const Json &item,
                                               const std::string &itemField) {
        std::string condition, why;
        Status s = reader.string(item, "condition", itemField, condition);
        if (s.ok())
          s = reader.optionalString(item, "why", itemField, why);
        if (s.ok())
          conditions->emplace_back(condition, why);
        return s;
      });
  if (status.ok() && reader.has(json, "predictions"))
    status = reader.objects(
        json, "predictions", [&](const Json &item, const std::string &field) {
          KernelDescription::Prediction prediction;
          std::string config;
          Status s = reader.strings(item, "when", field, prediction.conditions);
          if (s.ok())
            s = reader.string(item, "config", field, config);
          if (!s.ok())
            return s;
          Result<Config> parsed = description.parseConfig(config);
          if (!parsed)
            return Status::error("field '" + field + ".config' " +
                                 parsed.message());
          if (std::find(description.configs.begin(), description.configs.end(),
                        *parsed) == description.configs.end())
            return Status::error("field '" + field + ".config' " + config +
                                 " is not one of the configs");
          prediction.config = std::move(*parsed);
          description.predictions.push_back(std::move(prediction));
          return Status::success();
        });
  if (status.ok())
    status = reader.integerMap(json, "default_sizes", description.defaultSizes);
  if (status.ok())
    status = reader.integerMap(json, "tail_sizes", description.tailSizes);
  if (!status.ok())
    return status.withContext("kernel description");
  return description;
}

} // namespace tilec
