//===- bundle_consumer.cpp - tilec::tuning and tilec_embed_bundle ---------===//
//
// The bundle write_bundle wrote at build time is compiled in by
// tilec_embed_bundle (the installed `tilec bundle emit-cpp`) and passed as a
// file (argv[1]). Both must be consumer_bundle.h's bundle; the generated
// lookup must find its winner as KernelBundle::findSelection does; a bundle
// for another GPU, and a copy with one corrupted cubin byte, are refused with
// their reasons.
//
//===----------------------------------------------------------------------===//

#include "check.h"
#include "consumer_bundle.h"
#include "embedded_bundle.h"

#include "tilec/runtime/Bundle.h"
#include "tilec/runtime/FileIO.h"

#include <string>

namespace rt = tilec::rt;

int main(int argc, char **argv) {
  CHECK(argc == 2, "usage: %s <bundle file>", argv[0]);
  auto file = rt::KernelBundle::open(argv[1]);
  CHECK(file, "%s", file.message().c_str());
  auto embedded = rt::KernelBundle::fromEmbedded(*embedded_bundle_bundle());
  CHECK(embedded, "%s", embedded.message().c_str());
  CHECK((*embedded)->origin() == "embedded bundle embedded_bundle", "%s",
        (*embedded)->origin().c_str());
  CHECK((*embedded)->manifestJson() == (*file)->manifestJson(), "%s\n%s",
        (*embedded)->manifestJson().c_str(), (*file)->manifestJson().c_str());

  const std::string expectedBytes = consumer::contents().cubinBytes[0];
  CHECK((*embedded)->cubins().size() == 1, "%zu cubins",
        (*embedded)->cubins().size());
  auto bytes = (*embedded)->cubinData((*embedded)->cubins()[0]);
  CHECK(bytes, "%s", bytes.message().c_str());
  CHECK(*bytes == expectedBytes,
        "the embedded cubin differs from the written one");
  auto fileBytes = (*file)->cubinData((*file)->cubins()[0]);
  CHECK(fileBytes && *fileBytes == expectedBytes,
        "the file's cubin differs from the written one");

  // The generated lookup: the device's own winner, else another device's of
  // the same key, else nothing.
  const tilec_embedded_selection *own =
      embedded_bundle_find_scale(consumer::kDevice, consumer::kKey);
  CHECK(own && own->median_us == 12.5, "no winner of %s", consumer::kKey);
  const tilec_embedded_selection *other =
      embedded_bundle_find_scale("NVIDIA H100", consumer::kKey);
  CHECK(other == own, "another device does not get the bundle's winner");
  CHECK(!embedded_bundle_find_scale(consumer::kDevice, "LOG2_N=21|n%16"),
        "a key the bundle lacks has a winner");
  const rt::BundleSelection *selection = (*file)->findSelection(
      consumer::kDevice, "sm_90", consumer::kKernel, consumer::kKey);
  CHECK(selection, "the file has no winner of %s", consumer::kKey);
  CHECK((*file)->cubin(selection->cubin).config == consumer::kConfig, "%s",
        (*file)->cubin(selection->cubin).config.c_str());

  // The winner's launch from the bundle's description alone.
  auto description = (*embedded)->description(consumer::kKernel);
  CHECK(description && *description, "no description of %s", consumer::kKernel);
  auto config = tilec::Config::parse(consumer::kConfig);
  CHECK(config, "%s", config.message().c_str());
  tilec::Call call;
  call.sizes = {{"n", 1 << 20}};
  auto grid = (*description)->evaluateGrid(*config, call);
  CHECK(grid && grid->x == 4096, "grid of n = 2^20 with BLOCK=256");

  CHECK((*file)->checkTarget("sm_90").ok(), "sm_90 refused");
  tilec::Status otherGpu = (*file)->checkTarget("sm_80");
  CHECK(!otherGpu.ok() && !otherGpu.message().empty(),
        "a bundle without sm_80 cubins accepted for sm_80");
  std::printf("refused for sm_80: %s\n", otherGpu.message().c_str());

  auto contents = rt::readFile(argv[1]);
  CHECK(contents, "%s", contents.message().c_str());
  std::string corrupt = *contents;
  corrupt.back() ^= 1; // The payload ends with the cubin's last byte.
  auto refused = rt::KernelBundle::decode(corrupt, "corrupt copy");
  CHECK(!refused, "a bundle with a corrupted cubin was accepted");
  CHECK(refused.message().find("CRC-32C") != std::string::npos, "%s",
        refused.message().c_str());
  std::printf("corrupt copy refused: %s\n", refused.message().c_str());
  return 0;
}
