//===- BundleFuzzer.cpp - libFuzzer target: kernel bundles ----------------===//
//
// KernelBundle::decode on arbitrary bytes (a bundle is a file a deployment
// ships): an error, or a bundle whose every kernel description, compile
// json and cubin lookup answers without a crash. No driver is touched.
//
//===----------------------------------------------------------------------===//

#include "tilec/runtime/Bundle.h"

#include <cstdint>
#include <string>

using namespace tilec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
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
