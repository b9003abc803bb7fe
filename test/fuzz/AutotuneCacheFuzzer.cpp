//===- AutotuneCacheFuzzer.cpp - libFuzzer target: the autotune cache -----===//
//
// The autotune cache's file on arbitrary bytes (AutotuneCache::load, which
// skips entries it cannot read and moves a file that is no JSON aside) and
// one entry's json (decodeEntry, what the shared tier serves): an error or
// a cache, never a crash. The file lives in a directory of its own.
//
//===----------------------------------------------------------------------===//

#include "tilec/runtime/AutotuneCache.h"
#include "tilec/runtime/FileIO.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <unistd.h>

using namespace tilec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string directory = [] {
    char pattern[] = "/tmp/tilec-fuzz-autotune-XXXXXX";
    if (!::mkdtemp(pattern))
      std::abort();
    return std::string(pattern);
  }();
  std::string text(reinterpret_cast<const char *>(data), size);
  (void)rt::AutotuneCache::decodeEntry(text);
  std::string path = directory + "/cache.json";
  if (!rt::writeFileAtomically(path, text).ok())
    std::abort();
  rt::AutotuneCache cache(path);
  (void)cache.load();
  ::unlink(path.c_str());
  ::unlink((path + ".corrupt").c_str());
  return 0;
}
