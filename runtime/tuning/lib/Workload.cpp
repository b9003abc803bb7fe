//===- Workload.cpp - The calls a program makes, to warm up later ---------===//
//
// nlohmann::json without exceptions (the library is built -fno-exceptions):
// every value's type is checked before it is read, since an accessor on the
// wrong type would abort. The canonical text is written by hand rather than
// by dump(), which aborts on a string that is not UTF-8 and has no ", "
// separators.
//
//===----------------------------------------------------------------------===//

#include "tilec/runtime/Workload.h"

#include "tilec/contract/Config.h"
#include "tilec/contract/JsonError.h"
#include "tilec/runtime/Environment.h"
#include "tilec/runtime/FileIO.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <set>
#include <type_traits>

namespace tilec::rt {
namespace {

using Json = nlohmann::json;

constexpr const char *kFormat = "tilec-workload";
constexpr int64_t kVersion = 1;

//===----------------------------------------------------------------------===//
// Canonical text
//===----------------------------------------------------------------------===//

// The length of the well-formed UTF-8 sequence at text[at] (RFC 3629: no
// overlong form, no surrogate, nothing past U+10FFFF), or 0.
size_t utf8SequenceAt(std::string_view text, size_t at) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(at);
  size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 ? 2 : 0;
  if (lead > 0xF4 || length == 0 || at + length > text.size())
    return 0;
  // The second byte's range depends on the lead (overlongs, surrogates and
  // the code space's end are cut there); the rest are 0x80-0xBF.
  unsigned char low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
  unsigned char high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
  if (byte(at + 1) < low || byte(at + 1) > high)
    return 0;
  for (size_t i = at + 2; i < at + length; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xBF)
      return 0;
  return length;
}

// A JSON string. tilec's names are ASCII, but a name read from a workload
// file may be any UTF-8 (the parser checked it), which is kept as it is, so
// that the text parses back to the same name; a control character, and a
// byte of no UTF-8 sequence (only a program can pass one), is escaped on
// its own, so that the file stays valid JSON whatever a program passes.
void appendQuoted(std::string &out, std::string_view text) {
  out += '"';
  for (size_t at = 0; at < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[at]);
    if (size_t length = c >= 0x80 ? utf8SequenceAt(text, at) : 0) {
      out.append(text, at, length);
      at += length;
      continue;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x80) {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
      out += buffer;
    } else {
      out += static_cast<char>(c);
    }
    ++at;
  }
  out += '"';
}

template <typename Map, typename AppendValue>
void appendObject(std::string &out, const Map &map, AppendValue appendValue) {
  out += '{';
  bool first = true;
  for (const auto &[name, value] : map) {
    if (!first)
      out += ", ";
    first = false;
    appendQuoted(out, name);
    out += ": ";
    appendValue(out, value);
  }
  out += '}';
}

void appendField(std::string &out, const char *name) {
  if (out.size() > 1)
    out += ", ";
  appendQuoted(out, name);
  out += ": ";
}

std::string encodeKernelCall(const std::string &kernel, const Call &call) {
  auto integer = [](std::string &out, int64_t value) {
    out += std::to_string(value);
  };
  std::string out = "{";
  appendField(out, "kernel");
  appendQuoted(out, kernel);
  appendField(out, "sizes");
  appendObject(out, call.sizes, integer);
  appendField(out, "types");
  appendObject(out, call.types,
               [](std::string &text, const std::string &value) {
                 appendQuoted(text, value);
               });
  appendField(out, "params");
  appendObject(out, call.params, integer);
  return out + "}";
}

