//===- DotOperandToLLVM.cpp - tensor-core operands through ldmatrix ------===//
//
// convert_layout from a blocked layout to a dot_op<mma v2> operand of 16-bit
// elements. The generic lowering (SharedMemoryOpToLLVM.cpp) writes and reads
// element by element; here the tile goes to shared memory in 16-byte vectors
// with an XOR swizzle and comes back with ldmatrix, one instruction per four
// 8x8 matrices, the way the tensor-core fragments expect it. The swizzle
// spreads the eight rows one ldmatrix reads over all 32 banks.
//
// Nothing about the operand order is assumed: the dot_op layout is checked
// against the lane pattern ldmatrix produces, and the register order comes
// from the layout's own bases. When a check fails the generic pattern runs.
// The read half, emitLdmatrixLoads, also serves local_load from a
// #tilegpu.swizzled_shared buffer (SharedMemoryBufferOpToLLVM.cpp).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;
using namespace tilec::lowering;

/// ldmatrix reads rows of 8 16-bit elements (16 bytes).
static constexpr unsigned kLdmatrixRow = 8;

SwizzledTile SwizzledTile::get(SharedEncodingInterface encoding,
                               ArrayRef<int64_t> shape,
                               unsigned elementBytes) {
  unsigned leading = shape.size() - 2;
  SwizzledTile tile;
  tile.colDim = leading + encoding.getOrder()[0];
  tile.rowDim = leading + encoding.getOrder()[1];
  tile.rows = shape[tile.rowDim];
  tile.cols = shape[tile.colDim];
  tile.blockCols = tile.cols;
  if (auto swizzled = dyn_cast<SwizzledSharedEncodingAttr>(encoding)) {
    tile.vec = swizzled.getVec();
    tile.perPhase = swizzled.getPerPhase();
    tile.maxPhase = swizzled.getMaxPhase();
    return tile;
  }
  // wgmma's swizzles: 16-byte chunks, the phase advancing once per 128
  // bytes of rows, as many phases as the swizzle width has chunks.
  auto nvmma = cast<NvmmaSharedEncodingAttr>(encoding);
  unsigned width = nvmma.getSwizzlingByteWidth();
  tile.vec = 16 / elementBytes;
  tile.perPhase = 128 / width;
  tile.maxPhase = width / 16;
  tile.blockCols = std::min<int64_t>(tile.cols, width / elementBytes);
  return tile;
}

Value SwizzledTile::offset(OpBuilder &builder, Location loc, Value row,
                           Value col) const {
  auto c = [&](int64_t v) { return i32Const(builder, loc, v); };
  Value blockStart;
  if (blockCols < cols) {
    Value block = arith::DivUIOp::create(builder, loc, col, c(blockCols));
    blockStart = arith::MulIOp::create(builder, loc, block, c(rows * blockCols));
    col = arith::RemUIOp::create(builder, loc, col, c(blockCols));
  }
  unsigned vecLog = llvm::Log2_32(vec);
  Value chunk = arith::ShRUIOp::create(builder, loc, col, c(vecLog));
  if (maxPhase > 1) {
    Value phase = row;
    if (perPhase > 1)
      phase = arith::ShRUIOp::create(builder, loc, phase,
                                     c(llvm::Log2_32(perPhase)));
    phase = arith::AndIOp::create(builder, loc, phase, c(maxPhase - 1));
    chunk = arith::XOrIOp::create(builder, loc, chunk, phase);
  }
  Value rowStart = arith::MulIOp::create(builder, loc, row, c(blockCols));
  Value within = arith::AndIOp::create(builder, loc, col, c(vec - 1));
  Value chunkStart = arith::ShLIOp::create(builder, loc, chunk, c(vecLog));
  Value offset = arith::AddIOp::create(
      builder, loc, rowStart,
      arith::OrIOp::create(builder, loc, chunkStart, within));
  return blockStart ? arith::AddIOp::create(builder, loc, blockStart, offset)
                          .getResult()
                    : offset;
}

int64_t SwizzledTile::offset(int64_t row, int64_t col) const {
  int64_t blockStart = col / blockCols * rows * blockCols;
  col %= blockCols;
  int64_t chunk = col / vec;
  if (maxPhase > 1)
    chunk ^= row / perPhase % maxPhase;
  return blockStart + row * blockCols + chunk * vec + col % vec;
}

