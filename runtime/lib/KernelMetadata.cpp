//===- KernelMetadata.cpp - The compile json of one kernel ----------------===//
//
// Parsed with nlohmann::json without exceptions: the runtime is linked into
// -fno-exceptions tools, so every access below checks the type first and
// never calls an accessor that would throw (abort, there).
//
//===----------------------------------------------------------------------===//

#include "tilec/runtime/KernelMetadata.h"

#include "ReadFile.h"

#include <nlohmann/json.hpp>

#include <limits>

namespace tilec::rt {
namespace {

using Json = nlohmann::json;

// Collects the parser's message (with line and column), which the DOM parser
// discards when exceptions are off. Only run after a parse has failed.
class ParseErrorCollector : public nlohmann::json_sax<Json> {
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

std::string describe(const Json &value) {
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

Status fieldError(const std::string &field, const std::string &problem) {
  return Status::error("field '" + field + "' " + problem);
}

// Finds `key` in `object`; null when absent.
const Json *find(const Json &object, const char *key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// `prefix` locates `object` in the document for messages ("signature[1].").
Status readString(const Json &object, const char *key, std::string &out,
                  bool required, const std::string &prefix = "") {
  const Json *value = find(object, key);
  std::string field = prefix + key;
  if (!value)
    return required ? fieldError(field, "is missing") : Status::success();
  if (!value->is_string())
    return fieldError(field, "must be a string, got " + describe(*value));
  out = value->get_ref<const std::string &>();
  if (required && out.empty())
    return fieldError(field, "must not be empty");
  return Status::success();
}

Status checkInt(const Json &value, const std::string &field, int64_t min,
                int64_t max, int64_t &out) {
  if (!value.is_number_integer())
    return fieldError(field, "must be an integer, got " + describe(value));
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() >
          static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return fieldError(field, "is out of range, got " + describe(value));
  out = value.get<int64_t>();
  if (out < min || out > max)
    return fieldError(field, "must be in [" + std::to_string(min) + ", " +
                                 std::to_string(max) + "], got " +
                                 std::to_string(out));
  return Status::success();
}

template <typename T>
Status readInt(const Json &object, const char *key, int64_t min, int64_t max,
               T &out) {
  const Json *value = find(object, key);
  if (!value)
    return fieldError(key, "is missing");
  int64_t parsed = 0;
  if (Status status = checkInt(*value, key, min, max, parsed); !status.ok())
    return status;
  out = static_cast<T>(parsed);
  return Status::success();
}

Status readOptionalInt(const Json &object, const char *key,
                       std::optional<int> &out) {
  const Json *value = find(object, key);
  if (!value)
    return Status::success();
  int64_t parsed = 0;
  if (Status status =
          checkInt(*value, key, 0, std::numeric_limits<int>::max(), parsed);
      !status.ok())
    return status;
  out = static_cast<int>(parsed);
  return Status::success();
}

Status readSignature(const Json &object, std::vector<KernelArg> &out) {
  const Json *value = find(object, "signature");
  if (!value)
    return fieldError("signature", "is missing");
  if (!value->is_array())
    return fieldError("signature", "must be an array, got " + describe(*value));
  for (size_t i = 0; i < value->size(); ++i) {
    const Json &entry = (*value)[i];
    std::string field = "signature[" + std::to_string(i) + "]";
    if (!entry.is_object())
      return fieldError(field, "must be an object {\"name\", \"type\"}, got " +
                                   describe(entry));
    KernelArg arg;
    if (Status status = readString(entry, "name", arg.name, true, field + ".");
        !status.ok())
      return status;
    if (Status status =
            readString(entry, "type", arg.spelling, true, field + ".");
        !status.ok())
      return status;
    Result<ArgType> type = parseArgType(arg.spelling);
    if (!type)
      return fieldError(field + ".type", type.message());
    arg.type = *type;
    if (const Json *divisibility = find(entry, "divisibility")) {
      int64_t parsed = 0;
      if (!divisibility->is_number_integer() ||
          (parsed = divisibility->get<int64_t>()) <= 0 ||
          (parsed & (parsed - 1)) != 0)
        return fieldError(field + ".divisibility",
                          "must be a positive power of two, got " +
                              describe(*divisibility));
      if (isFloatArgType(arg.type))
        return fieldError(field + ".divisibility",
                          "is set on a floating-point argument");
      arg.divisibility = parsed;
    }
    if (const Json *equalToOne = find(entry, "equal_to_one")) {
      if (!equalToOne->is_boolean())
        return fieldError(field + ".equal_to_one",
                          "must be a boolean, got " + describe(*equalToOne));
      arg.equalToOne = equalToOne->get<bool>();
      if (arg.equalToOne && !isIntegerArgType(arg.type))
        return fieldError(field + ".equal_to_one",
                          "is set on a non-integer argument");
      if (arg.equalToOne && arg.divisibility > 1)
        return fieldError(field + ".equal_to_one",
                          "contradicts the divisibility " +
                              std::to_string(arg.divisibility));
    }
    out.push_back(std::move(arg));
  }
  return Status::success();
}

Status readConfig(const Json &object, std::map<std::string, int64_t> &out) {
  const Json *value = find(object, "config");
  if (!value)
    return Status::success();
  if (!value->is_object())
    return fieldError("config", "must be an object, got " + describe(*value));
  for (auto it = value->begin(); it != value->end(); ++it) {
    std::string field = "config." + it.key();
    if (it->is_boolean()) {
      out[it.key()] = it->get<bool>() ? 1 : 0;
      continue;
    }
    int64_t parsed = 0;
    if (!it->is_number_integer())
      return fieldError(field, "must be an integer or a boolean, got " +
                                   describe(*it));
    if (Status status =
            checkInt(*it, field, std::numeric_limits<int64_t>::min(),
                     std::numeric_limits<int64_t>::max(), parsed);
        !status.ok())
      return status;
    out[it.key()] = parsed;
  }
  return Status::success();
}

Status readHashes(const Json &object, std::map<std::string, std::string> &out) {
  const Json *value = find(object, "hashes");
  if (!value)
    return Status::success();
  if (!value->is_object())
    return fieldError("hashes", "must be an object, got " + describe(*value));
  for (auto it = value->begin(); it != value->end(); ++it) {
    if (!it->is_string())
      return fieldError("hashes." + it.key(),
                        "must be a string, got " + describe(*it));
    out[it.key()] = it->get_ref<const std::string &>();
  }
  return Status::success();
}

Status parseInto(std::string_view text, KernelMetadata &md) {
  Json root = Json::parse(text.begin(), text.end(), /*cb=*/nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    ParseErrorCollector collector;
    (void)Json::sax_parse(text.begin(), text.end(), &collector);
    return Status::error("invalid json: " + collector.message);
  }
  if (!root.is_object())
    return Status::error("expected a json object, got " + describe(root));

  Status status = readString(root, "name", md.name, true);
  if (status.ok())
    status = readString(root, "kernel_name", md.kernelName, true);
  if (status.ok())
    status = readString(root, "target", md.target, true);
  if (status.ok() && md.target.compare(0, 3, "sm_") != 0)
    status = fieldError("target", "must name a GPU architecture like "
                                  "\"sm_90\", got \"" +
                                      md.target + "\"");
  // 32 warps of 32 threads is the CUDA limit of 1024 threads per block.
  if (status.ok())
    status = readInt(root, "num_warps", 1, 32, md.numWarps);
  if (status.ok())
    status = readInt(root, "threads_per_warp", 32, 32, md.threadsPerWarp);
  if (status.ok())
    status = readInt(root, "num_stages", 0, 64, md.numStages);
  if (status.ok())
    status = readInt(root, "shared_bytes", 0,
                     std::numeric_limits<uint32_t>::max(), md.sharedBytes);
  if (status.ok())
    status = readSignature(root, md.signature);
  if (status.ok())
    status = readOptionalInt(root, "registers", md.registers);
  if (status.ok())
    status = readOptionalInt(root, "spill_stores", md.spillStores);
  if (status.ok())
    status = readOptionalInt(root, "spill_loads", md.spillLoads);
  if (status.ok())
    status = readConfig(root, md.config);
  if (status.ok())
    status = readHashes(root, md.hashes);
  if (status.ok())
    status = readString(root, "compiler_id", md.compilerId, false);
  return status;
}

} // namespace

Result<KernelMetadata> KernelMetadata::parse(std::string_view json) {
  KernelMetadata md;
  if (Status status = parseInto(json, md); !status.ok())
    return status.withContext("kernel metadata");
  return md;
}

Result<KernelMetadata> KernelMetadata::readFile(const std::string &path) {
  Result<std::string> contents = detail::readFile(path);
  if (!contents)
    return contents.status();
  Result<KernelMetadata> md = parse(*contents);
  if (!md)
    return md.status().withContext(path);
  return md;
}

} // namespace tilec::rt
