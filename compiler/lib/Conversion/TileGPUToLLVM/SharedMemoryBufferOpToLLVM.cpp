//===- SharedMemoryBufferOpToLLVM.cpp - explicit shared-memory buffers ----===//
//
// A !tilegpu.memdesc lowers to one !llvm.ptr<3>, the base of its buffer:
// @global_smem plus the `tilegpu.offset` that tilegpu-allocate-shared-memory
// gave its local_alloc. The element at (row, col) of a copy sits where the
// #tilegpu.swizzled_shared formula puts it, so a thread's consecutive
// registers that stay in one chunk are one vector access.
//
// None of these ops synchronizes: tilegpu-insert-barriers places the
// tilegpu.barrier ops that order one thread's writes and another's reads.
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

/// The lowering's widest vector, and so the alignment a buffer needs.
static constexpr int64_t kMaxVectorBytes = 16;

static unsigned elementBytes(MemDescType type) {
  return type.getElementType().getIntOrFloatBitWidth() / 8;
}

static SwizzledTile getTile(MemDescType type) {
  return SwizzledTile::get(type.getSharedEncoding(), type.getShape(),
                           elementBytes(type));
}

/// Registers of `layout` per vector access to `type`: contiguous in the
/// buffer, within one chunk, at most 16 bytes and `maxVec`.
static unsigned sharedVectorWidth(MemDescType type, const LinearLayout &layout,
                                  unsigned maxVec = kMaxVectorBytes) {
  SwizzledTile tile = getTile(type);
  int64_t limit = std::min<int64_t>({tile.contiguousElements(),
                                     kMaxVectorBytes / elementBytes(type),
                                     static_cast<int64_t>(maxVec)});
  return contiguousRegisters(
      layout, tile.colDim, static_cast<unsigned>(std::max<int64_t>(1, limit)));
}

/// Elements one cp.async of `op` moves: what the buffer and the layout allow,
/// capped by the pointers' contiguity and alignment and the mask's
/// uniformity (`vectorWidth`, as for global loads).
static unsigned asyncCopyWidth(AsyncCopyGlobalToLocalOp op,
                               const VectorWidthQuery &vectorWidth) {
  LinearLayout layout =
      getLinearLayout(cast<RankedTensorType>(op.getSrc().getType()));
  return sharedVectorWidth(op.getDst().getType(), layout, vectorWidth(op));
}

/// The address of element `coords` (all dimensions of `type`) of the buffer
/// at `base`: leading coordinates pick a copy, the trailing two are swizzled.
static Value elementAddress(OpBuilder &builder, Location loc, Value base,
                            MemDescType type, ArrayRef<Value> coords) {
  SwizzledTile tile = getTile(type);
  Value offset =
      tile.offset(builder, loc, coords[tile.rowDim], coords[tile.colDim]);
  unsigned leading = coords.size() - 2;
  if (leading > 0) {
    Value copy = linearize(builder, loc, coords.take_front(leading),
                           type.getShape().take_front(leading));
    Value copyStart = arith::MulIOp::create(
        builder, loc, copy, i32Const(builder, loc, tile.rows * tile.cols));
    offset = arith::AddIOp::create(builder, loc, copyStart, offset);
  }
  return LLVM::GEPOp::create(builder, loc, base.getType(),
                             type.getElementType(), base, ValueRange{offset});
}

/// elementAddress's offset, in elements, of constant coordinates.
static int64_t elementOffset(MemDescType type, ArrayRef<int64_t> coords) {
  SwizzledTile tile = getTile(type);
  int64_t copy = 0;
  for (unsigned dim = 0; dim + 2 < coords.size(); ++dim)
    copy = copy * type.getShape()[dim] + coords[dim];
  return copy * tile.rows * tile.cols +
         tile.offset(coords[tile.rowDim], coords[tile.colDim]);
}

