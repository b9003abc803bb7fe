//===- AtomicOpToLLVM.cpp - atomic_rmw and atomic_cas ---------------------===//
//
// A layout may give an element to several threads (a tensor smaller than the
// CTA, a scalar every thread holds). The atomic must happen once per element,
// so only the owner of each group of copies (copy bits zero, the thread a
// store would pick) performs it; the copies get its old value with a shuffle
// when they are lanes of its warp, or through the op's shared-memory scratch
// when they sit in other warps (tilegpu-allocate-shared-memory sizes it, and
// only when the result is used).
//
// The atomic itself is inline PTX, `@p atom.<sem>.<scope>.global.<op>`: the
// predicate carries the mask and the ownership, and the ordering and scope
// reach PTX as written. (LLVM 22's NVPTX backend drops both from
// `atomicrmw`: `atomicrmw add ... syncscope("device") acq_rel` comes out as a
// relaxed, system-scoped `atom.global.add.u32`.) Masked-off lanes yield 0.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "tilec/Dialect/TileGPU/Transforms/SharedMemory.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;
using namespace tilec::lowering;

namespace {

std::string semanticQualifier(tile::MemSemantic sem) {
  switch (sem) {
  case tile::MemSemantic::Relaxed:
    return ".relaxed";
  case tile::MemSemantic::Acquire:
    return ".acquire";
  case tile::MemSemantic::Release:
    return ".release";
  case tile::MemSemantic::AcqRel:
    return ".acq_rel";
  }
  llvm_unreachable("unknown memory semantic");
}

std::string scopeQualifier(tile::MemSyncScope scope) {
  switch (scope) {
  case tile::MemSyncScope::CTA:
    return ".cta";
  case tile::MemSyncScope::GPU:
    return ".gpu";
  case tile::MemSyncScope::System:
    return ".sys";
  }
  llvm_unreachable("unknown memory scope");
}

/// `.op.type` of atom for `kind` on `element` (the verifier admits only the
/// combinations PTX has).
std::string rmwOperation(tile::AtomicRMWKind kind, Type element) {
  std::string bits = std::to_string(element.getIntOrFloatBitWidth());
  switch (kind) {
  case tile::AtomicRMWKind::Add:
    return element.isF32() ? ".add.f32" : ".add.u" + bits;
  case tile::AtomicRMWKind::Max:
    return ".max.s" + bits;
  case tile::AtomicRMWKind::Min:
    return ".min.s" + bits;
  case tile::AtomicRMWKind::UMax:
    return ".max.u" + bits;
  case tile::AtomicRMWKind::UMin:
    return ".min.u" + bits;
  case tile::AtomicRMWKind::And:
    return ".and.b" + bits;
  case tile::AtomicRMWKind::Or:
    return ".or.b" + bits;
  case tile::AtomicRMWKind::Xor:
    return ".xor.b" + bits;
  case tile::AtomicRMWKind::Xchg:
    return ".exch.b" + bits;
  }
  llvm_unreachable("unknown atomic kind");
}

/// Values cross the asm as integers of their width (f32 in a .b32 register,
/// which PTX lets a .f32 instruction use).
Value toBits(OpBuilder &builder, Location loc, Value value) {
  Type type = value.getType();
  if (!isa<FloatType>(type))
    return value;
  return arith::BitcastOp::create(
      builder, loc, builder.getIntegerType(type.getIntOrFloatBitWidth()),
      value);
}

Value fromBits(OpBuilder &builder, Location loc, Value bits, Type type) {
  if (bits.getType() == type)
    return bits;
  return arith::BitcastOp::create(builder, loc, type, bits);
}

/// One `atom` of `instruction` at `ptr` with `operands` (already integers),
/// under `predicate` when it is non-null; the result is 0 where it is false.
Value emitAtom(OpBuilder &builder, Location loc, StringRef instruction,
               Value ptr, ArrayRef<Value> operands, Value predicate) {
  Type bitsType = operands.front().getType();
  unsigned width = bitsType.getIntOrFloatBitWidth();
  std::string reg = width == 64 ? "l" : "r";
  SmallVector<Value> asmOperands = {ptr};
  std::string constraints = "=" + reg + ",l", body;
  llvm::raw_string_ostream asmText(body);
  for (Value operand : operands) {
    asmOperands.push_back(operand);
    constraints += "," + reg;
  }
  if (predicate) {
    asmOperands.push_back(predicate);
    constraints += ",b";
    asmText << "mov.b" << width << " $0, 0;\n\t@$" << asmOperands.size() << " ";
  }
  asmText << instruction << " $0, [ $1 + 0 ]";
  for (unsigned i = 0; i < operands.size(); ++i)
    asmText << ", $" << i + 2;
  asmText << ";";
  auto inlineAsm = LLVM::InlineAsmOp::create(
      builder, loc, bitsType, asmOperands, body, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(builder.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  return inlineAsm.getResult(0);
}

/// The old values of the owners, given to every thread holding a copy.
Registers broadcastFromOwners(ConversionPatternRewriter &rewriter,
                              Operation *op, Registers old) {
  Location loc = op->getLoc();
  auto module = op->getParentOfType<ModuleOp>();
  Type type = op->getResult(0).getType();
  CopyBits copies = getCopyBits(type, module);
  if (op->getResult(0).use_empty() || (!copies.laneMask && !copies.warpMask))
    return old;
  ThreadId thread =
      getThreadId(rewriter, loc, TileGPUDialect::getThreadsPerWarp(module));
  if (getSharedMemoryBytes(op) == 0) {
    // All copies are lanes of the owner's warp.
    Value ownerLane = arith::AndIOp::create(
        rewriter, loc, thread.lane,
        i32Const(rewriter, loc, ~static_cast<int32_t>(copies.laneMask)));
    for (Value &value : old)
      value = emitShuffle(rewriter, loc, value, NVVM::ShflKind::idx, ownerLane);
    return old;
  }
  // Through shared memory: the owner writes slot i of element i, and after a
  // barrier every copy reads it.
  Value base = getScratchBase(rewriter, loc, op);
  Type element = old.front().getType();
  Type storage = getSharedStorageType(element);
  SmallVector<Value> slots;
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    for (const SmallVector<Value> &coords :
         emitRegisterCoords(rewriter, loc, getLinearLayout(tensor), thread))
      slots.push_back(linearize(rewriter, loc, coords, tensor.getShape()));
  } else {
    slots.push_back(i32Const(rewriter, loc, 0));
  }
  auto slotAddress = [&](Value slot) {
    return LLVM::GEPOp::create(rewriter, loc, base.getType(), storage, base,
                               ValueRange{slot});
  };
  Value owner = emitOwnerPredicate(rewriter, loc, type, module);
  auto ifOwner = scf::IfOp::create(rewriter, loc, owner, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(ifOwner.thenBlock());
    for (auto [value, slot] : llvm::zip(old, slots))
      LLVM::StoreOp::create(rewriter, loc,
                            toSharedStorage(rewriter, loc, value),
                            slotAddress(slot));
  }
  emitBarrier(rewriter, loc);
  for (auto [value, slot] : llvm::zip(old, slots))
    value = fromSharedStorage(
        rewriter, loc,
        LLVM::LoadOp::create(rewriter, loc, storage, slotAddress(slot)),
        element);
  return old;
}

/// The per-register predicate: the mask (when there is one) and ownership.
SmallVector<Value> atomPredicates(OpBuilder &builder, Location loc,
                                  Operation *op, ValueRange masks,
                                  unsigned count) {
  Value owner = emitOwnerPredicate(builder, loc, op->getResult(0).getType(),
                                   op->getParentOfType<ModuleOp>());
  SmallVector<Value> predicates;
  for (unsigned reg = 0; reg < count; ++reg) {
    Value predicate = masks.empty() ? Value() : masks[reg];
    if (owner)
      predicate = predicate
                      ? arith::AndIOp::create(builder, loc, predicate, owner)
                            .getResult()
                      : owner;
    predicates.push_back(predicate);
  }
  return predicates;
}

struct AtomicRMWOpConversion : OpConversionPattern<tile::AtomicRMWOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(tile::AtomicRMWOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ValueRange ptrs = adaptor.getPtr(), vals = adaptor.getVal();
    Type element = vals.front().getType();
    std::string instruction = "atom" + semanticQualifier(op.getSem()) +
                              scopeQualifier(op.getScope()) + ".global" +
                              rmwOperation(op.getKind(), element);
    SmallVector<Value> predicates =
        atomPredicates(rewriter, loc, op, adaptor.getMask(), ptrs.size());
    Registers old;
    for (auto [ptr, val, predicate] : llvm::zip(ptrs, vals, predicates))
      old.push_back(fromBits(rewriter, loc,
                             emitAtom(rewriter, loc, instruction, ptr,
                                      {toBits(rewriter, loc, val)}, predicate),
                             element));
    rewriter.replaceOpWithMultiple(op,
                                   {broadcastFromOwners(rewriter, op, old)});
    return success();
  }
};

struct AtomicCASOpConversion : OpConversionPattern<tile::AtomicCASOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(tile::AtomicCASOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ValueRange ptrs = adaptor.getPtr(), cmps = adaptor.getCmp(),
               vals = adaptor.getVal();
    unsigned bits = vals.front().getType().getIntOrFloatBitWidth();
    std::string instruction = "atom" + semanticQualifier(op.getSem()) +
                              scopeQualifier(op.getScope()) + ".global.cas.b" +
                              std::to_string(bits);
    SmallVector<Value> predicates =
        atomPredicates(rewriter, loc, op, adaptor.getMask(), ptrs.size());
    Registers old;
    for (auto [ptr, cmp, val, predicate] :
         llvm::zip(ptrs, cmps, vals, predicates))
      old.push_back(
          emitAtom(rewriter, loc, instruction, ptr, {cmp, val}, predicate));
    rewriter.replaceOpWithMultiple(op,
                                   {broadcastFromOwners(rewriter, op, old)});
    return success();
  }
};

} // namespace

void tilec::lowering::populateAtomicOpToLLVMPatterns(
    const LLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<AtomicRMWOpConversion, AtomicCASOpConversion>(
      converter, patterns.getContext(), /*benefit=*/2);
}
