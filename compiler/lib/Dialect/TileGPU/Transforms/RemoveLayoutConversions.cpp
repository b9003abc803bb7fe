//===- RemoveLayoutConversions.cpp - recompute instead of converting ------===//
//
// A tilegpu.convert_layout between distributed layouts costs a round trip
// through shared memory and a barrier. When the converted value is computed
// by cheap ops from scalars (pointer arithmetic from splats and ranges is the
// common case, after coalescing), every thread can compute its elements in the
// target layout directly: the backward slice is cloned in that layout and the
// conversion disappears. Clones go right after their originals, so they
// dominate every use the originals did; originals still used elsewhere stay
// and dead ones are cleaned up at the end. Values carried by scf.for are
// carried in the new layout as additional iter_args.
//
//===----------------------------------------------------------------------===//

#include "tilec/Dialect/TileGPU/Transforms/Passes.h"
#include "tilec/Dialect/TileGPU/Transforms/DeadLoopValues.h"

#include "tilec/Dialect/Tile/IR/Tile.h"
#include "tilec/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

namespace tilec::tilegpu {
#define GEN_PASS_DEF_TILEGPUREMOVELAYOUTCONVERSIONS
#include "tilec/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace tilec::tilegpu

using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;

namespace {

/// Layouts values are recomputed in: those whose ops every lowering supports.
/// mma and dot_op values come from dots and conversions only.
bool isRematTarget(Attribute encoding) {
  if (isa_and_nonnull<BlockedEncodingAttr>(encoding))
    return true;
  if (auto slice = dyn_cast_or_null<SliceEncodingAttr>(encoding))
    return isRematTarget(slice.getParent());
  return false;
}

/// Ops worth recomputing in another layout rather than converting: pure,
/// per-element (or per-thread-generated) and without regions.
bool isCheap(Operation *op) {
  if (isa<tile::SplatOp, tile::MakeRangeOp, tile::BroadcastOp,
          tile::ExpandDimsOp>(op))
    return true;
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return isa<DenseElementsAttr>(constant.getValue());
  if (op->getNumRegions() != 0 || op->getNumResults() != 1 ||
      !op->hasTrait<OpTrait::Elementwise>() || !isMemoryEffectFree(op))
    return false;
  StringRef dialect = op->getDialect()->getNamespace();
  return dialect == "arith" || dialect == "math" || dialect == "tile";
}

/// A load of no more elements than the CTA has threads (the row indices a
/// gather reads each step) is repeated in the new layout rather than
/// converted: each thread loads the elements it needs, threads that need
/// the same one read the same address (one transaction for a warp), and
/// the round trip through shared memory and its barriers go away. Larger
/// loads would multiply their traffic, and so would a layout that hands one
/// thread many of the elements: at most kMaxSmallLoadRegisters each.
constexpr unsigned kMaxSmallLoadRegisters = 16;
bool isSmallLoad(Operation *op, Attribute layout, int64_t threads) {
  auto load = dyn_cast<tile::LoadOp>(op);
  if (!load || load.getIsVolatile())
    return false;
  auto type = dyn_cast<RankedTensorType>(load.getType());
  return type && type.getNumElements() <= threads &&
         getLinearLayout(type.cloneWithEncoding(layout)).getNumRegisters() <=
             kMaxSmallLoadRegisters;
}

/// The layout operand `operand` of `op` needs for `op`'s result to have
/// `encoding`: expand_dims reads the slice of its result's layout, the other
/// cheap ops read their result's layout.
Attribute getOperandEncoding(Operation *op, Attribute encoding) {
  if (auto expand = dyn_cast<tile::ExpandDimsOp>(op))
    return SliceEncodingAttr::get(op->getContext(), expand.getAxis(), encoding);
  return encoding;
}

class Rematerializer {
public:
  Rematerializer(MLIRContext *context, unsigned maxOps, int64_t threads)
      : rewriter(context), maxOps(maxOps), threads(threads) {}

