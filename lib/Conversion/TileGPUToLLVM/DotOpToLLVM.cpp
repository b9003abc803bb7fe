//===- DotOpToLLVM.cpp - tile.dot on CUDA cores ---------------------------===//
//
// The FMA path: with a and b in dot_op layouts of the accumulator's blocked
// layout, each thread already holds the rows of a and the columns of b its
// accumulator elements need, so d[m, n] = c[m, n] + sum_k a[m, k] * b[k, n]
// is a chain of fused multiply-adds in registers. Tensor-core layouts (mma)
// lower elsewhere.
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

/// Tensor cores: mma.sync.m16n8k16 with a, b as the PTX fragments (the
/// dot_op<mma, kWidth = 2> layouts hold them in fragment order: registers
/// a0..a7 / b0..b3 of one instruction are consecutive, then repeats) and the
/// accumulator as its C/D fragment. Each instruction tile is found by
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
    if (mma.getVersionMajor() != 2 || !cType.getElementType().isF32() ||
        !(aType.getElementType().isF16() || aType.getElementType().isBF16()))
      return op.emitError("tensor-core dot lowers mma v2 with f16/bf16 "
                          "inputs and an f32 accumulator only");
    Location loc = op.getLoc();
    LinearLayout a = getLinearLayout(aType), b = getLinearLayout(bType);
    LinearLayout c = getLinearLayout(cType);
    if (a.getNumRegisters() != adaptor.getA().size() ||
        b.getNumRegisters() != adaptor.getB().size() ||
        c.getNumRegisters() != adaptor.getC().size())
      return op.emitError("register counts do not match the layouts");
    auto aIndex = indexRegisters(a), bIndex = indexRegisters(b),
         cIndex = indexRegisters(c);
    unsigned wm = mma.getWarpsPerCTA()[0], wn = mma.getWarpsPerCTA()[1];
    int64_t m = cType.getDimSize(0), n = cType.getDimSize(1),
            k = aType.getDimSize(1);
    int64_t stepM = 16 * wm, stepN = 8 * wn;
    Type elem = aType.getElementType();
    auto pairType = VectorType::get({2}, elem);
    auto packPair = [&](Value lo, Value hi) -> Value {
      // Operands that ldmatrix loaded arrive as the two halves of one
      // register: reuse it rather than rebuild it.
      auto loExtract = lo.getDefiningOp<LLVM::ExtractElementOp>();
      auto hiExtract = hi.getDefiningOp<LLVM::ExtractElementOp>();
      APInt loIndex, hiIndex;
      if (loExtract && hiExtract &&
          loExtract.getVector() == hiExtract.getVector() &&
          loExtract.getVector().getType() == pairType &&
          matchPattern(loExtract.getPosition(), m_ConstantInt(&loIndex)) &&
          matchPattern(hiExtract.getPosition(), m_ConstantInt(&hiIndex)) &&
          loIndex == 0 && hiIndex == 1)
        return loExtract.getVector();
      Value vec = LLVM::UndefOp::create(rewriter, loc, pairType);
      vec = LLVM::InsertElementOp::create(rewriter, loc, vec, lo,
                                          i32Const(rewriter, loc, 0));
      return LLVM::InsertElementOp::create(rewriter, loc, vec, hi,
                                           i32Const(rewriter, loc, 1));
    };
    // f16 pairs go in as vector<2xf16>; bf16 pairs as the i32 that holds
    // them, with the PTX type named (NVVM cannot infer bf16 from i32).
    bool isBF16 = elem.isBF16();
    std::optional<std::array<NVVM::MMATypes, 2>> multiplicandTypes;
    if (isBF16)
      multiplicandTypes = {NVVM::MMATypes::bf16, NVVM::MMATypes::bf16};
    auto asOperand = [&](Value pair) -> Value {
      if (!isBF16)
        return pair;
      return LLVM::BitcastOp::create(rewriter, loc, rewriter.getI32Type(),
                                     pair);
    };
    // The registers of one instruction's fragment at a tile origin.
    auto fragment = [&](const LinearLayout &layout, const auto &index,
                        unsigned count, int64_t row0, int64_t col0,
                        SmallVectorImpl<unsigned> &regs) -> LogicalResult {
      for (unsigned i = 0; i < count; ++i) {
        LinearLayout::Basis coords = layout.registerCoords(i);
        auto it = index.find({coords[0] + row0, coords[1] + col0});
        if (it == index.end())
          return failure();
        regs.push_back(it->second);
      }
      return success();
    };
    ValueRange aRegs = adaptor.getA(), bRegs = adaptor.getB();
    Registers acc(adaptor.getC().begin(), adaptor.getC().end());
    Type f32 = rewriter.getF32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(
        getContext(), SmallVector<Type>(4, f32));
    // Tiles beyond the tensor (small shapes) wrap onto the same registers:
    // only tiles inside it are issued.
    for (int64_t m0 = 0; m0 < std::max<int64_t>(m, 16); m0 += stepM)
      for (int64_t n0 = 0; n0 < std::max<int64_t>(n, 8); n0 += stepN) {
        SmallVector<unsigned> cFrag;
        if (failed(fragment(c, cIndex, 4, m0, n0, cFrag)))
          return op.emitError("accumulator fragment not found at (")
                 << m0 << ", " << n0 << ")";
        SmallVector<Value> cVals;
        for (unsigned reg : cFrag)
          cVals.push_back(acc[reg]);
        for (int64_t k0 = 0; k0 < k; k0 += 16) {
          SmallVector<unsigned> aFrag, bFrag;
          if (failed(fragment(a, aIndex, 8, m0, k0, aFrag)) ||
              failed(fragment(b, bIndex, 4, k0, n0, bFrag)))
            return op.emitError("operand fragment not found at k = ") << k0;
          SmallVector<Value> aOps, bOps;
          for (unsigned i = 0; i < 8; i += 2)
            aOps.push_back(
                asOperand(packPair(aRegs[aFrag[i]], aRegs[aFrag[i + 1]])));
          for (unsigned i = 0; i < 4; i += 2)
            bOps.push_back(
                asOperand(packPair(bRegs[bFrag[i]], bRegs[bFrag[i + 1]])));
          Value result = NVVM::MmaOp::create(
              rewriter, loc, resultType, aOps, bOps, cVals,
              ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
              multiplicandTypes,
              std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                             NVVM::MMALayout::col});
          for (unsigned i = 0; i < 4; ++i)
            cVals[i] = LLVM::ExtractValueOp::create(rewriter, loc, result, i);
        }
        for (auto [i, reg] : llvm::enumerate(cFrag))
          acc[reg] = cVals[i];
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
