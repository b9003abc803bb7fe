//===- Pack.h - From the caches to a bundle, and to C++ ---------*- C++ -*-===//
//
// Part of tilec_tuning (docs/deploy.md). packBundle reads the winners of the
// autotune cache (for one device or all), takes each winner's cubin from the
// stage cache by the key recorded with it (recompiling it where the cache
// lost it and a compiler is linked), and gathers exactly those cubins, each
// once, with their compile json and the kernels' descriptions.
// emitEmbeddedBundle writes a bundle as a C++ source and header that a
// program compiles in (EmbeddedBundle.h; cmake/TilecBundle.cmake's
// tilec_embed_bundle makes that one line).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_PACK_H
#define TILEC_RUNTIME_PACK_H

#include "tilec/runtime/AutotuneCache.h"
#include "tilec/runtime/Bundle.h"
#include "tilec/runtime/KernelCompiler.h"
#include "tilec/contract/Status.h"

#include <string>
#include <vector>

namespace tilec::rt {

class StageCache;

struct PackOptions {
  // The device whose winners go in ("NVIDIA H200"); empty: every device.
  std::string device;
  // Only these kernels; empty: every kernel.
  std::vector<std::string> kernels;
  // Recompile a winner whose cubin the stage cache lost (with the compiler
  // given); false reports it instead.
  bool recompile = true;
  // Provenance written into the manifest.
  std::string packedBy;
  std::string createdAt;
};

struct PackedWinner {
  std::string device, kernel, key, config;
  // Where its cubin came from: "stage cache", "recompiled", or "shared"
  // (another winner's cubin: same kernel, config and specialization).
  std::string source;
};

struct PackResult {
  KernelBundle::Contents contents;
  std::vector<PackedWinner> winners;
  // Winners left out because their key's names are not the kernel's current
  // autotune key (tuned before the kernel changed its key, so that no call
  // of this build looks them up): packed, their cubin could stand in for the
  // current one of the same config. Checked where the compiler describes the
  // kernel.
  std::vector<PackedWinner> stale;
};

// Fails, listing every winner that cannot be packed and why, when any
// cannot: a bundle missing a winner would only fail later, at a call.
Result<PackResult> packBundle(const AutotuneCache &cache,
                              StageCache *stageCache, KernelCompiler *compiler,
                              const PackOptions &options);

struct EmbeddedSource {
  // <name>.h and <name>.cpp.
  std::string header;
  std::string source;
};

// `name` must be a C identifier. The header declares
//   const tilec_embedded_bundle *<name>_bundle(void);
// and, per kernel, a lookup of its winners by device and key:
//   const tilec_embedded_selection *<name>_find_<kernel>(const char *device,
//                                                        const char *key);
Result<EmbeddedSource> emitEmbeddedBundle(const KernelBundle &bundle,
                                          const std::string &name);

} // namespace tilec::rt

#endif // TILEC_RUNTIME_PACK_H
