//===- Tile.h - the tile dialect (ttir) -------------------------*- C++ -*-===//
//
// Declarations of the tile dialect, its types, enums and operations.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_DIALECT_TILE_IR_TILE_H
#define TILEC_DIALECT_TILE_IR_TILE_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>
#include <string>

#include "tilec/Dialect/Tile/IR/TileDialect.h.inc"
#include "tilec/Dialect/Tile/IR/TileEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tilec/Dialect/Tile/IR/TileTypes.h.inc"

namespace tilec::tile {
/// The pointee type of a pointer, or the same-shaped tensor of pointees for a
/// tensor of pointers (keeping its encoding).
mlir::Type getPointeeTypeOrTensorOf(mlir::Type ptrLike);
/// i1 for a scalar, a tensor of i1 with the same shape and encoding otherwise.
mlir::Type getI1TypeWithShapeOf(mlir::Type type);
/// The element type of a tensor, or the type itself for a scalar.
mlir::Type getElementTypeOrSelf(mlir::Type type);
/// Why `rows` rows cannot be split into groups of `rowsPerGroup` for a
/// dot's row groups (a power of two, at most the 32 groups of an i32), or
/// nothing: the rule the ops' verifiers and the kernel builder share.
std::optional<std::string> getRowGroupsError(int64_t rowsPerGroup,
                                             int64_t rows);
/// What tile.dot and tilegpu.warpgroup_dot check of their row groups: both
/// the operand and the group size or neither, and getRowGroupsError.
mlir::LogicalResult verifyRowGroups(mlir::Operation *op, mlir::Value rowGroups,
                                    std::optional<uint32_t> rowsPerGroup,
                                    int64_t rows);
} // namespace tilec::tile

#define GET_ATTRDEF_CLASSES
#include "tilec/Dialect/Tile/IR/TileAttrs.h.inc"

#define GET_OP_CLASSES
#include "tilec/Dialect/Tile/IR/TileOps.h.inc"

#endif // TILEC_DIALECT_TILE_IR_TILE_H
