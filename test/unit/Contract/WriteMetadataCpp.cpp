//===- WriteMetadataCpp.cpp - A compile json as C++, for the test ---------===//
//
// Writes CompileMetadata::toCpp of TensorMapSample.h's json to argv[1] as
// `tensorMapSample()`: CompileMetadataTest compiles it in, which checks that
// the generated code compiles and builds the object the json reads to.
//
//===----------------------------------------------------------------------===//

#include "TensorMapSample.h"

#include "tilec/contract/CompileMetadata.h"

#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output file>\n", argv[0]);
    return 2;
  }
  tilec::Result<tilec::CompileMetadata> metadata =
      tilec::CompileMetadata::parse(tilec::test::kTensorMapSampleJson);
  if (!metadata) {
    std::fprintf(stderr, "%s\n", metadata.message().c_str());
    return 1;
  }
  std::string source = metadata->toCpp("tensorMapSample");
  std::FILE *file = std::fopen(argv[1], "w");
  if (!file ||
      std::fwrite(source.data(), 1, source.size(), file) != source.size() ||
      std::fclose(file) != 0) {
    std::perror(argv[1]);
    return 1;
  }
  return 0;
}
