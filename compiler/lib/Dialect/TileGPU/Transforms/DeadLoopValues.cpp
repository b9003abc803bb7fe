//===- DeadLoopValues.cpp - drop loop-carried values nothing reads -------===//

#include "tilec/Dialect/TileGPU/Transforms/DeadLoopValues.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

#include <functional>

using namespace mlir;

/// Drops the loop-carried values nothing needs. Rematerialization leaves the
/// old copies of carried values behind, and their updates keep them alive
/// through the back edge, also across nested loops, so use-based dead code
/// elimination never removes them. A liveness fixed point from the ops with
/// effects finds them; each dead iter_arg is then yielded unchanged, which
/// breaks the cycle: the scf.for canonicalization drops it and the update
/// becomes plain dead code.
bool tilec::removeDeadLoopValues(Operation *root) {
  DenseSet<Value> liveValues;
  DenseSet<Operation *> liveOps;
  SmallVector<Value> worklist;
  auto markValue = [&](Value value) {
    if (liveValues.insert(value).second)
      worklist.push_back(value);
  };
  // Only the loops' own dataflow is followed precisely: everything else an op
  // needs (bounds, conditions, all operands) is live with it.
  std::function<void(Operation *)> markOp = [&](Operation *op) {
    if (!op || op == root || !liveOps.insert(op).second)
      return;
    if (auto forOp = dyn_cast<scf::ForOp>(op)) {
      markValue(forOp.getLowerBound());
      markValue(forOp.getUpperBound());
      markValue(forOp.getStep());
    } else if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      markValue(ifOp.getCondition());
    } else if (!isa<scf::YieldOp>(op) ||
               !isa<scf::ForOp, scf::IfOp>(op->getParentOp())) {
      for (Value operand : op->getOperands())
        markValue(operand);
    }
    markOp(op->getParentOp());
  };
  root->walk([&](Operation *op) {
    if (isa<scf::ForOp, scf::IfOp>(op) ||
        (isa<scf::YieldOp>(op) &&
         isa<scf::ForOp, scf::IfOp>(op->getParentOp())))
      return;
    // Effects, unknown regions and returns are needed whatever their uses.
    if (!isMemoryEffectFree(op) || op->getNumRegions() != 0 ||
        op->hasTrait<OpTrait::IsTerminator>())
      markOp(op);
  });
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      auto forOp = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (!forOp)
        continue;
      markOp(forOp);
      if (arg.getArgNumber() == 0)
        continue;
      unsigned index = arg.getArgNumber() - 1;
      markValue(forOp.getInitArgs()[index]);
      markValue(forOp.getYieldedValues()[index]);
      continue;
    }
    auto result = cast<OpResult>(value);
    Operation *op = result.getOwner();
    markOp(op);
    unsigned index = result.getResultNumber();
    if (auto forOp = dyn_cast<scf::ForOp>(op)) {
      markValue(forOp.getInitArgs()[index]);
      markValue(forOp.getYieldedValues()[index]);
    } else if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      markValue(ifOp.thenYield().getOperand(index));
      markValue(ifOp.elseYield().getOperand(index));
    }
  }

  bool changed = false;
  root->walk([&](scf::ForOp forOp) {
    auto yield = cast<scf::YieldOp>(forOp.getBody()->getTerminator());
    for (auto [index, arg] : llvm::enumerate(forOp.getRegionIterArgs())) {
      if (liveValues.contains(arg) ||
          liveValues.contains(forOp.getResult(index)) ||
          yield.getOperand(index) == arg)
        continue;
      yield->setOperand(index, arg);
      changed = true;
    }
  });
  return changed;
}

