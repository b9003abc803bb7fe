//===- KernelMetadata.h - The compile json of one kernel --------*- C++ -*-===//
//
// The compiler writes one json per compiled kernel next to its cubin. The
// runtime needs it to launch (kernel name, num_warps, shared memory,
// signature) and keeps the rest (ptxas report, config, hashes) for tools.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_KERNELMETADATA_H
#define TILEC_RUNTIME_KERNELMETADATA_H

#include "tilec/runtime/ArgType.h"
#include "tilec/runtime/Status.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilec::rt {

struct KernelMetadata {
  // Required.
  std::string name;       // the kernel definition, e.g. "matmul"
  std::string kernelName; // the symbol in the cubin, e.g. "matmul_kernel"
  std::string target;     // "sm_90"
  int numWarps = 0;
  int threadsPerWarp = 32;
  int numStages = 0;
  uint32_t sharedBytes = 0; // dynamic shared memory per block
  std::vector<KernelArg> signature;

  // Optional: absent for PTX compiled without a ptxas report, or written by
  // older compilers.
  std::optional<int> registers;
  std::optional<int> spillStores;
  std::optional<int> spillLoads;
  std::map<std::string, int64_t> config; // integers; booleans as 0/1
  std::map<std::string, std::string> hashes;
  std::string compilerId;

  // Threads per block for the launch: num_warps * threads_per_warp.
  uint32_t blockThreads() const {
    return static_cast<uint32_t>(numWarps) *
           static_cast<uint32_t>(threadsPerWarp);
  }

  // A missing required field, a field of the wrong type or out of range is an
  // error naming the field: "field 'signature[1].type': ...".
  static Result<KernelMetadata> parse(std::string_view json);
  // parse() of a file; errors are prefixed with the path.
  static Result<KernelMetadata> readFile(const std::string &path);
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_KERNELMETADATA_H
