//===- ExpressionFuzzer.cpp - libFuzzer target: the expression language ---===//
//
// evaluateExpression on arbitrary text over a few names (the grids, keys
// and requirements of kernel descriptions are written in it): a value or
// an error, never a crash, an overflow trap or a hang.
//
//===----------------------------------------------------------------------===//

#include "tilec/contract/Expression.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::map<std::string, int64_t> names = {
      {"N", 1000},          {"M", 4096}, {"K", 0},
      {"BLOCK", 128},       {"V", 27},   {"big", INT64_MAX},
      {"small", INT64_MIN}, {"one", 1},  {"minus", -7}};
  std::string_view text(reinterpret_cast<const char *>(data), size);
  (void)tilec::evaluateExpression(text, names);
  return 0;
}
