//===- TmaOpToLLVM.cpp - mbarriers and TMA copies as PTX ------------------===//
//
// Thread 0 of the CTA initializes, arms and invalidates the mbarriers and
// issues the TMA copies; every thread waits. Each op is one inline PTX
// statement predicated on the issuing thread (and the op's own predicate),
// so that no branch splits the warp around it.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "tilec/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Transforms/DialectConversion.h"

#include <string>

using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;

namespace tilec::lowering {
namespace {

/// Inline PTX without results, with side effects (kept and ordered).
void emitVoidAsm(OpBuilder &builder, Location loc, ValueRange operands,
                 StringRef text, StringRef constraints) {
  LLVM::InlineAsmOp::create(
      builder, loc, TypeRange{}, operands, text, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(builder.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
}

/// A shared-memory address as the 32-bit register PTX's shared::cta
/// operands take.
Value sharedAddress(OpBuilder &builder, Location loc, Value pointer) {
  return LLVM::PtrToIntOp::create(builder, loc, builder.getI32Type(), pointer);
}

/// True in thread 0 of the CTA, and where `pred` holds.
Value issuingThread(OpBuilder &builder, Location loc, Value pred = Value()) {
  Value tid = NVVM::ThreadIdXOp::create(builder, loc, builder.getI32Type());
  Value first = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                      tid, i32Const(builder, loc, 0));
  return pred ? arith::AndIOp::create(builder, loc, first, pred).getResult()
              : first;
}

struct InitBarrierOpConversion : OpConversionPattern<InitBarrierOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(InitBarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // The fences publish the initialization to the asynchronous proxy that
    // TMA completes the barrier from; other threads see it after the
    // barrier tilegpu-insert-barriers places before their first use.
    std::string text = "@$1 mbarrier.init.shared::cta.b64 [$0], " +
                       std::to_string(op.getCount()) +
                       ";\n\t@$1 fence.mbarrier_init.release.cluster;"
                       "\n\t@$1 fence.proxy.async.shared::cta;";
    emitVoidAsm(rewriter, loc,
                {sharedAddress(rewriter, loc, adaptor.getBarrier()),
                 issuingThread(rewriter, loc)},
                text, "r,b");
    rewriter.eraseOp(op);
    return success();
  }
};

struct InvalBarrierOpConversion : OpConversionPattern<InvalBarrierOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(InvalBarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    emitVoidAsm(rewriter, loc,
                {sharedAddress(rewriter, loc, adaptor.getBarrier()),
                 issuingThread(rewriter, loc)},
                "@$1 mbarrier.inval.shared::cta.b64 [$0];", "r,b");
    rewriter.eraseOp(op);
    return success();
  }
};

struct BarrierExpectOpConversion : OpConversionPattern<BarrierExpectOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(BarrierExpectOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    std::string text = "@$1 mbarrier.arrive.expect_tx.shared::cta.b64 _, "
                       "[$0], " +
                       std::to_string(op.getBytes()) + ";";
    emitVoidAsm(rewriter, loc,
                {sharedAddress(rewriter, loc, adaptor.getBarrier()),
                 issuingThread(rewriter, loc, adaptor.getPred())},
                text, "r,b");
    rewriter.eraseOp(op);
    return success();
  }
};

/// One box per swizzle span of a row: box i lands `rows * swizzle` bytes
/// after box i - 1 and starts `swizzle / element bytes` columns further
/// (the nvmma_shared layout's blocks).
struct AsyncTmaCopyOpConversion : OpConversionPattern<AsyncTmaCopyOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AsyncTmaCopyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MemDescType type = op.getDst().getType();
    auto encoding = cast<NvmmaSharedEncodingAttr>(type.getEncoding());
    int64_t rows = type.getShape()[0];
    int64_t elementBytes = type.getElementType().getIntOrFloatBitWidth() / 8;
    int64_t swizzle = encoding.getSwizzlingByteWidth();
    int64_t boxes = type.getShape()[1] * elementBytes / swizzle;
    Value map = LLVM::PtrToIntOp::create(rewriter, loc, rewriter.getI64Type(),
                                         adaptor.getMap());
    Value barrier = sharedAddress(rewriter, loc, adaptor.getBarrier());
    Value dst = sharedAddress(rewriter, loc, adaptor.getDst());
    Value pred = issuingThread(rewriter, loc, adaptor.getPred());
    for (int64_t box = 0; box < boxes; ++box) {
      Value boxDst = arith::AddIOp::create(
          rewriter, loc, dst, i32Const(rewriter, loc, box * rows * swizzle));
      Value boxCol = arith::AddIOp::create(
          rewriter, loc, adaptor.getCol(),
          i32Const(rewriter, loc, box * swizzle / elementBytes));
      // Coordinates innermost first: the column, then the row.
      emitVoidAsm(rewriter, loc,
                  {boxDst, map, boxCol, adaptor.getRow(), barrier, pred},
                  "@$5 cp.async.bulk.tensor.2d.shared::cluster.global."
                  "mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];",
                  "r,l,r,r,r,b");
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct WaitBarrierOpConversion : OpConversionPattern<WaitBarrierOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(WaitBarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // try_wait returns false after a time limit: retry until the phase
    // completes. The label is local to the braces.
    emitVoidAsm(rewriter, loc,
                {sharedAddress(rewriter, loc, adaptor.getBarrier()),
                 adaptor.getPhase()},
                "{\n\t.reg .pred complete;\n\twait_phase:\n\t"
                "mbarrier.try_wait.parity.shared::cta.b64 complete, [$0], $1;"
                "\n\t@!complete bra.uni wait_phase;\n\t}",
                "r,r");
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void populateTmaOpToLLVMPatterns(const LLVMTypeConverter &converter,
                                 RewritePatternSet &patterns) {
  patterns.add<InitBarrierOpConversion, InvalBarrierOpConversion,
               BarrierExpectOpConversion, AsyncTmaCopyOpConversion,
               WaitBarrierOpConversion>(converter, patterns.getContext());
}

} // namespace tilec::lowering
