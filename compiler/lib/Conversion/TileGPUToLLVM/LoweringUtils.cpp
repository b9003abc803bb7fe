//===- LoweringUtils.cpp - shared pieces of the ttgir -> LLVM lowering ----===//

#include "LoweringUtils.h"

#include "tilec/Dialect/TileGPU/Transforms/SharedMemory.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;

namespace tilec::lowering {

Value i32Const(OpBuilder &builder, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(builder, loc, builder.getI32Type(),
                                      value);
}

ThreadId getThreadId(OpBuilder &builder, Location loc,
                     unsigned threadsPerWarp) {
  Value tid = NVVM::ThreadIdXOp::create(builder, loc, builder.getI32Type());
  unsigned shift = llvm::Log2_32(threadsPerWarp);
  Value lane = arith::AndIOp::create(builder, loc, tid,
                                     i32Const(builder, loc, threadsPerWarp - 1));
  Value warp =
      arith::ShRUIOp::create(builder, loc, tid, i32Const(builder, loc, shift));
  return {lane, warp};
}

/// Adds, per dimension, the contribution of the bits of `id` whose bases are
/// `bases`. Runs of bits whose bases double along one dimension (the usual
/// case) become one shift-and-mask each.
static void addIdContribution(OpBuilder &builder, Location loc, Value id,
                              ArrayRef<LinearLayout::Basis> bases,
                              SmallVectorImpl<Value> &coords) {
  unsigned bit = 0;
  while (bit < bases.size()) {
    const LinearLayout::Basis &basis = bases[bit];
    auto dimIt = llvm::find_if(basis, [](int64_t v) { return v != 0; });
    if (dimIt == basis.end()) {
      ++bit;
      continue;
    }
    unsigned dim = dimIt - basis.begin();
    int64_t first = *dimIt;
    unsigned runLength = 1;
    while (bit + runLength < bases.size()) {
      const LinearLayout::Basis &next = bases[bit + runLength];
      bool continues = next[dim] == (first << runLength);
      for (unsigned d = 0; d < next.size(); ++d)
        continues &= d == dim || next[d] == 0;
      if (!continues)
        break;
      ++runLength;
    }
    Value field = id;
    if (bit != 0)
      field = arith::ShRUIOp::create(builder, loc, field,
                                     i32Const(builder, loc, bit));
    field = arith::AndIOp::create(builder, loc, field,
                                  i32Const(builder, loc, (1 << runLength) - 1));
    if (first != 1)
      field = arith::ShLIOp::create(
          builder, loc, field, i32Const(builder, loc, llvm::Log2_64(first)));
    coords[dim] = coords[dim]
                      ? arith::OrIOp::create(builder, loc, coords[dim], field)
                      : field;
    bit += runLength;
  }
}

SmallVector<Value> emitThreadCoords(OpBuilder &builder, Location loc,
                                    const LinearLayout &layout,
                                    ThreadId thread) {
  assert(layout.hasDisjointBases() && "coordinates must add without carries");
  SmallVector<Value> coords(layout.getRank());
  addIdContribution(builder, loc, thread.lane, layout.getLaneBases(), coords);
  addIdContribution(builder, loc, thread.warp, layout.getWarpBases(), coords);
  for (Value &coord : coords)
    if (!coord)
      coord = i32Const(builder, loc, 0);
  return coords;
}

SmallVector<SmallVector<Value>> emitRegisterCoords(OpBuilder &builder,
                                                   Location loc,
                                                   const LinearLayout &layout,
                                                   ThreadId thread) {
  SmallVector<Value> threadCoords =
      emitThreadCoords(builder, loc, layout, thread);
  SmallVector<SmallVector<Value>> result;
  for (unsigned reg = 0; reg < layout.getNumRegisters(); ++reg) {
    LinearLayout::Basis offsets = layout.registerCoords(reg);
    SmallVector<Value> coords;
    for (auto [dim, offset] : llvm::enumerate(offsets))
      coords.push_back(offset == 0 ? threadCoords[dim]
                                   : arith::OrIOp::create(
                                         builder, loc, threadCoords[dim],
                                         i32Const(builder, loc, offset)));
    result.push_back(coords);
  }
  return result;
}

Value linearize(OpBuilder &builder, Location loc, ArrayRef<Value> coords,
                ArrayRef<int64_t> shape) {
  Value index;
  for (auto [coord, size] : llvm::zip(coords, shape)) {
    if (!index) {
      index = coord;
      continue;
    }
    index = arith::MulIOp::create(builder, loc, index,
                                  i32Const(builder, loc, size));
    index = arith::AddIOp::create(builder, loc, index, coord);
  }
  return index ? index : i32Const(builder, loc, 0);
}

Value getSharedMemoryBase(OpBuilder &builder, Location loc,
                          Operation *anchor) {
  auto module = anchor->getParentOfType<ModuleOp>();
  auto global = module.lookupSymbol<LLVM::GlobalOp>("global_smem");
  assert(global && "the lowering pass declares global_smem up front");
  auto ptrType = LLVM::LLVMPointerType::get(builder.getContext(), 3);
  return LLVM::AddressOfOp::create(builder, loc, ptrType, global.getSymName());
}

Value getScratchBase(OpBuilder &builder, Location loc, Operation *op) {
  Value base = getSharedMemoryBase(builder, loc, op);
  std::optional<int64_t> offset = getSharedMemoryOffset(op);
  assert(offset && "the lowering checks every scratch op for its offset");
  if (*offset == 0)
    return base;
  return LLVM::GEPOp::create(builder, loc, base.getType(), builder.getI8Type(),
                             base, ArrayRef<LLVM::GEPArg>{int32_t(*offset)});
}

Type getSharedStorageType(Type type) {
  if (type.isInteger(1))
    return IntegerType::get(type.getContext(), 8);
  if (isa<LLVM::LLVMPointerType>(type))
    return IntegerType::get(type.getContext(), 64);
  return type;
}

Value toSharedStorage(OpBuilder &builder, Location loc, Value value) {
  Type type = value.getType();
  if (type.isInteger(1))
    return arith::ExtUIOp::create(builder, loc, builder.getI8Type(), value);
  if (isa<LLVM::LLVMPointerType>(type))
    return LLVM::PtrToIntOp::create(builder, loc, builder.getI64Type(), value);
  return value;
}

Value fromSharedStorage(OpBuilder &builder, Location loc, Value stored,
                        Type type) {
  if (type.isInteger(1))
    return arith::TruncIOp::create(builder, loc, type, stored);
  if (isa<LLVM::LLVMPointerType>(type))
    return LLVM::IntToPtrOp::create(builder, loc, type, stored);
  return stored;
}

void emitBarrier(OpBuilder &builder, Location loc) {
  NVVM::Barrier0Op::create(builder, loc);
}

CopyBits getCopyBits(Type type, ModuleOp module) {
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    LinearLayout layout = getLinearLayout(tensor);
    return {layout.getRedundantLaneMask(), layout.getRedundantWarpMask()};
  }
  return {static_cast<unsigned>(TileGPUDialect::getThreadsPerWarp(module)) - 1,
          static_cast<unsigned>(TileGPUDialect::getNumWarps(module)) - 1};
}

