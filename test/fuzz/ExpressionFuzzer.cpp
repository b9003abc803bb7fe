//===- ExpressionFuzzer.cpp - libFuzzer target: the expression language ---===//
//
// evaluateExpression on arbitrary text over a few names (the grids, keys
// and requirements of kernel descriptions are written in it): a value or
// an error, never a crash, an overflow trap or a hang. Where the text
// compiles (CompiledExpression, its names as slots in another order), the
// program gives the same value or the same error, word for word.
//
//===----------------------------------------------------------------------===//

#include "tilec/contract/Expression.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::map<std::string, int64_t> names = {
      {"N", 1000},          {"M", 4096}, {"K", 0},
      {"BLOCK", 128},       {"V", 27},   {"big", INT64_MAX},
      {"small", INT64_MIN}, {"one", 1},  {"minus", -7}};
  static std::vector<std::string> slots;
  static std::vector<int64_t> values;
  if (slots.empty())
    for (auto it = names.rbegin(); it != names.rend(); ++it) {
      slots.push_back(it->first);
      values.push_back(it->second);
    }
  std::string_view text(reinterpret_cast<const char *>(data), size);
  tilec::Result<int64_t> evaluated = tilec::evaluateExpression(text, names);
  tilec::Result<tilec::CompiledExpression> compiled =
      tilec::CompiledExpression::compile(text, slots);
  if (!compiled)
    return 0;
  tilec::Result<int64_t> run = compiled->evaluate(values.data());
  bool same =
      run.ok() == evaluated.ok() &&
      (run.ok() ? *run == *evaluated : run.message() == evaluated.message());
  if (!same) {
    std::fprintf(stderr, "compiled and evaluated differ on '%.*s': %s / %s\n",
                 static_cast<int>(size), text.data(),
                 run.ok() ? std::to_string(*run).c_str()
                          : run.message().c_str(),
                 evaluated.ok() ? std::to_string(*evaluated).c_str()
                                : evaluated.message().c_str());
    std::abort();
  }
  return 0;
}