/// The address of every `vec`-th register of `layout` in the buffer: a few
/// per-thread bases with immediate offsets (getThreadDependentRegisters)
/// rather than one computation per register, each a value the backend
/// would keep live across a loop.
static SmallVector<Value> groupAddresses(OpBuilder &builder, Location loc,
                                         Value base, MemDescType type,
                                         const LinearLayout &layout,
                                         unsigned vec, Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  ThreadId thread =
      getThreadId(builder, loc, TileGPUDialect::getThreadsPerWarp(module));
  SmallVector<Value> threadCoords =
      emitThreadCoords(builder, loc, layout, thread);
  auto offsetOf = [&](ArrayRef<int64_t> coords) {
    return elementOffset(type, coords);
  };
  unsigned varyingRegs = getThreadDependentRegisters(layout, vec, offsetOf);

  DenseMap<unsigned, Value> groupBases;
  SmallVector<Value> addresses;
  for (unsigned first = 0; first < layout.getNumRegisters(); first += vec) {
    Value &groupBase = groupBases[first & varyingRegs];
    if (!groupBase) {
      // Thread and register parts have disjoint bits: OR adds them.
      SmallVector<Value> coords;
      for (auto [dim, offset] :
           llvm::enumerate(layout.registerCoords(first & varyingRegs)))
        coords.push_back(
            offset == 0 ? threadCoords[dim]
                        : arith::OrIOp::create(builder, loc, threadCoords[dim],
                                               i32Const(builder, loc, offset)));
      groupBase = elementAddress(builder, loc, base, type, coords);
    }
    int64_t constant =
        elementOffset(type, layout.registerCoords(first & ~varyingRegs));
    Value address = groupBase;
    if (constant != 0)
      address = LLVM::GEPOp::create(
          builder, loc, base.getType(), type.getElementType(), groupBase,
          ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(constant)});
    addresses.push_back(address);
  }
  return addresses;
}

/// Stores the registers `regs` of a tensor of `tensorType` into the buffer.
/// Threads holding copies of one element all store it: the same value.
static void storeRegisters(OpBuilder &builder, Operation *op, Value base,
                           MemDescType type, RankedTensorType tensorType,
                           ValueRange regs) {
  Location loc = op->getLoc();
  LinearLayout layout = getLinearLayout(tensorType);
  unsigned vec = sharedVectorWidth(type, layout);
  unsigned alignment = vec * elementBytes(type);
  SmallVector<Value> addresses =
      groupAddresses(builder, loc, base, type, layout, vec, op);
  auto vecType = VectorType::get({vec}, type.getElementType());
  for (auto [group, address] : llvm::enumerate(addresses)) {
    Value stored = regs[group * vec];
    if (vec > 1) {
      stored = LLVM::UndefOp::create(builder, loc, vecType);
      for (unsigned i = 0; i < vec; ++i)
        stored = LLVM::InsertElementOp::create(builder, loc, stored,
                                               regs[group * vec + i],
                                               i32Const(builder, loc, i));
    }
    LLVM::StoreOp::create(builder, loc, stored, address, alignment);
  }
  // wgmma reads nvmma tiles through the async proxy: the generic-proxy
  // stores must be fenced before the barrier that publishes them.
  if (isa<NvmmaSharedEncodingAttr>(type.getEncoding()))
    NVVM::FenceProxyOp::create(
        builder, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(builder.getContext(),
                                   NVVM::SharedSpace::shared_cta));
}

/// Loads the registers of a tensor of `tensorType` from the buffer.
static Registers loadRegisters(OpBuilder &builder, Operation *op, Value base,
                               MemDescType type, RankedTensorType tensorType) {
  Location loc = op->getLoc();
  LinearLayout layout = getLinearLayout(tensorType);
  unsigned vec = sharedVectorWidth(type, layout);
  unsigned alignment = vec * elementBytes(type);
  Type element = type.getElementType();
  auto vecType = VectorType::get({vec}, element);
  Registers results;
  for (Value address :
       groupAddresses(builder, loc, base, type, layout, vec, op)) {
    if (vec == 1) {
      results.push_back(
          LLVM::LoadOp::create(builder, loc, element, address, alignment));
      continue;
    }
    Value loaded =
        LLVM::LoadOp::create(builder, loc, vecType, address, alignment);
    for (unsigned i = 0; i < vec; ++i)
      results.push_back(LLVM::ExtractElementOp::create(
          builder, loc, loaded, i32Const(builder, loc, i)));
  }
  return results;
}

namespace {

struct LocalAllocOpConversion : OpConversionPattern<LocalAllocOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(LocalAllocOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto offset = op->getAttrOfType<IntegerAttr>(op.getOffsetAttrName());
    if (!offset)
      return rewriter.notifyMatchFailure(op, "no tilegpu.offset");
    MemDescType type = op.getType();

    Location loc = op.getLoc();
    Value base = LLVM::GEPOp::create(
        rewriter, loc, LLVM::LLVMPointerType::get(getContext(), 3),
        rewriter.getI8Type(), getSharedMemoryBase(rewriter, loc, op),
        ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(offset.getInt())});
    if (op.getSrc())
      storeRegisters(rewriter, op, base, type,
                     cast<RankedTensorType>(op.getSrc().getType()),
                     adaptor.getSrc());
    rewriter.replaceOp(op, base);
    return success();
  }
};

struct LocalDeallocOpConversion : OpConversionPattern<LocalDeallocOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(LocalDeallocOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // Places are static: the allocator already reused this one.
    rewriter.eraseOp(op);
    return success();
  }
};

