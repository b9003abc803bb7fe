//===- ArgType.cpp - Types of kernel arguments ----------------------------===//

#include "tilec/contract/ArgType.h"

#include <utility>

namespace tilec {
namespace {

struct ArgTypeInfo {
  ArgType type;
  const char *name;
  size_t size;
};

// Indexed by ArgType.
constexpr ArgTypeInfo kArgTypes[] = {
    {ArgType::Ptr, "ptr", 8},   {ArgType::I8, "i8", 1},
    {ArgType::I16, "i16", 2},   {ArgType::I32, "i32", 4},
    {ArgType::I64, "i64", 8},   {ArgType::U8, "u8", 1},
    {ArgType::U16, "u16", 2},   {ArgType::U32, "u32", 4},
    {ArgType::U64, "u64", 8},   {ArgType::F16, "f16", 2},
    {ArgType::BF16, "bf16", 2}, {ArgType::F32, "f32", 4},
    {ArgType::F64, "f64", 8},
};

constexpr bool tableIsIndexedByArgType() {
  for (size_t i = 0; i < sizeof(kArgTypes) / sizeof(kArgTypes[0]); ++i)
    if (static_cast<size_t>(kArgTypes[i].type) != i)
      return false;
  return true;
}
static_assert(tableIsIndexedByArgType(), "kArgTypes must follow ArgType");

const ArgTypeInfo &info(ArgType type) {
  return kArgTypes[static_cast<size_t>(type)];
}

} // namespace

Result<ArgType> parseArgType(std::string_view spelling) {
  if (spelling == "ptr" ||
      (spelling.size() > 5 && spelling.substr(0, 4) == "ptr<" &&
       spelling.back() == '>'))
    return ArgType::Ptr;
  for (const ArgTypeInfo &candidate : kArgTypes)
    if (candidate.type != ArgType::Ptr && spelling == candidate.name)
      return candidate.type;
  return Status::error("unknown argument type '" + std::string(spelling) +
                       "' (expected ptr<...>, i8, i16, i32, i64, u8, u16, "
                       "u32, u64, f16, bf16, f32 or f64)");
}

const char *argTypeName(ArgType type) { return info(type).name; }

size_t argTypeSize(ArgType type) { return info(type).size; }

bool isIntegerArgType(ArgType type) {
  return type != ArgType::Ptr && !isFloatArgType(type);
}

bool isSignedArgType(ArgType type) {
  return type == ArgType::I8 || type == ArgType::I16 || type == ArgType::I32 ||
         type == ArgType::I64;
}

bool isFloatArgType(ArgType type) {
  return type == ArgType::F16 || type == ArgType::BF16 ||
         type == ArgType::F32 || type == ArgType::F64;
}

Result<ResolvedTensorMap>
resolveTensorMap(const TensorMapParam &map,
                 const std::vector<KernelArg> &signature,
                 const char **brokenKey) {
  const char *key = nullptr;
  auto refuse = [&](const char *field, std::string problem) {
    key = field;
    return Status::error(std::move(problem));
  };
  // The index of the argument `name`, which must be a pointer when `pointer`
  // is set and an integer otherwise.
  auto find = [&](const char *field, const std::string &name, bool pointer,
                  size_t &index) {
    for (size_t i = 0; i < signature.size(); ++i) {
      if (signature[i].name != name)
        continue;
      ArgType type = signature[i].type;
      if (pointer ? type != ArgType::Ptr : !isIntegerArgType(type))
        return refuse(field, "names '" + name + "' (" + signature[i].spelling +
                                 "), which is not " +
                                 (pointer ? "a pointer" : "an integer") +
                                 " argument");
      index = i;
      return Status::success();
    }
    return refuse(field, "names '" + name +
                             "', which is not an argument of the kernel");
  };

  ResolvedTensorMap resolved;
  Status status = find("base", map.base, true, resolved.base);
  if (status.ok())
    status = find("rows", map.rows, false, resolved.rows);
  if (status.ok())
    status = find("cols", map.cols, false, resolved.cols);
  if (status.ok())
    status = find("row_stride", map.rowStride, false, resolved.rowStride);
  if (status.ok()) {
    Result<ArgType> element = parseArgType(map.element);
    if (element && (*element == ArgType::F16 || *element == ArgType::BF16 ||
                    *element == ArgType::F32))
      resolved.element = *element;
    else
      status =
          refuse("element", "must be \"f16\", \"bf16\" or \"f32\", got \"" +
                                map.element + "\"");
  }
  for (auto [field, side] :
       {std::pair("box_rows", map.boxRows), std::pair("box_cols", map.boxCols)})
    if (status.ok() && (side < 1 || side > 256))
      status =
          refuse(field, "must be in [1, 256], got " + std::to_string(side));
  if (status.ok() && map.swizzleBytes != 0 && map.swizzleBytes != 32 &&
      map.swizzleBytes != 64 && map.swizzleBytes != 128)
    status = refuse("swizzle", "must be 0, 32, 64 or 128, got " +
                                   std::to_string(map.swizzleBytes));
  if (!status.ok()) {
    if (brokenKey)
      *brokenKey = key;
    return status;
  }
  return resolved;
}

} // namespace tilec
