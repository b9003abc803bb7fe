//===- TtirMutator.cpp - Structure-aware mutations of a ttir module -------===//

#include "TtirMutator.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <random>
#include <vector>

using namespace mlir;

namespace tilec::fuzz {
namespace {

/// Values at the edges of what kernels, layouts and address arithmetic
/// assume: zero, one, negatives, powers of two and their neighbours, the
/// 32-bit limits.
int64_t edgeInteger(std::mt19937 &random) {
  static const int64_t edges[] = {0,
                                  1,
                                  -1,
                                  2,
                                  3,
                                  7,
                                  16,
                                  31,
                                  64,
                                  127,
                                  128,
                                  255,
                                  1024,
                                  4096,
                                  65536,
                                  -2,
                                  -128,
                                  2147483647,
                                  -2147483648LL,
                                  4294967295LL};
  std::uniform_int_distribution<size_t> pick(0, std::size(edges));
  size_t index = pick(random);
  if (index < std::size(edges))
    return edges[index];
  return std::uniform_int_distribution<int64_t>(-100000, 100000)(random);
}

double edgeFloat(std::mt19937 &random) {
  static const double edges[] = {0.0,     -0.0, 1.0,  -1.0, 0.5,
                                 65504.0, 1e-8, 1e30, -1e30};
  return edges[std::uniform_int_distribution<size_t>(0, std::size(edges) -
                                                            1)(random)];
}

/// One of `items` (not empty).
template <typename T>
const T &pickOne(const std::vector<T> &items, std::mt19937 &random) {
  return items[std::uniform_int_distribution<size_t>(0,
                                                     items.size() - 1)(random)];
}

/// The ops of the kernels' bodies but their terminators: what an op-level
/// mutation may drop or clone (not the module or a function: a kernel with
/// no body says little).
std::vector<Operation *> bodyOps(ModuleOp module) {
  std::vector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (op->getParentOp() && !isa<ModuleOp>(op->getParentOp()) &&
        !op->hasTrait<OpTrait::IsTerminator>())
      ops.push_back(op);
  });
  return ops;
}

/// A constant's attribute with its value replaced (scalars and splats of
/// integers and floats), or null.
Attribute mutatedConstant(Attribute value, std::mt19937 &random) {
  if (auto integer = dyn_cast<IntegerAttr>(value))
    return IntegerAttr::get(integer.getType(), edgeInteger(random));
  if (auto real = dyn_cast<FloatAttr>(value))
    return FloatAttr::get(real.getType(), edgeFloat(random));
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense || !dense.isSplat())
    return {};
  Type element = dense.getElementType();
  if (auto integerType = dyn_cast<IntegerType>(element))
    return DenseElementsAttr::get(
        dense.getType(),
        Attribute(IntegerAttr::get(integerType, edgeInteger(random))));
  if (auto floatType = dyn_cast<FloatType>(element))
    return DenseElementsAttr::get(
        dense.getType(),
        Attribute(FloatAttr::get(floatType, edgeFloat(random))));
  return {};
}

bool mutateConstant(ModuleOp module, std::mt19937 &random) {
  std::vector<Operation *> constants;
  module.walk([&](Operation *op) {
    if (op->getNumRegions() == 0 && op->getNumOperands() == 0 &&
        op->getNumResults() == 1 && op->hasAttr("value"))
      constants.push_back(op);
  });
  if (constants.empty())
    return false;
  Operation *op = pickOne(constants, random);
  Attribute replaced = mutatedConstant(op->getAttr("value"), random);
  if (!replaced)
    return false;
  op->setAttr("value", replaced);
  return true;
}

/// The values of `type` that dominate `user`, `excluded` left out.
std::vector<Value> candidatesFor(Operation *user, Type type, Value excluded,
                                 DominanceInfo &dominance, ModuleOp module) {
  std::vector<Value> found;
  auto consider = [&](Value value) {
    if (value != excluded && value.getType() == type &&
        dominance.properlyDominates(value, user))
      found.push_back(value);
  };
  module.walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          consider(argument);
    for (Value result : op->getResults())
      consider(result);
  });
  return found;
}

