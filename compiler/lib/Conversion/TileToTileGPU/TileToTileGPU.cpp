//===- TileToTileGPU.cpp - assign layouts to every tensor -----------------===//
//
// ttir -> ttgir. Every tensor gets the default blocked layout of its shape;
// ops that relate layouts (reduce, expand_dims, broadcast, dot) get their
// operands converted to what they need. Later passes (coalesce,
// remove-layout-conversions) choose better layouts; this one only has to be
// right.
//
//===----------------------------------------------------------------------===//

#include "LoadTile.h"

#include "tilec/Analysis/AxisInfo.h"
#include "tilec/Conversion/Passes.h"
#include "tilec/Dialect/Tile/IR/Tile.h"
#include "tilec/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/StringExtras.h"

namespace tilec {
#define GEN_PASS_DEF_CONVERTTILETOTILEGPU
#include "tilec/Conversion/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;

namespace {

class TileGPUTypeConverter : public TypeConverter {
public:
  TileGPUTypeConverter(MLIRContext *context, unsigned numWarps,
                       unsigned threadsPerWarp)
      : context(context), numWarps(numWarps), threadsPerWarp(threadsPerWarp) {
    addConversion([](Type type) { return type; });
    addConversion([this](RankedTensorType type) -> Type {
      if (type.getEncoding())
        return type;
      return withDefaultLayout(type);
    });
    // Values converted by a convert_layout stay tensors of the same shape.
    auto materialize = [](OpBuilder &builder, Type type, ValueRange inputs,
                          Location loc) -> Value {
      if (inputs.size() != 1 || !isa<RankedTensorType>(type))
        return {};
      return ConvertLayoutOp::create(builder, loc, type, inputs[0]);
    };
    addSourceMaterialization(materialize);
    addTargetMaterialization(materialize);
  }

  RankedTensorType withDefaultLayout(RankedTensorType type) const {
    return RankedTensorType::get(
        type.getShape(), type.getElementType(),
        getDefaultBlockedEncoding(context, type.getShape(), numWarps,
                                  threadsPerWarp));
  }

  bool isLegalType(Type type) const {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return !tensor || getDistributedLayout(tensor);
  }

  unsigned getNumWarps() const { return numWarps; }

private:
  MLIRContext *context;
  unsigned numWarps, threadsPerWarp;
};

/// `value` in `encoding`, through a convert_layout when it is elsewhere.
static Value convertTo(OpBuilder &builder, Location loc, Value value,
                       Attribute encoding) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getEncoding() == encoding)
    return value;
  auto target = RankedTensorType::get(type.getShape(), type.getElementType(),
                                      encoding);
  return ConvertLayoutOp::create(builder, loc, target, value);
}

/// `product` where the row's group is active in `rowGroups` (bit row /
/// rowsPerGroup), `acc` elsewhere: tile.dot's row groups for the lowerings
/// that compute every row. Both are MxN in one layout.
static Value keepInactiveRows(OpBuilder &builder, Location loc, Value product,
                              Value acc, Value rowGroups,
                              uint32_t rowsPerGroup) {
  auto type = cast<RankedTensorType>(acc.getType());
  int64_t m = type.getDimSize(0);
  Type i32 = builder.getI32Type(), i1 = builder.getI1Type();
  auto rowType = RankedTensorType::get(
      {m}, i32,
      SliceEncodingAttr::get(builder.getContext(), 1, type.getEncoding()));
  auto splat = [&](int64_t value) -> Value {
    return arith::ConstantOp::create(
        builder, loc,
        DenseElementsAttr::get(rowType, builder.getI32IntegerAttr(value)));
  };
  Value rows = tile::MakeRangeOp::create(builder, loc, rowType, 0, m);
  Value group = arith::DivUIOp::create(builder, loc, rows, splat(rowsPerGroup));
  Value groups = tile::SplatOp::create(builder, loc, rowType, rowGroups);
  Value bit = arith::AndIOp::create(
      builder, loc, arith::ShRUIOp::create(builder, loc, groups, group),
      splat(1));
  Value active = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ne,
                                       bit, splat(0));
  Value column = tile::ExpandDimsOp::create(
      builder, loc, RankedTensorType::get({m, 1}, i1, type.getEncoding()),
      active, 1);
  Value mask = tile::BroadcastOp::create(
      builder, loc,
      RankedTensorType::get(type.getShape(), i1, type.getEncoding()), column);
  return arith::SelectOp::create(builder, loc, mask, product, acc);
}

