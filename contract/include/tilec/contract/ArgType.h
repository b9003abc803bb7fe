//===- ArgType.h - Types of kernel arguments --------------------*- C++ -*-===//
//
// Part of tilec_contract, the kernel contract (no LLVM, no CUDA).
//
// The compile json spells each argument's type as a string ("ptr<f16>", "i32",
// ...); the runtime reduces it to the few ABI classes that decide how many
// bytes the argument occupies in the kernel's parameter space.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_CONTRACT_ARGTYPE_H
#define TILEC_CONTRACT_ARGTYPE_H

#include "tilec/contract/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tilec {

enum class ArgType : uint8_t {
  Ptr, // a 64-bit device address, whatever it points to
  I8,
  I16,
  I32,
  I64,
  U8,
  U16,
  U32,
  U64,
  F16,
  BF16,
  F32,
  F64,
};

// Accepts "ptr", any "ptr<...>" (the pointee is not checked: every pointer
// has the same ABI), and i8/i16/i32/i64, u8/u16/u32/u64, f16, bf16, f32, f64.
Result<ArgType> parseArgType(std::string_view spelling);

// The canonical spelling ("ptr", "i32", ...).
const char *argTypeName(ArgType type);

// Size in bytes; the alignment in the parameter space equals the size.
size_t argTypeSize(ArgType type);

bool isIntegerArgType(ArgType type);
bool isSignedArgType(ArgType type);
bool isFloatArgType(ArgType type);

// One entry of a kernel signature, as written in the compile json.
struct KernelArg {
  std::string name;
  std::string spelling; // as written, e.g. "ptr<f16>"
  ArgType type = ArgType::Ptr;
  // The kernel's specialization (the json's "divisibility", in bytes for a
  // pointer, and "equal_to_one"): ArgPack refuses a value that breaks it,
  // since the compiled code relies on it (vector widths, masks, constants).
  int64_t divisibility = 1;
  bool equalToOne = false;
};

// A TMA tensor map the kernel takes as a hidden 128-byte parameter after its
// signature's: a row-major 2-D array named by the signature's arguments.
struct TensorMapParam {
  // A pointer argument's name.
  std::string base;
  // Integer arguments' names: the array's rows, its columns and the distance
  // between rows, in elements.
  std::string rows, cols, rowStride;
  // "f16", "bf16" or "f32".
  std::string element;
  // The box one copy moves.
  uint32_t boxRows = 0, boxCols = 0;
  // The shared-memory swizzle span: 0, 32, 64 or 128 bytes.
  uint32_t swizzleBytes = 0;
};

// Where a tensor map's arguments are in the signature, and its element type.
struct ResolvedTensorMap {
  size_t base = 0, rows = 0, cols = 0, rowStride = 0;
  ArgType element = ArgType::F16;
};

// Resolves the names of `map` in `signature` and checks every field: base
// names a pointer argument; rows, cols and rowStride name integer
// arguments; element is f16, bf16 or f32; box sides are from 1 to 256; the
// swizzle is 0, 32, 64 or 128 bytes. The first broken rule is an error
// whose message is a predicate about one field (`"names 'Q', which is not an
// argument of the kernel"`), and `*brokenKey`, when given, is set to that
// field's json key ("rows", "box_cols"), so that each reader says where.
Result<ResolvedTensorMap>
resolveTensorMap(const TensorMapParam &map,
                 const std::vector<KernelArg> &signature,
                 const char **brokenKey = nullptr);

} // namespace tilec

#endif // TILEC_CONTRACT_ARGTYPE_H
