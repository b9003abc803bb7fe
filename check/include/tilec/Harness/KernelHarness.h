//===- KernelHarness.h - run kernels on the GPU against a reference ------===//
//
// For any kernel with a reference (test/reference/): random inputs of the
// call's types, outputs poisoned before the run, the float64 reference, a
// tolerance by dtype, and optional timing with CUDA events. Arguments, grid
// and FLOP count come from the kernel's description (the kernel contract),
// so the harness never asks which kernel it runs. Used by `tilec run`,
// `tilec tune` and the GPU test suites. Depends on the runtime and the
// contract only (no LLVM/MLIR).
//
// Building a problem (buffers and arguments) is separate from checking it, so
// that the autotuner can benchmark on a problem without paying for a float64
// reference it does not need (2 M N K multiply-adds on the CPU for a matmul).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_HARNESS_KERNELHARNESS_H
#define TILEC_HARNESS_KERNELHARNESS_H

#include "tilec/Harness/Reference.h"
#include "tilec/contract/KernelDescription.h"
#include "tilec/runtime/ArgPack.h"
#include "tilec/runtime/Autotuner.h"
#include "tilec/runtime/Context.h"
#include "tilec/runtime/DeviceBuffer.h"
#include "tilec/runtime/Module.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tilec::harness {

struct RunRequest {
  /// The kernel's description; must outlive the request.
  const KernelDescription *kernel = nullptr;
  /// Sizes (and any integer argument the call sets, e.g. a stride), types and
  /// fixed meta-parameters.
  Call call;
  /// The compiled config: the grid depends on it.
  Config config;
  uint32_t seed = 1;
  /// Timed repetitions after warm-up; 0 skips timing.
  int timingRepetitions = 0;
  /// Launches on the same buffers before the check. The autotuner times a
  /// candidate by launching it again and again on one problem: a kernel it
  /// tunes must give the same output every time (a counter it leaves set,
  /// a scan it consumes, would make the timed runs compute something else
  /// or write out of bounds); 2 checks that.
  int launches = 1;
};

/// A request for `kernel` on its default sizes (tail sizes when `tails`).
RunRequest requestFor(const KernelDescription &kernel, bool tails = false);

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

/// One problem on the device: a buffer per pointer argument, the (poisoned)
/// output, the arguments in signature order and, when built with one, the
/// float64 reference of the output. Usable as the autotuner's benchmark
/// inputs.
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
  /// Empty without a reference; NaN: the element must stay poisoned.
  std::vector<double> expected;
  Tolerance tolerance;
  double flopCount = 0;

  Status bind(rt::ArgPack &pack) const override;
  double flops() const override { return flopCount; }
  /// Compares the output buffer with `expected` (an error without one).
  Result<RunReport> check() const;
};

/// Every size is positive; the error names the first that is not.
Status requirePositive(const std::map<std::string, int64_t> &sizes);
/// A tool's --sizes ("M=203,N=176,stride_bk=1"): parseNamedIntegers, then
/// requirePositive.
Result<std::map<std::string, int64_t>> parseSizes(const std::string &text);

/// A problem on the host: the reference's tensors (the output's contents
/// are to be poisoned), the kernel's integer arguments by name and its FLOP
/// count. What buildProblem uploads, and what the interpreter (tilec run
/// --interpret) runs on.
struct HostProblem {
  ReferenceProblem reference;
  std::map<std::string, int64_t> integers;
  double flopCount = 0;
};

/// One argument of a kernel's signature for a host problem: a pointer
/// argument's tensor of the reference (`isOutput`: the one the kernel
/// writes, to be poisoned), else an integer argument's value.
struct HostArgument {
  std::string name;
  HostTensor *tensor = nullptr;
  bool isOutput = false;
  int64_t value = 0;
};

/// `kernel`'s arguments for `problem` in signature order; an error names an
/// argument the problem has nothing for, or an output that is not a pointer
/// argument. The GPU's problem uploads them; the interpreter passes them.
Result<std::vector<HostArgument>>
signatureArguments(const KernelDescription &kernel, HostProblem &problem);

/// Builds the host problem of `request` (the config is not needed). The
/// reference is computed only when asked for.
Result<HostProblem> buildHostProblem(const RunRequest &request,
                                     bool withReference);

/// `result` against `expected` within `tolerance`: NaN expected elements
/// must have stayed poisoned.
RunReport compareOutput(const HostTensor &result,
                        const std::vector<double> &expected,
                        const Tolerance &tolerance);

/// Builds the problem of `request` on the device (buildHostProblem,
/// uploaded).
Result<std::unique_ptr<Problem>> buildProblem(const rt::Context &context,
                                              const RunRequest &request,
                                              bool withReference);

/// The autotuner's inputs for `request`: its problem built when the tuning
/// asks for it, without the float64 reference (tilec tune and tilec warmup
/// benchmark on these). `context` and the request's kernel description must
/// outlive the factory.
rt::InputsFactory benchmarkInputsFor(const rt::Context &context,
                                     RunRequest request);

/// The median time of `repetitions` calls of `run` (each one launch on the
/// legacy stream), each between two CUDA events waited for, in
/// milliseconds.
Result<double> medianEventMs(const rt::Context &context,
                             const std::function<Status()> &run,
                             int repetitions);

/// Runs `kernel` for `request` and checks it.
Result<RunReport> runAndCheck(const rt::Context &context,
                              const rt::Kernel &kernel,
                              const RunRequest &request);

} // namespace tilec::harness

#endif // TILEC_HARNESS_KERNELHARNESS_H