/// Clones `op` with new operands and result types (no regions).
static Operation *cloneWith(ConversionPatternRewriter &rewriter, Operation *op,
                            ValueRange operands, TypeRange resultTypes) {
  OperationState state(op->getLoc(), op->getName(), operands, resultTypes,
                       op->getAttrs());
  return rewriter.create(state);
}

/// Elementwise and shape-preserving ops: every tensor operand of the result's
/// shape takes the result's layout; others take their default.
struct GenericOpConversion : ConversionPattern {
  GenericOpConversion(const TileGPUTypeConverter &converter,
                      MLIRContext *context)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1,
                          context) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (op->getNumRegions() != 0 ||
        !isa<tile::TileDialect, arith::ArithDialect, math::MathDialect>(
            op->getDialect()))
      return failure();
    SmallVector<Type> resultTypes;
    if (failed(getTypeConverter()->convertTypes(op->getResultTypes(),
                                                resultTypes)))
      return failure();
    Attribute resultEncoding;
    ArrayRef<int64_t> resultShape;
    if (!resultTypes.empty())
      if (auto tensor = dyn_cast<RankedTensorType>(resultTypes.front())) {
        resultEncoding = tensor.getEncoding();
        resultShape = tensor.getShape();
      }
    SmallVector<Value> newOperands;
    for (Value operand : operands) {
      auto tensor = dyn_cast<RankedTensorType>(operand.getType());
      if (tensor && resultEncoding && tensor.getShape() == resultShape)
        operand = convertTo(rewriter, op->getLoc(), operand, resultEncoding);
      newOperands.push_back(operand);
    }
    rewriter.replaceOp(op, cloneWith(rewriter, op, newOperands, resultTypes));
    return success();
  }
};

struct ConstantOpConversion : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense)
      return failure();
    auto type = cast<RankedTensorType>(
        getTypeConverter()->convertType(op.getType()));
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type,
                                                   dense.reshape(type));
    return success();
  }
};

/// broadcast: the operand takes the result's layout (a size-1 dimension
/// wraps, so each thread already holds the element it repeats).
struct BroadcastOpConversion : OpConversionPattern<tile::BroadcastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::BroadcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(
        getTypeConverter()->convertType(op.getType()));
    Value src =
        convertTo(rewriter, op.getLoc(), adaptor.getSrc(), type.getEncoding());
    rewriter.replaceOpWithNewOp<tile::BroadcastOp>(op, type, src);
    return success();
  }
};

/// expand_dims(axis): the operand must be the slice at `axis` of the
/// result's layout, so that no data moves.
struct ExpandDimsOpConversion : OpConversionPattern<tile::ExpandDimsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::ExpandDimsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(
        getTypeConverter()->convertType(op.getType()));
    auto slice =
        SliceEncodingAttr::get(getContext(), op.getAxis(), type.getEncoding());
    Value src = convertTo(rewriter, op.getLoc(), adaptor.getSrc(), slice);
    rewriter.replaceOpWithNewOp<tile::ExpandDimsOp>(op, type, src,
                                                    op.getAxis());
    return success();
  }
};

/// The program's barrier is the CTA's: `bar.sync`, which also orders the
/// threads' global memory operations at CTA scope.
struct BarrierOpConversion : OpConversionPattern<tile::BarrierOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::BarrierOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<BarrierOp>(op);
    return success();
  }
};

/// histogram counts its operand where it lies; the mask joins it there. The
/// bins take the default layout. (bin_rank goes through GenericOpConversion:
/// its operands take the result's default layout, one element per thread a
/// round, the layout its lowering ranks in.)
struct HistogramOpConversion : OpConversionPattern<tile::HistogramOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::HistogramOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value src = adaptor.getSrc(), mask = adaptor.getMask();
    if (mask)
      mask = convertTo(rewriter, op.getLoc(), mask,
                       cast<RankedTensorType>(src.getType()).getEncoding());
    rewriter.replaceOpWithNewOp<tile::HistogramOp>(
        op, getTypeConverter()->convertType(op.getType()), src, mask);
    return success();
  }
};

