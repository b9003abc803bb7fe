//===- CallPlan.h - A kernel's calls of one shape, planned once -*- C++ -*-===//
//
// Part of the kernel contract (libtilec_contract). A stream of point clouds
// launches the same kernels with a new voxel count every time: each launch
// needs its autotune key, specialization, integer arguments and grid anew,
// and the description's own functions parse every expression and build maps
// of names for each. A plan does that once per call shape and then reads
// the call's sizes into slots.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_CONTRACT_CALLPLAN_H
#define TILEC_CONTRACT_CALLPLAN_H

#include "tilec/contract/Expression.h"
#include "tilec/contract/KernelDescription.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tilec {

/// The calls of one kernel that have one shape: the same size names (any
/// values), the same meta-parameters and the same types. For such a call,
/// evaluate() gives what KernelDescription::evaluateCall gives and a Grid
/// what evaluateGrid gives, with the expressions parsed once. Where a plan
/// cannot tell (an expression that does not compile, or fails for this
/// call's values) it gives nothing and the description's functions answer,
/// with their errors: a plan never decides differently, only faster.
class CallPlan {
public:
  /// Plans the calls shaped like `shape`. `description` must outlive it.
  CallPlan(const KernelDescription &description, const Call &shape);
  /// A text equal for two calls exactly when one plan serves both: the
  /// sizes' names, the parameters and the types.
  static std::string shapeOf(const Call &call);

  /// A call's values in the plan's slots, and what they give.
  struct Evaluation {
    std::string autotuneKey;
    Specialization specialization;
    /// In signature order, as evaluateCall's.
    std::vector<std::pair<std::string, int64_t>> integerArguments;
    std::vector<int64_t> slots;
    /// The plan that made it (a Grid reads its slots by that plan's names).
    const CallPlan *plan = nullptr;
  };
  /// Whether `call` has the plan's shape.
  bool fits(const Call &call) const;
  /// evaluateCall of a call that fits, or nothing.
  std::optional<Evaluation> evaluate(const Call &call) const;

  /// The grid of one config for calls of the plan's shape.
  class Grid {
  public:
    /// evaluateGrid(config, call) of the call `evaluation` was made of, or
    /// nothing (also for an evaluation another plan made).
    std::optional<GridSize> evaluate(const Evaluation &evaluation) const;

  private:
    friend class CallPlan;
    bool usable = false;
    const CallPlan *plan = nullptr;
    // Its slots: the call's, then the config's names the call has not, then
    // the arguments the call leaves to their defaults.
    std::vector<std::pair<size_t, int64_t>> configOverCall;
    std::vector<int64_t> configOnly;
    std::vector<CompiledExpression> defaults, requirements, axes;
    // Whether a requirement or an axis reads each default (one whose
    // default fails for a call matters only then, as in evaluateGrid).
    std::vector<bool> defaultRead;
  };
  Grid grid(const Config &config) const;

private:
  const KernelDescription &description;
  // Slot names: callNames of the shape, in its order.
  std::vector<std::string> slotNames;
  // Each slot's value where the call does not give it (a parameter, a
  // meta-parameter's default); the call's size names in order, and which
  // of them (index) go to which slot.
  std::vector<int64_t> constantSlots;
  std::vector<std::string> sizeNames;
  std::vector<std::pair<size_t, size_t>> sizeSlots;
  std::map<std::string, int64_t> params;
  std::map<std::string, std::string> types;

  struct IntegerArgument {
    std::string name;
    // The index of the size the call gives it as, else the default's
    // program.
    std::optional<size_t> size;
    std::optional<CompiledExpression> byDefault;
    bool specialized;
    int64_t smallestDivisor, declaredDivisor;
  };
  std::vector<IntegerArgument> arguments;
  // Whether every argument has a value and every key entry one.
  bool usable = true;

  // The key: text, then a value from a slot or an expression, in turn.
  struct KeyPart {
    std::string text;
    std::optional<size_t> slot;
    std::optional<CompiledExpression> derived;
  };
  std::vector<KeyPart> keyParts;
};

} // namespace tilec

#endif // TILEC_CONTRACT_CALLPLAN_H
