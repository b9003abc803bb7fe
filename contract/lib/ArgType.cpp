//===- ArgType.cpp - Types of kernel arguments ----------------------------===//

#include "tilec/contract/ArgType.h"

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

} // namespace tilec
