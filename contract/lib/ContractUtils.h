//===- ContractUtils.h - Text helpers shared by the contract ----*- C++ -*-===//

#ifndef TILEC_CONTRACT_LIB_CONTRACTUTILS_H
#define TILEC_CONTRACT_LIB_CONTRACTUTILS_H

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace tilec::contract_detail {

inline bool isIdentifier(std::string_view text) {
  if (text.empty() ||
      !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_'))
    return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

inline std::string_view trim(std::string_view text) {
  while (!text.empty() &&
         std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

inline std::optional<int64_t> parseInteger(std::string_view text) {
  if (text.empty())
    return std::nullopt;
  std::string copy(text);
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(copy.c_str(), &end, 10);
  if (errno != 0 || *end != '\0')
    return std::nullopt;
  return static_cast<int64_t>(value);
}

} // namespace tilec::contract_detail

#endif // TILEC_CONTRACT_LIB_CONTRACTUTILS_H
