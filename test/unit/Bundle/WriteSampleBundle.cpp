//===- WriteSampleBundle.cpp - The sample bundle as a file ----------------===//
//
// Writes SampleBundle.h's bundle to argv[1], for the embedded-table test: the
// build turns the file into C++ with tilec_embed_bundle, and the test checks
// that the compiled-in table and the file are the same bundle.
//
//===----------------------------------------------------------------------===//

#include "SampleBundle.h"

#include "tilec/runtime/FileIO.h"

#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <bundle file>\n", argv[0]);
    return 2;
  }
  tilec::Status status = tilec::rt::writeFileAtomically(
      argv[1], tilec::rt::KernelBundle::encode(tilec::test::sampleContents()));
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.message().c_str());
    return 1;
  }
  return 0;
}
