//===- KernelHarness.h - run kernels on the GPU against a reference ------===//
//
// For each kernel in kernels/: random inputs of the kernel's dtype, outputs
// poisoned before the run, a float64 CPU reference, a tolerance by dtype, and
// optional timing with CUDA events. Used by `tilec run`, `tilec tune` and the
// GPU test suites. Depends on the runtime only (no LLVM/MLIR).
//
// Building a problem (buffers and arguments) is separate from checking it, so
// that the autotuner can benchmark on a problem without paying for a float64
// reference it does not need (2 M N K multiply-adds on the CPU for a matmul).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_HARNESS_KERNELHARNESS_H
#define TILEC_HARNESS_KERNELHARNESS_H

#include "tilec/runtime/ArgPack.h"
#include "tilec/runtime/Autotuner.h"
#include "tilec/runtime/Context.h"
#include "tilec/runtime/DeviceBuffer.h"
#include "tilec/runtime/Launch.h"
#include "tilec/runtime/Module.h"
#include "tilec/runtime/Status.h"

#include <cstdint>
#include <map>
#include <memory>
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

/// One problem on the device: inputs, the (poisoned) output, the scalar
/// arguments in signature order and, when built with one, the float64
/// reference of the output. Usable as the autotuner's benchmark inputs.
/// How a host tensor's elements are stored (the kernel's DTYPE).
enum class ElementFormat { F32, F16, BF16 };

struct Problem : rt::BenchmarkInputs {
  struct Argument {
    /// A pointer to buffers[buffer], else the integer `value`.
    bool isPointer = false;
    size_t buffer = 0;
    int64_t value = 0;
  };

  std::string kernel;
  std::vector<rt::DeviceBuffer> buffers;
  std::vector<Argument> arguments;
  size_t outputBuffer = 0;
  ElementFormat outputFormat = ElementFormat::F32;
  /// Empty without a reference.
  std::vector<double> expected;
  double rtol = 0, atol = 0;
  double flopCount = 0;

  rt::Status bind(rt::ArgPack &pack) const override;
  double flops() const override { return flopCount; }
  /// Compares the output buffer with `expected` (an error without one).
  rt::Result<RunReport> check() const;
};

/// The kernels the harness knows and their default problem sizes.
std::vector<std::string> listHarnessKernels();
std::map<std::string, int64_t> defaultSizes(const std::string &kernel);
/// Sizes that are not multiples of any block (masked tails).
std::map<std::string, int64_t> tailSizes(const std::string &kernel);

/// The values the harness passes for the kernel's integer arguments (sizes
/// and strides, by argument name), in signature order: what a launch of
/// `request` specializes on.
rt::Result<std::vector<std::pair<std::string, int64_t>>>
integerArguments(const RunRequest &request);
/// The same as a map, merged with the request's sizes (sizes that are not
/// arguments, like n_rows, stay: the autotune key and grid read them).
rt::Result<std::map<std::string, int64_t>>
callValues(const RunRequest &request);

/// Builds the problem of `request` (kernel, types, sizes, seed; the block
/// sizes are not needed). The reference is computed only when asked for.
rt::Result<std::unique_ptr<Problem>> buildProblem(const rt::Context &context,
                                                  const RunRequest &request,
                                                  bool withReference);

/// The grid the harness launches `kernel` on for the config's `params` and
/// the `sizes`; also checks what the kernel needs of the config (softmax:
/// BLOCK_N >= n_cols).
rt::Result<rt::Dim3> harnessGrid(const std::string &kernel,
                                 const std::map<std::string, int64_t> &params,
                                 const std::map<std::string, int64_t> &sizes);

/// Floating-point operations of one call: 2 M N K for the matmuls; 0 for
/// kernels whose FLOPs say little (vector_add, softmax).
double problemFlops(const std::string &kernel,
                    const std::map<std::string, int64_t> &sizes);

/// Runs `kernel` for `request` and checks it.
rt::Result<RunReport> runAndCheck(const rt::Context &context,
                                  const rt::Kernel &kernel,
                                  const RunRequest &request);

/// Sizes parsed from "M=200,N=176,K=208" (positive integers).
rt::Result<std::map<std::string, int64_t>> parseSizes(const std::string &text);
/// Integers parsed from "ALLOW_TF32=1" (any sign).
rt::Result<std::map<std::string, int64_t>>
parseIntegers(const std::string &text);
/// Types parsed from "DTYPE=f16".
rt::Result<std::map<std::string, std::string>>
parseTypes(const std::string &text);

} // namespace tilec::harness

#endif // TILEC_HARNESS_KERNELHARNESS_H
