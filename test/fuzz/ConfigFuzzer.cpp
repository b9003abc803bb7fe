//===- ConfigFuzzer.cpp - libFuzzer target: configs, facts, argument types ===//
//
// Config::parse, Specialization::parse and parseArgType on arbitrary text:
// each returns a value or an error, never crashes, and a parsed config's
// canonical text parses again to the same config.
//
//===----------------------------------------------------------------------===//

#include "tilec/contract/ArgType.h"
#include "tilec/contract/Config.h"
#include "tilec/contract/Specialization.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace tilec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  if (Result<Config> config = Config::parse(text)) {
    Result<Config> again = Config::parse(config->str());
    if (!again || again->str() != config->str())
      std::abort(); // the canonical text must round-trip
  }
  (void)Specialization::parse(text);
  (void)parseArgType(text);
  return 0;
}
