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

#include <string>
#include <string_view>

namespace tilec {

/// The parser's message for `text` as nlohmann writes it, line and column
/// included ("[json.exception.parse_error.101] parse error at line 2, column
/// 67: ..."); empty when `text` is valid JSON. Only worth calling after a
/// parse has failed.
std::string jsonParseError(std::string_view text);

} // namespace tilec

#endif // TILEC_CONTRACT_JSONERROR_H
