//===- Config.h - One point of a kernel's configuration space ---*- C++ -*-===//
//
// Part of the kernel contract (libtilec_contract): the compiler, the runtime,
// the tuner and the tools all read and write configs through this one type,
// its one parser and its one canonical text.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_CONTRACT_CONFIG_H
#define TILEC_CONTRACT_CONFIG_H

#include "tilec/contract/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace tilec {

/// Meta-parameters plus the launch shape (num_warps), the pipelining depth
/// (num_stages) and the blocks an SM should hold at once (min_blocks_per_sm).
struct Config {
  /// Integer meta-parameters: BLOCK_M=128, GROUP_M=8, ...
  std::map<std::string, int64_t> params;
  /// Type meta-parameters: DTYPE=f16, ...
  std::map<std::string, std::string> types;
  int numWarps = 4;
  int numStages = 1;
  /// The blocks of this kernel an SM must be able to hold at once: the
  /// kernel's .minnctapersm, which caps ptxas' registers a thread at what
  /// that many blocks leave (65536 / (threads * blocks)), CUDA's
  /// __launch_bounds__ minimum. 1 leaves ptxas every register (up to 255).
  int minBlocksPerSM = 1;

  /// Parses `KEY=VALUE,...` ("BLOCK_M=128,DTYPE=f16,num_warps=4,
  /// num_stages=2"). An integer VALUE sets a meta-parameter, a scalar type
  /// name (isScalarTypeName) a type parameter; anything else is an error.
  /// num_warps (a power of two, 1 to 32), num_stages (1 to 8) and
  /// min_blocks_per_sm (1 to 32) default to 4, 1 and 1. Which keys a kernel
  /// knows is checked by
  /// KernelDescription::resolveConfig.
  static Result<Config> parse(std::string_view text);

  /// The canonical text: meta-parameters and types sorted by name, then
  /// num_warps and num_stages, then min_blocks_per_sm where it is not 1 (the
  /// texts of configs from before it existed stay what they were).
  /// parse(str()) == *this. Caches key on it and
  /// the autotuner breaks ties by its order.
  std::string str() const;

  friend bool operator==(const Config &lhs, const Config &rhs) {
    return lhs.params == rhs.params && lhs.types == rhs.types &&
           lhs.numWarps == rhs.numWarps && lhs.numStages == rhs.numStages &&
           lhs.minBlocksPerSM == rhs.minBlocksPerSM;
  }
  friend bool operator!=(const Config &lhs, const Config &rhs) {
    return !(lhs == rhs);
  }
};

/// The scalar types a type parameter may name: i1, i8, i16, i32, i64, f16,
/// bf16, f32, f64.
bool isScalarTypeName(std::string_view name);

/// True for i1, i8, i16, i32 and i64.
bool isIntegerTypeName(std::string_view name);

/// "M=4096,N=1000,stride_bk=1": sizes, argument values or fixed parameters
/// of a call, as tools take them on their command lines. Any sign; empty text
/// is an empty map.
Result<std::map<std::string, int64_t>>
parseNamedIntegers(std::string_view text);
/// "DTYPE=f16": type parameters of a call (scalar type names).
Result<std::map<std::string, std::string>>
parseNamedTypes(std::string_view text);

} // namespace tilec

#endif // TILEC_CONTRACT_CONFIG_H