struct MemDescIndexOpConversion : OpConversionPattern<MemDescIndexOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(MemDescIndexOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value offset = arith::MulIOp::create(
        rewriter, loc, adaptor.getIndex(),
        i32Const(rewriter, loc, op.getType().getSizeInBytes()));
    rewriter.replaceOpWithNewOp<LLVM::GEPOp>(
        op, adaptor.getSrc().getType(), rewriter.getI8Type(), adaptor.getSrc(),
        ValueRange{offset});
    return success();
  }
};

struct LocalStoreOpConversion : OpConversionPattern<LocalStoreOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(LocalStoreOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    storeRegisters(
        rewriter, op, adaptor.getDst().front(), op.getDst().getType(),
        cast<RankedTensorType>(op.getSrc().getType()), adaptor.getSrc());
    rewriter.eraseOp(op);
    return success();
  }
};

struct LocalLoadOpConversion : OpConversionPattern<LocalLoadOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(LocalLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithMultiple(
        op,
        {loadRegisters(rewriter, op, adaptor.getSrc(), op.getSrc().getType(),
                       cast<RankedTensorType>(op.getType()))});
    return success();
  }
};

/// A 16-bit operand of mma v2 read with ldmatrix, one instruction per four
/// 8x8 matrices, when the buffer's swizzle keeps each matrix row in one
/// 16-byte piece; otherwise LocalLoadOpConversion reads it.
struct LocalLoadToDotOperand : OpConversionPattern<LocalLoadOp> {
  LocalLoadToDotOperand(const LLVMTypeConverter &converter,
                        MLIRContext *context)
      : OpConversionPattern(converter, context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(LocalLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    auto operand = dyn_cast<DotOperandEncodingAttr>(type.getEncoding());
    auto mma = operand ? dyn_cast<MmaEncodingAttr>(operand.getParent())
                       : MmaEncodingAttr();
    Type element = type.getElementType();
    if (!mma || mma.getVersionMajor() != 2 || operand.getKWidth() != 2 ||
        !(element.isF16() || element.isBF16()) || type.getRank() != 2)
      return rewriter.notifyMatchFailure(op, "not a 16-bit mma v2 operand");
    auto module = op->getParentOfType<ModuleOp>();
    unsigned threadsPerWarp = TileGPUDialect::getThreadsPerWarp(module);
    if (threadsPerWarp != 32)
      return rewriter.notifyMatchFailure(op, "ldmatrix needs 32 lanes");
    SwizzledTile tile = getTile(op.getSrc().getType());
    // ldmatrix reads pairs along K (dim 1 of A, dim 0 of B): along a stored
    // row unless K is the strided dim (then .trans).
    unsigned kDim = operand.getOpIdx() == 0 ? 1 : 0;
    bool trans = kDim != tile.colDim;
    LinearLayout layout = getLinearLayout(type);
    if (!matchesLdmatrixLanes(layout, tile, trans))
      return rewriter.notifyMatchFailure(op, "layout is not ldmatrix's");

    Location loc = op.getLoc();
    ThreadId thread = getThreadId(rewriter, loc, threadsPerWarp);
    rewriter.replaceOpWithMultiple(
        op, {emitLdmatrixLoads(rewriter, loc, adaptor.getSrc(), tile, layout,
                               trans, element, thread)});
    return success();
  }
};

struct AsyncCopyOpConversion : OpConversionPattern<AsyncCopyGlobalToLocalOp> {
  AsyncCopyOpConversion(const LLVMTypeConverter &converter,
                        MLIRContext *context, VectorWidthQuery vectorWidth)
      : OpConversionPattern(converter, context),
        vectorWidth(std::move(vectorWidth)) {}

  LogicalResult
  matchAndRewrite(AsyncCopyGlobalToLocalOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MemDescType type = op.getDst().getType();
    LinearLayout layout =
        getLinearLayout(cast<RankedTensorType>(op.getSrc().getType()));
    unsigned vec = asyncCopyWidth(op, vectorWidth);
    unsigned bytes = vec * elementBytes(type);
    if (bytes < 4)
      return rewriter.notifyMatchFailure(op, "cp.async moves at least 4 B");
    // .cg (L2 only) exists for 16 bytes alone.
    auto cache = bytes == 16 ? NVVM::LoadCacheModifierKind::CG
                             : NVVM::LoadCacheModifierKind::CA;
    ValueRange ptrs = adaptor.getSrc();
    ValueRange masks = adaptor.getMask();
    auto globalType = LLVM::LLVMPointerType::get(getContext(), 1);
    SmallVector<Value> addresses = groupAddresses(
        rewriter, loc, adaptor.getDst().front(), type, layout, vec, op);
    for (auto [group, address] : llvm::enumerate(addresses)) {
      Value src = ptrs[group * vec];
      if (src.getType() != globalType)
        src = LLVM::AddrSpaceCastOp::create(rewriter, loc, globalType, src);
      // Masked-off vectors read nothing and zero-fill the destination.
      Value srcSize;
      if (!masks.empty())
        srcSize = arith::SelectOp::create(rewriter, loc, masks[group * vec],
                                          i32Const(rewriter, loc, bytes),
                                          i32Const(rewriter, loc, 0));
      NVVM::CpAsyncOp::create(rewriter, loc, address, src, bytes, cache,
                              srcSize);
    }
    rewriter.eraseOp(op);
    return success();
  }

