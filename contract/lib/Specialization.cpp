//===- Specialization.cpp - What a call promises about its integers ------===//

#include "tilec/contract/Specialization.h"

namespace tilec {

Specialization
Specialization::derive(const std::map<std::string, int64_t> &values) {
  Specialization result;
  for (const auto &[name, value] : values) {
    if (value == 1)
      result.equalToOne.insert(name);
    else if (value % 16 == 0)
      result.divisibility[name] = 16;
  }
  return result;
}

Specialization Specialization::restrictedTo(
    const std::map<std::string, int64_t> &integerArguments) const {
  Specialization result;
  for (const auto &[name, divisor] : divisibility)
    if (auto it = integerArguments.find(name);
        it != integerArguments.end() && it->second < divisor)
      result.divisibility[name] = divisor;
  for (const std::string &name : equalToOne)
    if (auto it = integerArguments.find(name);
        it != integerArguments.end() && it->second <= 1)
      result.equalToOne.insert(name);
  return result;
}

std::string Specialization::str() const {
  std::string text;
  auto append = [&](const std::string &part) {
    text += (text.empty() ? "" : ",") + part;
  };
  for (const auto &[name, divisor] : divisibility)
    append(name + "%" + std::to_string(divisor));
  for (const std::string &name : equalToOne)
    append(name + "=1");
  return text;
}

} // namespace tilec
