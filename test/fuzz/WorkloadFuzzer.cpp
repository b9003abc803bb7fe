//===- WorkloadFuzzer.cpp - libFuzzer target: workload files --------------===//
//
// Workload::parse on arbitrary text (what `tilec warmup` reads): an error or
// a workload whose canonical text parses again to the same text.
//
//===----------------------------------------------------------------------===//

#include "tilec/runtime/Workload.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  tilec::Result<tilec::rt::Workload> workload =
      tilec::rt::Workload::parse(text, "fuzz");
  if (!workload)
    return 0;
  std::string encoded = workload->encode();
  tilec::Result<tilec::rt::Workload> again =
      tilec::rt::Workload::parse(encoded, "fuzz");
  if (!again || again->encode() != encoded)
    std::abort(); // the canonical text must round-trip
  return 0;
}