/// reduce(axis) yields the slice of its operand's layout; consumers expect
/// the default layout, so the result is converted (remove-layout-conversions
/// drops the pair when the next op is an expand_dims).
struct ReduceOpConversion : OpConversionPattern<tile::ReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(adaptor.getSrc().getType());
    auto resultTensor = dyn_cast<RankedTensorType>(op.getType());
    if (!resultTensor) {
      rewriter.replaceOpWithNewOp<tile::ReduceOp>(
          op, op.getType(), op.getKind(), adaptor.getSrc(), op.getAxis());
      return success();
    }
    auto slice = SliceEncodingAttr::get(getContext(), op.getAxis(),
                                        srcType.getEncoding());
    auto sliceType = RankedTensorType::get(
        resultTensor.getShape(), resultTensor.getElementType(), slice);
    Value reduced =
        tile::ReduceOp::create(rewriter, op.getLoc(), sliceType, op.getKind(),
                               adaptor.getSrc(), op.getAxis());
    auto defaultType = cast<RankedTensorType>(
        getTypeConverter()->convertType(op.getType()));
    rewriter.replaceOp(op, convertTo(rewriter, op.getLoc(), reduced,
                                     defaultType.getEncoding()));
    return success();
  }
};

/// The dimension along which the operand `value` of a dot is loaded
/// contiguously (its pointers' contiguity is larger along it than along the
/// other), or nullopt when it is not a load or neither dimension is.
static std::optional<unsigned>
getLoadContiguousDim(Value value, const ModuleAxisInfoAnalysis &axisInfo) {
  auto load = value.getDefiningOp<tile::LoadOp>();
  if (!load)
    return std::nullopt;
  const AxisInfo *info = axisInfo.getAxisInfo(load.getPtr());
  if (!info || info->getRank() != 2 ||
      info->contiguity[0] == info->contiguity[1])
    return std::nullopt;
  return info->contiguity[1] > info->contiguity[0] ? 1 : 0;
}

/// The bytes one copy of the load `value` can move along `dim`: its
/// pointers' vector width, cut by its mask's where it has one.
static unsigned getLoadCopyBytes(Value value, unsigned dim,
                                 const ModuleAxisInfoAnalysis &axisInfo) {
  auto load = value.getDefiningOp<tile::LoadOp>();
  unsigned width = axisInfo.getPtrVectorWidth(load.getPtr(), dim);
  if (Value mask = load.getMask())
    width = std::min(width, axisInfo.getMaskVectorWidth(mask, dim));
  auto type = cast<RankedTensorType>(value.getType());
  return width * type.getElementType().getIntOrFloatBitWidth() / 8;
}

/// The mma v3 (wgmma) layout for the MxN accumulator of a 16-bit dot or
/// of an f32 dot that allows tf32, or null. Warpgroups (4 warps, 64 rows
/// per instruction) go along M while M has rows for them, the rest along
/// N; one instruction spans the columns of the warpgroups along N, at most
/// 256. Both operands are read from shared memory, whose rows must fill a
/// 32-byte swizzle: K and (for an MN-major b) N of at least one
/// instruction's K. `transposed`: the layout of D (shape) whose
/// instructions compute D^T, their M along N and their N along M.
static Attribute warpGroupMmaLayoutOf(tile::DotOp op, ArrayRef<int64_t> dShape,
                                      bool transposed, unsigned numWarps,
                                      bool hasWarpGroupMma) {
  SmallVector<int64_t> shape(dShape);
  if (transposed)
    std::swap(shape[0], shape[1]);
  auto aType = cast<RankedTensorType>(op.getA().getType());
  Type aElem = aType.getElementType();
  Type cElem = cast<RankedTensorType>(op.getC().getType()).getElementType();
  bool tf32 = aElem.isF32() &&
              op.getInputPrecision() == tile::InputPrecision::TF32;
  if (!hasWarpGroupMma || numWarps % 4 != 0 ||
      !(aElem.isF16() || aElem.isBF16() || tf32) || !cElem.isF32())
    return {};
  int64_t instrK = getWarpGroupInstrK(aElem);
  if (shape[0] < 64 || shape[1] < instrK || aType.getDimSize(1) < instrK)
    return {};
  unsigned groups = numWarps / 4, groupsM = 1;
  while (groupsM < groups && shape[0] >= 128 * groupsM)
    groupsM *= 2;
  unsigned groupsN = groups / groupsM;
  int64_t instrN = std::min<int64_t>(256, shape[1] / groupsN);
  if (instrN < 8)
    return {};
  return MmaEncodingAttr::get(
      op.getContext(), 3, {4 * groupsM, groupsN},
      {16, static_cast<unsigned>(instrN), static_cast<unsigned>(instrK)},
      transposed);
}

