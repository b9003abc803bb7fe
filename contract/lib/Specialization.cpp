//===- Specialization.cpp - What a call promises about its integers ------===//

#include "tilec/contract/Specialization.h"

namespace tilec {

Specialization
Specialization::derive(const std::map<std::string, int64_t> &values,
                       const std::map<std::string, int64_t> &smallestDivisors) {
  Specialization result;
  for (const auto &[name, value] : values) {
    auto smallest = smallestDivisors.find(name);
    // Nothing declared: every fact stays.
    result.addFactOf(name, value,
                     smallest == smallestDivisors.end() ? kDivisor
                                                        : smallest->second,
                     /*declaredDivisor=*/0);
  }
  return result;
}

void Specialization::addFactOf(const std::string &name, int64_t value,
                               int64_t smallestDivisor,
                               int64_t declaredDivisor) {
  if (value == 1) {
    if (declaredDivisor <= 1)
      equalToOne.insert(name);
    return;
  }
  int64_t divisor = 1;
  while (divisor < kDivisor && value % (2 * divisor) == 0)
    divisor *= 2;
  if (divisor >= smallestDivisor && declaredDivisor < divisor)
    divisibility[name] = divisor;
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

Result<Specialization> Specialization::parse(std::string_view text) {
  Specialization specialization;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view part = text.substr(0, comma);
    text = comma == std::string_view::npos ? "" : text.substr(comma + 1);
    auto bad = [&] {
      return Status::error("specialization: cannot read '" +
                           std::string(part) + "' (NAME%DIVISOR or NAME=1)");
    };
    size_t percent = part.find('%');
    if (percent != std::string_view::npos && percent > 0) {
      std::string digits(part.substr(percent + 1));
      if (digits.empty() ||
          digits.find_first_not_of("0123456789") != std::string::npos ||
          digits.size() > 18)
        return bad();
      specialization.divisibility[std::string(part.substr(0, percent))] =
          std::stoll(digits);
    } else if (part.size() > 2 && part.substr(part.size() - 2) == "=1") {
      specialization.equalToOne.insert(
          std::string(part.substr(0, part.size() - 2)));
    } else {
      return bad();
    }
  }
  return specialization;
}

} // namespace tilec
