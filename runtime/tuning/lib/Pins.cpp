//===- Pins.cpp - Configs pinned instead of tuned -------------------------===//

#include "tilec/contract/JsonError.h"
#include "tilec/runtime/Autotuner.h"
#include "tilec/runtime/FileIO.h"

#include <nlohmann/json.hpp>

namespace tilec::rt {

Result<PinnedConfigs> PinnedConfigs::parseSpec(std::string_view spec) {
  PinnedConfigs pins;
  size_t start = 0;
  while (start < spec.size()) {
    size_t end = spec.find(';', start);
    if (end == std::string_view::npos)
      end = spec.size();
    std::string item(spec.substr(start, end - start));
    start = end + 1;
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item[0])))
      item.erase(0, 1);
    while (!item.empty() &&
           std::isspace(static_cast<unsigned char>(item.back())))
      item.pop_back();
    if (item.empty())
      continue;
    size_t equals = item.find('=');
    if (equals == std::string::npos || equals == 0)
      return Status::error("pinned config '" + item +
                           "' is not KERNEL=CONFIG (e.g. "
                           "matmul=BLOCK_M=64,BLOCK_N=64,BLOCK_K=32)");
    std::string kernel = item.substr(0, equals);
    std::string config = item.substr(equals + 1);
    Result<Config> parsed = Config::parse(config);
    if (!parsed)
      return parsed.status().withContext("pinned config for " + kernel);
    pins.pins_[kernel]["*"] = config;
  }
  return pins;
}

Result<PinnedConfigs> PinnedConfigs::parseFile(const std::string &path) {
  Result<std::string> text = readFile(path);
  if (!text)
    return text.status().withContext("pin file");
  if (std::string deep = jsonNestingError(*text); !deep.empty())
    return Status::error("pin file " + path + " " + deep);
  nlohmann::json json =
      nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object())
    return Status::error("pin file " + path +
                         " must be a JSON object: {\"kernel\": \"CONFIG\"} or "
                         "{\"kernel\": {\"KEY or *\": \"CONFIG\"}}");
  PinnedConfigs pins;
  auto add = [&](const std::string &kernel, const std::string &key,
                 const nlohmann::json &value) -> Status {
    if (!value.is_string())
      return Status::error("pin file " + path + ": the pin of " + kernel +
                           (key == "*" ? "" : " for key " + key) +
                           " must be a config string");
    std::string config = value.get<std::string>();
    Result<Config> parsed = Config::parse(config);
    if (!parsed)
      return parsed.status().withContext("pin file " + path + ", " + kernel);
    pins.pins_[kernel][key] = config;
    return Status::success();
  };
  for (auto kernel = json.begin(); kernel != json.end(); ++kernel) {
    if (kernel->is_object()) {
      for (auto key = kernel->begin(); key != kernel->end(); ++key)
        TILEC_RETURN_IF_ERROR(add(kernel.key(), key.key(), *key));
    } else if (Status status = add(kernel.key(), "*", *kernel); !status.ok()) {
      return status;
    }
  }
  return pins;
}

Result<PinnedConfigs>
PinnedConfigs::fromEnvironment(const Environment &environment) {
  PinnedConfigs pins;
  if (const std::string &file = environment.pinFile; !file.empty()) {
    Result<PinnedConfigs> fromFile = parseFile(file);
    if (!fromFile)
      return fromFile.status().withContext("TILEC_PIN_FILE");
    pins = std::move(*fromFile);
  }
  if (const std::string &spec = environment.pinConfig; !spec.empty()) {
    Result<PinnedConfigs> fromSpec = parseSpec(spec);
    if (!fromSpec)
      return fromSpec.status().withContext("TILEC_PIN_CONFIG");
    pins.overrideWith(*fromSpec);
  }
  return pins;
}

void PinnedConfigs::overrideWith(const PinnedConfigs &other) {
  for (const auto &[kernel, byKey] : other.pins_) {
    // A kernel pinned by `other` is pinned only as `other` says: its "*"
    // must not be shadowed by a key-specific pin of ours.
    pins_[kernel] = byKey;
  }
}

std::optional<std::string> PinnedConfigs::find(const std::string &kernel,
                                               const std::string &key) const {
  auto byKernel = pins_.find(kernel);
  if (byKernel == pins_.end())
    return std::nullopt;
  if (auto exact = byKernel->second.find(key); exact != byKernel->second.end())
    return exact->second;
  if (auto any = byKernel->second.find("*"); any != byKernel->second.end())
    return any->second;
  return std::nullopt;
}

} // namespace tilec::rt
