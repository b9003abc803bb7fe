//===- KernelDescription.h - Everything about a kernel but its body -*- C++ -*-===//
//
// Part of the kernel contract (libtilec_contract). A kernel is described once,
// in its file in kernels/: its signature (with divisibility and default
// values), its meta-parameters with their bounds, the candidate configs the
// autotuner tries, the autotune key, the launch grid, which call sizes feed
// which integer arguments, its FLOP count, and the default and tail sizes the
// tests run it on. The compiler specializes the body with it; the runtime,
// the tuner, the tools and the tests read the same object, or its json (the
// autotune cache stores it, so that a process without a compiler derives the
// same keys, configs, grids and arguments).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_CONTRACT_KERNELDESCRIPTION_H
#define TILEC_CONTRACT_KERNELDESCRIPTION_H

#include "tilec/contract/ArgType.h"
#include "tilec/contract/Config.h"
#include "tilec/contract/Specialization.h"
#include "tilec/contract/Status.h"

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilec {

/// An integer meta-parameter and the values it may take.
struct MetaParameter {
  explicit MetaParameter(std::string name) : name(std::move(name)) {}

  MetaParameter &powerOfTwo() {
    mustBePowerOfTwo = true;
    return *this;
  }
  /// `why` is shown when a config breaks the bound.
  MetaParameter &atLeast(int64_t value, std::string why = "") {
    minValue = value;
    minReason = std::move(why);
    return *this;
  }
  MetaParameter &atMost(int64_t value, std::string why = "") {
    maxValue = value;
    maxReason = std::move(why);
    return *this;
  }
  MetaParameter &byDefault(int64_t value) {
    defaultValue = value;
    return *this;
  }
  /// The launcher computes this parameter from the call (e.g.
  /// "next_power_of_2(n_cols)") instead of tuning it; the default stands in
  /// when there is no call.
  MetaParameter &derivedAs(std::string expression) {
    derivation = std::move(expression);
    return *this;
  }

  std::string name;
  std::optional<int64_t> defaultValue;
  bool mustBePowerOfTwo = false;
  int64_t minValue = std::numeric_limits<int64_t>::min();
  int64_t maxValue = std::numeric_limits<int64_t>::max();
  std::string minReason;
  std::string maxReason;
  std::string derivation;
};

/// A meta-parameter that is an element type, such as the dtype of a GEMM.
struct TypeParameter {
  TypeParameter(std::string name, std::vector<std::string> allowed)
      : name(std::move(name)), allowed(std::move(allowed)) {}
  TypeParameter &byDefault(std::string type) {
    defaultValue = std::move(type);
    return *this;
  }

  std::string name;
  /// Scalar type names: f16, bf16, f32, i32, ...
  std::vector<std::string> allowed;
  std::optional<std::string> defaultValue;
};

/// One kernel argument.
struct ArgumentDecl {
  ArgumentDecl(std::string name, std::string type)
      : name(std::move(name)), type(std::move(type)) {}
  /// Promises the value (the address, for pointers) is a multiple of
  /// `divisor`: becomes `tile.divisibility` on the argument, which later
  /// passes use to vectorize, and the launch refuses values that break it.
  /// Leave it out where callers may pass anything: a call's own values
  /// specialize the kernel (%16, == 1) anyway.
  ArgumentDecl &divisibility(int64_t divisor) {
    divisibilityHint = divisor;
    return *this;
  }
  /// For an integer argument: the smallest power of two a call's value
  /// specializes the kernel by. By default a value divisible by 16 says so
  /// and smaller divisors say nothing (Triton's rule: at most one more
  /// kernel per argument). From 2, a value divisible by 2, 4 or 8 says that
  /// too: the alignment an odd row stride still has (2222 halves: 4-byte
  /// copies instead of 2-byte ones), at the price of up to three more
  /// kernels per argument.
  ArgumentDecl &specializeFrom(int64_t divisor) {
    specializedFrom = divisor;
    return *this;
  }
  /// For an integer argument: no value specializes the kernel (Triton's
  /// do_not_specialize). For sizes that a stream of calls cannot predict,
  /// such as a point cloud's voxel count: every value of a tuned bucket then
  /// runs the one kernel, so a new value never compiles and a bundle packed
  /// from a few values serves them all.
  ArgumentDecl &doNotSpecialize() {
    specialized = false;
    return *this;
  }
  /// For an integer argument: its value when the call does not give one of
  /// its name, as an expression of the call's sizes ("K" for the row stride
  /// of a dense row-major K-wide matrix, "1" for its column stride).
  ArgumentDecl &byDefault(std::string expression) {
    defaultValue = std::move(expression);
    return *this;
  }

  std::string name;
  /// "i32", "ptr<f16>"; "ptr<DTYPE>" names a type parameter.
  std::string type;
  /// 0 when there is no hint.
  int64_t divisibilityHint = 0;
  /// See specializeFrom.
  int64_t specializedFrom = Specialization::kDivisor;
  /// See doNotSpecialize.
  bool specialized = true;
  /// Empty: the call must give the value under the argument's name.
  std::string defaultValue;
};

/// A pointer argument: pointer("a_ptr", "f16") or pointer("a_ptr", "DTYPE").
inline ArgumentDecl pointer(std::string name, std::string_view pointee) {
  return ArgumentDecl(std::move(name), "ptr<" + std::string(pointee) + ">");
}
/// A scalar argument: scalar("M", "i32").
inline ArgumentDecl scalar(std::string name, std::string type) {
  return ArgumentDecl(std::move(name), std::move(type));
}

/// One component of the autotune key: the tuned winner is stored per value
/// of the whole key.
struct AutotuneKeyEntry {
  /// A size ("M"), a type parameter ("DTYPE"), a meta-parameter fixed by the
  /// call ("ALLOW_TF32") or a derived key ("LOG2_M").
  std::string name;
  /// Empty for a value taken as is; otherwise how the key is computed from
  /// the call, e.g. "ceil(log2(M))".
  std::string derivation;
};

/// One call of a kernel, beyond its buffers.
struct Call {
  /// Sizes and integer argument values by name: M, N, K, stride_bk; n_rows.
  std::map<std::string, int64_t> sizes;
  /// Type parameters: DTYPE=f16. Unset ones take the kernel's default.
  std::map<std::string, std::string> types;
  /// Meta-parameters fixed by the caller rather than tuned: ALLOW_TF32=1.
  std::map<std::string, int64_t> params;
};

/// A launch grid along x, y, z.
struct GridSize {
  uint32_t x = 1, y = 1, z = 1;
};

class KernelDescription {
public:
  /// `sourceFile` is the path diagnostics name (relative to the repository,
  /// e.g. "kernels/matmul.cpp"); `line` is the line of the definition.
  explicit KernelDescription(std::string name, std::string sourceFile = "",
                             unsigned line = 0);

  //===--------------------------------------------------------------------===//
  // Declaring a kernel (chained in the kernel's .cpp)
  //===--------------------------------------------------------------------===//

  KernelDescription &param(MetaParameter parameter);
  KernelDescription &typeParam(TypeParameter parameter);
  KernelDescription &arg(ArgumentDecl argument);
  /// Several arguments in order, e.g. a set that kernels share.
  KernelDescription &args(std::vector<ArgumentDecl> arguments);
  /// A candidate config for autotuning, in Config::parse syntax; parameters
  /// with defaults may be left out. A malformed literal is a bug in the
  /// kernel's file and aborts with a message.
  KernelDescription &candidate(std::string_view configText);
  /// The same for a config already built (generated code, CppSource.h).
  KernelDescription &candidate(Config config);
  KernelDescription &key(std::string name, std::string derivation = "");
  /// The launch grid along x, y, z as expressions of sizes and
  /// meta-parameters ("cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)").
  KernelDescription &grid(std::vector<std::string> axes);
  /// A condition a config and a call must meet for the kernel to be
  /// correct, an expression of sizes and meta-parameters ("BLOCK_N >=
  /// n_cols"); evaluateGrid refuses a launch that breaks it, saying `why`.
  KernelDescription &require(std::string condition, std::string why);
  /// A condition under which a candidate is worth compiling for a call, an
  /// expression of sizes, meta-parameters, num_warps and num_stages
  /// ("BLOCK_M * BLOCK_N <= 4096 * num_warps"): the tuner prunes a candidate
  /// that breaks it before compiling it, saying `why` (Triton's
  /// early_config_prune). A launch of such a config is not refused: that is
  /// what require is for.
  KernelDescription &pruneUnless(std::string condition, std::string why);
  /// A candidate a key's first use may run without tuning (the autotuner's
  /// FirstUse::Predict, TILEC_FIRST_USE=predict) where every one of
  /// `conditions` holds for the call: expressions over the names prune
  /// conditions see. `configText` must be a candidate declared before (else
  /// the kernel's file has a bug, and this aborts saying so). Predictions
  /// are tried in declaration order (predictedConfigs).
  KernelDescription &predictWhen(std::vector<std::string> conditions,
                                 std::string_view configText);
  /// The same for a config already built (generated code, CppSource.h).
  KernelDescription &predictWhen(std::vector<std::string> conditions,
                                 Config config);
  /// Floating-point operations of one call, an expression of its sizes
  /// ("2 * M * N * K"); kernels without one report no TFLOP/s.
  KernelDescription &flops(std::string expression);
  /// The sizes the tests and tools run by default, and sizes that divide no
  /// block (masked tails).
  KernelDescription &testSizes(std::map<std::string, int64_t> defaults,
                               std::map<std::string, int64_t> tails);

  //===--------------------------------------------------------------------===//
  // Queries
  //===--------------------------------------------------------------------===//

  const std::string &getName() const { return name; }
  const std::string &getSourceFile() const { return sourceFile; }
  unsigned getLine() const { return line; }
  const std::vector<MetaParameter> &getMetaParameters() const { return params; }
  const std::vector<TypeParameter> &getTypeParameters() const {
    return typeParams;
  }
  /// Names of all meta-parameters, integer ones first, in declaration order.
  std::vector<std::string> getMetaParameterNames() const;
  /// The signature as declared; types may name type parameters.
  const std::vector<ArgumentDecl> &getSignature() const { return signature; }
  /// Whether a compiled kernel whose metadata lists `loaded` takes the
  /// arguments declared here: the same names in the same order, what a
  /// call binds by position (a cubin of another version of the kernel may
  /// not).
  bool takesArguments(const std::vector<KernelArg> &loaded) const;
  /// The candidate configs, with defaults filled in.
  const std::vector<Config> &getConfigs() const { return configs; }
  const std::vector<AutotuneKeyEntry> &getAutotuneKey() const {
    return autotuneKey;
  }
  const std::vector<std::string> &getGrid() const { return gridAxes; }
  const std::string &getFlops() const { return flopsExpression; }
  /// (condition, why) pairs.
  const std::vector<std::pair<std::string, std::string>> &
  getRequirements() const {
    return requirements;
  }
  /// (condition, why) pairs of pruneUnless.
  const std::vector<std::pair<std::string, std::string>> &
  getPruneConditions() const {
    return pruneConditions;
  }
  /// One predictWhen: its conditions and its (resolved) candidate.
  struct Prediction {
    std::vector<std::string> conditions;
    Config config;
  };
  const std::vector<Prediction> &getPredictions() const { return predictions; }
  const std::map<std::string, int64_t> &getDefaultSizes() const {
    return defaultSizes;
  }
  const std::map<std::string, int64_t> &getTailSizes() const {
    return tailSizes;
  }
  /// The integer arguments, name -> declared divisibility (1 for none).
  std::map<std::string, int64_t> getIntegerArguments() const;

  /// Checks `config` against the meta-parameters (unknown keys, missing
  /// values, powers of two, bounds, allowed types) and fills in defaults.
  /// The result is canonical: two configs that specialize to the same kernel
  /// resolve to equal configs.
  Result<Config> resolveConfig(const Config &config) const;
  /// Config::parse followed by resolveConfig.
  Result<Config> parseConfig(std::string_view text) const;
  /// The signature with type parameters replaced by `config`'s types (after
  /// resolving defaults).
  Result<std::vector<ArgumentDecl>> getSignature(const Config &config) const;

  //===--------------------------------------------------------------------===//
  // A call
  //===--------------------------------------------------------------------===//

  /// The values of the integer arguments, in signature order: the call's
  /// value of that name, else the argument's default expression evaluated
  /// over the call.
  Result<std::vector<std::pair<std::string, int64_t>>>
  evaluateIntegerArguments(const Call &call) const;
  /// What the kernel may assume about the call beyond its declaration:
  /// Specialization::derive of its integer argument values, restricted to
  /// what the declaration does not already promise. Sizes that only feed the
  /// grid or the key do not specialize, and an argument the call does not
  /// determine gets no fact (`tilec compile --arg-values K=4096` knows K and
  /// the defaults it determines, stride_am = K and the unit strides, but not
  /// N or stride_bk = N; a launch needs every value, see
  /// evaluateIntegerArguments).
  Specialization specializationOf(const Call &call) const;
  /// specializationOf a call that names integer argument values only (a
  /// tool's --arg-values); a name that is not an integer argument is an
  /// error.
  Result<Specialization>
  specializationOfArguments(const std::map<std::string, int64_t> &values) const;
  /// The call's autotune key: "NAME=VALUE" per key entry, in declaration
  /// order, joined by ','. A derived entry evaluates its expression over the
  /// call's sizes and parameters (defaults included); a plain entry takes the
  /// call's type, size or parameter of that name, else the kernel's default.
  Result<std::string> evaluateAutotuneKey(const Call &call) const;
  /// `candidate` completed for the call (its types and fixed parameters set
  /// from the call, else the defaults; derived parameters evaluated) and
  /// resolved.
  Result<Config> configForCall(const Config &candidate,
                               const Call &call) const;
  /// The grid for `config` and the call, after checking the requirements.
  Result<GridSize> evaluateGrid(const Config &config, const Call &call) const;

  /// What a launch of a call needs besides its config, evaluated with the
  /// call's names built once (a launch of a new size evaluates all of it;
  /// the functions above each build the names again): the same values as
  /// evaluateAutotuneKey, specializationOf and evaluateIntegerArguments,
  /// and what evaluateGrid needs from the call.
  struct CallEvaluation {
    std::string autotuneKey;
    Specialization specialization;
    /// In signature order.
    std::vector<std::pair<std::string, int64_t>> integerArguments;
    /// callNames of the call; the integer arguments the call gives; those
    /// it leaves to their defaults (declarations of this description).
    std::map<std::string, int64_t> names, given;
    std::vector<const ArgumentDecl *> defaulted;
  };
  /// An error where evaluateAutotuneKey or evaluateIntegerArguments would
  /// give one.
  Result<CallEvaluation> evaluateCall(const Call &call) const;
  /// evaluateGrid of `config` and the call `evaluation` was made of.
  Result<GridSize> evaluateGrid(const Config &config,
                                const CallEvaluation &evaluation) const;
  /// Why the tuner should not try `config` (resolved) for the call: the
  /// first prune condition it breaks, or nothing; an error when a condition
  /// cannot be evaluated.
  Result<std::optional<std::string>> pruneReason(const Config &config,
                                                 const Call &call) const;
  /// A candidate as a tuning of a call tries it: completed for the call
  /// (configForCall), and why the tuner should not try it (pruneReason), or
  /// nothing.
  struct CallCandidate {
    Config config;
    std::optional<std::string> pruneReason;
  };
  /// The candidates a tuning of the call tries: `declared` completed for the
  /// call in their order, each once (the call may make two equal, e.g.
  /// differing only in a derived parameter), with their prune reasons. The
  /// prune conditions say what is not worth trying, not what cannot run:
  /// where they reject every candidate, none is pruned.
  Result<std::vector<CallCandidate>>
  candidatesForCall(const std::vector<Config> &declared,
                    const Call &call) const;
  /// The configs a key's first use tries without tuning, in order, each
  /// once: of the candidates not pruned, those of the predictions whose
  /// conditions all hold, then the others in declaration order. The caller
  /// runs the first that compiles and fits the device.
  Result<std::vector<Config>> predictedConfigs(const Call &call) const;
  /// The same over `candidates`, candidatesForCall of the call.
  Result<std::vector<Config>>
  predictedConfigs(const std::vector<CallCandidate> &candidates,
                   const Call &call) const;
  /// The FLOP count of the call; 0 without a flops expression.
  Result<double> evaluateFlops(const Call &call) const;

  //===--------------------------------------------------------------------===//
  // Json (the autotune cache stores descriptions)
  //===--------------------------------------------------------------------===//

  std::string toJson() const;
  /// Errors name the field that is missing or malformed.
  static Result<KernelDescription> fromJson(std::string_view json);

  /// C++ source of `static const tilec::KernelDescription &FUNCTION()`,
  /// which builds this description once, on its first call, and never
  /// destroys it (CppSource.h).
  std::string toCpp(std::string_view function) const;

private:
  // Plans calls from the same names (callNames, addConfig) the functions
  // above evaluate over.
  friend class CallPlan;

  /// Sizes, then the kernel's parameter defaults, then the call's parameters:
  /// the names an expression of a call can use.
  std::map<std::string, int64_t> callNames(const Call &call) const;
  /// callNames with `config`'s meta-parameters, num_warps, num_stages and
  /// the arguments the call determines: what requirements, grids and prune
  /// conditions are evaluated over.
  std::map<std::string, int64_t> configNames(const Config &config,
                                             const Call &call) const;
  /// The integer arguments the call determines: its own values, else the
  /// defaults that evaluate over `names`.
  std::map<std::string, int64_t>
  determinedArguments(const Call &call,
                      const std::map<std::string, int64_t> &names) const;
  /// evaluateAutotuneKey over the call's `names` (callNames).
  Result<std::string>
  autotuneKeyOver(const Call &call,
                  const std::map<std::string, int64_t> &names) const;
  /// specializationOf a call whose determined integer arguments are
  /// `values`.
  Specialization
  specializationOfValues(const std::map<std::string, int64_t> &values) const;
  /// `config`'s meta-parameters, num_warps and num_stages into `names`.
  void addConfig(const Config &config,
                 std::map<std::string, int64_t> &names) const;
  /// The requirements checked and the grid axes evaluated over `names`
  /// (configNames).
  Result<GridSize> gridOver(const Config &config,
                            const std::map<std::string, int64_t> &names) const;
  /// The call's value of `argument`, else its default over `names`.
  Result<int64_t> argumentValue(const ArgumentDecl &argument, const Call &call,
                                const std::map<std::string, int64_t> &names)
      const;
  Status checkSizes(const Call &call) const;

  std::string name;
  std::string sourceFile;
  unsigned line = 0;
  std::vector<MetaParameter> params;
  std::vector<TypeParameter> typeParams;
  std::vector<ArgumentDecl> signature;
  std::vector<Config> configs;
  std::vector<AutotuneKeyEntry> autotuneKey;
  std::vector<std::string> gridAxes;
  std::string flopsExpression;
  std::vector<std::pair<std::string, std::string>> requirements;
  std::vector<std::pair<std::string, std::string>> pruneConditions;
  std::vector<Prediction> predictions;
  std::map<std::string, int64_t> defaultSizes, tailSizes;
};

} // namespace tilec

#endif // TILEC_CONTRACT_KERNELDESCRIPTION_H
