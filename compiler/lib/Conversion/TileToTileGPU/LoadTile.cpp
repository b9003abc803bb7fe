//===- LoadTile.cpp - tile.load_tile: TMA or pointers ---------------------===//

#include "LoadTile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace tilec;

BlockArgument tilec::getKernelArgument(Value value) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || !arg.getOwner()->isEntryBlock())
    return {};
  return isa<func::FuncOp>(arg.getOwner()->getParentOp()) ? arg
                                                           : BlockArgument();
}

namespace {

int64_t getDivisibility(BlockArgument arg) {
  auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
  auto attr = func.getArgAttrOfType<IntegerAttr>(
      arg.getArgNumber(), tile::TileDialect::getDivisibilityAttrName());
  return attr ? attr.getInt() : 1;
}

bool isOne(Value value) {
  if (matchPattern(value, m_One()))
    return true;
  BlockArgument arg = getKernelArgument(value);
  return arg && cast<func::FuncOp>(arg.getOwner()->getParentOp())
                    .getArgAttr(arg.getArgNumber(),
                                tile::TileDialect::getEqualToOneAttrName());
}

/// Whether any op in `loop`'s body writes memory.
bool writesMemory(scf::ForOp loop) {
  WalkResult result = loop.getBody()->walk([](Operation *op) {
    if (isa<tile::LoadOp>(op) && cast<tile::LoadOp>(op).getIsVolatile())
      return WalkResult::interrupt();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    return effects.hasEffect<MemoryEffects::Write>() ? WalkResult::interrupt()
                                                     : WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// The conditions on `load` alone (not on the dot's other operand).
bool qualifiesAlone(tile::LoadTileOp load, tile::DotOp dot) {
  auto type = cast<RankedTensorType>(load.getType());
  Type element = type.getElementType();
  if (!element.isF16() && !element.isBF16())
    return false;
  // A box side is at most 256 elements; wgmma rows are at least 32 bytes.
  if (type.getDimSize(0) > 256 || type.getDimSize(1) * 2 < 32)
    return false;
  if (!load->hasOneUse() || *load->user_begin() != dot.getOperation() ||
      (dot.getA() != load.getResult() && dot.getB() != load.getResult()) ||
      dot->getBlock() != load->getBlock())
    return false;
  BlockArgument base = getKernelArgument(load.getBase());
  BlockArgument rows = getKernelArgument(load.getRows());
  BlockArgument cols = getKernelArgument(load.getCols());
  BlockArgument rowStride = getKernelArgument(load.getRowStride());
  if (!base || !rows || !cols || !rowStride || !isOne(load.getColStride()))
    return false;
  return getDivisibility(base) % 16 == 0 &&
         getDivisibility(rowStride) * 2 % 16 == 0;
}

} // namespace

bool tilec::copiesWithTma(
    tile::LoadTileOp load, unsigned numStages,
    llvm::function_ref<bool(tile::DotOp)> runsOnWarpGroups) {
  if (numStages < 2 || !load->hasOneUse())
    return false;
  auto dot = dyn_cast<tile::DotOp>(*load->user_begin());
  auto loop = dyn_cast_or_null<scf::ForOp>(load->getParentOp());
  if (!dot || !loop || !loop.getBody()->getOps<scf::ForOp>().empty() ||
      dot.getRowGroups() || !runsOnWarpGroups(dot) || writesMemory(loop))
    return false;
  auto a = dot.getA().getDefiningOp<tile::LoadTileOp>();
  auto b = dot.getB().getDefiningOp<tile::LoadTileOp>();
  return a && b && a != b && qualifiesAlone(a, dot) && qualifiesAlone(b, dot);
}

void tilec::expandLoadTile(tile::LoadTileOp load) {
  Location loc = load.getLoc();
  auto type = cast<RankedTensorType>(load.getType());
  int64_t blockRows = type.getDimSize(0), blockCols = type.getDimSize(1);
  SmallVector<int64_t> shape = {blockRows, blockCols};
  Type i32 = IntegerType::get(load.getContext(), 32);
  auto splat = [&](OpBuilder &b, Value scalar, ArrayRef<int64_t> to) {
    return tile::SplatOp::create(
               b, loc, RankedTensorType::get(to, scalar.getType()), scalar)
        .getResult();
  };
  auto broadcast = [&](OpBuilder &b, Value value) {
    auto t = cast<RankedTensorType>(value.getType());
    return tile::BroadcastOp::create(
               b, loc, RankedTensorType::get(shape, t.getElementType()), value)
        .getResult();
  };
  // 0..size along `axis` of a [rows, 1] or [1, cols] tensor.
  auto range = [&](OpBuilder &b, int64_t size, int axis) {
    Value r = tile::MakeRangeOp::create(
        b, loc, RankedTensorType::get({size}, i32), 0, size);
    SmallVector<int64_t> expanded = {1, 1};
    expanded[1 - axis] = size;
    return tile::ExpandDimsOp::create(
               b, loc, RankedTensorType::get(expanded, i32), r, axis)
        .getResult();
  };

  // The block's element offsets from its first element, i * row_stride +
  // j * col_stride, go before the enclosing loop when the loop does not
  // define the base and the strides; each step adds its first element's
  // offset, as a pointer advanced each step would.
  OpBuilder builder(load);
  auto loop = dyn_cast_or_null<scf::ForOp>(load->getParentOp());
  Value invariant[] = {load.getBase(), load.getRowStride(),
                       load.getColStride()};
  if (loop && llvm::all_of(invariant, [&](Value v) {
        return loop.isDefinedOutsideOfLoop(v);
      }))
    builder.setInsertionPoint(loop);
  Value rowRange = range(builder, blockRows, 1);
  Value colRange = range(builder, blockCols, 0);
  Value offsets = arith::AddIOp::create(
      builder, loc,
      broadcast(builder,
                arith::MulIOp::create(
                    builder, loc, rowRange,
                    splat(builder, load.getRowStride(), {blockRows, 1}))),
      broadcast(builder,
                arith::MulIOp::create(
                    builder, loc, colRange,
                    splat(builder, load.getColStride(), {1, blockCols}))));
  auto ptrType = RankedTensorType::get(shape, load.getBase().getType());
  Value blockPtrs = tile::AddPtrOp::create(
      builder, loc, ptrType, splat(builder, load.getBase(), shape), offsets);

  // At the load: the first element's offset, and which rows and columns
  // lie inside the array (i < rows - row, j < cols - col).
  builder.setInsertionPoint(load);
  Value start = arith::AddIOp::create(
      builder, loc,
      arith::MulIOp::create(builder, loc, load.getRow(), load.getRowStride()),
      arith::MulIOp::create(builder, loc, load.getCol(), load.getColStride()));
  Value ptrs = tile::AddPtrOp::create(builder, loc, ptrType, blockPtrs,
                                      splat(builder, start, shape));
  auto inside = [&](Value indices, Value size, Value first,
                    ArrayRef<int64_t> along) {
    Value left = arith::SubIOp::create(builder, loc, size, first);
    return broadcast(builder, arith::CmpIOp::create(
                                  builder, loc, arith::CmpIPredicate::slt,
                                  indices, splat(builder, left, along)));
  };
  Value mask = arith::AndIOp::create(
      builder, loc,
      inside(rowRange, load.getRows(), load.getRow(), {blockRows, 1}),
      inside(colRange, load.getCols(), load.getCol(), {1, blockCols}));
  Value zero =
      arith::ConstantOp::create(builder, loc, type, builder.getZeroAttr(type));
  auto expanded = tile::LoadOp::create(builder, loc, ptrs, mask, zero,
                                       tile::CacheModifier::None,
                                       tile::EvictionPolicy::Normal);
  load.getResult().replaceAllUsesWith(expanded.getResult());
  load.erase();
}
