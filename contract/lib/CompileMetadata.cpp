//===- CompileMetadata.cpp - The compile json's one writer and reader -----===//

#include "tilec/contract/CompileMetadata.h"

#include "JsonReader.h"
#include "tilec/contract/InterpreterDevice.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace tilec {
namespace {

using Json = nlohmann::ordered_json;
using contract_detail::JsonReader;

Status readArgument(JsonReader &reader, const Json &entry,
                    const std::string &field, std::vector<KernelArg> &out) {
  KernelArg arg;
  TILEC_RETURN_IF_ERROR(reader.string(entry, "name", field, arg.name));
  TILEC_RETURN_IF_ERROR(reader.string(entry, "type", field, arg.spelling));
  Result<ArgType> type = parseArgType(arg.spelling);
  if (!type)
    return JsonReader::fieldError(field, "type", type.message());
  arg.type = *type;
  if (JsonReader::has(entry, "divisibility")) {
    TILEC_RETURN_IF_ERROR(
        reader.integer(entry, "divisibility", field, arg.divisibility, 1));
    if ((arg.divisibility & (arg.divisibility - 1)) != 0)
      return JsonReader::fieldError(field, "divisibility",
                                    "must be a positive power of two, got " +
                                        std::to_string(arg.divisibility));
    if (isFloatArgType(arg.type))
      return JsonReader::fieldError(field, "divisibility",
                                    "is set on a floating-point argument");
  }
  TILEC_RETURN_IF_ERROR(
      reader.optionalBoolean(entry, "equal_to_one", field, arg.equalToOne));
  if (arg.equalToOne && !isIntegerArgType(arg.type))
    return JsonReader::fieldError(field, "equal_to_one",
                                  "is set on a non-integer argument");
  if (arg.equalToOne && arg.divisibility > 1)
    return JsonReader::fieldError(field, "equal_to_one",
                                  "contradicts the divisibility " +
                                      std::to_string(arg.divisibility));
  out.push_back(std::move(arg));
  return Status::success();
}

Status readTensorMap(JsonReader &reader, const Json &entry,
                     const std::string &field,
                     const std::vector<KernelArg> &signature,
                     std::vector<TensorMapParam> &out) {
  TensorMapParam map;
  for (auto [key, value] :
       {std::pair("base", &map.base), std::pair("rows", &map.rows),
        std::pair("cols", &map.cols), std::pair("row_stride", &map.rowStride),
        std::pair("element", &map.element)})
    TILEC_RETURN_IF_ERROR(reader.string(entry, key, field, *value));
  for (auto [key, value] : {std::pair("box_rows", &map.boxRows),
                            std::pair("box_cols", &map.boxCols),
                            std::pair("swizzle", &map.swizzleBytes)}) {
    int64_t read = 0;
    TILEC_RETURN_IF_ERROR(reader.integer(entry, key, field, read, 0,
                                         std::numeric_limits<uint32_t>::max()));
    *value = static_cast<uint32_t>(read);
  }
  // The names and the values, checked by the rules the runtime applies when
  // it builds an ArgPack.
  const char *brokenKey = "";
  Result<ResolvedTensorMap> resolved =
      resolveTensorMap(map, signature, &brokenKey);
  if (!resolved)
    return JsonReader::fieldError(field, brokenKey, resolved.message());
  out.push_back(std::move(map));
  return Status::success();
}

Status readOptionalInt(JsonReader &reader, const Json &root, const char *key,
                       std::optional<int> &out) {
  if (!JsonReader::has(root, key))
    return Status::success();
  int64_t value = 0;
  TILEC_RETURN_IF_ERROR(
      reader.integer(root, key, "", value, 0, std::numeric_limits<int>::max()));
  out = static_cast<int>(value);
  return Status::success();
}

template <typename T>
Status readInt(JsonReader &reader, const Json &root, const char *key,
               int64_t min, int64_t max, T &out) {
  int64_t value = 0;
  TILEC_RETURN_IF_ERROR(reader.integer(root, key, "", value, min, max));
  out = static_cast<T>(value);
  return Status::success();
}

Status readStageTimes(const Json &root, std::map<std::string, double> &out) {
  if (!JsonReader::has(root, "compile_ms"))
    return Status::success();
  const Json &times = root["compile_ms"];
  if (!times.is_object())
    return JsonReader::fieldError("", "compile_ms",
                                  "must be an object, got " +
                                      JsonReader::describe(times));
  for (auto it = times.begin(); it != times.end(); ++it) {
    if (!it->is_number())
      return JsonReader::fieldError("compile_ms", it.key().c_str(),
                                    "must be a number, got " +
                                        JsonReader::describe(*it));
    out[it.key()] = it->get<double>();
  }
  return Status::success();
}

Status readCacheRecords(
    JsonReader &reader, const Json &root,
    std::map<std::string, CompileMetadata::StageCacheRecord> &out) {
  if (!JsonReader::has(root, "cache"))
    return Status::success();
  const Json &cache = root["cache"];
  if (!cache.is_object())
    return JsonReader::fieldError("", "cache",
                                  "must be an object, got " +
                                      JsonReader::describe(cache));
  for (auto it = cache.begin(); it != cache.end(); ++it) {
    std::string field = "cache." + it.key();
    if (!it->is_object())
      return Status::error("field '" + field + "' must be an object, got " +
                           JsonReader::describe(*it));
    CompileMetadata::StageCacheRecord record;
    TILEC_RETURN_IF_ERROR(reader.string(*it, "key", field, record.key));
    TILEC_RETURN_IF_ERROR(
        reader.optionalString(*it, "result", field, record.result));
    out[it.key()] = std::move(record);
  }
  return Status::success();
}

Status parseInto(std::string_view text, CompileMetadata &md) {
  JsonReader reader;
  Result<Json> parsed = reader.parse(text);
  if (!parsed)
    return parsed.status();
  const Json &root = *parsed;
  Status status = reader.string(root, "name", "", md.name);
  if (status.ok())
    status = reader.string(root, "kernel_name", "", md.kernelName);
  if (status.ok())
    status = reader.string(root, "target", "", md.target);
  if (status.ok() && md.target.compare(0, 3, "sm_") != 0 &&
      md.target != kInterpreterTarget)
    status = JsonReader::fieldError("", "target",
                                    "must name a GPU architecture like "
                                    "\"sm_90\" (or \"interp\"), got \"" +
                                        md.target + "\"");
  // 32 warps of 32 threads is the CUDA limit of 1024 threads per block.
  if (status.ok())
    status = readInt(reader, root, "num_warps", 1, 32, md.numWarps);
  if (status.ok())
    status = readInt(reader, root, "threads_per_warp", 32, 32,
                     md.threadsPerWarp);
  if (status.ok())
    status = readInt(reader, root, "num_stages", 0, 64, md.numStages);
  if (status.ok() && JsonReader::has(root, "min_blocks_per_sm"))
    status =
        readInt(reader, root, "min_blocks_per_sm", 1, 32, md.minBlocksPerSM);
  if (status.ok())
    status = readInt(reader, root, "shared_bytes", 0,
                     std::numeric_limits<uint32_t>::max(), md.sharedBytes);
  if (status.ok())
    status = reader.objects(root, "signature",
                            [&](const Json &entry, const std::string &field) {
                              return readArgument(reader, entry, field,
                                                  md.signature);
                            });
  if (status.ok() && JsonReader::has(root, "tensor_maps"))
    status = reader.objects(root, "tensor_maps",
                            [&](const Json &entry, const std::string &field) {
                              return readTensorMap(reader, entry, field,
                                                   md.signature, md.tensorMaps);
                            });
  if (status.ok())
    status = readOptionalInt(reader, root, "registers", md.registers);
  if (status.ok())
    status = readOptionalInt(reader, root, "spill_stores", md.spillStores);
  if (status.ok())
    status = readOptionalInt(reader, root, "spill_loads", md.spillLoads);
  if (status.ok())
    status = readOptionalInt(reader, root, "stack_frame_bytes",
                             md.stackFrameBytes);
  if (status.ok())
    status = reader.optionalBoolean(root, "wgmma_serialized", "",
                                    md.wgmmaSerialized);
  if (status.ok())
    status = reader.integerMap(root, "config", md.config);
  if (status.ok())
    status = reader.stringMap(root, "types", md.types);
  if (status.ok())
    status = reader.stringMap(root, "hashes", md.hashes);
  if (status.ok())
    status = reader.optionalString(root, "compiler_id", "", md.compilerId);
  if (status.ok())
    status = readStageTimes(root, md.compileMs);
  if (status.ok())
    status = readCacheRecords(reader, root, md.cache);
  return status;
}

/// The keys of a per-stage map in pipeline order (ttir first, cubin last),
/// then any other names: the json reads like the pipeline.
template <typename Map> std::vector<std::string> stageOrder(const Map &map) {
  static const char *const kStages[] = {"ttir", "ttgir", "llir", "ptx",
                                        "cubin"};
  std::vector<std::string> keys;
  for (const char *stage : kStages)
    if (map.count(stage))
      keys.push_back(stage);
  for (const auto &entry : map)
    if (std::find(keys.begin(), keys.end(), entry.first) == keys.end())
      keys.push_back(entry.first);
  return keys;
}

} // namespace

