//===- write_bundle.cpp - consumer_bundle.h's bundle as a file ------------===//
//
// Run at build time: its output is the bundle that tilec_embed_bundle
// compiles into bundle_consumer, and the file bundle_consumer compares the
// embedded table with.
//
//===----------------------------------------------------------------------===//

#include "check.h"
#include "consumer_bundle.h"

#include "tilec/runtime/FileIO.h"

int main(int argc, char **argv) {
  CHECK(argc == 2, "usage: %s <bundle file>", argv[0]);
  tilec::Status written = tilec::rt::writeFileAtomically(
      argv[1], tilec::rt::KernelBundle::encode(consumer::contents()));
  CHECK(written.ok(), "%s", written.message().c_str());
  return 0;
}
