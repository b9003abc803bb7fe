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

//===----------------------------------------------------------------------===//
// Shared memory
//===----------------------------------------------------------------------===//

/// A tensor and a memdesc that hold the same elements.
static LogicalResult verifySameTile(Operation *op, RankedTensorType tensor,
                                    MemDescType buffer, Type tensorElement) {
  if (tensor.getShape() != buffer.getShape() ||
      tensorElement != buffer.getElementType())
    return op->emitOpError() << "tensor " << tensor << " and buffer "
                             << buffer << " differ in shape or element type";
  if (!getDistributedLayout(tensor))
    return op->emitOpError() << "needs a tensor with a distributed layout, got "
                             << tensor;
  return success();
}

LogicalResult LocalAllocOp::verify() {
  MemDescType buffer = getType();
  if (!getSrc())
    return buffer.getIsMutable()
               ? success()
               : emitOpError() << "without a source must give a mutable "
                                  "buffer, got "
                               << buffer;
  if (buffer.getIsMutable())
    return emitOpError() << "from a tensor gives an immutable buffer, got "
                         << buffer;
  auto tensor = cast<RankedTensorType>(getSrc().getType());
  return verifySameTile(*this, tensor, buffer, tensor.getElementType());
}

OpFoldResult LocalAllocOp::fold(FoldAdaptor) {
  auto convert = getSrc() ? getSrc().getDefiningOp<ConvertLayoutOp>() : nullptr;
  if (!convert)
    return {};
  getSrcMutable().assign(convert.getSrc());
  return getResult();
}

LogicalResult MemDescIndexOp::verify() {
  MemDescType src = getSrc().getType();
  MemDescType result = getType();
  if (src.getShape().size() <= src.getSharedEncoding().getOrder().size())
    return emitOpError() << src << " has no leading copy dimension";
  if (result.getShape() != src.getShape().drop_front() ||
      result.getElementType() != src.getElementType() ||
      result.getEncoding() != src.getEncoding() ||
      result.getIsMutable() != src.getIsMutable())
    return emitOpError() << "result must be " << src
                         << " without its first dimension, got " << result;
  return success();
}

LogicalResult LocalLoadOp::verify() {
  auto tensor = cast<RankedTensorType>(getType());
  return verifySameTile(*this, tensor, getSrc().getType(),
                        tensor.getElementType());
}

LogicalResult LocalStoreOp::verify() {
  MemDescType buffer = getDst().getType();
  if (!buffer.getIsMutable())
    return emitOpError() << "writes an immutable buffer " << buffer;
  auto tensor = cast<RankedTensorType>(getSrc().getType());
  return verifySameTile(*this, tensor, buffer, tensor.getElementType());
}

LogicalResult AsyncCopyGlobalToLocalOp::verify() {
  MemDescType buffer = getDst().getType();
  if (!buffer.getIsMutable())
    return emitOpError() << "writes an immutable buffer " << buffer;
  auto ptrs = cast<RankedTensorType>(getSrc().getType());
  auto pointer = cast<tilec::tile::PointerType>(ptrs.getElementType());
  return verifySameTile(*this, ptrs, buffer, pointer.getPointeeType());
}

/// An mbarrier: one mutable i64 in shared memory (a 1x1 tile).
static LogicalResult verifyBarrier(Operation *op, MemDescType barrier) {
  if (barrier.getShape() != ArrayRef<int64_t>{1, 1} ||
      !barrier.getElementType().isInteger(64) || !barrier.getIsMutable())
    return op->emitOpError() << "needs an mbarrier (a mutable memdesc<1x1xi64>), got "
                             << barrier;
  return success();
}

LogicalResult InitBarrierOp::verify() {
  if (getCount() < 1 || getCount() >= (1 << 20))
    return emitOpError() << "counts 1 to 2^20 - 1 arrivals, got " << getCount();
  return verifyBarrier(*this, getBarrier().getType());
}

LogicalResult InvalBarrierOp::verify() {
  return verifyBarrier(*this, getBarrier().getType());
}

LogicalResult BarrierExpectOp::verify() {
  if (getBytes() < 0 || getBytes() >= (1 << 20))
    return emitOpError() << "expects 0 to 2^20 - 1 bytes, got " << getBytes();
  return verifyBarrier(*this, getBarrier().getType());
}

LogicalResult WaitBarrierOp::verify() {
  return verifyBarrier(*this, getBarrier().getType());
}

LogicalResult AsyncTmaCopyOp::verify() {
  MemDescType dst = getDst().getType();
  if (!dst.getIsMutable())
    return emitOpError() << "writes an immutable buffer " << dst;
  auto nvmma = dyn_cast<NvmmaSharedEncodingAttr>(dst.getEncoding());
  if (dst.getShape().size() != 2 || !nvmma || nvmma.getOrder()[0] != 1)
    return emitOpError() << "copies into a row-major nvmma_shared tile, got "
                         << dst;
  int64_t rowBytes =
      dst.getShape()[1] * dst.getElementType().getIntOrFloatBitWidth() / 8;
  if (dst.getShape()[0] > 256 || rowBytes % nvmma.getSwizzlingByteWidth() != 0)
    return emitOpError() << "copies boxes of at most 256 rows and whole "
                         << nvmma.getSwizzlingByteWidth()
                         << "-byte swizzle spans, got " << dst;
  return verifyBarrier(*this, getBarrier().getType());
}

