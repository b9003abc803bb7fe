//===- ScanOpToLLVM.cpp - inclusive scans along one axis ------------------===//
//
// Along the scanned axis a blocked layout orders its bits as: registers
// (sizePerThread), lanes, warps, then registers again (the repeats when the
// tensor is longer than the CTA's tile). The scan follows those levels:
//  1. in each thread, sequentially over its consecutive elements (a chunk);
//  2. across the lanes along the axis, a Hillis-Steele scan of the chunk
//     totals with shfl.up (shfl.down when reversed), then each chunk adds the
//     inclusive total of the lanes before it;
//  3. across the warps along the axis, through the op's shared-memory scratch:
//     one slot per warp for each run the CTA covers, every thread reads the
//     totals of the warps before its own;
//  4. across the register repeats, each run adds the totals of the runs
//     before it.
// A reverse scan is the same on the mirrored axis: the order of registers,
// lanes, warps and runs flips. Bits that move no element along the axis
// (other dimensions, copies) do not take part: copies compute the same
// result. Layouts whose axis bits come in another order are refused with a
// diagnostic.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "tilec/Dialect/TileGPU/Transforms/SharedMemory.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;
using namespace tilec::lowering;

namespace {

/// Which register, lane and warp bits move elements along the axis, by level.
struct AxisLevels {
  /// Register bits of one chunk, fastest first.
  SmallVector<unsigned> chunkBits;
  /// Lane bits, a contiguous run of lane-id bits.
  SmallVector<unsigned> laneBits;
  SmallVector<unsigned> warpBits;
  /// Register bits of the repeats above the warps.
  SmallVector<unsigned> runBits;
};

/// The levels of `layout` along `axis`, or a reason why the scan cannot
/// follow them.
FailureOr<AxisLevels> getAxisLevels(const LinearLayout &layout, unsigned axis,
                                    std::string &reason) {
  enum class Level { Chunk, Lane, Warp, Run };
  struct AxisBit {
    Level level;
    unsigned bit;
    int64_t step;
  };
  SmallVector<AxisBit> bits;
  for (auto [bit, basis] : llvm::enumerate(layout.getRegisterBases()))
    if (basis[axis] != 0)
      bits.push_back({Level::Chunk, static_cast<unsigned>(bit), basis[axis]});
  for (auto [bit, basis] : llvm::enumerate(layout.getLaneBases()))
    if (basis[axis] != 0)
      bits.push_back({Level::Lane, static_cast<unsigned>(bit), basis[axis]});
  for (auto [bit, basis] : llvm::enumerate(layout.getWarpBases()))
    if (basis[axis] != 0)
      bits.push_back({Level::Warp, static_cast<unsigned>(bit), basis[axis]});
  llvm::sort(
      bits, [](const AxisBit &a, const AxisBit &b) { return a.step < b.step; });
  llvm::raw_string_ostream os(reason);
  if (int64_t(1) << bits.size() != layout.getShape()[axis]) {
    os << "its bases do not cover the axis once";
    return failure();
  }
  AxisLevels levels;
  Level current = Level::Chunk;
  for (auto [index, axisBit] : llvm::enumerate(bits)) {
    if (axisBit.step != int64_t(1) << index) {
      os << "its bases along the axis are not distinct powers of two";
      return failure();
    }
    Level level = axisBit.level;
    if (level == Level::Chunk && current != Level::Chunk)
      level = Level::Run;
    if (level < current) {
      os << "lanes, warps and registers do not follow each other along the "
            "axis (registers, lanes, warps, registers)";
      return failure();
    }
    current = level;
    switch (level) {
    case Level::Chunk:
      levels.chunkBits.push_back(axisBit.bit);
      break;
    case Level::Lane:
      if (!levels.laneBits.empty() &&
          axisBit.bit != levels.laneBits.back() + 1) {
        os << "its lane bits along the axis are not contiguous";
        return failure();
      }
      levels.laneBits.push_back(axisBit.bit);
      break;
    case Level::Warp:
      levels.warpBits.push_back(axisBit.bit);
      break;
    case Level::Run:
      levels.runBits.push_back(axisBit.bit);
      break;
    }
  }
  return levels;
}

/// `value`'s bits spread to the positions `bits` (bit j of value -> bit
/// bits[j]).
unsigned deposit(unsigned value, ArrayRef<unsigned> bits) {
  unsigned result = 0;
  for (auto [j, bit] : llvm::enumerate(bits))
    if (value & (1u << j))
      result |= 1u << bit;
  return result;
}

unsigned maskOf(ArrayRef<unsigned> bits) { return deposit(~0u, bits); }

/// The compact index of the id bits `bits` (bit bits[j] -> bit j), i32.
Value extractBits(OpBuilder &builder, Location loc, Value id,
                  ArrayRef<unsigned> bits) {
  Value result = i32Const(builder, loc, 0);
  for (auto [j, bit] : llvm::enumerate(bits)) {
    Value field = arith::AndIOp::create(
        builder, loc,
        arith::ShRUIOp::create(builder, loc, id, i32Const(builder, loc, bit)),
        i32Const(builder, loc, 1));
    if (j)
      field =
          arith::ShLIOp::create(builder, loc, field, i32Const(builder, loc, j));
    result = arith::OrIOp::create(builder, loc, result, field);
  }
  return result;
}

/// `count - 1 - index` when reversed: the position along the scan's order.
Value scanOrder(OpBuilder &builder, Location loc, Value index, unsigned count,
                bool reverse) {
  if (!reverse)
    return index;
  return arith::SubIOp::create(builder, loc, i32Const(builder, loc, count - 1),
                               index);
}

Value selectCombined(OpBuilder &builder, Location loc, tile::ReduceKind kind,
                     Value condition, Value prefix, Value value) {
  return arith::SelectOp::create(builder, loc, condition,
                                 emitCombine(builder, loc, kind, prefix, value),
                                 value);
}

struct ScanOpConversion : OpConversionPattern<tile::ScanOp> {
  ScanOpConversion(const LLVMTypeConverter &converter, MLIRContext *context)
      : OpConversionPattern(converter, context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(tile::ScanOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    unsigned axis = op.getAxis();
    bool reverse = op.getReverse();
    tile::ReduceKind kind = op.getKind();
    LinearLayout layout = getLinearLayout(type);
    std::string reason;
    FailureOr<AxisLevels> found = getAxisLevels(layout, axis, reason);
    if (failed(found))
      return op.emitError()
             << "cannot scan along axis " << axis << " of " << type << ": "
             << reason << " in " << layout.toString();
    const AxisLevels &levels = *found;
    auto module = op->getParentOfType<ModuleOp>();
    ThreadId thread =
        getThreadId(rewriter, loc, TileGPUDialect::getThreadsPerWarp(module));
    Registers regs(adaptor.getSrc().begin(), adaptor.getSrc().end());
    unsigned chunk = 1u << levels.chunkBits.size();
    unsigned lanes = 1u << levels.laneBits.size();
    unsigned warps = 1u << levels.warpBits.size();
    unsigned runs = 1u << levels.runBits.size();
    // Register k of chunk `base` in scan order.
    auto chunkReg = [&](unsigned base, unsigned k) {
      return base | deposit(reverse ? chunk - 1 - k : k, levels.chunkBits);
    };
    SmallVector<unsigned> chunkBases;
    unsigned chunkMask = maskOf(levels.chunkBits);
    for (unsigned reg = 0; reg < regs.size(); ++reg)
      if ((reg & chunkMask) == 0)
        chunkBases.push_back(reg);

    // 1. In each thread: chunk totals accumulate in place.
    for (unsigned base : chunkBases)
      for (unsigned k = 1; k < chunk; ++k)
        regs[chunkReg(base, k)] =
            emitCombine(rewriter, loc, kind, regs[chunkReg(base, k - 1)],
                        regs[chunkReg(base, k)]);

    // 2. Across lanes. `totals` ends as each chunk's total over the warp's
    // lanes along the axis (every lane holds it), where a later level needs
    // it.
    llvm::DenseMap<unsigned, Value> totals;
    for (unsigned base : chunkBases)
      totals[base] = regs[chunkReg(base, chunk - 1)];
    if (lanes > 1) {
      NVVM::ShflKind shift =
          reverse ? NVVM::ShflKind::down : NVVM::ShflKind::up;
      unsigned firstLaneBit = levels.laneBits.front();
      Value laneIndex =
          scanOrder(rewriter, loc,
                    extractBits(rewriter, loc, thread.lane, levels.laneBits),
                    lanes, reverse);
      // The lane holding the last chunk along the axis, same other bits.
      Value lastLane = arith::OrIOp::create(
          rewriter, loc,
          arith::AndIOp::create(
              rewriter, loc, thread.lane,
              i32Const(rewriter, loc,
                       ~static_cast<int32_t>(maskOf(levels.laneBits)))),
          i32Const(rewriter, loc, (reverse ? 0 : lanes - 1) << firstLaneBit));
      Value hasPrefix =
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne,
                                laneIndex, i32Const(rewriter, loc, 0));
      for (unsigned base : chunkBases) {
        Value total = totals[base];
        for (auto [i, bit] : llvm::enumerate(levels.laneBits)) {
          Value from = emitShuffle(rewriter, loc, total, shift,
                                   i32Const(rewriter, loc, 1u << bit));
          Value reaches = arith::CmpIOp::create(
              rewriter, loc, arith::CmpIPredicate::uge, laneIndex,
              i32Const(rewriter, loc, 1u << i));
          total = selectCombined(rewriter, loc, kind, reaches, from, total);
        }
        Value before = emitShuffle(rewriter, loc, total, shift,
                                   i32Const(rewriter, loc, 1u << firstLaneBit));
        for (unsigned k = 0; k < chunk; ++k) {
          Value &reg = regs[chunkReg(base, k)];
          reg = selectCombined(rewriter, loc, kind, hasPrefix, before, reg);
        }
        if (warps > 1 || runs > 1)
          totals[base] =
              emitShuffle(rewriter, loc, total, NVVM::ShflKind::idx, lastLane);
      }
    }

    // 3. Across warps: `totals` becomes each chunk's total over the run.
    if (warps > 1) {
      SmallVector<int64_t> otherShape(type.getShape());
      otherShape.erase(otherShape.begin() + axis);
      int64_t slots =
          type.getNumElements() / type.getDimSize(axis) * runs * warps;
      Type element = regs.front().getType();
      Type storage = getSharedStorageType(element);
      if (slots * (storage.getIntOrFloatBitWidth() / 8) >
          getSharedMemoryBytes(op))
        return op.emitError() << "scan needs " << slots
                              << " slots of shared memory, more than its "
                                 "scratch holds";
      Value base = getScratchBase(rewriter, loc, op);
      auto coords = emitRegisterCoords(rewriter, loc, layout, thread);
      Value warpPhysical =
          extractBits(rewriter, loc, thread.warp, levels.warpBits);
      Value warpIndex = scanOrder(rewriter, loc, warpPhysical, warps, reverse);
      // The first slot of each chunk's run: slots of the warps follow.
      llvm::DenseMap<unsigned, Value> firstSlot;
      for (unsigned chunkBase : chunkBases) {
        SmallVector<Value> other(coords[chunkBase]);
        other.erase(other.begin() + axis);
        unsigned run = 0;
        for (auto [j, bit] : llvm::enumerate(levels.runBits))
          if (chunkBase & (1u << bit))
            run |= 1u << j;
        Value index = arith::AddIOp::create(
            rewriter, loc,
            arith::MulIOp::create(rewriter, loc,
                                  linearize(rewriter, loc, other, otherShape),
                                  i32Const(rewriter, loc, runs * warps)),
            i32Const(rewriter, loc, run * warps));
        firstSlot[chunkBase] = index;
      }
      auto slotAddress = [&](Value first, Value warp) {
        Value index = arith::AddIOp::create(rewriter, loc, first, warp);
        return LLVM::GEPOp::create(rewriter, loc, base.getType(), storage, base,
                                   ValueRange{index});
      };
      for (unsigned chunkBase : chunkBases)
        LLVM::StoreOp::create(rewriter, loc,
                              toSharedStorage(rewriter, loc, totals[chunkBase]),
                              slotAddress(firstSlot[chunkBase], warpPhysical));
      emitBarrier(rewriter, loc);
      Value hasPrefix =
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne,
                                warpIndex, i32Const(rewriter, loc, 0));
      for (unsigned chunkBase : chunkBases) {
        Value running, before;
        for (unsigned g = 0; g < warps; ++g) {
          Value loaded = fromSharedStorage(
              rewriter, loc,
              LLVM::LoadOp::create(
                  rewriter, loc, storage,
                  slotAddress(
                      firstSlot[chunkBase],
                      i32Const(rewriter, loc, reverse ? warps - 1 - g : g))),
              element);
          running = running ? emitCombine(rewriter, loc, kind, running, loaded)
                            : loaded;
          if (g + 1 == warps)
            break;
          // Warp g + 1 (in scan order) adds the totals of warps 0..g.
          Value isNext =
              arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                    warpIndex, i32Const(rewriter, loc, g + 1));
          before = before ? arith::SelectOp::create(rewriter, loc, isNext,
                                                    running, before)
                                .getResult()
                          : running;
        }
        for (unsigned k = 0; k < chunk; ++k) {
          Value &reg = regs[chunkReg(chunkBase, k)];
          reg = selectCombined(rewriter, loc, kind, hasPrefix, before, reg);
        }
        totals[chunkBase] = running;
      }
    }

    // 4. Across the runs of register repeats.
    if (runs > 1) {
      unsigned runMask = maskOf(levels.runBits);
      for (unsigned chunkBase : chunkBases) {
        if (chunkBase & runMask)
          continue;
        Value carry;
        for (unsigned h = 0; h < runs; ++h) {
          unsigned runBase =
              chunkBase | deposit(reverse ? runs - 1 - h : h, levels.runBits);
          if (carry)
            for (unsigned k = 0; k < chunk; ++k) {
              Value &reg = regs[chunkReg(runBase, k)];
              reg = emitCombine(rewriter, loc, kind, carry, reg);
            }
          carry = carry
                      ? emitCombine(rewriter, loc, kind, carry, totals[runBase])
                      : totals[runBase];
        }
      }
    }
    rewriter.replaceOpWithMultiple(op, {regs});
    return success();
  }
};

} // namespace

void tilec::lowering::populateScanOpToLLVMPatterns(
    const LLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ScanOpConversion>(converter, patterns.getContext());
}