bool mutateOperand(ModuleOp module, std::mt19937 &random) {
  std::vector<Operation *> users;
  module.walk([&](Operation *op) {
    if (op->getNumOperands() > 0)
      users.push_back(op);
  });
  if (users.empty())
    return false;
  Operation *user = pickOne(users, random);
  unsigned index = std::uniform_int_distribution<unsigned>(
      0, user->getNumOperands() - 1)(random);
  Value current = user->getOperand(index);
  DominanceInfo dominance(module);
  std::vector<Value> candidates =
      candidatesFor(user, current.getType(), current, dominance, module);
  if (candidates.empty())
    return false;
  user->setOperand(index, pickOne(candidates, random));
  return true;
}

bool eraseOp(ModuleOp module, std::mt19937 &random) {
  std::vector<Operation *> ops = bodyOps(module);
  if (ops.empty())
    return false;
  Operation *op = pickOne(ops, random);
  DominanceInfo dominance(module);
  for (Value result : op->getResults()) {
    if (result.use_empty())
      continue;
    std::vector<Value> candidates =
        candidatesFor(op, result.getType(), result, dominance, module);
    if (candidates.empty())
      return false;
    result.replaceAllUsesWith(pickOne(candidates, random));
  }
  op->erase();
  return true;
}

bool cloneOp(ModuleOp module, std::mt19937 &random) {
  std::vector<Operation *> ops = bodyOps(module);
  if (ops.empty())
    return false;
  Operation *op = pickOne(ops, random);
  OpBuilder builder(op);
  builder.clone(*op);
  return true;
}

bool mutateAttribute(ModuleOp module, std::mt19937 &random) {
  // Integer attributes of ops and of function arguments (divisibility).
  struct Site {
    Operation *op;
    StringAttr name;
    int argument; // -1: the op's own attribute
  };
  std::vector<Site> sites;
  module.walk([&](Operation *op) {
    for (NamedAttribute attribute : op->getAttrs())
      if (isa<IntegerAttr>(attribute.getValue()))
        sites.push_back({op, attribute.getName(), -1});
    if (auto function = dyn_cast<FunctionOpInterface>(op))
      for (unsigned i = 0; i < function.getNumArguments(); ++i)
        for (NamedAttribute attribute : function.getArgAttrs(i))
          if (isa<IntegerAttr>(attribute.getValue()))
            sites.push_back({op, attribute.getName(), static_cast<int>(i)});
  });
  if (sites.empty())
    return false;
  Site site = pickOne(sites, random);
  if (site.argument < 0) {
    auto old = cast<IntegerAttr>(site.op->getAttr(site.name));
    site.op->setAttr(site.name,
                     IntegerAttr::get(old.getType(), edgeInteger(random)));
    return true;
  }
  auto function = cast<FunctionOpInterface>(site.op);
  auto old = cast<IntegerAttr>(function.getArgAttr(site.argument, site.name));
  function.setArgAttr(site.argument, site.name,
                      IntegerAttr::get(old.getType(), edgeInteger(random)));
  return true;
}

} // namespace

std::optional<std::string> mutateTtir(MLIRContext &context,
                                      std::string_view text, uint32_t seed) {
  // Parse errors are the usual answer to a broken mutant: kept quiet.
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  // NUL-terminated: MLIR's lexer reads the terminator.
  std::string source(text);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  if (!module)
    return std::nullopt;
  std::mt19937 random(seed);
  bool mutated = false;
  switch (std::uniform_int_distribution<int>(0, 4)(random)) {
  case 0:
    mutated = mutateConstant(*module, random);
    break;
  case 1:
    mutated = mutateOperand(*module, random);
    break;
  case 2:
    mutated = eraseOp(*module, random);
    break;
  case 3:
    mutated = cloneOp(*module, random);
    break;
  default:
    mutated = mutateAttribute(*module, random);
    break;
  }
  if (!mutated)
    return std::nullopt;
  std::string printed;
  llvm::raw_string_ostream os(printed);
  // A mutant that no longer verifies prints in the generic form, which
  // parses back without the ops' custom syntax (and their checks).
  OpPrintingFlags flags;
  if (failed(verify(*module)))
    flags.printGenericOpForm();
  module->print(os, flags);
  return printed;
}

} // namespace tilec::fuzz