  /// Replaces `convert` by its source recomputed in the target layout when
  /// the backward slice allows it.
  bool tryRemove(ConvertLayoutOp convert);

private:
  using Key = std::pair<Value, Attribute>;
  /// Iter_arg `index` of `forOp`, to be carried in `encoding` too.
  struct LoopValue {
    scf::ForOp forOp;
    unsigned index;
    Attribute encoding;
  };

  LogicalResult collectSlice(Value root, Attribute encoding,
                             SmallVectorImpl<LoopValue> &loopValues);
  void extendLoop(scf::ForOp forOp, ArrayRef<LoopValue> values,
                  SmallVectorImpl<ConvertLayoutOp> &placeholders);
  Value rematerialize(Value value, Attribute encoding);
  /// Keeps the cache valid when `from` is replaced by `to` and erased.
  void replaceInCache(Value from, Value to);

  IRRewriter rewriter;
  unsigned maxOps;
  /// Threads of a CTA: the bound of isSmallLoad.
  int64_t threads;
  /// (original value, layout) -> the value recomputed in that layout; lives
  /// across conversions so that shared slices are cloned once.
  DenseMap<Key, Value> cache;
};

LogicalResult
Rematerializer::collectSlice(Value root, Attribute encoding,
                             SmallVectorImpl<LoopValue> &loopValues) {
  SmallVector<Key> worklist = {{root, encoding}};
  DenseSet<Key> seen, carried;
  unsigned numOps = 0;
  // An iter_arg and its loop result are carried together.
  auto addLoopValue = [&](scf::ForOp forOp, unsigned index, Attribute layout) {
    Value iterArg = forOp.getRegionIterArgs()[index];
    if (cache.contains({iterArg, layout}) ||
        !carried.insert({iterArg, layout}).second)
      return;
    ++numOps;
    loopValues.push_back({forOp, index, layout});
    worklist.push_back({forOp.getInitArgs()[index], layout});
    worklist.push_back({forOp.getYieldedValues()[index], layout});
  };
  while (!worklist.empty()) {
    auto [value, layout] = worklist.pop_back_val();
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || type.getEncoding() == layout ||
        cache.contains({value, layout}))
      continue;
    if (!seen.insert({value, layout}).second)
      continue;
    if (numOps > maxOps)
      return failure();
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      auto forOp = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (!forOp || arg.getArgNumber() == 0)
        return failure();
      addLoopValue(forOp, arg.getArgNumber() - 1, layout);
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (auto forOp = dyn_cast<scf::ForOp>(def)) {
      addLoopValue(forOp, cast<OpResult>(value).getResultNumber(), layout);
      continue;
    }
    // Another conversion ends the slice: it becomes one from its source.
    if (isa<ConvertLayoutOp>(def))
      continue;
    if (!isCheap(def) && !isSmallLoad(def, layout, threads))
      return failure();
    ++numOps;
    Attribute operandLayout = getOperandEncoding(def, layout);
    for (Value operand : def->getOperands())
      worklist.push_back({operand, operandLayout});
  }
  return success(numOps <= maxOps);
}

/// Rebuilds `forOp` with one more iter_arg per entry of `values`, whose init
/// and yielded values are placeholder conversions that the caller replaces by
/// recomputed values. The body block moves to the new loop, so the values it
/// defines stay valid.
void Rematerializer::extendLoop(
    scf::ForOp forOp, ArrayRef<LoopValue> values,
    SmallVectorImpl<ConvertLayoutOp> &placeholders) {
  Location loc = forOp.getLoc();
  rewriter.setInsertionPoint(forOp);
  SmallVector<Value> inits(forOp.getInitArgs());
  for (const LoopValue &value : values) {
    Value init = forOp.getInitArgs()[value.index];
    auto type = cast<RankedTensorType>(init.getType());
    auto placeholder = ConvertLayoutOp::create(
        rewriter, loc, type.cloneWithEncoding(value.encoding), init);
    placeholders.push_back(placeholder);
    inits.push_back(placeholder);
  }
  auto newFor = scf::ForOp::create(
      rewriter, loc, forOp.getLowerBound(), forOp.getUpperBound(),
      forOp.getStep(), inits, /*bodyBuilder=*/nullptr, forOp.getUnsignedCmp());
  newFor->setDiscardableAttrs(forOp->getDiscardableAttrDictionary());
  newFor.getRegion().takeBody(forOp.getRegion());
  Block *body = newFor.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  rewriter.setInsertionPoint(yield);
  for (const LoopValue &value : values) {
    BlockArgument oldArg = body->getArgument(value.index + 1);
    BlockArgument newArg =
        body->addArgument(cast<RankedTensorType>(oldArg.getType())
                              .cloneWithEncoding(value.encoding),
                          oldArg.getLoc());
    cache[{oldArg, value.encoding}] = newArg;
    auto placeholder =
        ConvertLayoutOp::create(rewriter, yield.getLoc(), newArg.getType(),
                                yield.getOperand(value.index));
    placeholders.push_back(placeholder);
    yield.getResultsMutable().append(placeholder.getResult());
  }
  for (auto [oldResult, newResult] :
       llvm::zip(forOp.getResults(), newFor.getResults())) {
    replaceInCache(oldResult, newResult);
    oldResult.replaceAllUsesWith(newResult);
  }
  rewriter.eraseOp(forOp);
}

Value Rematerializer::rematerialize(Value value, Attribute encoding) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getEncoding() == encoding)
    return value;
  if (Value cached = cache.lookup({value, encoding}))
    return cached;
  // Carried values were given their new iter_arg by extendLoop; loop results
  // follow their iter_arg.
  if (auto result = dyn_cast<OpResult>(value)) {
    if (auto forOp = dyn_cast<scf::ForOp>(result.getOwner())) {
      Value iterArg = forOp.getRegionIterArgs()[result.getResultNumber()];
      auto newArg = cast<BlockArgument>(cache.lookup({iterArg, encoding}));
      return forOp.getResult(newArg.getArgNumber() - 1);
    }
  }
  Operation *def = value.getDefiningOp();
  assert(def && "block arguments in a slice are loop-carried");
  RankedTensorType newType = type.cloneWithEncoding(encoding);
  OpBuilder::InsertionGuard guard(rewriter);
  Value newValue;
  if (auto convert = dyn_cast<ConvertLayoutOp>(def)) {
    Value source = convert.getSrc();
    rewriter.setInsertionPointAfter(def);
    newValue =
        source.getType() == newType
            ? source
            : ConvertLayoutOp::create(rewriter, def->getLoc(), newType, source)
                  .getResult();
  } else if (auto constant = dyn_cast<arith::ConstantOp>(def)) {
    rewriter.setInsertionPointAfter(def);
    auto dense = cast<DenseElementsAttr>(constant.getValue());
    newValue = arith::ConstantOp::create(rewriter, def->getLoc(), newType,
                                         dense.reshape(newType));
  } else {
    IRMapping mapping;
    Attribute operandEncoding = getOperandEncoding(def, encoding);
    for (Value operand : def->getOperands())
      mapping.map(operand, rematerialize(operand, operandEncoding));
    rewriter.setInsertionPointAfter(def);
    Operation *clone = rewriter.clone(*def, mapping);
    clone->getResult(0).setType(newType);
    newValue = clone->getResult(0);
  }
  cache[{value, encoding}] = newValue;
  return newValue;
}