int64_t SwizzledTile::contiguousElements() const {
  return maxPhase > 1 ? vec : blockCols & -blockCols;
}

static bool isUnit(const LinearLayout::Basis &basis, unsigned dim,
                   int64_t value) {
  for (unsigned d = 0; d < basis.size(); ++d)
    if (basis[d] != (d == dim ? value : 0))
      return false;
  return true;
}

/// The lane pattern of ldmatrix on matrices whose stored rows run along
/// `rowDim`: lane l holds stored (row l/4, cols 2(l%4), 2(l%4)+1), or with
/// .trans stored (rows 2(l%4), 2(l%4)+1, col l/4). Register bit 0 is the
/// second element of the pair.
bool tilec::lowering::matchesLdmatrixLanes(const LinearLayout &layout,
                                           const SwizzledTile &tile,
                                           bool trans) {
  // Each matrix row must be one aligned, contiguous 16-byte piece of a
  // stored row: whole chunks, or no swizzle at all.
  if (tile.cols % kLdmatrixRow != 0 ||
      (tile.vec % kLdmatrixRow != 0 && tile.maxPhase > 1))
    return false;
  ArrayRef<LinearLayout::Basis> lanes = layout.getLaneBases();
  ArrayRef<LinearLayout::Basis> regs = layout.getRegisterBases();
  if (lanes.size() != 5 || regs.empty())
    return false;
  unsigned pairDim = trans ? tile.rowDim : tile.colDim;
  unsigned groupDim = trans ? tile.colDim : tile.rowDim;
  if (!isUnit(regs[0], pairDim, 1) || !isUnit(lanes[0], pairDim, 2) ||
      !isUnit(lanes[1], pairDim, 4))
    return false;
  for (unsigned bit = 2; bit < 5; ++bit)
    if (!isUnit(lanes[bit], groupDim, 1 << (bit - 2)))
      return false;
  // Every other basis moves by whole 8x8 matrices along the contiguous dim.
  for (ArrayRef<LinearLayout::Basis> bases :
       {regs.drop_front(), layout.getWarpBases()})
    for (const LinearLayout::Basis &basis : bases)
      if (basis[tile.colDim] % kLdmatrixRow != 0)
        return false;
  return true;
}

unsigned tilec::lowering::contiguousRegisters(const LinearLayout &layout,
                                              unsigned colDim,
                                              unsigned maxVec) {
  ArrayRef<LinearLayout::Basis> regs = layout.getRegisterBases();
  unsigned log = 0;
  while (log < regs.size() && (2u << log) <= maxVec &&
         isUnit(regs[log], colDim, 1 << log))
    ++log;
  for (; log > 0; --log) {
    int64_t vec = 1 << log;
    bool aligned = true;
    for (ArrayRef<LinearLayout::Basis> bases :
         {regs.drop_front(log), layout.getLaneBases(), layout.getWarpBases()})
      for (const LinearLayout::Basis &basis : bases)
        aligned &= basis[colDim] % vec == 0;
    if (aligned)
      break;
  }
  return 1u << log;
}

unsigned tilec::lowering::getThreadDependentRegisters(
    const LinearLayout &layout, unsigned vec,
    function_ref<int64_t(ArrayRef<int64_t>)> offsetOf) {
  int64_t threadBits = 0;
  for (ArrayRef<LinearLayout::Basis> bases :
       {layout.getLaneBases(), layout.getWarpBases()})
    for (const LinearLayout::Basis &basis : bases)
      threadBits |= offsetOf(basis);
  ArrayRef<LinearLayout::Basis> regs = layout.getRegisterBases();
  unsigned mask = 0;
  for (bool grew = true; grew;) {
    grew = false;
    for (unsigned bit = llvm::Log2_32(vec); bit < regs.size(); ++bit) {
      int64_t bits = offsetOf(regs[bit]);
      if ((mask >> bit & 1) || (bits & threadBits) == 0)
        continue;
      mask |= 1u << bit;
      threadBits |= bits;
      grew = true;
    }
  }
  return mask;
}

