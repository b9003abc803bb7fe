//===- Reference.h - A kernel's float64 reference for the tests -*- C++ -*-===//
//
// Each kernel of kernels/ has one reference in test/reference/, next to the
// others: given a call, it fills the host tensors of the kernel's pointer
// arguments with random inputs and, when asked, computes the expected output
// in float64 with its tolerance. The harness does the rest from the kernel's
// description (arguments, grid, FLOPs), so nothing here knows a kernel by
// its name: a reference registers itself with TILEC_REFERENCE(name), and
// test/harness/CMakeLists.txt lists every file that does.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_HARNESS_REFERENCE_H
#define TILEC_HARNESS_REFERENCE_H

#include "tilec/contract/KernelDescription.h"
#include "tilec/contract/Status.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tilec::harness {

/// How a host tensor's elements are stored on the device.
enum class ElementFormat { F32, F16, BF16, I32, I64 };

/// The format of a type parameter's value ("f16"); an error names the type.
Result<ElementFormat> formatOf(const std::string &type);

/// A host tensor kept in its device format; get() gives the exact stored
/// values as doubles (f16 and bf16 rounded to nearest even on set).
struct HostTensor {
  ElementFormat format = ElementFormat::F32;
  std::vector<uint8_t> bytes;

  HostTensor() = default;
  HostTensor(ElementFormat format, size_t count)
      : format(format), bytes(count * elementBytes(format)) {}
  static size_t elementBytes(ElementFormat format) {
    if (format == ElementFormat::I64)
      return 8;
    return format == ElementFormat::F16 || format == ElementFormat::BF16 ? 2
                                                                         : 4;
  }
  size_t size() const { return bytes.size() / elementBytes(format); }
  void set(size_t index, double value);
  /// Exact for every i64 (set() goes through a double).
  void setInteger(size_t index, int64_t value);
  double get(size_t index) const;
  /// Every element as a double: what a reference's inner loop reads, so
  /// that it decodes each element once rather than once per use.
  std::vector<double> toDoubles() const;
};

/// Calls `body(begin, end)` on disjoint ranges covering [0, count) from
/// several threads (one per hardware thread, at most `count`) and returns
/// when all are done. For references whose outputs are independent rows:
/// each row is computed as one thread would, so the result is the same.
void forEachRowRange(int64_t count,
                     const std::function<void(int64_t, int64_t)> &body);

/// splitmix64: deterministic per seed, and fast enough to fill the inputs of
/// a 4096^3 matmul while the autotuner compiles.
class Random {
public:
  explicit Random(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * (static_cast<double>(next() >> 11) * 0x1.0p-53);
  }
  /// Uniform integer in [0, bound).
  int64_t below(int64_t bound) {
    return static_cast<int64_t>(next() % static_cast<uint64_t>(bound));
  }

private:
  uint64_t state_;
};

/// Fills `tensor` with uniform values in [lo, hi). Without a reference to
/// compute (benchmark inputs) only the first 65537 elements are drawn and
/// repeated: timings do not depend on the values, and drawing every element
/// of a large matmul would dominate a tuning whose compiles hit the cache.
void fillUniform(HostTensor &tensor, Random &rng, double lo, double hi,
                 bool withReference);

struct Tolerance {
  double rtol = 0, atol = 0;
};

/// By output format: f16/bf16 1e-2, tf32 1e-3, f32 1e-5 (relative), with
/// the absolute part scaled by `accumulationScale` (sqrt(K) for a dot).
Tolerance toleranceFor(ElementFormat format, bool tf32,
                       double accumulationScale);

/// What a reference is given.
struct ReferenceRequest {
  const KernelDescription &kernel;
  const Call &call;
  /// The kernel's integer arguments for the call (sizes and strides), by
  /// name: KernelDescription::evaluateIntegerArguments.
  const std::map<std::string, int64_t> &arguments;
  bool withReference;
  Random &rng;

  /// The call's value of `name` (a size or an integer argument); an error
  /// names what is missing.
  Result<int64_t> value(const std::string &name) const;
  /// The call's type parameter `name`, else the kernel's default.
  Result<std::string> type(const std::string &name) const;
  /// The call's fixed meta-parameter `name`, else `fallback`.
  int64_t param(const std::string &name, int64_t fallback) const;
  /// The call's meta-parameter `name`, else the kernel's default for it
  /// (0 when it has none).
  int64_t paramOrDefault(const std::string &name) const;
};

/// What a reference returns.
struct ReferenceProblem {
  /// One host tensor per pointer argument of the kernel, by argument name.
  /// The output's contents are ignored: it is poisoned (all bits set) on the
  /// device before the run.
  std::map<std::string, HostTensor> tensors;
  /// The pointer argument the kernel writes.
  std::string output;
  /// The expected value of every element of the output (empty without a
  /// reference); NaN marks an element the kernel must leave poisoned (all
  /// bits set: NaN in a float format, -1 in an integer one).
  std::vector<double> expected;
  Tolerance tolerance;
};

using ReferenceFn = Result<ReferenceProblem> (*)(const ReferenceRequest &);

/// The reference of `kernel`, or null.
ReferenceFn findReference(const std::string &kernel);
/// Kernels with a reference, sorted.
std::vector<std::string> listReferenceKernels();

} // namespace tilec::harness

/// Defines the reference of kernel NAME (one per file of test/reference/):
///   TILEC_REFERENCE(matmul)(const ReferenceRequest &request) { ... }
#define TILEC_REFERENCE(NAME)                                                  \
  namespace tilec::harness {                                                   \
  Result<ReferenceProblem> reference_##NAME(const ReferenceRequest &);         \
  }                                                                            \
  tilec::Result<tilec::harness::ReferenceProblem>                              \
      tilec::harness::reference_##NAME

#endif // TILEC_HARNESS_REFERENCE_H
