//===- LoadTile.h - tile.load_tile: TMA or pointers -------------*- C++ -*-===//
//
// convert-tile-to-tilegpu decides, for each tile.load_tile, whether
// tilegpu-pipeline copies it with TMA (the op stays) or it becomes pointers
// and a masked tile.load (expanded here, before layouts are assigned).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_CONVERSION_TILETOTILEGPU_LOADTILE_H
#define TILEC_CONVERSION_TILETOTILEGPU_LOADTILE_H

#include "tilec/Dialect/Tile/IR/Tile.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace tilec {

/// The entry-block argument of the kernel that `value` is, or null.
mlir::BlockArgument getKernelArgument(mlir::Value value);

/// Whether tilegpu-pipeline will copy `load` with TMA: on a target with TMA
/// and a pipeline of at least two stages, a 16-bit block that is an operand
/// of a dot that `runsOnWarpGroups` (whose other operand qualifies too), in
/// the body of an innermost scf.for that writes no memory; the array's
/// base, rows, columns and row stride are kernel arguments, the column
/// stride is 1, and the base and the row stride are multiples of 16 bytes
/// (the arguments' divisibility): what a tensor map needs.
bool copiesWithTma(tile::LoadTileOp load, unsigned numStages,
                   llvm::function_ref<bool(tile::DotOp)> runsOnWarpGroups);

/// Replaces `load` by a tensor of pointers and a masked tile.load with
/// zeros outside the array. The part that does not change in the
/// enclosing loop (rows' pointers and mask) goes before the loop.
void expandLoadTile(tile::LoadTileOp load);

} // namespace tilec

#endif // TILEC_CONVERSION_TILETOTILEGPU_LOADTILE_H
