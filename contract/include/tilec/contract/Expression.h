//===- Expression.h - The integer expressions of a description --*- C++ -*-===//
//
// Part of the kernel contract (libtilec_contract). Grids, derived autotune
// keys, derived meta-parameters, argument values and FLOP counts are written
// in one small expression language over a call's named values.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_CONTRACT_EXPRESSION_H
#define TILEC_CONTRACT_EXPRESSION_H

#include "tilec/contract/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tilec {

namespace expression_detail {
struct Op;
} // namespace expression_detail

/// Evaluates an integer expression over `names`:
///   integers, names, ( ), unary -, + - * (integer), // and % (floor
///   division and modulo), / (real division), and the functions cdiv(a, b),
///   ceil(x), floor(x), log2(x), next_power_of_2(x), min(a, b), max(a, b);
///   one comparison (< <= > >= == !=, 1 or 0) binds loosest.
/// log2 and / may produce a real; the result must be an integer (wrap it in
/// ceil or floor). Errors quote the expression and say what was wrong.
Result<int64_t> evaluateExpression(std::string_view expression,
                                   const std::map<std::string, int64_t> &names);

/// An expression parsed once, its names bound to slots: evaluating it again
/// (a grid or a key for every new size a stream of clouds brings) costs no
/// parsing and no name lookups. Over the same values it gives what
/// evaluateExpression gives, errors included.
class CompiledExpression {
public:
  /// Parses `expression`; each name it reads must be one of `slots`, and
  /// becomes that slot's index. The error of a text that does not parse, or
  /// that names something else.
  static Result<CompiledExpression>
  compile(std::string_view expression, const std::vector<std::string> &slots);
  /// The value over `values`, indexed like the slots it was compiled with
  /// (an error for a default-constructed one).
  Result<int64_t> evaluate(const int64_t *values) const;
  /// Whether evaluating reads slot `slot`.
  bool readsSlot(size_t slot) const;
  const std::string &text() const { return text_; }

  CompiledExpression();
  CompiledExpression(const CompiledExpression &);
  CompiledExpression(CompiledExpression &&) noexcept;
  CompiledExpression &operator=(const CompiledExpression &);
  CompiledExpression &operator=(CompiledExpression &&) noexcept;
  ~CompiledExpression();

private:
  std::string text_;
  std::vector<expression_detail::Op> ops_;
};

} // namespace tilec

#endif // TILEC_CONTRACT_EXPRESSION_H
