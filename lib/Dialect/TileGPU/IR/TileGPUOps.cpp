//===- TileGPUOps.cpp - tilegpu operations --------------------------------===//

#include "tilec/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace tilec::tilegpu;

LogicalResult ConvertLayoutOp::verify() {
  auto srcType = cast<RankedTensorType>(getSrc().getType());
  auto resultType = cast<RankedTensorType>(getType());
  if (!getDistributedLayout(srcType) || !getDistributedLayout(resultType))
    return emitOpError() << "converts between distributed layouts; got "
                         << srcType << " -> " << resultType;
  unsigned srcWarps = getDistributedLayout(srcType).getNumWarps();
  unsigned resultWarps = getDistributedLayout(resultType).getNumWarps();
  if (srcWarps != resultWarps)
    return emitOpError() << "layouts span different numbers of warps ("
                         << srcWarps << " vs " << resultWarps << ")";
  return success();
}

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor adaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  if (auto producer = getSrc().getDefiningOp<ConvertLayoutOp>()) {
    getSrcMutable().assign(producer.getSrc());
    return getResult();
  }
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getSrc()))
    return SplatElementsAttr::get(getType(), splat.getSplatValue<Attribute>());
  return {};
}

namespace {
/// Values that every thread can make itself (splats, ranges) are rebuilt in
/// the target layout instead of being moved.
struct RematerializeCheapProducer : OpRewritePattern<ConvertLayoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvertLayoutOp op,
                                PatternRewriter &rewriter) const override {
    Operation *producer = op.getSrc().getDefiningOp();
    if (auto splat = dyn_cast_or_null<tilec::tile::SplatOp>(producer)) {
      rewriter.replaceOpWithNewOp<tilec::tile::SplatOp>(op, op.getType(),
                                                        splat.getSrc());
      return success();
    }
    if (auto range = dyn_cast_or_null<tilec::tile::MakeRangeOp>(producer)) {
      rewriter.replaceOpWithNewOp<tilec::tile::MakeRangeOp>(
          op, op.getType(), range.getStart(), range.getEnd());
      return success();
    }
    return failure();
  }
};
} // namespace

void ConvertLayoutOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                  MLIRContext *context) {
  results.add<RematerializeCheapProducer>(context);
}

#define GET_OP_CLASSES
#include "tilec/Dialect/TileGPU/IR/TileGPUOps.cpp.inc"
