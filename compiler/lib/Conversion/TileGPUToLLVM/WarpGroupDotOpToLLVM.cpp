//===- WarpGroupDotOpToLLVM.cpp - warpgroup_dot as Hopper wgmma -----------===//
//
// A warpgroup (four consecutive warps) multiplies a 64xK strip of `a` by a
// KxN strip of `b` with one `wgmma.mma_async` per 32 bytes of K (k16 for
// f16/bf16, k8 for f32 operands, which it reads as tf32), reading
// both from shared memory through 64-bit matrix descriptors: the start
// address, the byte distances between 8-row groups (SBO) and between
// swizzle-wide column blocks (LBO), and the swizzle mode. The accumulator
// stays in the registers of the mma v3 layout, N/2 f32 per instruction.
//
// With a transposed accumulator layout (a tf32 dot computed as D^T = B^T
// A^T) wgmma's A is B^T's fragment in registers, the registers of `b`, and
// wgmma's B is `a`'s K-major tile read as A^T: the instruction's M runs along
// N and its N along M. NVVM's wgmma op takes descriptors only, so that form
// is inline PTX. wgmma reads register operands asynchronously: each
// instruction reads private copies of its fragment (mov.b32), fenced after
// the copies, and in an asynchronous dot is its own group, followed by a
// wait that leaves one dot's instructions less one in flight. The copies an
// instruction makes in the next dot then overwrite registers whose reader
// has finished, so ptxas has nothing to serialize.
//
// The descriptors' start addresses are logical: the hardware applies the
// swizzle to the address bits, so advancing along K inside a swizzle block
// (32 bytes per step of a K-major tile) needs no recomputation, as long
// as every strip starts on a row that is a multiple of 8 and buffers sit on
// 1024-byte boundaries (tilegpu-allocate-shared-memory places them so).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;
using namespace tilec::lowering;

namespace {

/// An operand tile in nvmma_shared memory, seen as rows x cols with cols
/// the contiguous dimension.
struct NvmmaTile {
  unsigned rowDim, colDim;
  int64_t rows;
  int64_t swizzleBytes;
  int64_t elementBytes;

  static NvmmaTile get(MemDescType type) {
    auto encoding = cast<NvmmaSharedEncodingAttr>(type.getEncoding());
    NvmmaTile tile;
    tile.colDim = encoding.getOrder()[0];
    tile.rowDim = encoding.getOrder()[1];
    tile.rows = type.getShape()[tile.rowDim];
    tile.swizzleBytes = encoding.getSwizzlingByteWidth();
    tile.elementBytes = type.getElementType().getIntOrFloatBitWidth() / 8;
    return tile;
  }

  int64_t colsPerBlock() const { return swizzleBytes / elementBytes; }

  /// Logical byte offset of element (row, col), row a multiple of 8.
  Value byteOffset(OpBuilder &builder, Location loc, Value row,
                   Value col) const {
    auto c = [&](int64_t v) { return i32Const(builder, loc, v); };
    Value block = arith::DivUIOp::create(builder, loc, col, c(colsPerBlock()));
    Value within = arith::RemUIOp::create(builder, loc, col, c(colsPerBlock()));
    Value offset = arith::MulIOp::create(builder, loc, block,
                                         c(rows * swizzleBytes));
    offset = arith::AddIOp::create(
        builder, loc, offset,
        arith::MulIOp::create(builder, loc, row, c(swizzleBytes)));
    return arith::AddIOp::create(
        builder, loc, offset,
        arith::MulIOp::create(builder, loc, within, c(elementBytes)));
  }

