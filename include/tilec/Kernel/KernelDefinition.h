//===- KernelDefinition.h - kernels with symbolic meta-parameters -*- C++
//-*-===//
//
// A kernel is defined once: a body written with KernelBuilder, its signature,
// its meta-parameters (block sizes, dtypes) with their constraints, the
// candidate configs the autotuner tries and the autotune key. specialize()
// turns it plus one Config into canonical ttir: a module holding one
// func.func with `tile.kernel`.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_KERNEL_KERNELDEFINITION_H
#define TILEC_KERNEL_KERNELDEFINITION_H

#include "tilec/runtime/KernelCompiler.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tilec::kernel {

class KernelBuilder;

/// One point in a kernel's configuration space: meta-parameters plus the
/// launch shape (num_warps) and pipelining depth (num_stages).
struct Config {
  /// Integer meta-parameters: BLOCK_M=128, GROUP_M=8, ...
  std::map<std::string, int64_t> params;
  /// Type meta-parameters: DTYPE=f16, ...
  std::map<std::string, std::string> types;
  int numWarps = 4;
  int numStages = 1;

  /// Parses `KEY=VALUE,...` ("BLOCK_M=128,BLOCK_K=32,DTYPE=f16,num_warps=4,
  /// num_stages=2"). An integer VALUE sets a meta-parameter, a name such as
  /// f16 a type parameter; num_warps (a power of two, 1 to 32) and num_stages
  /// (1 to 8) default to 4 and 1. Which keys a kernel knows is checked by
  /// KernelDefinition::resolveConfig.
  static llvm::Expected<Config> parse(llvm::StringRef text);

  /// The canonical text: meta-parameters and types sorted by name, then
  /// num_warps and num_stages. parse(str()) == *this.
  std::string str() const;

  friend bool operator==(const Config &lhs, const Config &rhs) {
    return lhs.params == rhs.params && lhs.types == rhs.types &&
           lhs.numWarps == rhs.numWarps && lhs.numStages == rhs.numStages;
  }
  friend bool operator!=(const Config &lhs, const Config &rhs) {
    return !(lhs == rhs);
  }
};

/// An integer meta-parameter and the values it may take.
struct MetaParameter {
  explicit MetaParameter(llvm::StringRef name) : name(name.str()) {}

  MetaParameter &powerOfTwo() {
    mustBePowerOfTwo = true;
    return *this;
  }
  /// `why` is shown when a config breaks the bound.
  MetaParameter &atLeast(int64_t value, llvm::StringRef why = "") {
    minValue = value;
    minReason = why.str();
    return *this;
  }
  MetaParameter &atMost(int64_t value, llvm::StringRef why = "") {
    maxValue = value;
    maxReason = why.str();
    return *this;
  }
  MetaParameter &byDefault(int64_t value) {
    defaultValue = value;
    return *this;
  }
  /// The launcher computes this parameter from the arguments (e.g.
  /// "next_power_of_2(n_cols)") instead of tuning it; the default stands in
  /// when there are no arguments.
  MetaParameter &derivedAs(llvm::StringRef expression) {
    derivation = expression.str();
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
  TypeParameter(llvm::StringRef name, std::vector<std::string> allowed)
      : name(name.str()), allowed(std::move(allowed)) {}
  TypeParameter &byDefault(llvm::StringRef type) {
    defaultValue = type.str();
    return *this;
  }

  std::string name;
  /// Scalar type names: f16, bf16, f32, i32, ...
  std::vector<std::string> allowed;
  std::optional<std::string> defaultValue;
};

/// One kernel argument.
struct ArgumentDecl {
  ArgumentDecl(llvm::StringRef name, llvm::StringRef type)
      : name(name.str()), type(type.str()) {}
  /// Promises the value (the address, for pointers) is a multiple of
  /// `divisor`: becomes `tile.divisibility` on the argument, which later
  /// passes use to vectorize. The launcher must only pass values that keep
  /// the promise.
  ArgumentDecl &divisibility(int64_t divisor) {
    divisibilityHint = divisor;
    return *this;
  }

  std::string name;
  /// "i32", "ptr<f16>"; "ptr<DTYPE>" names a type parameter.
  std::string type;
  /// 0 when there is no hint.
  int64_t divisibilityHint = 0;
};

/// A pointer argument: pointer("a_ptr", "f16") or pointer("a_ptr", "DTYPE").
inline ArgumentDecl pointer(llvm::StringRef name, llvm::StringRef pointee) {
  return ArgumentDecl(name, ("ptr<" + pointee + ">").str());
}
/// A scalar argument: scalar("M", "i32").
inline ArgumentDecl scalar(llvm::StringRef name, llvm::StringRef type) {
  return ArgumentDecl(name, type);
}

/// One component of the autotune key: the tuned winner is stored per value
/// of the whole key.
struct AutotuneKeyEntry {
  /// An argument name ("M"), a type parameter ("DTYPE") or a derived key
  /// ("LOG2_M").
  std::string name;
  /// Empty for an argument or parameter taken as is; otherwise how the key
  /// is computed from the arguments, e.g. "ceil(log2(M))".
  std::string derivation;
};

/// What a launch promises about its integer arguments' values, derived the way
/// Triton's JIT derives it: a value divisible by 16 lets loads and stores
/// vectorize, a value equal to 1 (a unit stride) folds away. Facts change the
/// ttir, so they are part of the kernel's identity (its hash and cache keys).
/// The runtime's type, so that a call's specialization reaches the compiler
/// as it is.
using ArgumentFacts = rt::Specialization;

class KernelDefinition {
public:
  using BodyFn = std::function<void(KernelBuilder &)>;