void Rematerializer::replaceInCache(Value from, Value to) {
  SmallVector<Key> stale;
  for (auto &[key, cached] : cache) {
    if (cached == from)
      cached = to;
    if (key.first == from)
      stale.push_back(key);
  }
  for (const Key &key : stale)
    cache.erase(key);
}

bool Rematerializer::tryRemove(ConvertLayoutOp convert) {
  Attribute encoding = convert.getType().getEncoding();
  if (!isRematTarget(encoding))
    return false;
  SmallVector<LoopValue> loopValues;
  if (failed(collectSlice(convert.getSrc(), encoding, loopValues)))
    return false;

  llvm::MapVector<Operation *, SmallVector<LoopValue>> byLoop;
  for (const LoopValue &value : loopValues)
    byLoop[value.forOp].push_back(value);
  SmallVector<ConvertLayoutOp> placeholders;
  for (auto &[forOp, values] : byLoop)
    extendLoop(cast<scf::ForOp>(forOp), values, placeholders);

  Value replacement = rematerialize(convert.getSrc(), encoding);
  for (ConvertLayoutOp placeholder : placeholders) {
    Value value = rematerialize(placeholder.getSrc(),
                                placeholder.getType().getEncoding());
    placeholder.getResult().replaceAllUsesWith(value);
    rewriter.eraseOp(placeholder);
  }
  replaceInCache(convert.getResult(), replacement);
  convert.getResult().replaceAllUsesWith(replacement);
  rewriter.eraseOp(convert);
  return true;
}

