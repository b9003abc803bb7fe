//===- AccessVectorWidth.h - vector widths of global accesses ---*- C++ -*-===//

#ifndef TILEC_CONVERSION_TILEGPUTOLLVM_ACCESSVECTORWIDTH_H
#define TILEC_CONVERSION_TILEGPUTOLLVM_ACCESSVECTORWIDTH_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"

namespace tilec {
/// For each tile.load / tile.store / tilegpu.async_copy_global_to_local on
/// tensors in `module`: how many
/// consecutive elements one instruction may move, from the pointers'
/// contiguity and alignment and the mask's uniformity (the layout's own
/// contiguity is applied during lowering).
llvm::DenseMap<mlir::Operation *, unsigned>
computeAccessVectorWidths(mlir::ModuleOp module);
} // namespace tilec

#endif // TILEC_CONVERSION_TILEGPUTOLLVM_ACCESSVECTORWIDTH_H
