//===- DeadLoopValues.h - drop loop-carried values nothing reads ---------===//

#ifndef TILEC_DIALECT_TILEGPU_TRANSFORMS_DEADLOOPVALUES_H
#define TILEC_DIALECT_TILEGPU_TRANSFORMS_DEADLOOPVALUES_H

namespace mlir {
class Operation;
} // namespace mlir

namespace tilec {

/// Makes every scf.for iter_arg under `root` that no op with effects needs
/// (directly or through other iter_args) yield itself unchanged, which
/// breaks its use cycle: scf.for canonicalization then drops it and its
/// update becomes dead code. Returns whether anything changed. Works on
/// tensors and on the scalars the lowering splits them into alike.
bool removeDeadLoopValues(mlir::Operation *root);

} // namespace tilec

#endif // TILEC_DIALECT_TILEGPU_TRANSFORMS_DEADLOOPVALUES_H
