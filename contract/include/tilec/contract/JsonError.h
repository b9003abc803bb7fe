//===- JsonError.h - Why a text is not JSON --------------------*- C++ -*-===//
//
// Part of tilec_contract. The readers of tilec's JSON files (the contract's,
// the workload file's) parse without exceptions, and nlohmann's DOM parser
// then drops the parser's message; this parses the text once more, with a
// SAX handler that keeps it.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_CONTRACT_JSONERROR_H
#define TILEC_CONTRACT_JSONERROR_H

#include <cstddef>
#include <string>
#include <string_view>

namespace tilec {

/// The parser's message for `text` as nlohmann writes it, line and column
/// included ("[json.exception.parse_error.101] parse error at line 2, column
/// 67: ..."); empty when `text` is valid JSON. Only worth calling after a
/// parse has failed.
std::string jsonParseError(std::string_view text);

/// How deep tilec's readers let arrays and objects nest: its files nest a
/// few levels, and nlohmann's parser recurses per level, so a text from
/// outside nested 100,000 deep overflowed the stack (a bundle's manifest, an
/// autotune cache, a workload).
inline constexpr size_t kMaxJsonDepth = 512;

/// Where `text` nests arrays and objects deeper than `maxDepth` ("nests
/// deeper than 512 arrays and objects at line 1, column 513"), read without
/// parsing (strings skipped); empty when it does not. Called before a parse
/// of a text from outside.
std::string jsonNestingError(std::string_view text,
                             size_t maxDepth = kMaxJsonDepth);

} // namespace tilec

#endif // TILEC_CONTRACT_JSONERROR_H
