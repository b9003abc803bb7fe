//===- SharedMemoryOpToLLVM.cpp - ops that move data between threads ------===//
//
// convert_layout, reshape and trans move elements between threads through
// shared memory (or, when both layouts give each thread the same elements,
// by renaming registers); reduce combines in registers, then across lanes with
// butterfly shuffles, then across warps through shared memory.
//
// Each op's scratch sits at its `tilegpu.offset` in the one dynamic buffer
// (tilegpu-allocate-shared-memory). A barrier between the op's writes and its
// reads is part of the op; whether one is needed before it writes, because
// other threads still use those bytes, is tilegpu-insert-barriers' decision,
// and its tilegpu.barrier ops lower to bar.sync here.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "tilec/Dialect/TileGPU/Transforms/SharedMemory.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;
using namespace tilec::lowering;

namespace {

unsigned storageBytes(Type type) {
  return getSharedStorageType(type).getIntOrFloatBitWidth() / 8;
}

/// Addresses of the registers of `layout` in a shared buffer where element
/// `coords` sits at sum(coords[d] * strides[d]). Coordinates are a per-thread
/// part plus a per-register constant (disjoint bits), so each address is one
/// per-thread base plus a constant the backend folds into the instruction.
SmallVector<Value> registerAddresses(OpBuilder &builder, Location loc,
                                     Value base, Type storage,
                                     const LinearLayout &layout,
                                     ArrayRef<int64_t> strides,
                                     ThreadId thread) {
  SmallVector<Value> threadCoords =
      emitThreadCoords(builder, loc, layout, thread);
  Value threadOffset;
  for (auto [coord, stride] : llvm::zip(threadCoords, strides)) {
    Value term = stride == 1 ? coord
                             : arith::MulIOp::create(
                                   builder, loc, coord,
                                   i32Const(builder, loc, stride))
                                   .getResult();
    threadOffset = threadOffset
                       ? arith::AddIOp::create(builder, loc, threadOffset, term)
                             .getResult()
                       : term;
  }
  Value threadBase =
      threadOffset ? LLVM::GEPOp::create(builder, loc, base.getType(), storage,
                                         base, ValueRange{threadOffset})
                         .getResult()
                   : base;
  SmallVector<Value> addresses;
  for (unsigned reg = 0; reg < layout.getNumRegisters(); ++reg) {
    int64_t offset = 0;
    for (auto [coord, stride] : llvm::zip(layout.registerCoords(reg), strides))
      offset += coord * stride;
    addresses.push_back(
        offset == 0 ? threadBase
                    : LLVM::GEPOp::create(builder, loc, base.getType(), storage,
                                          threadBase,
                                          ArrayRef<LLVM::GEPArg>{
                                              static_cast<int32_t>(offset)})
                          .getResult());
  }
  return addresses;
}

/// Writes `srcRegs` (layout `src`, element at sum(coords * srcStrides)) and
/// reads the registers of `dst` (at sum(coords * dstStrides)), in vectors of
/// getSharedVectorWidth.
Registers roundTrip(ConversionPatternRewriter &rewriter, Operation *op,
                    ValueRange srcRegs, const LinearLayout &src,
                    ArrayRef<int64_t> srcStrides, const LinearLayout &dst,
                    ArrayRef<int64_t> dstStrides, Type element) {
  Location loc = op->getLoc();
  auto module = op->getParentOfType<ModuleOp>();
  ThreadId thread = getThreadId(rewriter, loc,
                                TileGPUDialect::getThreadsPerWarp(module));
  Type storage = getSharedStorageType(element);
  Value base = getScratchBase(rewriter, loc, op);

  unsigned bytes = storageBytes(element);
  SmallVector<Value> srcAddresses =
      registerAddresses(rewriter, loc, base, storage, src, srcStrides, thread);
  unsigned storeVec = getSharedVectorWidth(src, srcStrides, bytes);
  auto storeType = VectorType::get({storeVec}, storage);
  for (unsigned first = 0; first < srcRegs.size(); first += storeVec) {
    Value stored = toSharedStorage(rewriter, loc, srcRegs[first]);
    if (storeVec > 1) {
      stored = LLVM::UndefOp::create(rewriter, loc, storeType);
      for (unsigned i = 0; i < storeVec; ++i)
        stored = LLVM::InsertElementOp::create(
            rewriter, loc, stored,
            toSharedStorage(rewriter, loc, srcRegs[first + i]),
            i32Const(rewriter, loc, i));
    }
    LLVM::StoreOp::create(rewriter, loc, stored, srcAddresses[first],
                          storeVec * bytes);
  }
  emitBarrier(rewriter, loc);
  Registers results;
  SmallVector<Value> dstAddresses = registerAddresses(
      rewriter, loc, base, storage, dst, dstStrides, thread);
  unsigned loadVec = getSharedVectorWidth(dst, dstStrides, bytes);
  auto loadType = VectorType::get({loadVec}, storage);
  for (unsigned first = 0; first < dst.getNumRegisters(); first += loadVec) {
    if (loadVec == 1) {
      Value loaded =
          LLVM::LoadOp::create(rewriter, loc, storage, dstAddresses[first]);
      results.push_back(fromSharedStorage(rewriter, loc, loaded, element));
      continue;
    }
    Value loaded = LLVM::LoadOp::create(rewriter, loc, loadType,
                                        dstAddresses[first], loadVec * bytes);
    for (unsigned i = 0; i < loadVec; ++i)
      results.push_back(fromSharedStorage(
          rewriter, loc,
          LLVM::ExtractElementOp::create(rewriter, loc, loaded,
                                         i32Const(rewriter, loc, i)),
          element));
  }
  return results;
}

struct ConvertLayoutOpConversion
    : OpConversionPattern<tilegpu::ConvertLayoutOp> {
  ConvertLayoutOpConversion(const LLVMTypeConverter &converter,
                            MLIRContext *context)
      : OpConversionPattern(converter, context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(tilegpu::ConvertLayoutOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    auto dstType = cast<RankedTensorType>(op.getType());
    LinearLayout src = getLinearLayout(srcType);
    LinearLayout dst = getLinearLayout(dstType);
    ValueRange srcRegs = adaptor.getSrc();
    // Same elements in the same threads: only the register order changes.
    auto mapping = mapRegisters(
        src, dst, [](const LinearLayout::Basis &coords) { return coords; });
    if (succeeded(mapping)) {
      Registers results;
      for (unsigned index : *mapping)
        results.push_back(srcRegs[index]);
      rewriter.replaceOpWithMultiple(op, {results});
      return success();
    }
    SmallVector<Type> types;
    if (failed(getTypeConverter()->convertType(dstType, types)))
      return failure();
    // The scratch's padded rows are the ones its size was allocated for
    // (getSharedMemoryBytes: the same layouts and element type).
    ConversionScratch scratch = getConversionScratch(
        src, dst, getSharedStorageBytes(dstType.getElementType()));
    rewriter.replaceOpWithMultiple(
        op, {roundTrip(rewriter, op, srcRegs, src, scratch.strides, dst,
                       scratch.strides, types.front())});
    return success();
  }
};

/// reshape keeps the row-major order of elements; trans permutes dims.
template <typename SourceOp>
struct ShapeOpConversion : OpConversionPattern<SourceOp> {
  ShapeOpConversion(const LLVMTypeConverter &converter, MLIRContext *context)
      : OpConversionPattern<SourceOp>(converter, context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(SourceOp op, typename OpConversionPattern<SourceOp>::OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    auto dstType = cast<RankedTensorType>(op.getType());
    // Both sides address the result's row-major order: reshape keeps the
    // element order, trans reads source dim order[i] as result dim i.
    SmallVector<int64_t, 4> dstStrides =
        getRowMajorStrides(dstType.getShape());
    SmallVector<int64_t, 4> srcStrides =
        getRowMajorStrides(srcType.getShape());
    if constexpr (std::is_same_v<SourceOp, tile::TransOp>)
      for (auto [resultDim, srcDim] : llvm::enumerate(op.getOrder()))
        srcStrides[srcDim] = dstStrides[resultDim];
    SmallVector<Type> types;
    if (failed(this->getTypeConverter()->convertType(dstType, types)))
      return failure();
    rewriter.replaceOpWithMultiple(
        op, {roundTrip(rewriter, op, adaptor.getSrc(), getLinearLayout(srcType),
                       srcStrides, getLinearLayout(dstType), dstStrides,
                       types.front())});
    return success();
  }
};

struct ReduceOpConversion : OpConversionPattern<tile::ReduceOp> {
  ReduceOpConversion(const LLVMTypeConverter &converter, MLIRContext *context)
      : OpConversionPattern(converter, context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(tile::ReduceOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    unsigned axis = op.getAxis();
    LinearLayout src = getLinearLayout(srcType);
    auto resultTensor = dyn_cast<RankedTensorType>(op.getType());
    // The result layout: the slice of the source's at `axis` (for a 1-D
    // source, a scalar every thread holds).
    LinearLayout dst = resultTensor ? getLinearLayout(resultTensor)
                                    : src.projectOutDim(axis);
    auto project = [&](const LinearLayout::Basis &coords) {
      LinearLayout::Basis result(coords);
      result.erase(result.begin() + axis);
      return result;
    };

    // 1. Within the thread: fold all registers that differ only along axis.
    llvm::DenseMap<ArrayRef<int64_t>, unsigned> dstIndex;
    SmallVector<LinearLayout::Basis> dstCoords;
    for (unsigned reg = 0; reg < dst.getNumRegisters(); ++reg)
      dstCoords.push_back(dst.registerCoords(reg));
    for (unsigned reg = 0; reg < dst.getNumRegisters(); ++reg)
      dstIndex.try_emplace(dstCoords[reg], reg);
    Registers partial(dst.getNumRegisters());
    ValueRange srcRegs = adaptor.getSrc();
    for (unsigned reg = 0; reg < src.getNumRegisters(); ++reg) {
      LinearLayout::Basis key = project(src.registerCoords(reg));
      auto it = dstIndex.find(ArrayRef<int64_t>(key));
      if (it == dstIndex.end())
        return op.emitError("result layout does not match the slice of the "
                            "operand layout");
      Value &slot = partial[it->second];
      slot = slot ? emitCombine(rewriter, loc, op.getKind(), slot, srcRegs[reg])
                  : srcRegs[reg];
    }

    // 2. Across lanes: butterfly over the lane bits that move along axis.
    for (auto [bit, basis] : llvm::enumerate(src.getLaneBases()))
      if (basis[axis] != 0)
        for (Value &value : partial)
          value = emitCombine(rewriter, loc, op.getKind(), value,
                              emitShuffle(rewriter, loc, value,
                                          NVVM::ShflKind::bfly,
                                          i32Const(rewriter, loc, 1u << bit)));

    // 3. Across warps: each warp's partials through shared memory.
    SmallVector<unsigned> axisWarpBits;
    for (auto [bit, basis] : llvm::enumerate(src.getWarpBases()))
      if (basis[axis] != 0)
        axisWarpBits.push_back(bit);
    if (!axisWarpBits.empty()) {
      auto module = op->getParentOfType<ModuleOp>();
      ThreadId thread = getThreadId(
          rewriter, loc, TileGPUDialect::getThreadsPerWarp(module));
      Type element = partial.front().getType();
      unsigned numWarpGroups = 1u << axisWarpBits.size();
      SmallVector<int64_t> outShape =
          resultTensor ? SmallVector<int64_t>(resultTensor.getShape())
                       : SmallVector<int64_t>();
      int64_t outElements = resultTensor ? resultTensor.getNumElements() : 1;
      // Which of the warps along axis this warp is.
      Value group = i32Const(rewriter, loc, 0);
      for (auto [index, bit] : llvm::enumerate(axisWarpBits)) {
        Value field = arith::AndIOp::create(
            rewriter, loc,
            arith::ShRUIOp::create(rewriter, loc, thread.warp,
                                   i32Const(rewriter, loc, bit)),
            i32Const(rewriter, loc, 1));
        if (index)
          field = arith::ShLIOp::create(rewriter, loc, field,
                                        i32Const(rewriter, loc, index));
        group = arith::OrIOp::create(rewriter, loc, group, field);
      }
      auto outCoords = emitRegisterCoords(rewriter, loc, dst, thread);
      Value base = getScratchBase(rewriter, loc, op);
      Type storage = getSharedStorageType(element);
      auto slotAddress = [&](Value groupIndex, unsigned reg) {
        Value linear = linearize(rewriter, loc, outCoords[reg], outShape);
        Value index = arith::AddIOp::create(
            rewriter, loc,
            arith::MulIOp::create(rewriter, loc, groupIndex,
                                  i32Const(rewriter, loc, outElements)),
            linear);
        return LLVM::GEPOp::create(rewriter, loc, base.getType(), storage,
                                   base, ValueRange{index});
      };
      for (auto [reg, value] : llvm::enumerate(partial))
        LLVM::StoreOp::create(rewriter, loc,
                              toSharedStorage(rewriter, loc, value),
                              slotAddress(group, reg));
      emitBarrier(rewriter, loc);
      for (auto [reg, value] : llvm::enumerate(partial)) {
        Value total;
        for (unsigned g = 0; g < numWarpGroups; ++g) {
          Value loaded = LLVM::LoadOp::create(
              rewriter, loc, storage,
              slotAddress(i32Const(rewriter, loc, g), reg));
          loaded = fromSharedStorage(rewriter, loc, loaded, element);
          total = total
                      ? emitCombine(rewriter, loc, op.getKind(), total, loaded)
                      : loaded;
        }
        value = total;
      }
    }
    rewriter.replaceOpWithMultiple(op, {partial});
    return success();
  }
};

} // namespace

void tilec::lowering::populateSharedMemoryOpToLLVMPatterns(
    const LLVMTypeConverter &converter, RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<ConvertLayoutOpConversion, ShapeOpConversion<tile::ReshapeOp>,
               ShapeOpConversion<tile::TransOp>, ReduceOpConversion>(
      converter, context);
}