/// The dots that a warpgroup computes transposed if it computes them
/// (warpGroupComputesTransposed, from their operands' contiguity): decided
/// on the ttir, before the conversion replaces the values the analysis knows.
static DenseSet<Operation *> getTransposedDots(ModuleOp module) {
  ModuleAxisInfoAnalysis axisInfo(module);
  DenseSet<Operation *> dots;
  module.walk([&](tile::DotOp dot) {
    std::optional<unsigned> aDim = getLoadContiguousDim(dot.getA(), axisInfo);
    std::optional<unsigned> bDim = getLoadContiguousDim(dot.getB(), axisInfo);
    Type element =
        cast<RankedTensorType>(dot.getA().getType()).getElementType();
    if (aDim && bDim &&
        warpGroupComputesTransposed(
            element, getLoadCopyBytes(dot.getB(), *bDim, axisInfo),
            *aDim, *bDim))
      dots.insert(dot);
  });
  return dots;
}

/// dot: on sm_90a, a 16-bit dot (or an f32 one that allows tf32) with an
/// f32 accumulator becomes a warpgroup_dot (wgmma) whose operands are stored to
/// shared memory and whose accumulator takes an mma v3 layout; a tf32 dot whose
/// b is N-contiguous and whose a is K-contiguous is computed transposed (D^T =
/// B^T A^T, see warpGroupComputesTransposed): b goes to registers in B^T's
/// wgmma A fragment, a to its K-major tile, the accumulator takes the
/// transposed mma v3 layout. Else, on sm_80+ with an f32 accumulator and either
/// 16-bit inputs (mma.sync m16n8k16) or f32 inputs the dot allows to round to
/// tf32 (m16n8k8), tensor cores: the accumulator takes an mma layout, the
/// operands the matching dot_op fragments. Otherwise the FMA path: the
/// accumulator takes a blocked layout with a 4x4 block per thread (where the
/// shape allows), so that each thread's rows of a and columns of b are reused
/// across 4 columns and 4 rows; a and b take the dot_op layouts of it. Converts
/// around the dot are removed by remove-layout-conversions (the accumulator is
/// usually loop-carried).
struct DotOpConversion : OpConversionPattern<tile::DotOp> {
  DotOpConversion(const TileGPUTypeConverter &converter, MLIRContext *context,
                  PatternBenefit benefit, unsigned computeCapability,
                  bool hasWarpGroupMma,
                  const DenseSet<Operation *> &transposedDots)
      : OpConversionPattern(converter, context, benefit),
        numWarps(converter.getNumWarps()), computeCapability(computeCapability),
        hasWarpGroupMma(hasWarpGroupMma), transposedDots(transposedDots) {}

  /// warpGroupMmaLayoutOf with this pattern's warps and target.
  Attribute getWarpGroupMmaLayout(tile::DotOp op, ArrayRef<int64_t> dShape,
                                  bool transposed) const {
    return warpGroupMmaLayoutOf(op, dShape, transposed, numWarps,
                                hasWarpGroupMma);
  }

  /// The transposed mma v3 layout of `op` (a dot in transposedDots), or null
  /// where the instructions do not fit D^T (fewer than 64 columns) or the
  /// registers do not fit a thread: the accumulator and two steps of B^T's
  /// fragments (one read by the instructions in flight, one loaded for the
  /// next) within kTransposedRegisterBudget of the 255 a thread has, the rest
  /// left to addresses and masks. Beyond that ptxas spills (64x256x32 on 4
  /// warps: a 128-register accumulator and 64 registers of fragments).
  Attribute getTransposedWarpGroupMmaLayout(tile::DotOp op,
                                            ArrayRef<int64_t> shape) const {
    constexpr int64_t kTransposedRegisterBudget = 192;
    if (!transposedDots.contains(op))
      return {};
    auto layout = dyn_cast_or_null<MmaEncodingAttr>(
        getWarpGroupMmaLayout(op, shape, /*transposed=*/true));
    if (!layout)
      return {};
    auto bType = cast<RankedTensorType>(op.getB().getType());
    auto fragment = DotOperandEncodingAttr::get(getContext(), 1, layout, 1);
    int64_t registers =
        layout.toLinearLayout(shape).getNumRegisters() +
        2 * fragment.toLinearLayout(bType.getShape()).getNumRegisters();
    return registers <= kTransposedRegisterBudget ? layout : Attribute();
  }