/// convert(dense constant) -> the constant in the target layout (the folder
/// handles splats only).
struct ConvertDenseConstant : OpRewritePattern<ConvertLayoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvertLayoutOp op,
                                PatternRewriter &rewriter) const override {
    auto constant = op.getSrc().getDefiningOp<arith::ConstantOp>();
    if (!constant)
      return failure();
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense)
      return failure();
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, op.getType(),
                                                   dense.reshape(op.getType()));
    return success();
  }
};

/// reduce(convert(x)) -> reduce(x) when the reduction leaves a scalar: which
/// thread holds which element does not change a reduction of all of them.
struct ReduceThroughConversion : OpRewritePattern<tile::ReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tile::ReduceOp op,
                                PatternRewriter &rewriter) const override {
    auto convert = op.getSrc().getDefiningOp<ConvertLayoutOp>();
    if (!convert || isa<RankedTensorType>(op.getType()))
      return failure();
    rewriter.modifyOpInPlace(
        op, [&] { op.getSrcMutable().assign(convert.getSrc()); });
    return success();
  }
};

/// histogram(convert(x), mask) -> histogram(x, convert(mask)): counting
/// does not depend on which thread holds an element, and a mask computed
/// from ranges and splats is recomputed in x's layout by the rounds below.
struct HistogramThroughConversion : OpRewritePattern<tile::HistogramOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tile::HistogramOp op,
                                PatternRewriter &rewriter) const override {
    auto convert = op.getSrc().getDefiningOp<ConvertLayoutOp>();
    if (!convert || !isRematTarget(convert.getSrc().getType().getEncoding()))
      return failure();
    Value mask = op.getMask();
    if (mask) {
      auto maskType = cast<RankedTensorType>(mask.getType());
      mask = ConvertLayoutOp::create(
          rewriter, op.getLoc(),
          RankedTensorType::get(maskType.getShape(), maskType.getElementType(),
                                convert.getSrc().getType().getEncoding()),
          mask);
    }
    rewriter.modifyOpInPlace(op, [&] {
      op.getSrcMutable().assign(convert.getSrc());
      if (mask)
        op.getMaskMutable().assign(mask);
    });
    return success();
  }
};

