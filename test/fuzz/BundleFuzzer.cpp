//===- BundleFuzzer.cpp - libFuzzer target: kernel bundles ----------------===//
//
// KernelBundle::decode on arbitrary bytes (a bundle is a file a deployment
// ships): an error, or a bundle whose every kernel description, compile
// json and cubin lookup answers without a crash. No driver is touched.
//
// Two kinds of input. One that starts with "tilec-bundle" is a whole file,
// decoded as it is. Any other is `<manifest> NUL <payload>`: the fuzzer
// writes the header (sizes and the manifest's CRC-32C) around it, so that
// a mutated manifest gets past the CRC to the manifest's parser and checks
// instead of stopping at the header (corpus/BundleFuzzer/sample.manifest).
//
//===----------------------------------------------------------------------===//

#include "tilec/runtime/Bundle.h"
#include "tilec/runtime/Crc32c.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

using namespace tilec;

namespace {

// A whole bundle file around `manifest` and `payload`, as encode() writes
// one.
std::string wrap(std::string_view manifest, std::string_view payload) {
  char crc[9];
  std::snprintf(crc, sizeof(crc), "%08x",
                rt::crc32c(manifest.data(), manifest.size()));
  return "tilec-bundle 1 " + std::to_string(manifest.size()) + " " +
         std::to_string(payload.size()) + " " + crc + "\n" +
         std::string(manifest) + std::string(payload);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view input(reinterpret_cast<const char *>(data), size);
  std::string bytes;
  if (input.substr(0, 12) == "tilec-bundle") {
    bytes = std::string(input);
  } else {
    size_t nul = input.find('\0');
    bytes = nul == std::string_view::npos
                ? wrap(input, {})
                : wrap(input.substr(0, nul), input.substr(nul + 1));
  }
  Result<std::shared_ptr<const rt::KernelBundle>> bundle =
      rt::KernelBundle::decode(std::move(bytes), "fuzz");
  if (!bundle)
    return 0;
  for (const rt::BundleKernel &kernel : (*bundle)->kernels())
    (void)(*bundle)->description(kernel.name);
  for (const rt::BundleSelection &selection : (*bundle)->selections()) {
    const rt::BundleCubin &cubin = (*bundle)->cubins()[selection.cubin];
    (void)(*bundle)->findCubin(selection.kernel, cubin.config,
                               cubin.specialization, cubin.target);
    (void)(*bundle)->checkTarget(selection.target);
  }
  return 0;
}