  /// Operand `opIdx` of a warpgroup dot stored to shared memory in a layout
  /// wgmma reads: row-major where the element type allows (tf32: K-major),
  /// swizzled by as many bytes of a row as fit 128. (tilegpu-pipeline gives
  /// a pipelined operand the order its loads have, where wgmma reads it.)
  Value allocateOperand(ConversionPatternRewriter &rewriter, Location loc,
                        Value operand, unsigned opIdx) const {
    auto type = cast<RankedTensorType>(operand.getType());
    // getWarpGroupMmaLayout admits rows of at least one instruction's K
    // (32 bytes).
    NvmmaSharedEncodingAttr encoding = getNvmmaSharedEncoding(
        type, getWarpGroupOperandOrder(type.getElementType(), opIdx, {1, 0}));
    assert(encoding && "wgmma operand rows below the 32-byte swizzle");
    auto memType =
        MemDescType::get(getContext(), type.getShape(), type.getElementType(),
                         encoding, /*isMutable=*/false);
    return LocalAllocOp::create(rewriter, loc, memType, operand);
  }

  /// The kWidth of the mma.sync operands of `op` (consecutive K elements per
  /// thread: 2 for f16/bf16, 1 for tf32), or nullopt when tensor cores do not
  /// apply. Other f32 dots (ieee, tf32x3) stay on FMA, whose products are
  /// exact f32: tf32 keeps 10 of the 23 mantissa bits.
  std::optional<unsigned> getMmaKWidth(tile::DotOp op,
                                       ArrayRef<int64_t> shape) const {
    auto aType = cast<RankedTensorType>(op.getA().getType());
    Type aElem = aType.getElementType();
    Type cElem = cast<RankedTensorType>(op.getC().getType()).getElementType();
    if (computeCapability < 80 || !cElem.isF32() || shape[0] < 16 ||
        shape[1] < 8)
      return std::nullopt;
    unsigned kWidth;
    if (aElem.isF16() || aElem.isBF16())
      kWidth = 2;
    else if (aElem.isF32() &&
             op.getInputPrecision() == tile::InputPrecision::TF32)
      kWidth = 1;
    else
      return std::nullopt;
    // One instruction spans 16 (16-bit) or 8 (tf32) elements of K.
    if (aType.getDimSize(1) < 8 * kWidth)
      return std::nullopt;
    return kWidth;
  }

  /// The mma layout for an MxN accumulator. Warps go where the shape has more
  /// 16x8 tiles (M on ties).
  Attribute getMmaLayout(ArrayRef<int64_t> shape) const {
    unsigned wm = 1, wn = 1;
    while (wm * wn < numWarps) {
      int64_t tilesM = shape[0] / (16 * wm), tilesN = shape[1] / (8 * wn);
      if (tilesM >= tilesN && tilesM > 1)
        wm *= 2;
      else if (tilesN > 1)
        wn *= 2;
      else
        wm *= 2;
    }
    return MmaEncodingAttr::get(getContext(), 2, {wm, wn}, {16, 8});
  }

  Attribute getFmaLayout(ArrayRef<int64_t> shape) const {
    unsigned threads = 32 * numWarps;
    SmallVector<unsigned> perThread = {1, 1};
    // Grow the per-thread block while every thread still has work.
    for (unsigned dim : {1u, 0u, 1u, 0u})
      if (shape[0] * shape[1] / (perThread[0] * perThread[1] * 2) >= threads &&
          shape[dim] / (perThread[dim] * 2) >= 1)
        perThread[dim] *= 2;
    return getBlockedEncoding(getContext(), shape, perThread, {1, 0}, numWarps,
                              32);
  }

