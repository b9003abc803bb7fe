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
  if (minBlocksPerSM != 1)
    text += ",min_blocks_per_sm=" + std::to_string(minBlocksPerSM);
  return text;
}

namespace {

using Assignments = std::vector<std::pair<std::string, std::string>>;

/// "A=1, B=f16" as (name, value) pairs in order: every entry NAME=VALUE with
/// an identifier for a name, a value, no name twice. Spaces around the
/// names, values and commas are allowed (the canonical text shows what was
/// read); tabs, newlines and other whitespace are refused: a config pasted
/// with a line break is a mistake to point at, not a spelling to accept.
Result<Assignments> splitAssignments(std::string_view text) {
  if (size_t at = text.find_first_of("\t\n\r\v\f");
      at != std::string_view::npos)
    return Status::error("a tab or line break at offset " + std::to_string(at) +
                         " (entries are KEY=VALUE separated by ',')");
  Assignments entries;
  if (trim(text).empty())
    return entries;
  std::set<std::string, std::less<>> seen;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view entry = trim(text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos
                                               : comma - start));
    start = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    if (entry.empty())
      return Status::error("empty entry (stray ',')");
    size_t equals = entry.find('=');
    if (equals == std::string_view::npos)
      return Status::error("expected KEY=VALUE, got '" + std::string(entry) +
                           "'");
    std::string key(trim(entry.substr(0, equals)));
    std::string_view value = trim(entry.substr(equals + 1));
    if (!isIdentifier(key))
      return Status::error("malformed key '" + key + "'");
    if (value.empty())
      return Status::error("'" + key + "' has no value");
    if (!seen.insert(key).second)
      return Status::error("'" + key + "' is given twice");
    entries.emplace_back(key, std::string(value));
  }
  return entries;
}

} // namespace

Result<Config> Config::parse(std::string_view text) {
  auto fail = [&](const std::string &message) {
    return Status::error("config '" + std::string(text) + "': " + message);
  };
  Result<Assignments> entries = splitAssignments(text);
  if (!entries)
    return fail(entries.message());
  Config config;
  for (const auto &[key, value] : *entries) {
    std::optional<int64_t> number = parseInteger(value);
    if (key == "num_warps") {
      if (!number || *number < 1 || *number > 32 || (*number & (*number - 1)))
        return fail("num_warps must be a power of two from 1 to 32, got '" +
                    value + "'");
      config.numWarps = static_cast<int>(*number);
    } else if (key == "num_stages") {
      if (!number || *number < 1 || *number > 8)
        return fail("num_stages must be an integer from 1 to 8, got '" +
                    value + "'");
      config.numStages = static_cast<int>(*number);
    } else if (key == "min_blocks_per_sm") {
      // An SM holds at most 32 blocks (sm_80 to sm_120).
      if (!number || *number < 1 || *number > 32)
        return fail("min_blocks_per_sm must be an integer from 1 to 32, got '" +
                    value + "'");
      config.minBlocksPerSM = static_cast<int>(*number);
    } else if (number) {
      config.params[key] = *number;
    } else if (isScalarTypeName(value)) {
      config.types[key] = value;
    } else {
      return fail("the value of '" + key +
                  "' must be an integer or a type (f16, bf16, f32, ...), "
                  "got '" +
                  value + "'");
    }
  }
  return config;
}

Result<std::map<std::string, int64_t>>
parseNamedIntegers(std::string_view text) {
  Result<Assignments> entries = splitAssignments(text);
  if (!entries)
    return entries.status();
  std::map<std::string, int64_t> values;
  for (const auto &[name, value] : *entries) {
    std::optional<int64_t> number = parseInteger(value);
    if (!number)
      return Status::error("'" + name + "=" + value +
                           "' needs an integer value");
    values[name] = *number;
  }
  return values;
}

Result<std::map<std::string, std::string>>
parseNamedTypes(std::string_view text) {
  Result<Assignments> entries = splitAssignments(text);
  if (!entries)
    return entries.status();
  std::map<std::string, std::string> types;
  for (const auto &[name, value] : *entries) {
    if (!isScalarTypeName(value))
      return Status::error("'" + name + "=" + value +
                           "' needs a type (f16, bf16, f32, ...)");
    types[name] = value;
  }
  return types;
}

} // namespace tilec