/// A register b of a transposed warpgroup dot: B^T's wgmma A fragment, tf32.
static LogicalResult verifyRegisterOperand(WarpGroupDotOp op,
                                           RankedTensorType b,
                                           MmaEncodingAttr mma) {
  if (!mma.getTransposed())
    return op.emitOpError()
           << "takes b from registers only for a transposed accumulator "
              "layout (D^T = B^T A^T, B^T as wgmma's A); got "
           << mma;
  if (!b.getElementType().isF32())
    return op.emitOpError() << "takes register operands of tf32 dots only "
                               "(f32 elements), got "
                            << b;
  auto operand = dyn_cast<DotOperandEncodingAttr>(b.getEncoding());
  if (!operand || operand.getOpIdx() != 1 || operand.getParent() != mma ||
      operand.getKWidth() != 1)
    return op.emitOpError()
           << "register b must have the layout #tilegpu.dot_op<{opIdx = 1, "
              "parent = "
           << mma << ", kWidth = 1}>, got " << b;
  return success();
}

/// The 2-D shape of an operand, a shared tile or a tensor.
static ArrayRef<int64_t> getOperandShape(Type type) {
  if (auto buffer = dyn_cast<MemDescType>(type))
    return buffer.getShape();
  return cast<RankedTensorType>(type).getShape();
}

static Type getOperandElement(Type type) {
  if (auto buffer = dyn_cast<MemDescType>(type))
    return buffer.getElementType();
  return cast<RankedTensorType>(type).getElementType();
}

LogicalResult WarpGroupDotOp::verify() {
  auto d = cast<RankedTensorType>(getD().getType());
  auto mma = dyn_cast<MmaEncodingAttr>(d.getEncoding());
  if (!mma || mma.getVersionMajor() != 3)
    return emitOpError() << "the accumulator needs an mma v3 layout, got " << d;
  if (failed(tilec::tile::verifyRowGroups(*this, getRowGroups(), getRowsPerGroup(),
                                   d.getDimSize(0))))
    return failure();
  if (getRowGroups() && mma.getTransposed())
    return emitOpError() << "row groups need rows along M; a transposed "
                            "layout runs the instructions' rows along N";
  if (getRowGroups() && *getRowsPerGroup() < 64)
    return emitOpError() << "row groups of " << *getRowsPerGroup()
                         << " rows split a wgmma's 64-row strip; at least "
                            "64";
  // The shared tiles wgmma reads through descriptors: a, and b unless it is
  // in registers (operand index, type).
  SmallVector<std::pair<unsigned, MemDescType>> tiles = {{0, getA().getType()}};
  if (auto b = dyn_cast<MemDescType>(getB().getType())) {
    if (mma.getTransposed())
      return emitOpError() << "a transposed accumulator layout takes b from "
                              "registers, got "
                           << b;
    tiles.push_back({1, b});
  } else if (failed(verifyRegisterOperand(
                 *this, cast<RankedTensorType>(getB().getType()), mma))) {
    return failure();
  }
  for (auto [opIdx, tile] : tiles)
    if (!isa<NvmmaSharedEncodingAttr>(tile.getEncoding()) ||
        tile.getShape().size() != 2)
      return emitOpError() << "shared operands must be 2-D nvmma_shared "
                              "tiles, got "
                           << tile;
  ArrayRef<int64_t> aShape = getOperandShape(getA().getType());
  ArrayRef<int64_t> bShape = getOperandShape(getB().getType());
  if (aShape.size() != 2 || bShape.size() != 2 || aShape[1] != bShape[0] ||
      aShape[0] != d.getDimSize(0) || bShape[1] != d.getDimSize(1))
    return emitOpError() << "shapes do not make a product: " << getA().getType()
                         << " * " << getB().getType() << " -> " << d;
  Type element = getOperandElement(getA().getType());
  if (element != getOperandElement(getB().getType()))
    return emitOpError() << "operands differ in element type";
  if (!element.isF16() && !element.isBF16() && !element.isF32())
    return emitOpError() << "operands must be f16, bf16 or f32 (tf32), got "
                         << element;
  // tf32 has no transposed form: K must be each tile's contiguous dimension.
  if (!warpGroupReadsMNMajor(element))
    for (auto [opIdx, tile] : tiles) {
      unsigned kDim = opIdx == 0 ? 1 : 0;
      auto encoding = cast<NvmmaSharedEncodingAttr>(tile.getEncoding());
      if (encoding.getOrder()[0] != kDim)
        return emitOpError()
               << "reads " << element << " operands K-major only; operand "
               << (opIdx == 0 ? "a" : "b") << " is " << tile;
    }
  // Whole instructions: warpgroups of 64 rows, instrN columns, 32 bytes of K
  // (rows and columns are D^T's when transposed).
  unsigned wm = mma.getWarpsPerCTA()[0], wn = mma.getWarpsPerCTA()[1];
  int64_t instrN = mma.getInstrShape()[1];
  int64_t instrK = getWarpGroupInstrK(element);
  int64_t rows = d.getDimSize(mma.getTransposed() ? 1 : 0);
  int64_t cols = d.getDimSize(mma.getTransposed() ? 0 : 1);
  if (!llvm::isPowerOf2_64(instrN) || rows % (16 * wm) != 0 ||
      cols % (instrN * wn) != 0 || aShape[1] % instrK != 0)
    return emitOpError() << d << " is not whole wgmma instructions of " << mma
                         << " (a power-of-two N, " << instrK
                         << "-wide K steps)";
  return success();
}

#define GET_OP_CLASSES
#include "tilec/Dialect/TileGPU/IR/TileGPUOps.cpp.inc"
