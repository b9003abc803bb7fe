//===- CompileMetadata.h - The compile json of one kernel -------*- C++ -*-===//
//
// Part of the kernel contract (libtilec_contract): the schema of the json the
// compiler writes next to every cubin, with its one writer (toJson, called by
// the compiler) and its one reader (parse, called by the runtime, the tuner
// and the tools). The runtime needs it to launch (kernel symbol, num_warps,
// shared memory, signature); the rest (ptxas report, config, hashes, cache
// keys, stage times) is provenance for tools and `tilec pack`.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_CONTRACT_COMPILEMETADATA_H
#define TILEC_CONTRACT_COMPILEMETADATA_H

#include "tilec/contract/ArgType.h"
#include "tilec/contract/Status.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilec {

struct CompileMetadata {
  /// Where a compile found one stage's artifact.
  struct StageCacheRecord {
    std::string key;
    /// "hit", "remote hit" (from the shared tier) or "miss".
    std::string result;
  };

  // Required.
  std::string name;       // the kernel definition, e.g. "matmul"
  std::string kernelName; // the symbol in the cubin, e.g. "matmul"
  std::string target;     // "sm_90"
  int numWarps = 0;
  int threadsPerWarp = 32;
  int numStages = 0;
  /// The config's min_blocks_per_sm (the kernel's .minnctapersm). Optional:
  /// written only where it is not 1, so that other kernels' jsons stay as
  /// they were.
  int minBlocksPerSM = 1;
  uint32_t sharedBytes = 0; // dynamic shared memory per block
  std::vector<KernelArg> signature;
  /// The kernel's hidden TMA tensor-map parameters, after the signature's in
  /// this order; the runtime encodes each from the arguments it names at
  /// launch. Optional: written only when there are some.
  std::vector<TensorMapParam> tensorMaps;
  // Optional: absent for PTX compiled without a ptxas report.
  std::optional<int> registers;
  std::optional<int> spillStores;
  std::optional<int> spillLoads;
  std::optional<int> stackFrameBytes;
  /// ptxas serialized the kernel's wgmma instructions (written only then).
  bool wgmmaSerialized = false;
  std::map<std::string, int64_t> config; // integers; booleans read as 0/1
  std::map<std::string, std::string> types; // type parameters: DTYPE=f16
  std::map<std::string, std::string> hashes;
  std::string compilerId;
  /// Wall time of each stage of the compile that wrote this, ms.
  std::map<std::string, double> compileMs;
  /// Each stage's stage-cache key, when the compile used a cache: what a
  /// cubin is looked up by without recompiling.
  std::map<std::string, StageCacheRecord> cache;

  // Threads per block for the launch: num_warps * threads_per_warp.
  uint32_t blockThreads() const {
    return static_cast<uint32_t>(numWarps) *
           static_cast<uint32_t>(threadsPerWarp);
  }
  /// The stage-cache key of the cubin; empty when compiled without a cache.
  std::string cubinKey() const;

  /// The json, fields in schema order, two-space indented, newline-ended.
  std::string toJson() const;
  // A missing required field, a field of the wrong type or out of range is an
  // error naming the field: "field 'signature[1].type': ...". A tensor map
  // must name arguments of the signature (resolveTensorMap's rules).
  static Result<CompileMetadata> parse(std::string_view json);
  /// C++ source of `static const tilec::CompileMetadata &FUNCTION()`, which
  /// builds this object once (CppSource.h).
  std::string toCpp(std::string_view function) const;
};

} // namespace tilec

#endif // TILEC_CONTRACT_COMPILEMETADATA_H
