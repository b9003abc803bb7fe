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

namespace tilec {

/// Evaluates an integer expression over `names`:
///   integers, names, ( ), unary -, + - * (integer), // and % (floor
///   division and modulo), / (real division), and the functions cdiv(a, b),
///   ceil(x), floor(x), log2(x), next_power_of_2(x), min(a, b), max(a, b);
///   one comparison (< <= > >= == !=, 1 or 0) binds loosest.
/// log2 and / may produce a real; the result must be an integer (wrap it in
/// ceil or floor). Errors quote the expression and say what was wrong.
Result<int64_t> evaluateExpression(std::string_view expression,
                                   const std::map<std::string, int64_t> &names);

} // namespace tilec

#endif // TILEC_CONTRACT_EXPRESSION_H
