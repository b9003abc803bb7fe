//===- Specialization.h - What a call promises about its integers -*- C++ -*-===//
//
// Part of the kernel contract (libtilec_contract).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_CONTRACT_SPECIALIZATION_H
#define TILEC_CONTRACT_SPECIALIZATION_H

#include "tilec/contract/Status.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

namespace tilec {

/// What a kernel may assume about a call's integer arguments: those divisible
/// by 16 and those equal to 1, derived from the call's values the way
/// Triton's JIT specializes. Facts change the ttir, so they are part of a
/// compiled kernel's identity: the provider keeps one kernel per
/// specialization, the autotuner keys its results on it, and ArgPack refuses
/// values that break the one a kernel was compiled for.
struct Specialization {
  std::map<std::string, int64_t> divisibility;
  std::set<std::string> equalToOne;

  /// Facts about `values` (name -> value): divisible by 16, or 1.
  static Specialization derive(const std::map<std::string, int64_t> &values);
  /// The facts a kernel whose integer arguments are `integerArguments` (name
  /// -> declared divisibility, 1 for none) can use: about those arguments
  /// only, without divisibility the declaration already promises, and without
  /// "= 1" where it promises more (the launch refuses 1 there).
  Specialization
  restrictedTo(const std::map<std::string, int64_t> &integerArguments) const;
  /// Canonical text, "K%16,M%16,N%16,stride=1"; empty without facts.
  std::string str() const;
  /// The facts of a str() text (any order); anything else is an error that
  /// quotes the part it could not read.
  static Result<Specialization> parse(std::string_view text);
  bool empty() const { return divisibility.empty() && equalToOne.empty(); }
};

} // namespace tilec

#endif // TILEC_CONTRACT_SPECIALIZATION_H