  LogicalResult
  matchAndRewrite(tile::DotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto defaultType =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    ArrayRef<int64_t> shape = defaultType.getShape();
    Attribute warpGroup = getTransposedWarpGroupMmaLayout(op, shape);
    bool transposed = static_cast<bool>(warpGroup);
    if (!transposed)
      warpGroup = getWarpGroupMmaLayout(op, shape, /*transposed=*/false);
    if (warpGroup) {
      auto accType =
          RankedTensorType::get(shape, defaultType.getElementType(), warpGroup);
      Value c = convertTo(rewriter, op.getLoc(), adaptor.getC(), warpGroup);
      Value a = allocateOperand(rewriter, op.getLoc(), adaptor.getA(), 0);
      // B^T is wgmma's A, from registers in its tf32 fragment.
      Value b = transposed
                    ? convertTo(rewriter, op.getLoc(), adaptor.getB(),
                                DotOperandEncodingAttr::get(
                                    getContext(), 1, warpGroup, /*kWidth=*/1))
                    : allocateOperand(rewriter, op.getLoc(), adaptor.getB(), 1);
      // The instructions skip inactive row groups of at least 64 rows (a
      // 64-row strip lies in one); a transposed layout's rows run along N,
      // and smaller groups split a strip: those compute every row and
      // select.
      bool skipsStrips = !transposed && op.getRowsPerGroup() &&
                         *op.getRowsPerGroup() >= 64;
      Value rowGroups = skipsStrips ? adaptor.getRowGroups() : Value();
      Value d = WarpGroupDotOp::create(
          rewriter, op.getLoc(), accType, a, b, c, rowGroups,
          /*isAsync=*/false,
          rowGroups ? op.getRowsPerGroupAttr() : IntegerAttr());
      if (adaptor.getRowGroups() && !rowGroups)
        d = keepInactiveRows(rewriter, op.getLoc(), d, c,
                             adaptor.getRowGroups(), *op.getRowsPerGroup());
      rewriter.replaceOp(
          op, convertTo(rewriter, op.getLoc(), d, defaultType.getEncoding()));
      return success();
    }
    std::optional<unsigned> mmaKWidth = getMmaKWidth(op, shape);
    Attribute parent = mmaKWidth ? getMmaLayout(shape) : getFmaLayout(shape);
    unsigned kWidth = mmaKWidth.value_or(0);
    auto accType =
        RankedTensorType::get(shape, defaultType.getElementType(), parent);
    Value c = convertTo(rewriter, op.getLoc(), adaptor.getC(), parent);
    Value a =
        convertTo(rewriter, op.getLoc(), adaptor.getA(),
                  DotOperandEncodingAttr::get(getContext(), 0, parent, kWidth));
    Value b =
        convertTo(rewriter, op.getLoc(), adaptor.getB(),
                  DotOperandEncodingAttr::get(getContext(), 1, parent, kWidth));
    Value d =
        tile::DotOp::create(rewriter, op.getLoc(), accType, a, b, c,
                            op.getInputPrecision(), op.getMaxNumImpreciseAcc());
    if (adaptor.getRowGroups())
      d = keepInactiveRows(rewriter, op.getLoc(), d, c, adaptor.getRowGroups(),
                           *op.getRowsPerGroup());
    rewriter.replaceOp(
        op, convertTo(rewriter, op.getLoc(), d, defaultType.getEncoding()));
    return success();
  }

  unsigned numWarps;
  unsigned computeCapability;
  /// wgmma exists on sm_90a only (the "a" features are not forward
  /// compatible).
  bool hasWarpGroupMma;
  const DenseSet<Operation *> &transposedDots;
};