  VectorWidthQuery vectorWidth;
};

struct AsyncCommitGroupOpConversion : OpConversionPattern<AsyncCommitGroupOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AsyncCommitGroupOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::CpAsyncCommitGroupOp>(op);
    return success();
  }
};

struct AsyncWaitOpConversion : OpConversionPattern<AsyncWaitOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AsyncWaitOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::CpAsyncWaitGroupOp>(op, op.getNum());
    return success();
  }
};

struct BarrierOpConversion : OpConversionPattern<BarrierOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(BarrierOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    emitBarrier(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

/// A swizzle whose XOR moves chunks past the end of a row would place
/// elements of one row in the next.
static LogicalResult verifySwizzleFits(Operation *op, MemDescType type) {
  SwizzledTile tile = getTile(type);
  int64_t span = int64_t(tile.vec) * tile.maxPhase;
  if (tile.maxPhase == 1 || tile.blockCols % span == 0)
    return success();
  return op->emitOpError() << "swizzles chunks of " << tile.vec
                           << " elements over " << tile.maxPhase
                           << " phases, which rows of " << tile.blockCols
                           << " elements of " << type << " do not hold";
}

/// A buffer's place is there (checkSharedMemoryPlaced saw to that); its
/// vectors and ldmatrix rows need it 16-byte aligned.
static LogicalResult verifyOffset(LocalAllocOp op) {
  int64_t offset = *getSharedMemoryOffset(op);
  if (offset >= 0 && offset % kMaxVectorBytes == 0)
    return success();
  return op.emitOpError() << "needs a '" << op.getOffsetAttrName()
                          << "' that is a non-negative integer multiple of "
                          << kMaxVectorBytes
                          << " (bytes; its vectors are aligned), got "
                          << op->getAttr(op.getOffsetAttrName());
}

static LogicalResult verifyAsyncCopyWidth(AsyncCopyGlobalToLocalOp op,
                                          const VectorWidthQuery &vectorWidth) {
  MemDescType type = op.getDst().getType();
  unsigned bytes = asyncCopyWidth(op, vectorWidth) * elementBytes(type);
  if (bytes >= 4)
    return success();
  return op.emitOpError()
         << "copies " << bytes << " B per cp.async from "
         << op.getSrc().getType()
         << " (the layout's contiguous registers, the pointers' contiguity "
            "and alignment, the mask's uniformity and the swizzle chunk "
            "allow no more); cp.async moves 4, 8 or 16 B";
}

LogicalResult tilec::lowering::verifySharedMemoryBuffers(
    ModuleOp module, const VectorWidthQuery &vectorWidth) {
  WalkResult result = module.walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      if (auto buffer = dyn_cast<MemDescType>(type))
        if (failed(verifySwizzleFits(op, buffer)))
          return WalkResult::interrupt();
    if (auto alloc = dyn_cast<LocalAllocOp>(op))
      if (failed(verifyOffset(alloc)))
        return WalkResult::interrupt();
    if (auto copy = dyn_cast<AsyncCopyGlobalToLocalOp>(op))
      if (failed(verifyAsyncCopyWidth(copy, vectorWidth)))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

void tilec::lowering::populateSharedMemoryBufferOpToLLVMPatterns(
    const LLVMTypeConverter &converter, RewritePatternSet &patterns,
    VectorWidthQuery vectorWidth) {
  MLIRContext *context = patterns.getContext();
  patterns.add<LocalAllocOpConversion>(converter, context);
  patterns.add<AsyncCopyOpConversion>(converter, context,
                                      std::move(vectorWidth));
  patterns.add<LocalDeallocOpConversion, MemDescIndexOpConversion,
               LocalStoreOpConversion, LocalLoadOpConversion,
               LocalLoadToDotOperand, AsyncCommitGroupOpConversion,
               AsyncWaitOpConversion, BarrierOpConversion>(converter, context);
}