  /// `sourceFile` is the path diagnostics and locations name (relative to
  /// the repository, e.g. "kernels/matmul.cpp"); `line` is the line of the
  /// definition.
  KernelDefinition(llvm::StringRef name, llvm::StringRef sourceFile,
                   BodyFn body, unsigned line = __builtin_LINE());

  //===--------------------------------------------------------------------===//
  // Declaring a kernel (chained in the kernel's .cpp)
  //===--------------------------------------------------------------------===//

  KernelDefinition &param(MetaParameter parameter);
  KernelDefinition &typeParam(TypeParameter parameter);
  KernelDefinition &arg(ArgumentDecl argument);
  /// A candidate config for autotuning, in Config::parse syntax; parameters
  /// with defaults may be left out. A malformed literal is a bug in the
  /// kernel definition and aborts with a message.
  KernelDefinition &candidate(llvm::StringRef configText);
  KernelDefinition &key(llvm::StringRef name, llvm::StringRef derivation = "");
  /// The launch grid along x, y, z as expressions of arguments and
  /// meta-parameters ("cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)").
  KernelDefinition &grid(std::vector<std::string> axes);

  //===--------------------------------------------------------------------===//
  // Queries
  //===--------------------------------------------------------------------===//

  llvm::StringRef getName() const { return name; }
  llvm::StringRef getSourceFile() const { return sourceFile; }
  /// Names of all meta-parameters, integer ones first, in declaration order.
  std::vector<std::string> getMetaParameterNames() const;
  llvm::ArrayRef<MetaParameter> getMetaParameters() const { return params; }
  llvm::ArrayRef<TypeParameter> getTypeParameters() const { return typeParams; }
  /// The signature as declared; types may name type parameters.
  llvm::ArrayRef<ArgumentDecl> getSignature() const { return signature; }
  /// The signature with type parameters replaced by `config`'s types (after
  /// resolving defaults).
  llvm::Expected<std::vector<ArgumentDecl>>
  getSignature(const Config &config) const;
  /// The candidate configs, with defaults filled in.
  llvm::ArrayRef<Config> getConfigs() const { return configs; }
  llvm::ArrayRef<AutotuneKeyEntry> getAutotuneKey() const {
    return autotuneKey;
  }
  llvm::ArrayRef<std::string> getGrid() const { return gridAxes; }

  /// Checks `config` against the meta-parameters (unknown keys, missing
  /// values, powers of two, bounds, allowed types) and fills in defaults.
  /// The result is canonical: two configs that specialize to the same kernel
  /// resolve to equal configs.
  llvm::Expected<Config> resolveConfig(const Config &config) const;
  /// Config::parse followed by resolveConfig.
  llvm::Expected<Config> parseConfig(llvm::StringRef text) const;

  /// Loads the dialects a specialized kernel uses. specialize() does it too;
  /// call it first when specializing from several threads on one context.
  static void loadDialects(mlir::MLIRContext &context);

  /// Builds the kernel for `config`, verifies it and runs canonicalize and
  /// cse. Errors (a bad config, a mistake in the body) are emitted as
  /// diagnostics on `context` at the kernel's location.
  /// `facts` about argument values add divisibility hints and turn arguments
  /// equal to 1 into constants (the argument stays in the signature).
  mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
  specialize(mlir::MLIRContext &context, const Config &config,
             const ArgumentFacts &facts = {}) const;

  /// The integer arguments, name -> declared divisibility (1 for none).
  std::map<std::string, int64_t> getIntegerArguments() const;

  /// The part of `facts` that applies to this kernel, for facts derived from
  /// a call's named values (which may name sizes that are not arguments):
  /// `facts.restrictedTo(getIntegerArguments())`.
  ArgumentFacts applicableFacts(const ArgumentFacts &facts) const {
    return facts.restrictedTo(getIntegerArguments());
  }

private:
  std::string name;
  std::string sourceFile;
  unsigned line;
  BodyFn body;
  std::vector<MetaParameter> params;
  std::vector<TypeParameter> typeParams;
  std::vector<ArgumentDecl> signature;
  std::vector<Config> configs;
  std::vector<AutotuneKeyEntry> autotuneKey;
  std::vector<std::string> gridAxes;
};

} // namespace tilec::kernel

#endif // TILEC_KERNEL_KERNELDEFINITION_H