  /// The descriptor bits other than the start address. SBO steps 8 rows;
  /// LBO steps one column block, which an instruction crosses only when its
  /// extent along the contiguous dimension is MN (PTX ignores it for K).
  uint64_t descriptorBits(bool kContiguous) const {
    uint64_t sbo = 8 * swizzleBytes >> 4;
    uint64_t lbo = kContiguous ? 1 : (rows * swizzleBytes) >> 4;
    uint64_t mode = swizzleBytes == 128 ? 1 : swizzleBytes == 64 ? 2 : 3;
    return lbo << 16 | sbo << 32 | mode << 62;
  }
};

/// The 64-bit descriptor of the strip of `tile` starting at (dim0, dim1).
Value emitDescriptor(OpBuilder &builder, Location loc, Value base,
                     const NvmmaTile &tile, bool kContiguous, Value dim0,
                     Value dim1) {
  SmallVector<Value> coords = {dim0, dim1};
  Value offset = tile.byteOffset(builder, loc, coords[tile.rowDim],
                                 coords[tile.colDim]);
  Value address = arith::AddIOp::create(
      builder, loc,
      LLVM::PtrToIntOp::create(builder, loc, builder.getI32Type(), base),
      offset);
  // Bits 0-13: address bits 4-17.
  Value start = arith::ShRUIOp::create(
      builder, loc,
      arith::AndIOp::create(builder, loc, address,
                            i32Const(builder, loc, 0x3FFFF)),
      i32Const(builder, loc, 4));
  Value wide =
      arith::ExtUIOp::create(builder, loc, builder.getI64Type(), start);
  Value bits = arith::ConstantOp::create(
      builder, loc,
      builder.getI64IntegerAttr(
          static_cast<int64_t>(tile.descriptorBits(kContiguous))));
  return arith::OrIOp::create(builder, loc, wide, bits);
}

NVVM::WGMMATypes getWgmmaType(Type type) {
  if (type.isF32())
    return NVVM::WGMMATypes::tf32;
  return type.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
}

/// Inline PTX with side effects (the optimizers keep and order it).
Value emitAsm(OpBuilder &builder, Location loc, Type type, ValueRange operands,
              StringRef text, StringRef constraints) {
  return LLVM::InlineAsmOp::create(
             builder, loc, type, operands, text, constraints,
             /*has_side_effects=*/true, /*is_align_stack=*/false,
             LLVM::tailcallkind::TailCallKind::None,
             LLVM::AsmDialectAttr::get(builder.getContext(),
                                       LLVM::AsmDialect::AD_ATT),
             /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

/// Fresh registers holding `fragment` (bit-cast to b32), written by moves
/// the optimizers cannot merge: the registers one wgmma reads from and no
/// other instruction writes while it runs.
SmallVector<Value> copyFragment(OpBuilder &builder, Location loc,
                                ValueRange fragment) {
  Type i32 = builder.getI32Type();
  SmallVector<Value> copies;
  for (Value element : fragment) {
    Value bits = LLVM::BitcastOp::create(builder, loc, i32, element);
    copies.push_back(
        emitAsm(builder, loc, i32, ValueRange{bits}, "mov.b32 $0, $1;", "=r,r"));
  }
  return copies;
}

/// "$0, $1, ..., $n-1": a wgmma's accumulator registers in inline PTX.
std::string accumulatorList(int64_t accRegs) {
  std::string list;
  for (int64_t i = 0; i < accRegs; ++i)
    list += (i ? ", $" : "$") + std::to_string(i);
  return list;
}

/// The accumulators of an inline wgmma: outputs $0 .. $n-1 ("=f"), then the
/// same registers as inputs tied to them (the elements of `inouts`).
void appendAccumulators(OpBuilder &builder, Location loc, Value inouts,
                        int64_t accRegs, std::string &constraints,
                        SmallVector<Value> &operands) {
  for (int64_t i = 0; i < accRegs; ++i)
    constraints += "=f,";
  for (int64_t i = 0; i < accRegs; ++i) {
    constraints += std::to_string(i) + ",";
    operands.push_back(LLVM::ExtractValueOp::create(builder, loc, inouts, i));
  }
}

/// One wgmma as inline PTX: `head` (set-up lines), then `instruction` with
/// the accumulator registers as D ($0 .. $N/2-1, tied to `inouts`) and
/// `tail` after them, which names `extra` as $N/2 * 2 and on
/// (`extraConstraints`).
Value emitWgmmaAsm(OpBuilder &builder, Location loc,
                   LLVM::LLVMStructType structType, Value inouts,
                   StringRef head, StringRef instruction, StringRef tail,
                   ValueRange extra, StringRef extraConstraints) {
  int64_t accRegs = structType.getBody().size();
  std::string text;
  llvm::raw_string_ostream asmText(text);
  asmText << "{\n" << head << instruction << " {";
  asmText << accumulatorList(accRegs) << "}, " << tail << ";\n}";
  std::string constraints;
  SmallVector<Value> operands;
  appendAccumulators(builder, loc, inouts, accRegs, constraints, operands);
  constraints += extraConstraints;
  operands.append(extra.begin(), extra.end());
  return emitAsm(builder, loc, structType, operands, text, constraints);
}

/// `wgmma.mma_async` m64nNk8 tf32 with A from the four registers
/// `fragment` and B through `descB`, accumulating into `inouts` (N/2 f32).
Value emitRegisterAWgmma(OpBuilder &builder, Location loc,
                         LLVM::LLVMStructType structType, Value inouts,
                         ArrayRef<Value> fragment, Value descB,
                         int64_t instrN) {
  int64_t first = instrN; // 2 x N/2 accumulator operands before
  std::string tail = "{";
  for (size_t i = 0; i < fragment.size(); ++i)
    tail += (i ? ", $" : "$") + std::to_string(first + i);
  tail += "}, $" + std::to_string(first + fragment.size()) + ", p, 1, 1";
  SmallVector<Value> extra(fragment.begin(), fragment.end());
  extra.push_back(descB);
  std::string constraints;
  for (size_t i = 0; i < fragment.size(); ++i)
    constraints += "r,";
  return emitWgmmaAsm(
      builder, loc, structType, inouts, ".reg .pred p;\nsetp.ne.b32 p, 1, 0;\n",
      "wgmma.mma_async.sync.aligned.m64n" + std::to_string(instrN) +
          "k8.f32.tf32.tf32",
      tail, extra, constraints + "l");
}

/// A row-group strip's wgmma instructions, one per (descA, descB) pair, as
/// one inline PTX block that branches past all of them when the i32
/// `active` is zero (the same in every thread of the warpgroup). NVVM's op
/// has no guard. ptxas serializes wgmma behind a branch it cannot prove
/// warp-uniform (ptxas -v: C7520, "compiler-inserted WG.AR in divergent
/// path"): a guard on each instruction made each wait for itself. The
/// branch here is on a vote.sync.all of the condition, which ptxas knows is
/// uniform, and the instructions stay asynchronous. The layouts are NVVM's
/// op's; PTX's immediates transpose an MN-major tile (A `col`, B `row`).
Value emitGuardedGroup(OpBuilder &builder, Location loc,
                       LLVM::LLVMStructType structType, Value inouts,
                       ArrayRef<std::pair<Value, Value>> descriptors,
                       Value active, Type element, int64_t instrN,
                       int64_t instrK, NVVM::MMALayout layoutA,
                       NVVM::MMALayout layoutB) {
  int64_t accRegs = instrN / 2;
  std::string type = NVVM::stringifyWGMMATypes(getWgmmaType(element)).str();
  bool transA = layoutA == NVVM::MMALayout::col;
  bool transB = layoutB == NVVM::MMALayout::row;
  std::string accumulators = accumulatorList(accRegs);
  // Operands after the accumulators' outputs and tied inputs.
  int64_t next = 2 * accRegs;
  std::string text = "{\n.reg .pred p, q;\nsetp.ne.b32 p, 1, 0;\n"
                     "setp.eq.b32 q, $" +
                     std::to_string(next + 2 * descriptors.size()) +
                     ", 0;\nvote.sync.all.pred q, q, 0xffffffff;\n"
                     "@q bra skip_${:uid};\n";
  for (size_t i = 0; i < descriptors.size(); ++i) {
    text += "wgmma.mma_async.sync.aligned.m64n" + std::to_string(instrN) +
            "k" + std::to_string(instrK) + ".f32." + type + "." + type +
            " {" + accumulators + "}, $" + std::to_string(next + 2 * i) +
            ", $" + std::to_string(next + 2 * i + 1) + ", p, 1, 1";
    if (!element.isF32())
      text += std::string(", ") + (transA ? "1" : "0") + ", " +
              (transB ? "1" : "0");
    text += ";\n";
  }
  text += "skip_${:uid}:\n}";
  std::string constraints;
  SmallVector<Value> operands;
  appendAccumulators(builder, loc, inouts, accRegs, constraints, operands);
  for (auto [descA, descB] : descriptors) {
    constraints += "l,l,";
    operands.append({descA, descB});
  }
  constraints += "r";
  operands.push_back(active);
  return emitAsm(builder, loc, structType, operands, text, constraints);
}

/// For a row-group dot: non-zero when some group of the 64 rows from `row`
/// (a multiple of 64) is active, i.e. when their instructions must run.
Value emitStripActive(OpBuilder &builder, Location loc, Value rowGroups,
                      int64_t rowsPerGroup, Value row) {
  auto c = [&](int64_t v) { return i32Const(builder, loc, v); };
  Value first = arith::DivUIOp::create(builder, loc, row, c(rowsPerGroup));
  int64_t groups = std::max<int64_t>(1, 64 / rowsPerGroup);
  uint32_t mask = groups >= 32 ? ~0u : (1u << groups) - 1;
  return arith::AndIOp::create(
      builder, loc, arith::ShRUIOp::create(builder, loc, rowGroups, first),
      c(static_cast<int32_t>(mask)));
}

/// The operands of one warpgroup dot, as the instructions see them: A from
/// a shared tile or from registers, B from a shared tile, both addressed in
/// the instruction's (row, k) and (k, col).
struct WarpGroupOperands {
  std::optional<NvmmaTile> aTile;
  Value aBase;
  ValueRange aRegisters;
  NvmmaTile bTile;
  Value bBase;
  /// Whether B's tile is stored as the instruction's N x K (a read as A^T)
  /// rather than K x N.
  bool bIsTransposedA;

  static WarpGroupOperands get(WarpGroupDotOp op, ValueRange a, ValueRange b);
  /// Whether each shared tile is K-contiguous (else MN-contiguous).
  bool aIsKMajor() const { return aTile->colDim == 1; }
  bool bIsKMajor() const { return bIsTransposedA || bTile.colDim == 0; }
  /// The same in NVVM's names: a K-major A is `row`, a K-major B `col`.
  NVVM::MMALayout layoutA() const {
    return aIsKMajor() ? NVVM::MMALayout::row : NVVM::MMALayout::col;
  }
  NVVM::MMALayout layoutB() const {
    return bIsKMajor() ? NVVM::MMALayout::col : NVVM::MMALayout::row;
  }
  Value descriptorA(OpBuilder &builder, Location loc, Value row,
                    Value k) const {
    return emitDescriptor(builder, loc, aBase, *aTile, aIsKMajor(), row, k);
  }
  Value descriptorB(OpBuilder &builder, Location loc, Value k,
                    Value col) const {
    if (bIsTransposedA)
      return emitDescriptor(builder, loc, bBase, bTile, /*kContiguous=*/true,
                            col, k);
    return emitDescriptor(builder, loc, bBase, bTile, bIsKMajor(), k, col);
  }
};

struct WarpGroupDotOpConversion : OpConversionPattern<WarpGroupDotOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(WarpGroupDotOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MemDescType aType = op.getA().getType();
    auto dType = cast<RankedTensorType>(op.getD().getType());
    auto mma = cast<MmaEncodingAttr>(dType.getEncoding());
    Type element = aType.getElementType();
    Location loc = op.getLoc();
    auto c = [&](int64_t v) { return i32Const(rewriter, loc, v); };

    // Rows and columns are the instructions' (D^T's when transposed).
    unsigned wm = mma.getWarpsPerCTA()[0], wn = mma.getWarpsPerCTA()[1];
    unsigned rowDim = mma.getTransposed() ? 1 : 0;
    int64_t instrN = mma.getInstrShape()[1];
    int64_t tileM = 16 * wm, tileN = instrN * wn;
    int64_t reps[2] = {dType.getDimSize(rowDim) / tileM,
                       dType.getDimSize(1 - rowDim) / tileN};
    int64_t instrK = getWarpGroupInstrK(element);
    int64_t kSteps = aType.getShape()[1] / instrK;
    // Warp w covers rows 16 (w mod wm) and column strip w / wm; its
    // warpgroup's strip starts at the row of its first warp.
    ThreadId thread = getThreadId(rewriter, loc, 32);
    Value warpM = arith::RemUIOp::create(rewriter, loc, thread.warp, c(wm));
    Value groupRow = arith::MulIOp::create(
        rewriter, loc, arith::DivUIOp::create(rewriter, loc, warpM, c(4)),
        c(64));
    Value groupCol = arith::MulIOp::create(
        rewriter, loc,
        arith::DivUIOp::create(rewriter, loc, thread.warp, c(wm)), c(instrN));

    WarpGroupOperands operands =
        WarpGroupOperands::get(op, adaptor.getA(), adaptor.getB());
    bool registerA = !operands.aTile;
    // Each register-A instruction is its own group in an asynchronous dot.
    bool groupPerInstruction = registerA && op.getIsAsync();
    int64_t instructions = reps[0] * reps[1] * kSteps;
    ValueRange acc = adaptor.getC();
    auto f32 = rewriter.getF32Type();
    auto structType = LLVM::LLVMStructType::getLiteral(
        getContext(), SmallVector<Type>(instrN / 2, f32));
    auto shape = NVVM::MMAShapeAttr::get(getContext(), 64, instrN, instrK);

    // A row-group dot runs a strip's instructions under its groups' bits.
    Value rowGroups = adaptor.getRowGroups().empty()
                          ? Value()
                          : adaptor.getRowGroups().front();
    NVVM::WgmmaFenceAlignedOp::create(rewriter, loc);
    SmallVector<Value> results(acc.begin(), acc.end());
    for (int64_t mr = 0; mr < reps[0]; ++mr) {
      Value row = arith::AddIOp::create(rewriter, loc, groupRow, c(mr * tileM));
      Value stripActive =
          rowGroups ? emitStripActive(rewriter, loc, rowGroups,
                                      *op.getRowsPerGroup(), row)
                    : Value();
      for (int64_t nr = 0; nr < reps[1]; ++nr) {
        Value col =
            arith::AddIOp::create(rewriter, loc, groupCol, c(nr * tileN));
        // The instruction's registers: the layout orders them instruction
        // first, then N repeats, then M repeats.
        int64_t first = (mr * reps[1] + nr) * (instrN / 2);
        Value inouts = LLVM::UndefOp::create(rewriter, loc, structType);
        for (int64_t i = 0; i < instrN / 2; ++i)
          inouts = LLVM::InsertValueOp::create(rewriter, loc, inouts,
                                               results[first + i], i);
        if (!registerA) {
          // The strip's instructions from shared memory, one per K step; a
          // row-group strip's under one branch (emitGuardedGroup).
          auto descriptorsAt = [&](int64_t k) {
            // A's first: the order the instructions are emitted in.
            Value descA =
                operands.descriptorA(rewriter, loc, row, c(instrK * k));
            Value descB =
                operands.descriptorB(rewriter, loc, c(instrK * k), col);
            return std::pair(descA, descB);
          };
          if (stripActive) {
            SmallVector<std::pair<Value, Value>> descriptors;
            for (int64_t k = 0; k < kSteps; ++k)
              descriptors.push_back(descriptorsAt(k));
            inouts = emitGuardedGroup(
                rewriter, loc, structType, inouts, descriptors, stripActive,
                element, instrN, instrK, operands.layoutA(),
                operands.layoutB());
          } else {
            for (int64_t k = 0; k < kSteps; ++k) {
              auto [descA, descB] = descriptorsAt(k);
              inouts = NVVM::WgmmaMmaAsyncOp::create(
                  rewriter, loc, structType, inouts, descA, descB, shape,
                  getWgmmaType(element), getWgmmaType(element),
                  NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
                  NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
                  operands.layoutA(), operands.layoutB(),
                  /*satfinite=*/nullptr);
            }
          }
        } else {
          for (int64_t k = 0; k < kSteps; ++k) {
            // The fragment layout orders registers by K step, then M
            // repeat.
            SmallVector<Value> fragment = copyFragment(
                rewriter, loc,
                operands.aRegisters.slice(4 * (mr * kSteps + k), 4));
            NVVM::WgmmaFenceAlignedOp::create(rewriter, loc);
            Value descB =
                operands.descriptorB(rewriter, loc, c(instrK * k), col);
            inouts = emitRegisterAWgmma(rewriter, loc, structType, inouts,
                                        fragment, descB, instrN);
            if (groupPerInstruction) {
              NVVM::WgmmaGroupSyncAlignedOp::create(rewriter, loc);
              NVVM::WgmmaWaitGroupSyncOp::create(rewriter, loc,
                                                 instructions - 1);
            }
          }
        }
        for (int64_t i = 0; i < instrN / 2; ++i)
          results[first + i] =
              LLVM::ExtractValueOp::create(rewriter, loc, inouts, i);
      }
    }
    if (!groupPerInstruction)
      NVVM::WgmmaGroupSyncAlignedOp::create(rewriter, loc);
    if (!op.getIsAsync())
      NVVM::WgmmaWaitGroupSyncOp::create(rewriter, loc, 0);
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

WarpGroupOperands WarpGroupOperands::get(WarpGroupDotOp op, ValueRange a,
                                         ValueRange b) {
  WarpGroupOperands operands;
  NvmmaTile aTile = NvmmaTile::get(op.getA().getType());
  Value aBase = a.front();
  if (auto bType = dyn_cast<MemDescType>(op.getB().getType())) {
    operands.aTile = aTile;
    operands.aBase = aBase;
    operands.bTile = NvmmaTile::get(bType);
    operands.bBase = b.front();
    operands.bIsTransposedA = false;
    return operands;
  }
  // D^T = B^T A^T: B^T's fragment in b's registers, A^T through a's tile.
  operands.aRegisters = b;
  operands.bTile = aTile;
  operands.bBase = aBase;
  operands.bIsTransposedA = true;
  return operands;
}

struct WarpGroupDotWaitOpConversion : OpConversionPattern<WarpGroupDotWaitOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(WarpGroupDotWaitOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    NVVM::WgmmaWaitGroupSyncOp::create(rewriter, op.getLoc(), op.getPendings());
    SmallVector<SmallVector<Value>> results;
    for (ValueRange registers : adaptor.getInputs())
      results.emplace_back(registers.begin(), registers.end());
    rewriter.replaceOpWithMultiple(op, results);
    return success();
  }
};

} // namespace

void tilec::lowering::populateWarpGroupDotOpToLLVMPatterns(
    const LLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<WarpGroupDotOpConversion, WarpGroupDotWaitOpConversion>(
      converter, patterns.getContext());
}
