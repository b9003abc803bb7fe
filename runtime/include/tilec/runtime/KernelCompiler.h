//===- KernelCompiler.h - The compiler behind the runtime -------*- C++ -*-===//
//
// The runtime never links LLVM or MLIR. When a program needs a kernel for a
// config that is not compiled yet, it asks a KernelCompiler: an interface the
// runtime declares and the compiler library implements (tilec::jit::TilecJIT
// in include/tilec/JIT/TilecJIT.h). A program that links both compiles on
// first use; one that links only the runtime runs what is cached or bundled
// and reports a clear error for anything else.
//
// KernelConfig and KernelDescription mirror the compiler's kernel::Config and
// KernelDefinition (the part the autotuner needs: candidate configs, the
// autotune key, the grid), as plain data so that they can also be read back
// from the autotune cache without a compiler.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_KERNELCOMPILER_H
#define TILEC_RUNTIME_KERNELCOMPILER_H

#include "tilec/runtime/Status.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tilec::rt {

// One point of a kernel's configuration space: integer meta-parameters
// (BLOCK_M=128), type meta-parameters (DTYPE=f16), num_warps and num_stages.
struct KernelConfig {
  std::map<std::string, int64_t> params;
  std::map<std::string, std::string> types;
  int numWarps = 4;
  int numStages = 1;

  // The canonical text, identical to kernel::Config::str(): meta-parameters
  // and types sorted by name, then num_warps and num_stages. Caches key on
  // it and the autotuner breaks ties by its order.
  std::string str() const;

  // Parses KEY=VALUE,... as kernel::Config::parse does: an integer value
  // sets a meta-parameter, a name (f16) a type parameter; num_warps (a power
  // of two, 1 to 32) and num_stages (1 to 8) default to 4 and 1. Which names
  // a kernel knows is checked by the compiler, not here.
  static Result<KernelConfig> parse(std::string_view text);

  friend bool operator==(const KernelConfig &lhs, const KernelConfig &rhs) {
    return lhs.params == rhs.params && lhs.types == rhs.types &&
           lhs.numWarps == rhs.numWarps && lhs.numStages == rhs.numStages;
  }
  friend bool operator!=(const KernelConfig &lhs, const KernelConfig &rhs) {
    return !(lhs == rhs);
  }
};

// What a kernel may assume about a call's integer arguments: those divisible
// by 16 and those equal to 1, derived from the call's values the way
// Triton's JIT specializes (mirrors kernel::ArgumentFacts). Part of a compiled
// kernel's identity: the provider keeps one kernel per specialization, the
// autotuner keys its results on it, and ArgPack refuses values that break the
// one a kernel was compiled for. Names that are not integer arguments of the
// kernel are ignored by the compiler, whose kernel::ArgumentFacts is this type.
struct Specialization {
  std::map<std::string, int64_t> divisibility;
  std::set<std::string> equalToOne;

  // Facts about `values` (name -> value): divisible by 16, or 1.
  static Specialization derive(const std::map<std::string, int64_t> &values);
  // The facts a kernel whose integer arguments are `integerArguments` (name
  // -> declared divisibility, 1 for none) can use: about those arguments
  // only, without divisibility the declaration already promises, and without
  // "= 1" where it promises more (the launch refuses 1 there).
  Specialization
  restrictedTo(const std::map<std::string, int64_t> &integerArguments) const;
  // Canonical text, "K%16,M%16,N%16,stride=1"; empty without facts.
  std::string str() const;
  bool empty() const { return divisibility.empty() && equalToOne.empty(); }
};

// One component of a kernel's autotune key.
struct AutotuneKeyDecl {
  // An argument or size ("N"), a type parameter ("DTYPE"), a meta-parameter
  // fixed by the call ("ALLOW_TF32"), or a derived key ("LOG2_M").
  std::string name;
  // Empty: the value of `name` as is. Otherwise an expression of the call's
  // values, e.g. "ceil(log2(M))" (see evaluateExpression in Autotuner.h).
  std::string derivation;
};

// What the autotuner must know about a kernel besides its code.
struct KernelDescription {
  std::string name;
  // The candidates, with defaults filled in.
  std::vector<KernelConfig> configs;
  std::vector<AutotuneKeyDecl> key;
  // Grid along x, y, z: expressions of sizes and meta-parameters
  // ("cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)").
  std::vector<std::string> grid;
  // Defaults of meta-parameters and type parameters: a call that does not
  // set ALLOW_TF32 or DTYPE gets these, in its config and in its key.
  std::map<std::string, int64_t> paramDefaults;
  std::map<std::string, std::string> typeDefaults;
  // Meta-parameters the launcher derives from the call instead of tuning
  // them (softmax: BLOCK_N = "next_power_of_2(n_cols)").
  std::map<std::string, std::string> derivedParams;
  // The integer arguments, with the divisibility each is declared with (1:
  // none): the names a call's specialization may speak of.
  std::map<std::string, int64_t> integerArguments;
};

// What a compile hands to the runtime: the image to load and the compile
// json (KernelMetadata::parse reads it; it also carries the ptxas report and,
// when the compiler used a stage cache, each stage's cache key).
struct CompiledArtifact {
  std::string cubin;
  std::string metadataJson;
};

class KernelCompiler {
public:
  virtual ~KernelCompiler();

  // Compiles `kernel` for `config` (resolved by the compiler: missing
  // parameters take their defaults) for `target` ("sm_90"), specialized for
  // `specialization`. Must be safe to call from several threads at once: the
  // autotuner compiles its candidates in parallel.
  virtual Result<CompiledArtifact>
  compile(const std::string &kernel, const KernelConfig &config,
          const std::string &target,
          const Specialization &specialization) = 0;

  // The kernel's candidate configs, autotune key and grid.
  virtual Result<KernelDescription> describe(const std::string &kernel) = 0;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_KERNELCOMPILER_H