/// The coordinates of the row start lane `thread.lane` gives ldmatrix: row
/// l%8 of matrix l/8, where matrix j holds the registers whose index has bits
/// 1 and 2 equal to j.
static SmallVector<Value> ldmatrixLaneCoords(OpBuilder &builder, Location loc,
                                             const SwizzledTile &tile,
                                             const LinearLayout &layout,
                                             unsigned numMatrices,
                                             ThreadId thread) {
  auto c = [&](int64_t v) { return i32Const(builder, loc, v); };
  ArrayRef<LinearLayout::Basis> regBases = layout.getRegisterBases();
  SmallVector<Value> warpCoords =
      emitThreadCoords(builder, loc, layout, ThreadId{c(0), thread.warp});
  Value laneRow = arith::AndIOp::create(builder, loc, thread.lane, c(7));
  SmallVector<Value> laneCoords(2, c(0));
  laneCoords[tile.rowDim] = laneRow;
  for (unsigned bit = 0; bit < llvm::Log2_32(numMatrices); ++bit) {
    Value selected = arith::AndIOp::create(
        builder, loc,
        arith::ShRUIOp::create(builder, loc, thread.lane, c(3 + bit)), c(1));
    for (unsigned d = 0; d < 2; ++d)
      if (int64_t step = regBases[bit + 1][d])
        laneCoords[d] = arith::AddIOp::create(
            builder, loc, laneCoords[d],
            arith::MulIOp::create(builder, loc, selected, c(step)));
  }
  SmallVector<Value> threadCoords(2);
  for (unsigned d = 0; d < 2; ++d)
    threadCoords[d] =
        warpCoords[d]
            ? arith::AddIOp::create(builder, loc, warpCoords[d], laneCoords[d])
                  .getResult()
            : laneCoords[d];
  return threadCoords;
}

Registers tilec::lowering::emitLdmatrixLoads(
    OpBuilder &builder, Location loc, Value base, const SwizzledTile &tile,
    const LinearLayout &layout, bool trans, Type element, ThreadId thread) {
  MLIRContext *context = builder.getContext();
  auto c = [&](int64_t v) { return i32Const(builder, loc, v); };
  auto add = [&](Value a, int64_t b) -> Value {
    return b == 0 ? a : arith::AddIOp::create(builder, loc, a, c(b));
  };
  unsigned numMatrices = std::min<unsigned>(4, layout.getNumRegisters() / 2);
  SmallVector<Value> threadCoords =
      ldmatrixLaneCoords(builder, loc, tile, layout, numMatrices, thread);
  Type i32 = builder.getI32Type();
  Type resultType = numMatrices == 1
                        ? i32
                        : LLVM::LLVMStructType::getLiteral(
                              context, SmallVector<Type>(numMatrices, i32));
  auto pairType = VectorType::get({2}, element);
  Registers results(layout.getNumRegisters());
  for (unsigned first = 0; first < layout.getNumRegisters();
       first += 2 * numMatrices) {
    LinearLayout::Basis origin = layout.registerCoords(first);
    Value offset = tile.offset(
        builder, loc, add(threadCoords[tile.rowDim], origin[tile.rowDim]),
        add(threadCoords[tile.colDim], origin[tile.colDim]));
    Value ptr = LLVM::GEPOp::create(builder, loc, base.getType(), element, base,
                                    ValueRange{offset});
    Value loaded = NVVM::LdMatrixOp::create(
        builder, loc, resultType, ptr, numMatrices,
        trans ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        NVVM::LdStMatrixShapeAttr::get(context, 8, 8),
        NVVM::LdStMatrixEltType::B16);
    for (unsigned j = 0; j < numMatrices; ++j) {
      Value word = numMatrices == 1
                       ? loaded
                       : LLVM::ExtractValueOp::create(builder, loc, loaded, j)
                             .getResult();
      Value pair = LLVM::BitcastOp::create(builder, loc, pairType, word);
      for (unsigned i = 0; i < 2; ++i)
        results[first + 2 * j + i] =
            LLVM::ExtractElementOp::create(builder, loc, pair, c(i));
    }
  }
  return results;
}