struct ConvertTileToTileGPUPass
    : tilec::impl::ConvertTileToTileGPUBase<ConvertTileToTileGPUPass> {
  using ConvertTileToTileGPUBase::ConvertTileToTileGPUBase;

  /// Each tile.load_tile stays for a TMA copy (copiesWithTma) or becomes
  /// pointers and a masked load; decided for all before any changes, since
  /// a block qualifies only with its dot's other operand. (Only tf32 dots
  /// are computed transposed, and only 16-bit blocks qualify.)
  void expandLoadTiles(ModuleOp module) {
    bool hasWarpGroupMma = target == "sm_90a";
    auto runsOnWarpGroups = [&](tile::DotOp dot) {
      auto shape = cast<RankedTensorType>(dot.getType()).getShape();
      return static_cast<bool>(warpGroupMmaLayoutOf(
          dot, shape, /*transposed=*/false, numWarps, hasWarpGroupMma));
    };
    SmallVector<tile::LoadTileOp> expanded;
    module.walk([&](tile::LoadTileOp load) {
      if (!hasWarpGroupMma || !copiesWithTma(load, numStages, runsOnWarpGroups))
        expanded.push_back(load);
    });
    for (tile::LoadTileOp load : expanded)
      expandLoadTile(load);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    // A bad option is the pass's, not an operation's: reported at the
    // module's location without the module itself (an op's diagnostic
    // prints the op, here the whole program).
    auto optionError = [&]() { return mlir::emitError(module.getLoc()); };
    // A CTA holds at most 1024 threads: more warps compile to a kernel
    // that can never launch.
    if (numWarps == 0 || !llvm::isPowerOf2_32(numWarps) || numWarps > 32) {
      optionError() << "num-warps must be a power of two from 1 to 32, got "
                    << static_cast<unsigned>(numWarps);
      return signalPassFailure();
    }
    if (threadsPerWarp != 32) {
      optionError() << "threads-per-warp must be 32 on NVIDIA GPUs, got "
                    << static_cast<unsigned>(threadsPerWarp);
      return signalPassFailure();
    }
    if (!StringRef(target).starts_with("sm_")) {
      optionError() << "target must look like sm_90, got '" << target << "'";
      return signalPassFailure();
    }
    // Layouts assume power-of-two shapes (each bit of an index is a basis).
    WalkResult shapes = module.walk([&](Operation *op) {
      for (Type type : op->getResultTypes())
        if (auto tensor = dyn_cast<RankedTensorType>(type))
          for (int64_t size : tensor.getShape())
            if (!llvm::isPowerOf2_64(size)) {
              op->emitError() << "tensor dimensions must be powers of two, "
                                 "got "
                              << tensor;
              return WalkResult::interrupt();
            }
      return WalkResult::advance();
    });
    if (shapes.wasInterrupted())
      return signalPassFailure();

    // First: the transposed dots are found from their operands' loads.
    expandLoadTiles(module);
    DenseSet<Operation *> transposedDots = getTransposedDots(module);
    TileGPUTypeConverter converter(context, numWarps, threadsPerWarp);
    ConversionTarget conversionTarget(*context);
    auto isLegal = [&](Operation *op) {
      return llvm::all_of(op->getOperandTypes(),
                          [&](Type t) { return converter.isLegalType(t); }) &&
             llvm::all_of(op->getResultTypes(),
                          [&](Type t) { return converter.isLegalType(t); });
    };
    conversionTarget.addDynamicallyLegalDialect<
        tile::TileDialect, arith::ArithDialect, math::MathDialect>(isLegal);
    conversionTarget.addLegalDialect<TileGPUDialect>();
    conversionTarget.addIllegalOp<tile::BarrierOp>();
    conversionTarget.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      return converter.isSignatureLegal(op.getFunctionType());
    });
    conversionTarget.addDynamicallyLegalOp<func::ReturnOp>(isLegal);

    RewritePatternSet patterns(context);
    patterns.add<GenericOpConversion>(converter, context);
    patterns.add<ConstantOpConversion, BroadcastOpConversion,
                 ExpandDimsOpConversion, ReduceOpConversion,
                 HistogramOpConversion, BarrierOpConversion>(converter, context,
                                                             /*benefit=*/2);
    unsigned computeCapability = 0;
    (void)StringRef(target)
        .drop_front(3)
        .take_while(llvm::isDigit)
        .getAsInteger(10, computeCapability);
    patterns.add<DotOpConversion>(
        converter, context, /*benefit=*/2, computeCapability,
        /*hasWarpGroupMma=*/target == "sm_90a", transposedDots);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         conversionTarget);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    if (failed(applyPartialConversion(module, conversionTarget,
                                      std::move(patterns))))
      return signalPassFailure();

    Builder builder(context);
    module->setAttr(TileGPUDialect::getNumWarpsAttrName(),
                    builder.getI32IntegerAttr(numWarps));
    module->setAttr(TileGPUDialect::getThreadsPerWarpAttrName(),
                    builder.getI32IntegerAttr(threadsPerWarp));
    module->setAttr(TileGPUDialect::getTargetAttrName(),
                    builder.getStringAttr(target));
    if (minBlocksPerSM > 1)
      module->setAttr(TileGPUDialect::getMinBlocksPerSMAttrName(),
                      builder.getI32IntegerAttr(minBlocksPerSM));
  }
};

} // namespace
