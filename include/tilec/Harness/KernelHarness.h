//===- KernelHarness.h - run kernels on the GPU against a reference ------===//
//
// For each kernel in kernels/: random inputs of the kernel's dtype, outputs
// poisoned before the run, a float64 CPU reference, a tolerance by dtype, and
// optional timing with CUDA events. Used by `tilec run` and the GPU test
// suite. Depends on the runtime only (no LLVM/MLIR).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_HARNESS_KERNELHARNESS_H
#define TILEC_HARNESS_KERNELHARNESS_H

#include "tilec/runtime/Context.h"
#include "tilec/runtime/Module.h"
#include "tilec/runtime/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tilec::harness {

struct RunRequest {
  std::string kernel;
  /// Integer meta-parameters of the compiled config (BLOCK_M, ...).
  std::map<std::string, int64_t> params;
  /// Type meta-parameters (DTYPE=f16, ...).
  std::map<std::string, std::string> types;
  /// Problem sizes by name (n_elements; M, N, K; n_rows, n_cols; ...).
  std::map<std::string, int64_t> sizes;
  uint32_t seed = 1;
  /// Timed repetitions after warm-up; 0 skips timing.
  int timingRepetitions = 0;
};

struct RunReport {
  /// max |out - ref| / (atol + rtol * |ref|) over all outputs: <= 1 passes.
  double worstErrorRatio = 0;
  double maxAbsError = 0;
  double rtol = 0, atol = 0;
  int64_t checkedElements = 0;
  bool passed = false;
  /// Median kernel time, ms (0 when not timed).
  double medianMs = 0;
  std::string describe() const;
};

/// The kernels the harness knows and their default problem sizes.
std::vector<std::string> listHarnessKernels();
std::map<std::string, int64_t> defaultSizes(const std::string &kernel);
/// Sizes that are not multiples of any block (masked tails).
std::map<std::string, int64_t> tailSizes(const std::string &kernel);

/// Runs `kernel` for `request` and checks it.
rt::Result<RunReport> runAndCheck(const rt::Context &context,
                                  const rt::Kernel &kernel,
                                  const RunRequest &request);

/// Sizes parsed from "M=200,N=176,K=208".
rt::Result<std::map<std::string, int64_t>> parseSizes(const std::string &text);

} // namespace tilec::harness

#endif // TILEC_HARNESS_KERNELHARNESS_H
