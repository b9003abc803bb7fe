//===- CompileJsonFuzzer.cpp - libFuzzer target: the compile json ---------===//
//
// CompileMetadata::parse on arbitrary bytes (a compile json comes from the
// stage cache, a bundle or a file a user points at): a value or an error;
// what parses writes a json that parses again.
//
//===----------------------------------------------------------------------===//

#include "tilec/contract/CompileMetadata.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  tilec::Result<tilec::CompileMetadata> parsed =
      tilec::CompileMetadata::parse(text);
  if (parsed && !tilec::CompileMetadata::parse(parsed->toJson()))
    std::abort(); // what it writes, it reads
  return 0;
}
