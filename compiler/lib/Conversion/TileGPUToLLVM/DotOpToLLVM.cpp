//===- DotOpToLLVM.cpp - tile.dot on CUDA cores and tensor cores ----------===//
//
// The FMA path: with a and b in dot_op layouts of the accumulator's blocked
// layout, each thread already holds the rows of a and the columns of b its
// accumulator elements need, so d[m, n] = c[m, n] + sum_k a[m, k] * b[k, n]
// is a chain of fused multiply-adds in registers. With an mma accumulator,
// the operands are the mma.sync fragments and each 16x8xk tile is one
// instruction.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Matchers.h"


using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;
using namespace tilec::lowering;

namespace {

/// Register index of each (static) coordinate pair of an operand layout.
llvm::DenseMap<std::pair<int64_t, int64_t>, unsigned>
indexRegisters(const LinearLayout &layout) {
  llvm::DenseMap<std::pair<int64_t, int64_t>, unsigned> index;
  for (unsigned reg = 0; reg < layout.getNumRegisters(); ++reg) {
    LinearLayout::Basis coords = layout.registerCoords(reg);
    index.try_emplace({coords[0], coords[1]}, reg);
  }
  return index;
}

struct DotOpConversion : OpConversionPattern<tile::DotOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(tile::DotOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto aType = cast<RankedTensorType>(op.getA().getType());
    auto bType = cast<RankedTensorType>(op.getB().getType());
    auto cType = cast<RankedTensorType>(op.getC().getType());
    auto aLayout = dyn_cast<DotOperandEncodingAttr>(aType.getEncoding());
    auto bLayout = dyn_cast<DotOperandEncodingAttr>(bType.getEncoding());
    if (!aLayout || !bLayout || !isa<BlockedEncodingAttr>(cType.getEncoding()))
      return rewriter.notifyMatchFailure(op, "not the FMA layouts");
    if (aLayout.getParent() != cType.getEncoding() ||
        bLayout.getParent() != cType.getEncoding())
      return op.emitError("dot operand layouts must have the accumulator's "
                          "layout as parent");
    Location loc = op.getLoc();
    LinearLayout a = getLinearLayout(aType), b = getLinearLayout(bType);
    LinearLayout c = getLinearLayout(cType);
    // Each operand must give a thread exactly the rows (columns) of its
    // accumulator elements: its lane and warp bits move along the
    // accumulator's M (N) dimension only.
    auto sameThreadsAlong = [](const LinearLayout &operand,
                               const LinearLayout &acc, unsigned keptDim) {
      auto matches = [&](ArrayRef<LinearLayout::Basis> ops,
                         ArrayRef<LinearLayout::Basis> accs) {
        if (ops.size() != accs.size())
          return false;
        for (auto [o, c] : llvm::zip(ops, accs))
          if (o[keptDim] != c[keptDim] || o[1 - keptDim] != 0)
            return false;
        return true;
      };
      return matches(operand.getLaneBases(), acc.getLaneBases()) &&
             matches(operand.getWarpBases(), acc.getWarpBases());
    };
    if (!sameThreadsAlong(a, c, 0) || !sameThreadsAlong(b, c, 1))
      return op.emitError("dot operand layouts do not match the "
                          "accumulator's threads");
    auto aIndex = indexRegisters(a), bIndex = indexRegisters(b);
    int64_t k = aType.getDimSize(1);

    Type accType = cType.getElementType();
    // Inputs narrower than the accumulator are widened once per register.
    auto widen = [&](ValueRange regs) {
      Registers result;
      for (Value value : regs) {
        if (value.getType() == accType)
          result.push_back(value);
        else if (isa<FloatType>(accType))
          result.push_back(arith::ExtFOp::create(rewriter, loc, accType, value));
        else
          result.push_back(
              arith::ExtSIOp::create(rewriter, loc, accType, value));
      }
      return result;
    };
    Registers aRegs = widen(adaptor.getA()), bRegs = widen(adaptor.getB());
    if (aRegs.size() != a.getNumRegisters() ||
        bRegs.size() != b.getNumRegisters() ||
        adaptor.getC().size() != c.getNumRegisters())
      return op.emitError() << "register counts do not match the layouts: a "
                            << aRegs.size() << "/" << a.getNumRegisters()
                            << ", b " << bRegs.size() << "/"
                            << b.getNumRegisters() << ", c "
                            << adaptor.getC().size() << "/"
                            << c.getNumRegisters();
    Registers results;
    for (auto [reg, acc] : llvm::enumerate(adaptor.getC())) {
      LinearLayout::Basis coords = c.registerCoords(reg);
      Value sum = acc;
      for (int64_t kk = 0; kk < k; ++kk) {
        auto aIt = aIndex.find({coords[0], kk});
        auto bIt = bIndex.find({kk, coords[1]});
        if (aIt == aIndex.end() || bIt == bIndex.end())
          return op.emitError("dot operand layout does not hold the elements "
                              "its accumulator needs");
        Value x = aRegs[aIt->second], y = bRegs[bIt->second];
        if (isa<FloatType>(accType))
          sum = LLVM::FMAOp::create(rewriter, loc, x, y, sum);
        else
          sum = arith::AddIOp::create(
              rewriter, loc, sum, arith::MulIOp::create(rewriter, loc, x, y));
      }
      results.push_back(sum);
    }
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

/// The mma.sync an operand type runs on, and how its fragment registers
/// become the instruction's 32-bit operands: m16n8k16 for f16/bf16 (two K
/// elements per operand, the lower K in the low half), m16n8k8 for tf32 (one).
struct MmaInstruction {
  int64_t k;
  unsigned elementsPerOperand;
  std::optional<std::array<NVVM::MMATypes, 2>> multiplicandTypes;

  static FailureOr<MmaInstruction> get(Type elem) {
    if (elem.isF16())
      return MmaInstruction{16, 2, std::nullopt};
    if (elem.isBF16())
      // bf16 pairs go in as the i32 that holds them, with the PTX type named
      // (NVVM cannot infer bf16 from i32).
      return MmaInstruction{
          16, 2, {{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16}}};
    if (elem.isF32())
      return MmaInstruction{
          8, 1, {{NVVM::MMATypes::tf32, NVVM::MMATypes::tf32}}};
    return failure();
  }
  /// Per-lane elements of one instruction's A (16 x k) and B (k x 8).
  unsigned aElements() const { return 16 * k / 32; }
  unsigned bElements() const { return 8 * k / 32; }
};

/// An f32 operand rounded to tf32. mma.sync reads a .tf32 operand from the
/// upper 19 bits of its register (sign, exponent, 10 mantissa bits) and does
/// not round what lies below, so raw f32 bits would be truncated: every
/// product shrinks in magnitude (by up to 2^-9 relative), and where products
/// share a sign the error grows linearly with K. cvt.rna rounds to nearest
/// (ties away from zero, as Triton does): at most 2^-11 per operand, of
/// either sign, so errors partly cancel along K.
Value roundToTf32(OpBuilder &builder, Location loc, Value value) {
  return NVVM::ConvertFloatToTF32Op::create(builder, loc, builder.getI32Type(),
                                            value, NVVM::FPRoundingMode::RNA);
}

/// The pair (lo, hi) of 16-bit elements as one mma.sync operand.
Value packPair(OpBuilder &builder, Location loc, Value lo, Value hi) {
  auto pairType = VectorType::get({2}, lo.getType());
  // Operands that ldmatrix loaded arrive as the two halves of one register:
  // reuse it rather than rebuild it.
  auto loExtract = lo.getDefiningOp<LLVM::ExtractElementOp>();
  auto hiExtract = hi.getDefiningOp<LLVM::ExtractElementOp>();
  APInt loIndex, hiIndex;
  Value pair;
  if (loExtract && hiExtract &&
      loExtract.getVector() == hiExtract.getVector() &&
      loExtract.getVector().getType() == pairType &&
      matchPattern(loExtract.getPosition(), m_ConstantInt(&loIndex)) &&
      matchPattern(hiExtract.getPosition(), m_ConstantInt(&hiIndex)) &&
      loIndex == 0 && hiIndex == 1) {
    pair = loExtract.getVector();
  } else {
    pair = LLVM::UndefOp::create(builder, loc, pairType);
    pair = LLVM::InsertElementOp::create(builder, loc, pair, lo,
                                         i32Const(builder, loc, 0));
    pair = LLVM::InsertElementOp::create(builder, loc, pair, hi,
                                         i32Const(builder, loc, 1));
  }
  if (lo.getType().isBF16())
    return LLVM::BitcastOp::create(builder, loc, builder.getI32Type(), pair);
  return pair;
}

/// The registers of one instruction's fragment at tile origin (row0, col0):
/// the instruction's i-th element is register i of the first tile, moved.
LogicalResult
findFragment(const LinearLayout &layout,
             const llvm::DenseMap<std::pair<int64_t, int64_t>, unsigned> &index,
             unsigned count, int64_t row0, int64_t col0,
             SmallVectorImpl<unsigned> &regs) {
  for (unsigned i = 0; i < count; ++i) {
    LinearLayout::Basis coords = layout.registerCoords(i);
    auto it = index.find({coords[0] + row0, coords[1] + col0});
    if (it == index.end())
      return failure();
    regs.push_back(it->second);
  }
  return success();
}

/// Tensor cores: mma.sync m16n8k16 (f16/bf16) or m16n8k8 (tf32) with a, b as
/// the PTX fragments (the dot_op<mma, kWidth> layouts hold them in fragment
/// order: the registers of one instruction are consecutive, then repeats)
/// and the accumulator as its C/D fragment. Each instruction tile is found by
/// coordinates, so any repeat order works.
struct MmaDotOpConversion : OpConversionPattern<tile::DotOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(tile::DotOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto aType = cast<RankedTensorType>(op.getA().getType());
    auto bType = cast<RankedTensorType>(op.getB().getType());
    auto cType = cast<RankedTensorType>(op.getC().getType());
    auto mma = dyn_cast<MmaEncodingAttr>(cType.getEncoding());
    if (!mma)
      return rewriter.notifyMatchFailure(op, "not an mma accumulator");
    FailureOr<MmaInstruction> instr =
        MmaInstruction::get(aType.getElementType());
    bool tf32 = aType.getElementType().isF32();
    if (mma.getVersionMajor() != 2 || !cType.getElementType().isF32() ||
        failed(instr) ||
        (tf32 && op.getInputPrecision() != tile::InputPrecision::TF32))
      return op.emitError("tensor-core dot lowers mma v2 with f16/bf16 or "
                          "tf32 inputs and an f32 accumulator only");
    LinearLayout a = getLinearLayout(aType), b = getLinearLayout(bType);
    LinearLayout c = getLinearLayout(cType);
    if (a.getNumRegisters() != adaptor.getA().size() ||
        b.getNumRegisters() != adaptor.getB().size() ||
        c.getNumRegisters() != adaptor.getC().size())
      return op.emitError("register counts do not match the layouts");
    Location loc = op.getLoc();
    ValueRange aRegs = adaptor.getA(), bRegs = adaptor.getB();
    // The operands of one fragment, in instruction order. tf32 registers are
    // rounded where first used, once each: a register feeds several tiles.
    llvm::DenseMap<Value, Value> rounded;
    auto operands = [&](ValueRange regs, ArrayRef<unsigned> frag) {
      SmallVector<Value> result;
      for (unsigned i = 0; i < frag.size(); i += instr->elementsPerOperand) {
        Value reg = regs[frag[i]];
        if (!tf32) {
          result.push_back(packPair(rewriter, loc, reg, regs[frag[i + 1]]));
          continue;
        }
        Value &word = rounded[reg];
        if (!word)
          word = roundToTf32(rewriter, loc, reg);
        result.push_back(word);
      }
      return result;
    };
    auto aIndex = indexRegisters(a), bIndex = indexRegisters(b),
         cIndex = indexRegisters(c);
    int64_t m = cType.getDimSize(0), n = cType.getDimSize(1),
            k = aType.getDimSize(1);
    int64_t stepM = 16 * mma.getWarpsPerCTA()[0],
            stepN = 8 * mma.getWarpsPerCTA()[1];
    Registers acc(adaptor.getC().begin(), adaptor.getC().end());
    auto resultType = LLVM::LLVMStructType::getLiteral(
        getContext(), SmallVector<Type>(4, rewriter.getF32Type()));
    // Tiles beyond the tensor (small shapes) wrap onto the same registers:
    // only tiles inside it are issued.
    for (int64_t m0 = 0; m0 < std::max<int64_t>(m, 16); m0 += stepM)
      for (int64_t n0 = 0; n0 < std::max<int64_t>(n, 8); n0 += stepN)
        for (int64_t k0 = 0; k0 < k; k0 += instr->k) {
          SmallVector<unsigned> aFrag, bFrag, cFrag;
          if (failed(findFragment(c, cIndex, 4, m0, n0, cFrag)))
            return op.emitError("accumulator fragment not found at (")
                   << m0 << ", " << n0 << ")";
          if (failed(
                  findFragment(a, aIndex, instr->aElements(), m0, k0, aFrag)) ||
              failed(
                  findFragment(b, bIndex, instr->bElements(), k0, n0, bFrag)))
            return op.emitError("operand fragment not found at k = ") << k0;
          SmallVector<Value> cVals;
          for (unsigned reg : cFrag)
            cVals.push_back(acc[reg]);
          Value result = NVVM::MmaOp::create(
              rewriter, loc, resultType, operands(aRegs, aFrag),
              operands(bRegs, bFrag), cVals, ArrayRef<int64_t>{16, 8, instr->k},
              std::nullopt, std::nullopt, instr->multiplicandTypes,
              std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                             NVVM::MMALayout::col});
          for (auto [i, reg] : llvm::enumerate(cFrag))
            acc[reg] = LLVM::ExtractValueOp::create(rewriter, loc, result, i);
        }
    rewriter.replaceOpWithMultiple(op, {acc});
    return success();
  }
};

} // namespace

void tilec::lowering::populateDotOpToLLVMPatterns(
    const LLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<DotOpConversion, MmaDotOpConversion>(
      converter, patterns.getContext(), /*benefit=*/2);
}