/// elementwise(convert(x), splat or constant...) ->
/// convert(elementwise(x, ...)): a conversion whose only user is an
/// elementwise op that does not widen the elements moves past it, towards a
/// use that may not need it (a full reduction, a store in x's layout).
/// - A load's layout chosen by coalescing then carries through a row's
///   computation (softmax) instead of a round trip through shared memory and
///   the elementwise work done in both layouts.
/// - Past a narrowing op (truncf f32 -> f16) the conversion moves fewer
///   bytes: a tensor-core epilogue converts f16, half the shared memory.
///   With no other operand, the narrowed op goes right after the conversion,
///   also out of a loop the user is in, so that a one-time conversion stays
///   out of the loop.
struct SinkConversionThroughElementwise : OpRewritePattern<ConvertLayoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvertLayoutOp op,
                                PatternRewriter &rewriter) const override {
    if (!op->hasOneUse())
      return failure();
    Operation *user = *op->getUsers().begin();
    if (!user->hasTrait<OpTrait::Elementwise>() || user->getNumResults() != 1 ||
        user->getNumRegions() != 0 || !isPure(user))
      return failure();
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    auto resultType = dyn_cast<RankedTensorType>(user->getResult(0).getType());
    // Not past a widening op (extf): the conversion would move more bytes.
    if (!resultType || !resultType.getElementType().isIntOrFloat() ||
        !srcType.getElementType().isIntOrFloat() ||
        resultType.getElementTypeBitWidth() >
            srcType.getElementTypeBitWidth())
      return failure();
    // Other operands are rebuilt at the user, so it must be in the
    // conversion's block; a unary op goes next to the conversion, which only
    // pays across blocks when it narrows.
    bool unary = user->getNumOperands() == 1;
    bool narrows = resultType.getElementTypeBitWidth() <
                   srcType.getElementTypeBitWidth();
    if (user->getBlock() != op->getBlock() && !(unary && narrows))
      return failure();
    Attribute layout = srcType.getEncoding();
    // Every other operand must be as cheap in the source layout: a splat of
    // a scalar or a splat constant.
    for (Value operand : user->getOperands()) {
      if (operand == op.getResult())
        continue;
      DenseElementsAttr dense;
      bool cheap = operand.getDefiningOp<tile::SplatOp>() ||
                   (matchPattern(operand, m_Constant(&dense)) &&
                    dense.isSplat());
      if (!cheap || !isa<RankedTensorType>(operand.getType()))
        return failure();
    }
    if (unary)
      rewriter.setInsertionPointAfter(op);
    else
      rewriter.setInsertionPoint(user);
    SmallVector<Value> operands;
    for (Value operand : user->getOperands()) {
      if (operand == op.getResult()) {
        operands.push_back(op.getSrc());
        continue;
      }
      auto inLayout =
          cast<RankedTensorType>(operand.getType()).cloneWithEncoding(layout);
      if (auto splat = operand.getDefiningOp<tile::SplatOp>()) {
        operands.push_back(tile::SplatOp::create(rewriter, splat.getLoc(),
                                                 inLayout, splat.getSrc()));
        continue;
      }
      DenseElementsAttr dense;
      (void)matchPattern(operand, m_Constant(&dense));
      operands.push_back(arith::ConstantOp::create(
          rewriter, operand.getLoc(), inLayout, dense.reshape(inLayout)));
    }
    Operation *moved = rewriter.create(
        user->getLoc(), user->getName().getIdentifier(), operands,
        {resultType.cloneWithEncoding(layout)}, user->getAttrs());
    rewriter.replaceOpWithNewOp<ConvertLayoutOp>(user, resultType,
                                                 moved->getResult(0));
    return success();
  }
};

/// A loop-carried value converted to another layout on entry to the body
/// and back on exit (a tensor-core accumulator between two converts) is
/// carried in the inner layout instead: one conversion before the loop and
/// one after it replace two per iteration.
bool carryInConvertedLayout(ModuleOp module) {
  bool changed = false;
  module.walk([&](scf::ForOp forOp) {
    auto yield = cast<scf::YieldOp>(forOp.getBody()->getTerminator());
    for (auto [index, arg] : llvm::enumerate(forOp.getRegionIterArgs())) {
      if (!arg.hasOneUse())
        continue;
      auto enter = dyn_cast<ConvertLayoutOp>(*arg.getUsers().begin());
      auto leave = yield.getOperand(index).getDefiningOp<ConvertLayoutOp>();
      if (!enter || !leave || leave.getSrc().getType() != enter.getType())
        continue;
      Type outer = arg.getType(), inner = enter.getType();
      OpBuilder builder(forOp);
      OpOperand &init = forOp.getInitArgsMutable()[index];
      init.set(ConvertLayoutOp::create(builder, enter.getLoc(), inner,
                                       init.get()));
      arg.setType(inner);
      enter.getResult().replaceAllUsesWith(arg);
      enter.erase();
      yield->setOperand(index, leave.getSrc());
      Value result = forOp.getResult(index);
      result.setType(inner);
      builder.setInsertionPointAfter(forOp);
      auto exit = ConvertLayoutOp::create(builder, leave.getLoc(), outer, result);
      result.replaceAllUsesExcept(exit, exit);
      changed = true;
    }
  });
  return changed;
}