Value emitBitsAreZero(OpBuilder &builder, Location loc, Value id,
                      unsigned mask) {
  if (!mask)
    return {};
  Value bits = arith::AndIOp::create(
      builder, loc, id, i32Const(builder, loc, static_cast<int32_t>(mask)));
  return arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq, bits,
                               i32Const(builder, loc, 0));
}

Value emitOwnerPredicate(OpBuilder &builder, Location loc, Type type,
                         ModuleOp module) {
  CopyBits copies = getCopyBits(type, module);
  if (!copies.laneMask && !copies.warpMask)
    return {};
  ThreadId thread =
      getThreadId(builder, loc, TileGPUDialect::getThreadsPerWarp(module));
  Value ownLane = emitBitsAreZero(builder, loc, thread.lane, copies.laneMask);
  Value ownWarp = emitBitsAreZero(builder, loc, thread.warp, copies.warpMask);
  if (ownLane && ownWarp)
    return arith::AndIOp::create(builder, loc, ownLane, ownWarp);
  return ownLane ? ownLane : ownWarp;
}

Value emitCombine(OpBuilder &builder, Location loc, tile::ReduceKind kind,
                  Value a, Value b) {
  bool isFloat = isa<FloatType>(a.getType());
  switch (kind) {
  case tile::ReduceKind::Add:
    return isFloat ? arith::AddFOp::create(builder, loc, a, b).getResult()
                   : arith::AddIOp::create(builder, loc, a, b).getResult();
  case tile::ReduceKind::Mul:
    return isFloat ? arith::MulFOp::create(builder, loc, a, b).getResult()
                   : arith::MulIOp::create(builder, loc, a, b).getResult();
  case tile::ReduceKind::Max:
    return isFloat ? arith::MaximumFOp::create(builder, loc, a, b).getResult()
                   : arith::MaxSIOp::create(builder, loc, a, b).getResult();
  case tile::ReduceKind::Min:
    return isFloat ? arith::MinimumFOp::create(builder, loc, a, b).getResult()
                   : arith::MinSIOp::create(builder, loc, a, b).getResult();
  case tile::ReduceKind::UMax:
    return arith::MaxUIOp::create(builder, loc, a, b);
  case tile::ReduceKind::UMin:
    return arith::MinUIOp::create(builder, loc, a, b);
  case tile::ReduceKind::And:
    return arith::AndIOp::create(builder, loc, a, b);
  case tile::ReduceKind::Or:
    return arith::OrIOp::create(builder, loc, a, b);
  case tile::ReduceKind::Xor:
    return arith::XOrIOp::create(builder, loc, a, b);
  }
  llvm_unreachable("unknown reduction");
}

