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
/// Triton's JIT specializes (and divisors 2, 4, 8 for arguments that ask). Facts change the ttir, so they are part of a
/// compiled kernel's identity: the provider keeps one kernel per
/// specialization, the autotuner keys its results on it, and ArgPack refuses
/// values that break the one a kernel was compiled for.
struct Specialization {
  /// The divisor a value must have to specialize a kernel, unless its
  /// argument asks for smaller ones (ArgumentDecl::specializeFrom).
  static constexpr int64_t kDivisor = 16;

  std::map<std::string, int64_t> divisibility;
  std::set<std::string> equalToOne;

  /// Facts about `values` (name -> value): 1, or the largest power of two
  /// up to 16 that divides the value, when that is at least the value's
  /// entry in `smallestDivisors` (16 where it has none).
  static Specialization
  derive(const std::map<std::string, int64_t> &values,
         const std::map<std::string, int64_t> &smallestDivisors = {});
  /// The facts a kernel whose integer arguments are `integerArguments` (name
  /// -> declared divisibility, 1 for none) can use: about those arguments
  /// only, without divisibility the declaration already promises, and without
  /// "= 1" where it promises more (the launch refuses 1 there).
  Specialization
  restrictedTo(const std::map<std::string, int64_t> &integerArguments) const;
  /// Adds what derive(values, smallestDivisors).restrictedTo(arguments)
  /// keeps of one argument's value, where `smallestDivisor` is its entry in
  /// smallestDivisors and `declaredDivisor` its entry in arguments (0:
  /// nothing declared, derive alone).
  void addFactOf(const std::string &name, int64_t value,
                 int64_t smallestDivisor, int64_t declaredDivisor);
  /// Canonical text, "K%16,M%16,N%16,stride=1"; empty without facts.
  std::string str() const;
  /// The facts of a str() text (any order); anything else is an error that
  /// quotes the part it could not read.
  static Result<Specialization> parse(std::string_view text);
  bool empty() const { return divisibility.empty() && equalToOne.empty(); }
};

/// Whether `divisor` may be an argument's smallest specializing divisor: a
/// power of two from 2 to Specialization::kDivisor.
inline bool isSpecializationDivisor(int64_t divisor) {
  return divisor >= 2 && divisor <= Specialization::kDivisor &&
         (divisor & (divisor - 1)) == 0;
}

} // namespace tilec

#endif // TILEC_CONTRACT_SPECIALIZATION_H