/// Whether `value` equals convert_layout(`source`) on every path: it is that
/// convert, or both are splat constants of the same value.
bool isConversionOf(Value value, Value source) {
  if (auto convert = value.getDefiningOp<ConvertLayoutOp>())
    return convert.getSrc() == source;
  SplatElementsAttr valueSplat, sourceSplat;
  return matchPattern(value, m_Constant(&valueSplat)) &&
         matchPattern(source, m_Constant(&sourceSplat)) &&
         valueSplat.getSplatValue<Attribute>() ==
             sourceSplat.getSplatValue<Attribute>();
}

/// A loop that carries x and, in another argument nobody reads inside the
/// loop, convert_layout(x) converts on every iteration only to have the
/// converted copy at the end. Convert the loop's result once after the loop
/// instead; the argument then carries itself and canonicalization drops it.
bool sinkLoopCarriedConversions(ModuleOp module) {
  bool changed = false;
  module.walk([&](scf::ForOp forOp) {
    auto yield = cast<scf::YieldOp>(forOp.getBody()->getTerminator());
    for (auto [index, arg] : llvm::enumerate(forOp.getRegionIterArgs())) {
      auto convert = yield.getOperand(index).getDefiningOp<ConvertLayoutOp>();
      if (!arg.use_empty() || !convert)
        continue;
      auto sourceIt = llvm::find(yield.getOperands(), convert.getSrc());
      if (sourceIt == yield.getOperands().end())
        continue;
      unsigned sourceIndex = sourceIt - yield.getOperands().begin();
      if (!isConversionOf(forOp.getInitArgs()[index],
                          forOp.getInitArgs()[sourceIndex]))
        continue;
      OpBuilder builder(forOp->getContext());
      builder.setInsertionPointAfter(forOp);
      Value converted = ConvertLayoutOp::create(
          builder, convert.getLoc(), convert.getType(),
          forOp.getResult(sourceIndex));
      forOp.getResult(index).replaceAllUsesWith(converted);
      yield->setOperand(index, arg);
      changed = true;
    }
  });
  return changed;
}

struct RemoveLayoutConversionsPass
    : tilec::tilegpu::impl::TileGPURemoveLayoutConversionsBase<
          RemoveLayoutConversionsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    RewritePatternSet patternList(context);
    ConvertLayoutOp::getCanonicalizationPatterns(patternList, context);
    scf::ForOp::getCanonicalizationPatterns(patternList, context);
    patternList
        .add<ConvertDenseConstant, ReduceThroughConversion,
             HistogramThroughConversion, SinkConversionThroughElementwise>(
            context);
    FrozenRewritePatternSet patterns(std::move(patternList));
    // Not converging within the driver's iteration limit leaves valid IR;
    // like -canonicalize, that is not an error.
    auto canonicalize = [&] { (void)applyPatternsGreedily(module, patterns); };

    canonicalize();

    // A removal can expose another (a conversion of a conversion it made);
    // a few rounds reach the fixed point in practice.
    Rematerializer rematerializer(
        context, maxRematOps,
        int64_t(TileGPUDialect::getNumWarps(module)) *
            TileGPUDialect::getThreadsPerWarp(module));
    for (unsigned round = 0; round < 3; ++round) {
      SmallVector<ConvertLayoutOp> converts;
      module.walk([&](ConvertLayoutOp op) { converts.push_back(op); });
      bool changed = false;
      for (ConvertLayoutOp convert : converts)
        changed |= rematerializer.tryRemove(convert);
      if (!changed)
        break;
    }

    canonicalize();
    if (carryInConvertedLayout(module))
      canonicalize();
    if (sinkLoopCarriedConversions(module))
      canonicalize();
    if (removeDeadLoopValues(module))
      canonicalize();
    IRRewriter rewriter(context);
    eliminateCommonSubExpressions(rewriter, getAnalysis<DominanceInfo>(),
                                  module);
  }
};

} // namespace