namespace {

struct ConvertLayoutToDotOperand
    : OpConversionPattern<tilegpu::ConvertLayoutOp> {
  ConvertLayoutToDotOperand(const LLVMTypeConverter &converter,
                            MLIRContext *context)
      : OpConversionPattern(converter, context, /*benefit=*/3) {}

  LogicalResult
  matchAndRewrite(tilegpu::ConvertLayoutOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    auto dstType = cast<RankedTensorType>(op.getType());
    auto blocked = dyn_cast<BlockedEncodingAttr>(srcType.getEncoding());
    auto operand = dyn_cast<DotOperandEncodingAttr>(dstType.getEncoding());
    if (!blocked || !operand || srcType.getRank() != 2)
      return rewriter.notifyMatchFailure(op, "not blocked -> dot_op (2-D)");
    auto mma = dyn_cast<MmaEncodingAttr>(operand.getParent());
    Type element = dstType.getElementType();
    if (!mma || mma.getVersionMajor() != 2 || operand.getKWidth() != 2 ||
        !(element.isF16() || element.isBF16()))
      return rewriter.notifyMatchFailure(op, "not a 16-bit mma v2 operand");

    if (dstType.getDimSize(blocked.getOrder()[0]) % kLdmatrixRow != 0)
      return rewriter.notifyMatchFailure(op, "rows narrower than 16 bytes");
    SwizzledTile tile = SwizzledTile::get(
        getOperandSharedEncoding(dstType, blocked.getOrder(), operand),
        dstType.getShape(), /*elementBytes=*/2);
    // K is dim 1 of A and dim 0 of B; ldmatrix reads pairs along K, which is
    // the stored row unless K is the strided dim (then .trans).
    unsigned kDim = operand.getOpIdx() == 0 ? 1 : 0;
    bool trans = kDim != tile.colDim;
    LinearLayout src = getLinearLayout(srcType);
    LinearLayout dst = getLinearLayout(dstType);
    // When every thread already holds its elements, the generic pattern
    // renames registers: no shared memory at all.
    if (succeeded(mapRegisters(src, dst, [](const LinearLayout::Basis &coords) {
          return coords;
        })))
      return rewriter.notifyMatchFailure(op, "a register renaming suffices");
    if (!matchesLdmatrixLanes(dst, tile, trans))
      return rewriter.notifyMatchFailure(op, "layout is not ldmatrix's");

    Location loc = op.getLoc();
    auto module = op->getParentOfType<ModuleOp>();
    unsigned threadsPerWarp = TileGPUDialect::getThreadsPerWarp(module);
    if (threadsPerWarp != 32)
      return rewriter.notifyMatchFailure(op, "ldmatrix needs 32 lanes");
    Value base = getScratchBase(rewriter, loc, op);
    ThreadId thread = getThreadId(rewriter, loc, threadsPerWarp);
    auto c = [&](int64_t v) { return i32Const(rewriter, loc, v); };
    auto add = [&](Value a, int64_t b) -> Value {
      return b == 0 ? a : arith::AddIOp::create(rewriter, loc, a, c(b));
    };
    auto address = [&](Value row, Value col) -> Value {
      return LLVM::GEPOp::create(
          rewriter, loc, base.getType(), element, base,
          ValueRange{tile.offset(rewriter, loc, row, col)});
    };

    // Store: each thread writes its runs of contiguous elements as vectors
    // (tilegpu-insert-barriers has fenced earlier users of these bytes).
    ValueRange srcRegs = adaptor.getSrc();
    SmallVector<Value> srcThread = emitThreadCoords(rewriter, loc, src, thread);
    unsigned vec = contiguousRegisters(src, tile.colDim, tile.vec);
    auto vecType = VectorType::get({vec}, element);
    for (unsigned first = 0; first < srcRegs.size(); first += vec) {
      LinearLayout::Basis coords = src.registerCoords(first);
      Value row = add(srcThread[tile.rowDim] ? srcThread[tile.rowDim] : c(0),
                      coords[tile.rowDim]);
      Value col = add(srcThread[tile.colDim] ? srcThread[tile.colDim] : c(0),
                      coords[tile.colDim]);
      Value stored = LLVM::UndefOp::create(rewriter, loc, vecType);
      for (unsigned i = 0; i < vec; ++i)
        stored = LLVM::InsertElementOp::create(rewriter, loc, stored,
                                               srcRegs[first + i], c(i));
      LLVM::StoreOp::create(rewriter, loc, stored, address(row, col), vec * 2);
    }
    emitBarrier(rewriter, loc);

    rewriter.replaceOpWithMultiple(
        op, {emitLdmatrixLoads(rewriter, loc, base, tile, dst, trans, element,
                               thread)});
    return success();
  }
};

} // namespace

void tilec::lowering::populateDotOperandToLLVMPatterns(
    const LLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ConvertLayoutToDotOperand>(converter, patterns.getContext());
}