std::string CompileMetadata::cubinKey() const {
  auto it = cache.find("cubin");
  return it == cache.end() ? "" : it->second.key;
}

std::string CompileMetadata::toJson() const {
  Json json;
  json["name"] = name;
  json["kernel_name"] = kernelName;
  json["target"] = target;
  json["num_warps"] = numWarps;
  json["threads_per_warp"] = threadsPerWarp;
  json["num_stages"] = numStages;
  if (minBlocksPerSM != 1)
    json["min_blocks_per_sm"] = minBlocksPerSM;
  json["shared_bytes"] = sharedBytes;
  for (auto [key, value] : {std::pair("registers", registers),
                            std::pair("spill_stores", spillStores),
                            std::pair("spill_loads", spillLoads),
                            std::pair("stack_frame_bytes", stackFrameBytes)})
    if (value)
      json[key] = *value;
  if (wgmmaSerialized)
    json["wgmma_serialized"] = true;
  json["config"] = Json::object();
  for (const auto &[key, value] : config)
    json["config"][key] = value;
  json["types"] = Json::object();
  for (const auto &[key, value] : types)
    json["types"][key] = value;
  json["signature"] = Json::array();
  for (const KernelArg &arg : signature) {
    Json entry = {{"name", arg.name}, {"type", arg.spelling}};
    if (arg.divisibility > 1)
      entry["divisibility"] = arg.divisibility;
    if (arg.equalToOne)
      entry["equal_to_one"] = true;
    json["signature"].push_back(std::move(entry));
  }
  // Absent without maps, so that the jsons of kernels without TMA stay as
  // they were.
  if (!tensorMaps.empty()) {
    json["tensor_maps"] = Json::array();
    for (const TensorMapParam &map : tensorMaps)
      json["tensor_maps"].push_back({{"base", map.base},
                                     {"rows", map.rows},
                                     {"cols", map.cols},
                                     {"row_stride", map.rowStride},
                                     {"element", map.element},
                                     {"box_rows", map.boxRows},
                                     {"box_cols", map.boxCols},
                                     {"swizzle", map.swizzleBytes}});
  }
  json["hashes"] = Json::object();
  for (const std::string &stage : stageOrder(hashes))
    json["hashes"][stage] = hashes.at(stage);
  json["compiler_id"] = compilerId;
  json["compile_ms"] = Json::object();
  for (const std::string &stage : stageOrder(compileMs))
    json["compile_ms"][stage] = compileMs.at(stage);
  if (!cache.empty()) {
    json["cache"] = Json::object();
    for (const std::string &stage : stageOrder(cache))
      json["cache"][stage] = {{"key", cache.at(stage).key},
                              {"result", cache.at(stage).result}};
  }
  return json.dump(2) + "\n";
}

Result<CompileMetadata> CompileMetadata::parse(std::string_view json) {
  CompileMetadata md;
  if (Status status = parseInto(json, md); !status.ok())
    return status.withContext("kernel metadata");
  return md;
}

} // namespace tilec
