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

} // namespace

void tilec::lowering::populateDotOpToLLVMPatterns(
    const LLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<DotOpConversion>(converter, patterns.getContext(),
                                /*benefit=*/2);
}
