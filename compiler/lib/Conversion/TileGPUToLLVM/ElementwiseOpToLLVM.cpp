//===- ElementwiseOpToLLVM.cpp - per-register ops -------------------------===//
//
// Ops that never move data between threads: each register of the result is
// computed from registers the same thread holds.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;
using namespace tilec::lowering;

namespace {

unsigned numRegistersOf(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return getLinearLayout(tensor).getNumRegisters();
  return 1;
}

/// arith/math ops on tensors: the same op on each register.
struct ElementwiseOpConversion : ConversionPattern {
  ElementwiseOpConversion(const TypeConverter &converter, MLIRContext *context)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1,
                          context) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<ValueRange> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (op->getNumRegions() != 0 || op->getNumResults() != 1 ||
        !isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
        isa<arith::ConstantOp>(op))
      return failure();
    SmallVector<Type> resultTypes;
    if (failed(getTypeConverter()->convertType(op->getResult(0).getType(),
                                               resultTypes)))
      return failure();
    unsigned count = resultTypes.size();
    Registers results;
    for (unsigned reg = 0; reg < count; ++reg) {
      SmallVector<Value> scalarOperands;
      for (ValueRange operand : operands)
        scalarOperands.push_back(operand.size() == 1 ? operand.front()
                                                     : operand[reg]);
      OperationState state(op->getLoc(), op->getName(), scalarOperands,
                           resultTypes[reg], op->getAttrs());
      results.push_back(rewriter.create(state)->getResult(0));
    }
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

struct ConstantOpConversion : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tensor = dyn_cast<RankedTensorType>(op.getType());
    if (!tensor)
      return failure();
    auto splat = dyn_cast<SplatElementsAttr>(op.getValue());
    if (!splat)
      return rewriter.notifyMatchFailure(op, "non-splat tensor constant");
    auto scalar = arith::ConstantOp::create(
        rewriter, op.getLoc(), cast<TypedAttr>(splat.getSplatValue<Attribute>()));
    Registers results(numRegistersOf(tensor), scalar);
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

template <typename SourceOp, typename XOp, typename YOp, typename ZOp>
struct GridQueryConversion : OpConversionPattern<SourceOp> {
  using OpConversionPattern<SourceOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SourceOp op, typename SourceOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type i32 = rewriter.getI32Type();
    Value result;
    switch (op.getAxis()) {
    case tile::ProgramAxis::X:
      result = XOp::create(rewriter, op.getLoc(), i32);
      break;
    case tile::ProgramAxis::Y:
      result = YOp::create(rewriter, op.getLoc(), i32);
      break;
    case tile::ProgramAxis::Z:
      result = ZOp::create(rewriter, op.getLoc(), i32);
      break;
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct MakeRangeOpConversion : OpConversionPattern<tile::MakeRangeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::MakeRangeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    LinearLayout layout = getLinearLayout(op.getType());
    auto module = op->getParentOfType<ModuleOp>();
    ThreadId thread = getThreadId(
        rewriter, loc, TileGPUDialect::getThreadsPerWarp(module));
    Value threadOffset = emitThreadCoords(rewriter, loc, layout, thread)[0];
    Value base = arith::AddIOp::create(
        rewriter, loc, threadOffset, i32Const(rewriter, loc, op.getStart()));
    Registers results;
    for (unsigned reg = 0; reg < layout.getNumRegisters(); ++reg) {
      int64_t offset = layout.registerCoords(reg)[0];
      results.push_back(offset == 0 ? base
                                    : arith::AddIOp::create(
                                          rewriter, loc, base,
                                          i32Const(rewriter, loc, offset)));
    }
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

struct SplatOpConversion : OpConversionPattern<tile::SplatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::SplatOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Registers results(numRegistersOf(op.getType()), adaptor.getSrc().front());
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

/// Ops whose result registers are a selection of the operand's registers in
/// the same thread: broadcast (size-1 dims read coordinate 0) and
/// expand_dims (the operand is the slice of the result's layout).
template <typename SourceOp>
struct RegisterSelectionConversion : OpConversionPattern<SourceOp> {
  using OpConversionPattern<SourceOp>::OpConversionPattern;

  static LinearLayout::Basis mapCoords(SourceOp op,
                                       const LinearLayout::Basis &coords);

  LogicalResult
  matchAndRewrite(SourceOp op, typename OpConversionPattern<SourceOp>::OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    auto dstType = cast<RankedTensorType>(op.getType());
    LinearLayout src = getLinearLayout(srcType);
    LinearLayout dst = getLinearLayout(dstType);
    auto mapping = mapRegisters(src, dst, [&](const LinearLayout::Basis &c) {
      return mapCoords(op, c);
    });
    if (failed(mapping))
      return op.emitError() << "operand layout " << srcType.getEncoding()
                            << " does not hold the elements of result layout "
                            << dstType.getEncoding()
                            << " in the same threads; a convert_layout is "
                               "missing";
    ValueRange srcRegs = adaptor.getSrc();
    Registers results;
    for (unsigned index : *mapping)
      results.push_back(srcRegs[index]);
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

template <>
LinearLayout::Basis RegisterSelectionConversion<tile::BroadcastOp>::mapCoords(
    tile::BroadcastOp op, const LinearLayout::Basis &coords) {
  auto srcShape = cast<RankedTensorType>(op.getSrc().getType()).getShape();
  LinearLayout::Basis result(coords);
  for (auto [dim, size] : llvm::enumerate(srcShape))
    if (size == 1)
      result[dim] = 0;
  return result;
}

template <>
LinearLayout::Basis
RegisterSelectionConversion<tile::ExpandDimsOp>::mapCoords(
    tile::ExpandDimsOp op, const LinearLayout::Basis &coords) {
  LinearLayout::Basis result(coords);
  result.erase(result.begin() + op.getAxis());
  return result;
}

struct AddPtrOpConversion : OpConversionPattern<tile::AddPtrOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::AddPtrOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto ptrType = cast<tile::PointerType>(
        tile::getElementTypeOrSelf(op.getPtr().getType()));
    Type elementType =
        getTypeConverter()->convertType(ptrType.getPointeeType());
    ValueRange ptrs = adaptor.getPtr(), offsets = adaptor.getOffset();
    Registers results;
    for (auto [ptr, offset] : llvm::zip(ptrs, offsets))
      results.push_back(LLVM::GEPOp::create(rewriter, op.getLoc(),
                                            ptr.getType(), elementType, ptr,
                                            ValueRange{offset}));
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

template <typename SourceOp, typename LLVMOp>
struct CastOpConversion : OpConversionPattern<SourceOp> {
  using OpConversionPattern<SourceOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SourceOp op, typename OpConversionPattern<SourceOp>::OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Type> resultTypes;
    if (failed(this->getTypeConverter()->convertType(op.getType(),
                                                     resultTypes)))
      return failure();
    Registers results;
    for (auto [value, type] : llvm::zip(adaptor.getSrc(), resultTypes))
      results.push_back(
          value.getType() == type
              ? value
              : LLVMOp::create(rewriter, op.getLoc(), type, value).getResult());
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

} // namespace

void tilec::lowering::populateElementwiseOpToLLVMPatterns(
    const LLVMTypeConverter &converter, RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<ElementwiseOpConversion>(converter, context);
  patterns.add<
      ConstantOpConversion,
      GridQueryConversion<tile::ProgramIdOp, NVVM::BlockIdXOp,
                          NVVM::BlockIdYOp, NVVM::BlockIdZOp>,
      GridQueryConversion<tile::NumProgramsOp, NVVM::GridDimXOp,
                          NVVM::GridDimYOp, NVVM::GridDimZOp>,
      MakeRangeOpConversion, SplatOpConversion,
      RegisterSelectionConversion<tile::BroadcastOp>,
      RegisterSelectionConversion<tile::ExpandDimsOp>, AddPtrOpConversion,
      CastOpConversion<tile::IntToPtrOp, LLVM::IntToPtrOp>,
      CastOpConversion<tile::PtrToIntOp, LLVM::PtrToIntOp>,
      CastOpConversion<tile::BitcastOp, LLVM::BitcastOp>>(converter, context,
                                                           /*benefit=*/2);
}
