//===- JsonReader.cpp - Checked reads of the contract's json --------------===//

#include "JsonReader.h"

#include "tilec/contract/JsonError.h"

namespace tilec {
namespace {

// Collects the parser's message (with line and column), which the DOM parser
// discards when exceptions are off. Only run after a parse has failed.
class ParseErrorCollector : public nlohmann::json_sax<nlohmann::json> {
public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t &) override { return true; }
  bool string(string_t &) override { return true; }
  bool binary(binary_t &) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t &) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string &,
                   const nlohmann::detail::exception &error) override {
    message = error.what();
    return false;
  }

  std::string message;
};

} // namespace

std::string jsonParseError(std::string_view text) {
  ParseErrorCollector collector;
  (void)nlohmann::json::sax_parse(text.begin(), text.end(), &collector);
  return collector.message;
}

std::string jsonNestingError(std::string_view text, size_t maxDepth) {
  size_t depth = 0, line = 1, column = 0;
  bool inString = false, escaped = false;
  for (char c : text) {
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
    }
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth)
        return "nests deeper than " + std::to_string(maxDepth) +
               " arrays and objects at line " + std::to_string(line) +
               ", column " + std::to_string(column);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return "";
}

} // namespace tilec

namespace tilec::contract_detail {
namespace {

using Json = JsonReader::Json;

std::string fieldName(const std::string &prefix, const char *key) {
  return prefix.empty() ? key : prefix + "." + key;
}

} // namespace

Result<Json> JsonReader::parse(std::string_view text) {
  if (std::string deep = jsonNestingError(text); !deep.empty())
    return Status::error("invalid json: " + deep);
  Json root = Json::parse(text.begin(), text.end(), /*cb=*/nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    return Status::error("invalid json: " + jsonParseError(text));
  }
  if (!root.is_object())
    return Status::error("expected a json object, got " + describe(root));
  return root;
}

bool JsonReader::has(const Json &object, const char *key) {
  return object.is_object() && object.find(key) != object.end();
}

Status JsonReader::fieldError(const std::string &prefix, const char *key,
                              const std::string &problem) {
  return Status::error("field '" + fieldName(prefix, key) + "' " + problem);
}

std::string JsonReader::describe(const Json &value) {
  if (value.is_null())
    return "null";
  const char *kind = "value";
  switch (value.type()) {
  case Json::value_t::string:
    kind = "string";
    break;
  case Json::value_t::boolean:
    kind = "boolean";
    break;
  case Json::value_t::number_integer:
  case Json::value_t::number_unsigned:
    kind = "integer";
    break;
  case Json::value_t::number_float:
    kind = "number";
    break;
  case Json::value_t::object:
    kind = "object";
    break;
  case Json::value_t::array:
    kind = "array";
    break;
  default:
    break;
  }
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  return std::string(kind) + " " + text;
}

Status JsonReader::string(const Json &object, const char *key,
                          const std::string &prefix, std::string &out) {
  if (!has(object, key))
    return fieldError(prefix, key, "is missing");
  TILEC_RETURN_IF_ERROR(optionalString(object, key, prefix, out));
  if (out.empty())
    return fieldError(prefix, key, "must not be empty");
  return Status::success();
}

Status JsonReader::optionalString(const Json &object, const char *key,
                                  const std::string &prefix, std::string &out) {
  if (!has(object, key))
    return Status::success();
  const Json &value = object[key];
  if (!value.is_string())
    return fieldError(prefix, key, "must be a string, got " + describe(value));
  out = value.get_ref<const std::string &>();
  return Status::success();
}

Status JsonReader::integer(const Json &object, const char *key,
                           const std::string &prefix, int64_t &out,
                           int64_t min, int64_t max) {
  if (!has(object, key))
    return fieldError(prefix, key, "is missing");
  const Json &value = object[key];
  if (!value.is_number_integer())
    return fieldError(prefix, key, "must be an integer, got " + describe(value));
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() >
          static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return fieldError(prefix, key, "is out of range, got " + describe(value));
  int64_t parsed = value.get<int64_t>();
  if (parsed < min || parsed > max)
    return fieldError(prefix, key,
                      "must be in [" + std::to_string(min) + ", " +
                          std::to_string(max) + "], got " +
                          std::to_string(parsed));
  out = parsed;
  return Status::success();
}

Status JsonReader::optionalBoolean(const Json &object, const char *key,
                                   const std::string &prefix, bool &out) {
  if (!has(object, key))
    return Status::success();
  const Json &value = object[key];
  if (!value.is_boolean())
    return fieldError(prefix, key, "must be a boolean, got " + describe(value));
  out = value.get<bool>();
  return Status::success();
}

Status JsonReader::strings(const Json &object, const char *key,
                           const std::string &prefix,
                           std::vector<std::string> &out) {
  if (!has(object, key))
    return fieldError(prefix, key, "is missing");
  const Json &value = object[key];
  if (!value.is_array())
    return fieldError(prefix, key, "must be an array, got " + describe(value));
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string())
      return fieldError(prefix,
                        (std::string(key) + "[" + std::to_string(i) + "]")
                            .c_str(),
                        "must be a string, got " + describe(value[i]));
    out.push_back(value[i].get<std::string>());
  }
  return Status::success();
}

Status JsonReader::objects(const Json &object, const char *key,
                           const ObjectFn &read) {
  if (!has(object, key))
    return fieldError("", key, "is missing");
  const Json &value = object[key];
  if (!value.is_array())
    return fieldError("", key, "must be an array, got " + describe(value));
  for (size_t i = 0; i < value.size(); ++i) {
    std::string field = std::string(key) + "[" + std::to_string(i) + "]";
    if (!value[i].is_object())
      return Status::error("field '" + field + "' must be an object, got " +
                           describe(value[i]));
    TILEC_RETURN_IF_ERROR(read(value[i], field));
  }
  return Status::success();
}

Status JsonReader::integerMap(const Json &object, const char *key,
                              std::map<std::string, int64_t> &out) {
  if (!has(object, key))
    return Status::success();
  const Json &value = object[key];
  if (!value.is_object())
    return fieldError("", key, "must be an object, got " + describe(value));
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it->is_boolean()) {
      out[it.key()] = it->get<bool>() ? 1 : 0;
      continue;
    }
    int64_t parsed = 0;
    if (!it->is_number_integer())
      return fieldError(key, it.key().c_str(),
                        "must be an integer or a boolean, got " +
                            describe(*it));
    TILEC_RETURN_IF_ERROR(integer(value, it.key().c_str(), key, parsed));
    out[it.key()] = parsed;
  }
  return Status::success();
}

Status JsonReader::stringMap(const Json &object, const char *key,
                             std::map<std::string, std::string> &out) {
  if (!has(object, key))
    return Status::success();
  const Json &value = object[key];
  if (!value.is_object())
    return fieldError("", key, "must be an object, got " + describe(value));
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (!it->is_string())
      return fieldError(key, it.key().c_str(),
                        "must be a string, got " + describe(*it));
    out[it.key()] = it->get<std::string>();
  }
  return Status::success();
}

} // namespace tilec::contract_detail
