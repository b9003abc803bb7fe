//===- Config.cpp - One point of a kernel's configuration space ----------===//

#include "tilec/contract/Config.h"

#include "ContractUtils.h"

#include <algorithm>
#include <array>
#include <set>
#include <vector>

namespace tilec {

using contract_detail::isIdentifier;
using contract_detail::parseInteger;
using contract_detail::trim;

bool isIntegerTypeName(std::string_view name) {
  constexpr std::array<std::string_view, 5> names = {"i1", "i8", "i16", "i32",
                                                     "i64"};
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool isScalarTypeName(std::string_view name) {
  constexpr std::array<std::string_view, 4> names = {"f16", "bf16", "f32",
                                                     "f64"};
  return isIntegerTypeName(name) ||
         std::find(names.begin(), names.end(), name) != names.end();
}

std::string Config::str() const {
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto &[key, value] : params)
    entries.emplace_back(key, std::to_string(value));
  for (const auto &[key, value] : types)
    entries.emplace_back(key, value);
  std::sort(entries.begin(), entries.end());
  std::string text;
  for (const auto &[key, value] : entries)
    text += key + "=" + value + ",";
  text += "num_warps=" + std::to_string(numWarps) +
          ",num_stages=" + std::to_string(numStages);
  return text;
}

Result<Config> Config::parse(std::string_view text) {
  Config config;
  if (trim(text).empty())
    return config;
  auto fail = [&](const std::string &message) {
    return Status::error("config '" + std::string(text) + "': " + message);
  };
  std::set<std::string, std::less<>> seen;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view entry = trim(text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos
                                               : comma - start));
    start = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    if (entry.empty())
      return fail("empty entry (stray ',')");
    size_t equals = entry.find('=');
    if (equals == std::string_view::npos)
      return fail("expected KEY=VALUE, got '" + std::string(entry) + "'");
    std::string_view key = trim(entry.substr(0, equals));
    std::string_view value = trim(entry.substr(equals + 1));
    if (!isIdentifier(key))
      return fail("malformed key '" + std::string(key) + "'");
    if (value.empty())
      return fail("'" + std::string(key) + "' has no value");
    if (!seen.insert(std::string(key)).second)
      return fail("'" + std::string(key) + "' is given twice");
    std::optional<int64_t> number = parseInteger(value);
    if (key == "num_warps") {
      if (!number || *number < 1 || *number > 32 || (*number & (*number - 1)))
        return fail("num_warps must be a power of two from 1 to 32, got '" +
                    std::string(value) + "'");
      config.numWarps = static_cast<int>(*number);
    } else if (key == "num_stages") {
      if (!number || *number < 1 || *number > 8)
        return fail("num_stages must be an integer from 1 to 8, got '" +
                    std::string(value) + "'");
      config.numStages = static_cast<int>(*number);
    } else if (number) {
      config.params[std::string(key)] = *number;
    } else if (isScalarTypeName(value)) {
      config.types[std::string(key)] = std::string(value);
    } else {
      return fail("the value of '" + std::string(key) +
                  "' must be an integer or a type (f16, bf16, f32, ...), "
                  "got '" +
                  std::string(value) + "'");
    }
  }
  return config;
}

/// Splits "A=1,B=2" into its entries; `value` checks and stores one.
template <typename Map, typename ValueFn>
static Result<Map> parseNamed(std::string_view text, const char *what,
                              ValueFn value) {
  Map entries;
  if (trim(text).empty())
    return entries;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view entry = trim(text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos
                                               : comma - start));
    start = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    size_t equals = entry.find('=');
    std::string name(trim(entry.substr(0, equals)));
    if (equals == std::string_view::npos || !isIdentifier(name))
      return Status::error("'" + std::string(entry) + "' is not NAME=" + what);
    if (entries.count(name))
      return Status::error("'" + name + "' is given twice");
    std::string_view given = trim(entry.substr(equals + 1));
    if (Status status = value(name, given, entries); !status.ok())
      return status;
  }
  return entries;
}

Result<std::map<std::string, int64_t>>
parseNamedIntegers(std::string_view text) {
  using Map = std::map<std::string, int64_t>;
  return parseNamed<Map>(
      text, "INTEGER",
      [](const std::string &name, std::string_view given, Map &out) {
        std::optional<int64_t> number = parseInteger(given);
        if (!number)
          return Status::error("'" + name + "=" + std::string(given) +
                               "' needs an integer value");
        out[name] = *number;
        return Status::success();
      });
}

Result<std::map<std::string, std::string>>
parseNamedTypes(std::string_view text) {
  using Map = std::map<std::string, std::string>;
  return parseNamed<Map>(
      text, "TYPE",
      [](const std::string &name, std::string_view given, Map &out) {
        if (!isScalarTypeName(given))
          return Status::error("'" + name + "=" + std::string(given) +
                               "' needs a type (f16, bf16, f32, ...)");
        out[name] = std::string(given);
        return Status::success();
      });
}

} // namespace tilec
