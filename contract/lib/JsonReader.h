//===- JsonReader.h - Checked reads of the contract's json ------*- C++ -*-===//
//
// The contract's readers parse with nlohmann::json without exceptions: the
// runtime is linked into -fno-exceptions tools, so every access checks the
// type first and never calls an accessor that would throw (abort, there).
// Errors name the field: "field 'signature[1].type' must be a string, got
// integer 3".
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_CONTRACT_LIB_JSONREADER_H
#define TILEC_CONTRACT_LIB_JSONREADER_H

#include "tilec/contract/Status.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tilec::contract_detail {

class JsonReader {
public:
  using Json = nlohmann::ordered_json;
  using ObjectFn = std::function<Status(const Json &, const std::string &)>;

  /// A json object; invalid json gives the parser's line and column.
  Result<Json> parse(std::string_view text);

  static bool has(const Json &object, const char *key);
  /// "field 'prefix.key' <problem>".
  static Status fieldError(const std::string &prefix, const char *key,
                           const std::string &problem);
  /// `value` as "integer 3", "string \"x\"", ... for messages.
  static std::string describe(const Json &value);

  /// A required, non-empty string.
  Status string(const Json &object, const char *key, const std::string &prefix,
                std::string &out);
  /// Left unchanged when absent.
  Status optionalString(const Json &object, const char *key,
                        const std::string &prefix, std::string &out);
  /// A required integer in [min, max].
  Status integer(const Json &object, const char *key, const std::string &prefix,
                 int64_t &out,
                 int64_t min = std::numeric_limits<int64_t>::min(),
                 int64_t max = std::numeric_limits<int64_t>::max());
  Status optionalBoolean(const Json &object, const char *key,
                         const std::string &prefix, bool &out);
  /// A required array of strings.
  Status strings(const Json &object, const char *key,
                 const std::string &prefix, std::vector<std::string> &out);
  /// A required array of objects, each handed to `read` with its field name
  /// ("signature[2]").
  Status objects(const Json &object, const char *key, const ObjectFn &read);
  /// An optional object of integers (booleans read as 0 and 1).
  Status integerMap(const Json &object, const char *key,
                    std::map<std::string, int64_t> &out);
  /// An optional object of strings.
  Status stringMap(const Json &object, const char *key,
                   std::map<std::string, std::string> &out);
};

} // namespace tilec::contract_detail

#endif // TILEC_CONTRACT_LIB_JSONREADER_H