std::string encodeConvLayer(const ConvLayer &layer) {
  std::string out = "{";
  auto integer = [&](const char *name, int64_t value) {
    appendField(out, name);
    out += std::to_string(value);
  };
  // One integer where the axes agree (a cubic window), else three.
  auto perAxis = [&](const char *name, const std::array<int, 3> &values) {
    if (values[0] == values[1] && values[1] == values[2])
      return integer(name, values[0]);
    appendField(out, name);
    out += "[" + std::to_string(values[0]) + ", " + std::to_string(values[1]) +
           ", " + std::to_string(values[2]) + "]";
  };
  auto boolean = [&](const char *name, bool value) {
    appendField(out, name);
    out += value ? "true" : "false";
  };
  appendField(out, "op");
  appendQuoted(out, kSubmanifoldConvOp);
  integer("voxels", layer.voxels);
  integer("in_channels", layer.inChannels);
  integer("out_channels", layer.outChannels);
  perAxis("kernel_size", layer.kernelSize);
  perAxis("dilation", layer.dilation);
  appendField(out, "dtype");
  appendQuoted(out, layer.dtype);
  boolean("bias", layer.bias);
  boolean("allow_tf32", layer.allowTf32);
  if (layer.xRowStride)
    integer("x_row_stride", layer.xRowStride);
  if (layer.yRowStride)
    integer("y_row_stride", layer.yRowStride);
  return out + "}";
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

// The parser's message without its "[json.exception.parse_error.101] " tag.
std::string invalidJsonMessage(std::string_view text) {
  std::string message = jsonParseError(text);
  if (size_t tag = message.find("] "); tag != std::string::npos)
    message = message.substr(tag + 2);
  return message.empty() ? "not valid JSON" : "not valid JSON: " + message;
}

// "an array", "a string", ...: what a wrong value is, for messages.
std::string kindOf(const Json &value) {
  if (value.is_number_integer())
    return "an integer";
  if (value.is_number())
    return "a number";
  std::string name = value.type_name();
  bool vowel = name[0] == 'a' || name[0] == 'o';
  return (vowel ? "an " : "a ") + name;
}

// Reads one entry of "calls"; errors name the field (the caller adds the
// file and the index).
class EntryParser {
public:
  explicit EntryParser(const Json &entry) : entry_(entry) {}

  Result<WorkloadCall> parse() {
    if (!entry_.is_object())
      return Status::error("an entry must be an object, got " +
                           kindOf(entry_));
    bool hasKernel = entry_.contains("kernel"), hasOp = entry_.contains("op");
    if (hasKernel && hasOp)
      return Status::error("an entry is a kernel call ('kernel') or an op "
                           "call ('op'), not both");
    if (hasKernel)
      return parseKernelCall();
    if (hasOp)
      return parseOpCall();
    return Status::error("an entry needs 'kernel' (a kernel call) or 'op' "
                         "(an op call)");
  }

private:
  // The entry's field `name` (null when missing: operator[] on a const
  // object must not be given a missing key).
  const Json &field(const char *name) const {
    static const Json missing;
    auto it = entry_.find(name);
    return it == entry_.end() ? missing : *it;
  }

  Status checkFields(const std::vector<const char *> &known,
                     const char *what) const {
    for (auto it = entry_.begin(); it != entry_.end(); ++it) {
      bool isKnown = false;
      for (const char *name : known)
        isKnown = isKnown || it.key() == name;
      if (isKnown)
        continue;
      std::string list;
      for (const char *name : known)
        list += std::string(list.empty() ? "" : ", ") + name;
      return Status::error("unknown field '" + it.key() + "' (" + what +
                           " has " + list + ")");
    }
    return Status::success();
  }

  Result<std::string> string(const char *name) const {
    const Json &value = field(name);
    if (!value.is_string() || value.get<std::string>().empty())
      return Status::error(std::string("'") + name +
                           "' must be a non-empty string, got " +
                           (value.is_string() ? "an empty one" : kindOf(value)));
    return value.get<std::string>();
  }

  // An integer in [min, max]; `what` says which values are allowed.
  Result<int64_t> integer(const char *name, int64_t min, int64_t max,
                          const char *what) const {
    return integerOf(field(name), name, min, max, what);
  }
  // The same of `value`, called `name` in the error.
  static Result<int64_t> integerOf(const Json &value, const std::string &name,
                                   int64_t min, int64_t max, const char *what) {
    auto fail = [&](const std::string &got) {
      return Status::error("'" + name + "' must be " + what + ", got " + got);
    };
    if (!value.is_number_integer())
      return fail(value.is_number() ? value.dump() : kindOf(value));
    if (value.is_number_unsigned() &&
        value.get<uint64_t>() >
            static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return fail(value.dump());
    int64_t number = value.get<int64_t>();
    if (number < min || number > max)
      return fail(std::to_string(number));
    return number;
  }

  // An integer for all three axes, or a list of three (x, y, z), each in
  // [min, max] and odd where `odd`.
  Result<std::array<int, 3>> perAxis(const char *name, int64_t min, int64_t max,
                                     const char *what, bool odd) const {
    const Json &value = field(name);
    std::array<int, 3> axes{};
    for (size_t axis = 0; axis < 3; ++axis) {
      bool list = value.is_array();
      if (list && value.size() != 3)
        return Status::error(std::string("'") + name +
                             "' must be an integer or a list of three, got "
                             "a list of " +
                             std::to_string(value.size()));
      std::string label =
          list ? std::string(name) + "[" + std::to_string(axis) + "]" : name;
      Result<int64_t> number =
          integerOf(list ? value[axis] : value, label, min, max, what);
      if (!number)
        return number.status();
      if (odd && *number % 2 == 0)
        return Status::error("'" + label + "' must be " + what + ", got " +
                             std::to_string(*number));
      axes[axis] = static_cast<int>(*number);
    }
    return axes;
  }

  Result<bool> boolean(const char *name) const {
    const Json &value = field(name);
    if (!value.is_boolean())
      return Status::error(std::string("'") + name +
                           "' must be true or false, got " + kindOf(value));
    return value.get<bool>();
  }

  // `name` -> integer, as a Call's sizes and params are.
  Result<std::map<std::string, int64_t>> integers(const char *name) const {
    std::map<std::string, int64_t> values;
    if (!entry_.contains(name))
      return values;
    const Json &object = field(name);
    if (!object.is_object())
      return Status::error(std::string("'") + name +
                           "' must be an object of names to integers, got " +
                           kindOf(object));
    for (auto it = object.begin(); it != object.end(); ++it) {
      if (it.key().empty())
        return Status::error(std::string("'") + name +
                             "' has an empty name");
      const Json &value = *it;
      bool fits = value.is_number_integer() &&
                  !(value.is_number_unsigned() &&
                    value.get<uint64_t>() >
                        static_cast<uint64_t>(
                            std::numeric_limits<int64_t>::max()));
      if (!fits)
        return Status::error(std::string(name) + " '" + it.key() +
                             "' must be an integer, got " +
                             (value.is_number() ? value.dump() : kindOf(value)));
      values[it.key()] = value.get<int64_t>();
    }
    return values;
  }

  Result<std::map<std::string, std::string>> types() const {
    std::map<std::string, std::string> values;
    if (!entry_.contains("types"))
      return values;
    const Json &object = field("types");
    if (!object.is_object())
      return Status::error("'types' must be an object of names to scalar "
                           "types, got " +
                           kindOf(object));
    for (auto it = object.begin(); it != object.end(); ++it) {
      if (it.key().empty())
        return Status::error("'types' has an empty name");
      const Json &value = *it;
      if (!value.is_string() || !isScalarTypeName(value.get<std::string>()))
        return Status::error(
            "types '" + it.key() +
            "' must be a scalar type (i1, i8, i16, i32, i64, f16, bf16, f32, "
            "f64), got " +
            (value.is_string() ? "'" + value.get<std::string>() + "'"
                               : kindOf(value)));
      values[it.key()] = value.get<std::string>();
    }
    return values;
  }

  Result<WorkloadCall> parseKernelCall() const {
    TILEC_RETURN_IF_ERROR(
        checkFields({"kernel", "sizes", "types", "params"}, "a kernel call"));
    Result<std::string> kernel = string("kernel");
    if (!kernel)
      return kernel.status();
    Call call;
    Result<std::map<std::string, int64_t>> sizes = integers("sizes");
    if (!sizes)
      return sizes.status();
    call.sizes = std::move(*sizes);
    Result<std::map<std::string, std::string>> typeValues = types();
    if (!typeValues)
      return typeValues.status();
    call.types = std::move(*typeValues);
    Result<std::map<std::string, int64_t>> params = integers("params");
    if (!params)
      return params.status();
    call.params = std::move(*params);
    return WorkloadCall::kernelCall(std::move(*kernel), std::move(call));
  }

  Result<WorkloadCall> parseOpCall() const {
    TILEC_RETURN_IF_ERROR(
        checkFields({"op", "voxels", "in_channels", "out_channels",
                     "kernel_size", "dilation", "dtype", "bias", "allow_tf32",
                     "x_row_stride", "y_row_stride"},
                    "an op call"));
    Result<std::string> op = string("op");
    if (!op)
      return op.status();
    if (*op != kSubmanifoldConvOp)
      return Status::error("unknown op '" + *op + "' (known: " +
                           kSubmanifoldConvOp + ")");
    for (const char *required :
         {"voxels", "in_channels", "out_channels", "dtype"})
      if (!entry_.contains(required))
        return Status::error(std::string("an op call needs '") + required +
                             "'");
    // The kernel's element offsets are 32-bit.
    constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
    ConvLayer layer;
    struct IntegerField {
      const char *name;
      int64_t min, max;
      const char *what;
      int64_t *into;
    };
    // Checked in the format's order: the sizes, the window, the strides.
    auto read = [&](std::initializer_list<IntegerField> fields) -> Status {
      for (const IntegerField &field : fields) {
        if (!entry_.contains(field.name))
          continue;
        Result<int64_t> value =
            integer(field.name, field.min, field.max, field.what);
        if (!value)
          return value.status();
        *field.into = *value;
      }
      return Status::success();
    };
    TILEC_RETURN_IF_ERROR(read(
        {{"voxels", 1, kInt32Max, "a positive integer", &layer.voxels},
         {"in_channels", 1, kInt32Max, "a positive integer", &layer.inChannels},
         {"out_channels", 1, kInt32Max, "a positive integer",
          &layer.outChannels}}));
    // The window: one extent and dilation for all axes, or one per axis.
    if (entry_.contains("kernel_size")) {
      Result<std::array<int, 3>> kernel =
          perAxis("kernel_size", 1, 7, "odd, 1 to 7", /*odd=*/true);
      if (!kernel)
        return kernel.status();
      layer.kernelSize = *kernel;
    }
    if (entry_.contains("dilation")) {
      Result<std::array<int, 3>> dilation =
          perAxis("dilation", 1, 65535, "a positive integer", /*odd=*/false);
      if (!dilation)
        return dilation.status();
      layer.dilation = *dilation;
    }
    TILEC_RETURN_IF_ERROR(read({{"x_row_stride", 1, kInt32Max,
                                 "a positive integer", &layer.xRowStride},
                                {"y_row_stride", 1, kInt32Max,
                                 "a positive integer", &layer.yRowStride}}));
    Result<std::string> dtype = string("dtype");
    if (!dtype)
      return dtype.status();
    if (*dtype != "f16" && *dtype != "bf16" && *dtype != "f32")
      return Status::error("'dtype' must be f16, bf16 or f32, got '" + *dtype +
                           "'");
    layer.dtype = *dtype;
    for (auto [name, into] : {std::pair{"bias", &layer.bias},
                              std::pair{"allow_tf32", &layer.allowTf32}}) {
      if (!entry_.contains(name))
        continue;
      Result<bool> value = boolean(name);
      if (!value)
        return value.status();
      *into = *value;
    }
    if (layer.allowTf32 && layer.dtype != "f32")
      return Status::error("'allow_tf32' applies to f32 only, the dtype is " +
                           layer.dtype);
    if (layer.xRowStride && layer.xRowStride < layer.inChannels)
      return Status::error("'x_row_stride' must be at least 'in_channels' (" +
                           std::to_string(layer.inChannels) + "), got " +
                           std::to_string(layer.xRowStride));
    if (layer.yRowStride && layer.yRowStride < layer.outChannels)
      return Status::error("'y_row_stride' must be at least 'out_channels' (" +
                           std::to_string(layer.outChannels) + "), got " +
                           std::to_string(layer.yRowStride));
    return WorkloadCall::convCall(std::move(layer));
  }

  const Json &entry_;
};

} // namespace

//===----------------------------------------------------------------------===//
// WorkloadCall
//===----------------------------------------------------------------------===//

WorkloadCall WorkloadCall::kernelCall(std::string kernel, Call call) {
  WorkloadCall entry;
  entry.kernel = std::move(kernel);
  entry.call = std::move(call);
  return entry;
}

WorkloadCall WorkloadCall::convCall(ConvLayer layer) {
  if (layer.xRowStride == layer.inChannels)
    layer.xRowStride = 0;
  if (layer.yRowStride == layer.outChannels)
    layer.yRowStride = 0;
  WorkloadCall entry;
  entry.conv = std::move(layer);
  return entry;
}

std::string WorkloadCall::encode() const {
  return conv ? encodeConvLayer(*conv) : encodeKernelCall(kernel, call);
}

Status WorkloadCall::validate() const {
  Json json = Json::parse(encode(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded())
    return Status::error("the call's text is not JSON"); // never: appendQuoted
  Result<WorkloadCall> parsed = EntryParser(json).parse();
  return parsed ? Status::success() : parsed.status();
}

std::string WorkloadCall::describe() const {
  if (!conv) {
    std::string text = kernel;
    auto list = [&](const auto &map) {
      if (map.empty())
        return;
      text += ' ';
      bool first = true;
      for (const auto &[name, value] : map) {
        text += (first ? "" : ",") + name + "=";
        if constexpr (std::is_same_v<std::decay_t<decltype(value)>,
                                     std::string>)
          text += value;
        else
          text += std::to_string(value);
        first = false;
      }
    };
    list(call.sizes);
    list(call.types);
    list(call.params);
    return text;
  }
  const ConvLayer &layer = *conv;
  // "3" for a cube, "1x3x3" otherwise.
  auto perAxis = [](const std::array<int, 3> &values) {
    if (values[0] == values[1] && values[1] == values[2])
      return std::to_string(values[0]);
    return std::to_string(values[0]) + "x" + std::to_string(values[1]) + "x" +
           std::to_string(values[2]);
  };
  std::string text =
      std::string(kSubmanifoldConvOp) + " N=" + std::to_string(layer.voxels) +
      " " + std::to_string(layer.inChannels) + "->" +
      std::to_string(layer.outChannels) + " k" + perAxis(layer.kernelSize) +
      " d" + perAxis(layer.dilation) + " " + layer.dtype;
  if (layer.bias)
    text += " bias";
  if (layer.allowTf32)
    text += " tf32";
  if (layer.xRowStride)
    text += " x_row_stride=" + std::to_string(layer.xRowStride);
  if (layer.yRowStride)
    text += " y_row_stride=" + std::to_string(layer.yRowStride);
  return text;
}

//===----------------------------------------------------------------------===//
// Workload
//===----------------------------------------------------------------------===//

Result<Workload> Workload::load(const std::string &path) {
  Result<std::string> text = readFile(path);
  if (!text)
    return text.status().withContext("workload");
  return parse(*text, path);
}

Result<Workload> Workload::parse(std::string_view text,
                                 const std::string &origin) {
  auto fail = [&](const std::string &message) {
    return Status::error("workload " + origin + ": " + message);
  };
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return fail("the file is empty (a workload is {\"format\": \"" +
                std::string(kFormat) + "\", \"version\": 1, \"calls\": [...]})");
  if (std::string deep = jsonNestingError(text); !deep.empty())
    return fail("is not valid JSON: it " + deep);
  Json root = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded())
    return fail(invalidJsonMessage(text));
  if (!root.is_object())
    return fail("must hold a JSON object ({\"format\": \"" +
                std::string(kFormat) + "\", \"version\": 1, \"calls\": [...]}), "
                "got " + kindOf(root));
  const Json *format = root.contains("format") ? &root["format"] : nullptr;
  if (!format || !format->is_string() ||
      format->get<std::string>() != kFormat)
    return fail(std::string("'format' must be \"") + kFormat + "\", got " +
                (!format             ? std::string("nothing")
                 : format->is_string() ? format->dump()
                                       : kindOf(*format)));
  const Json *version = root.contains("version") ? &root["version"] : nullptr;
  if (!version || !version->is_number_integer() ||
      version->get<int64_t>() != kVersion)
    return fail("'version' must be " + std::to_string(kVersion) +
                " (the version this tilec reads), got " +
                (!version ? std::string("nothing")
                 : version->is_number() ? version->dump()
                                        : kindOf(*version)));
  for (auto it = root.begin(); it != root.end(); ++it)
    if (it.key() != "format" && it.key() != "version" && it.key() != "calls")
      return fail("unknown field '" + it.key() +
                  "' (a workload has format, version, calls)");
  const Json *calls = root.contains("calls") ? &root["calls"] : nullptr;
  if (!calls || !calls->is_array())
    return fail("'calls' must be an array, got " +
                (calls ? kindOf(*calls) : std::string("nothing")));
  Workload workload;
  for (size_t i = 0; i < calls->size(); ++i) {
    Result<WorkloadCall> call = EntryParser((*calls)[i]).parse();
    if (!call)
      return fail("calls[" + std::to_string(i) + "]: " + call.message());
    workload.calls.push_back(std::move(*call));
  }
  return workload;
}

std::string Workload::encode() const {
  std::string out = "{\"format\": \"" + std::string(kFormat) +
                    "\", \"version\": " + std::to_string(kVersion) +
                    ", \"calls\": [";
  for (size_t i = 0; i < calls.size(); ++i)
    out += (i ? ",\n  " : "\n  ") + calls[i].encode();
  return out + (calls.empty() ? "]}\n" : "\n]}\n");
}

bool Workload::contains(const WorkloadCall &call) const {
  std::string text = call.encode();
  for (const WorkloadCall &listed : calls)
    if (listed.encode() == text)
      return true;
  return false;
}

bool Workload::add(WorkloadCall call) {
  if (contains(call))
    return false;
  calls.push_back(std::move(call));
  return true;
}

Status appendToWorkloadFile(const std::string &path,
                            const std::vector<WorkloadCall> &calls,
                            std::vector<std::string> *warnings) {
  auto fail = [&](const Status &status) {
    return status.withContext("cannot record into the workload file " + path);
  };
  for (const WorkloadCall &call : calls)
    if (Status status = call.validate(); !status.ok())
      return fail(status.withContext(call.describe()));
  if (Status status = makeDirectories(parentDirectory(path)); !status.ok())
    return fail(status);
  Result<FileLock> lock = FileLock::acquire(path + ".lock");
  if (!lock)
    return fail(lock.status());

  // Under the lock: what is on disk now is the latest, whoever wrote it.
  Workload workload;
  if (isRegularFile(path)) {
    Result<std::string> text = readFile(path);
    if (!text)
      return fail(text.status());
    Result<Workload> listed = text->empty() ? Workload()
                                            : Workload::parse(*text, path);
    if (listed) {
      workload = std::move(*listed);
    } else {
      // Never overwrite a file we cannot read: keep it for a human to look
      // at.
      std::string aside = path + ".corrupt";
      if (::rename(path.c_str(), aside.c_str()) != 0)
        return fail(Status::error(listed.message() + ", and moving it to " +
                                  aside + " failed: " + std::strerror(errno)));
      if (warnings)
        warnings->push_back(listed.message() + "; moved to " + aside +
                            " and started a new workload file");
    }
  }
  std::set<std::string> listedTexts;
  for (const WorkloadCall &call : workload.calls)
    listedTexts.insert(call.encode());
  bool added = false;
  for (const WorkloadCall &call : calls)
    if (listedTexts.insert(call.encode()).second) {
      workload.calls.push_back(call);
      added = true;
    }
  if (!added && isRegularFile(path))
    return Status::success();
  if (Status status = writeFileAtomically(path, workload.encode());
      !status.ok())
    return fail(status);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// WorkloadRecorder
//===----------------------------------------------------------------------===//

WorkloadRecorder::WorkloadRecorder(std::string path)
    : path_(std::move(path)), enabled_(!path_.empty()) {}

WorkloadRecorder &WorkloadRecorder::process() {
  static WorkloadRecorder recorder(readEnvironment().recordWorkload);
  return recorder;
}

void WorkloadRecorder::recordKernelCall(const std::string &kernel,
                                        const Call &call) {
  if (enabled())
    record(WorkloadCall::kernelCall(kernel, call));
}

void WorkloadRecorder::recordConvLayer(const ConvLayer &layer) {
  if (enabled())
    record(WorkloadCall::convCall(layer));
}

void WorkloadRecorder::record(const WorkloadCall &call) {
  if (!enabled())
    return;
  std::string text = call.encode();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!enabled() || !recorded_.insert(text).second)
    return;
  if (Status status = call.validate(); !status.ok()) {
    std::fprintf(stderr, "tilec: warning: not recording %s in %s: %s\n",
                 call.describe().c_str(), path_.c_str(),
                 status.message().c_str());
    return;
  }
  std::vector<std::string> warnings;
  Status status = appendToWorkloadFile(path_, {call}, &warnings);
  for (const std::string &warning : warnings)
    std::fprintf(stderr, "tilec: warning: %s\n", warning.c_str());
  if (!status.ok()) {
    std::fprintf(stderr,
                 "tilec: warning: %s; no more calls are recorded in this "
                 "process (TILEC_RECORD_WORKLOAD)\n",
                 status.message().c_str());
    enabled_.store(false, std::memory_order_relaxed);
  }
}

} // namespace tilec::rt