Value emitShuffle(OpBuilder &builder, Location loc, Value value,
                  NVVM::ShflKind kind, Value laneOrDelta) {
  Type type = value.getType();
  unsigned bits = type.getIntOrFloatBitWidth();
  Type i32 = builder.getI32Type();
  // The clamp operand: up shifts stop at lane 0, the other kinds at lane 31
  // (one 32-lane segment).
  int32_t clamp = kind == NVVM::ShflKind::up ? 0 : 0x1f;
  auto shuffleWord = [&](Value word) -> Value {
    return NVVM::ShflOp::create(
        builder, loc, i32, i32Const(builder, loc, -1), word, laneOrDelta,
        i32Const(builder, loc, clamp), kind, UnitAttr());
  };
  Value asInt = value;
  if (isa<FloatType>(type))
    asInt = arith::BitcastOp::create(builder, loc, builder.getIntegerType(bits),
                                     value);
  Value result;
  if (bits <= 32) {
    Value word =
        bits == 32
            ? asInt
            : arith::ExtUIOp::create(builder, loc, i32, asInt).getResult();
    result = shuffleWord(word);
    if (bits != 32)
      result = arith::TruncIOp::create(builder, loc,
                                       builder.getIntegerType(bits), result);
  } else {
    Type i64 = builder.getI64Type();
    Value low = arith::TruncIOp::create(builder, loc, i32, asInt);
    Value high = arith::TruncIOp::create(
        builder, loc, i32,
        arith::ShRUIOp::create(
            builder, loc, asInt,
            arith::ConstantIntOp::create(builder, loc, i64, 32)));
    Value lowOut = arith::ExtUIOp::create(builder, loc, i64, shuffleWord(low));
    Value highOut =
        arith::ExtUIOp::create(builder, loc, i64, shuffleWord(high));
    result =
        arith::OrIOp::create(builder, loc, lowOut,
                             arith::ShLIOp::create(builder, loc, highOut,
                                                   arith::ConstantIntOp::create(
                                                       builder, loc, i64, 32)));
  }
  if (isa<FloatType>(type))
    result = arith::BitcastOp::create(builder, loc, type, result);
  return result;
}

} // namespace tilec::lowering
