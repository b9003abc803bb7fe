//===- SharedMemory.cpp - what ttgir ops take of shared memory ------------===//

#include "tilec/Dialect/TileGPU/Transforms/SharedMemory.h"

#include "tilec/Dialect/Tile/IR/Tile.h"
#include "tilec/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <array>
#include <map>
#include <vector>

using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;

int64_t tilec::getSharedStorageBytes(Type element) {
  if (isa<tile::PointerType>(element))
    return 8;
  return std::max(8u, element.getIntOrFloatBitWidth()) / 8;
}

/// Bytes a reduction uses to combine the partials of the warps along its
/// axis: one slot per result element and warp group.
static int64_t getReductionSharedBytes(tile::ReduceOp reduce) {
  auto src = cast<RankedTensorType>(reduce.getSrc().getType());
  LinearLayout layout = getLinearLayout(src);
  int64_t groups = 1;
  for (const LinearLayout::Basis &basis : layout.getWarpBases())
    if (basis[reduce.getAxis()] != 0)
      groups *= 2;
  if (groups == 1)
    return 0;
  auto result = dyn_cast<RankedTensorType>(reduce.getType());
  return groups * (result ? result.getNumElements() : 1) *
         getSharedStorageBytes(src.getElementType());
}

/// Bytes an atomic uses to give its old values to the threads that hold
/// copies of an element in other warps: one slot per element, written by the
/// thread that performed the atomic. Copies within a warp are shuffled, and
/// an atomic whose result is unused needs none.
static int64_t getAtomicSharedBytes(Operation *op) {
  Value result = op->getResult(0);
  if (result.use_empty())
    return 0;
  Type element = tile::getElementTypeOrSelf(result.getType());
  if (auto tensor = dyn_cast<RankedTensorType>(result.getType())) {
    if (getLinearLayout(tensor).getRedundantWarpMask() == 0)
      return 0;
    return tensor.getNumElements() * getSharedStorageBytes(element);
  }
  // A scalar is held by every thread and updated by one.
  auto module = op->getParentOfType<ModuleOp>();
  if (!module || TileGPUDialect::getNumWarps(module) <= 1)
    return 0;
  return getSharedStorageBytes(element);
}

/// Bytes a scan uses to combine the totals of the warps along its axis: one
/// slot per warp for every run of elements the CTA's threads cover along the
/// axis at once (the register repeats above the warps make several runs).
static int64_t getScanSharedBytes(tile::ScanOp scan) {
  auto src = cast<RankedTensorType>(scan.getSrc().getType());
  LinearLayout layout = getLinearLayout(src);
  unsigned axis = scan.getAxis();
  int64_t warps = 1, highestWarpBasis = 0;
  for (const LinearLayout::Basis &basis : layout.getWarpBases())
    if (basis[axis] != 0) {
      warps *= 2;
      highestWarpBasis = std::max(highestWarpBasis, basis[axis]);
    }
  if (warps == 1)
    return 0;
  int64_t runs = 1;
  for (const LinearLayout::Basis &basis : layout.getRegisterBases())
    if (basis[axis] > highestWarpBasis)
      runs *= 2;
  return src.getNumElements() / src.getDimSize(axis) * runs * warps *
         getSharedStorageBytes(src.getElementType());
}

FailureOr<RankRounds> tilec::getRankRounds(const LinearLayout &layout,
                                           std::string &reason) {
  if (layout.getRank() != 1) {
    reason = "the layout is not 1-D";
    return failure();
  }
  RankRounds rounds;
  int64_t next = 1;
  // A level's nonzero bases come first, each the next power of two; zero
  // bases (copies) only follow them.
  auto takeLevel = [&](ArrayRef<LinearLayout::Basis> bases, StringRef level,
                       unsigned &used) {
    bool copies = false;
    for (const LinearLayout::Basis &basis : bases) {
      if (basis[0] == 0) {
        copies = true;
        continue;
      }
      if (copies || basis[0] != next) {
        reason = ("its " + level +
                  " bases do not hold consecutive elements from the lowest "
                  "bit up")
                     .str();
        return false;
      }
      ++used;
      next *= 2;
    }
    return true;
  };
  unsigned registerBits = 0;
  if (!takeLevel(layout.getLaneBases(), "lane", rounds.laneBits) ||
      !takeLevel(layout.getWarpBases(), "warp", rounds.warpBits) ||
      !takeLevel(layout.getRegisterBases(), "register", registerBits))
    return failure();
  if (registerBits != layout.getRegisterBases().size()) {
    reason = "its registers hold copies";
    return failure();
  }
  return rounds;
}

/// Bytes bin_rank counts in: a row of i32 counters a bin for the earlier
/// rounds and one for each warp that ranks (none where its layout cannot be
/// ranked: the lowering says why).
static int64_t getBinRankSharedBytes(tile::BinRankOp rank) {
  std::string reason;
  FailureOr<RankRounds> rounds = getRankRounds(
      getLinearLayout(cast<RankedTensorType>(rank.getType())), reason);
  if (failed(rounds))
    return 0;
  return 4 * ((int64_t(1) << rounds->warpBits) + 1) * rank.getBins();
}

SmallVector<int64_t, 4> tilec::getRowMajorStrides(ArrayRef<int64_t> shape,
                                                  int64_t rowPad) {
  int rank = static_cast<int>(shape.size());
  SmallVector<int64_t, 4> strides(rank, 1);
  for (int dim = rank - 2; dim >= 0; --dim)
    strides[dim] =
        strides[dim + 1] * shape[dim + 1] + (dim == rank - 2 ? rowPad : 0);
  return strides;
}

static int64_t getSharedOffset(const LinearLayout::Basis &coords,
                               ArrayRef<int64_t> strides) {
  int64_t offset = 0;
  for (auto [coord, stride] : llvm::zip(coords, strides))
    offset += coord * stride;
  return offset;
}

unsigned tilec::getSharedVectorWidth(const LinearLayout &layout,
                                     ArrayRef<int64_t> strides,
                                     unsigned elementBytes) {
  unsigned numRegs = layout.getNumRegisters();
  for (unsigned vec = std::min<unsigned>(16 / elementBytes, numRegs); vec > 1;
       vec /= 2) {
    bool fits = true;
    for (auto bases : {layout.getLaneBases(), layout.getWarpBases()})
      for (const LinearLayout::Basis &basis : bases)
        fits &= getSharedOffset(basis, strides) % vec == 0;
    for (unsigned reg = 0; fits && reg < numRegs; reg += vec) {
      int64_t first = getSharedOffset(layout.registerCoords(reg), strides);
      fits &= first % vec == 0;
      for (unsigned i = 1; fits && i < vec; ++i)
        fits &= getSharedOffset(layout.registerCoords(reg + i), strides) ==
                first + i;
    }
    if (fits)
      return vec;
  }
  return 1;
}

namespace {
/// How one warp accesses a layout's elements in shared memory, in the terms
/// of the hardware: a wavefront serves one distinct 4-byte word per bank
/// (lanes reading the same word share it), and 8- and 16-byte accesses are
/// served a half and a quarter warp at a time. The coordinates of every
/// register and lane are computed once; strides place them.
class WarpAccessPattern {
public:
  WarpAccessPattern(const LinearLayout &layout, unsigned elementBytes)
      : elementBytes(elementBytes) {
    for (unsigned reg = 0; reg < layout.getNumRegisters(); ++reg)
      registers.push_back(layout.registerCoords(reg));
    for (unsigned lane = 0; lane < layout.getNumLanes(); ++lane)
      lanes.push_back(layout.apply(0, lane, 0));
  }

  /// Wavefronts to access every register in vectors of `vec` elements.
  int64_t countWavefronts(ArrayRef<int64_t> strides, unsigned vec) const {
    int64_t wavefronts = 0;
    SmallVector<int64_t, 128> words;
    unsigned lanesPerPhase = getLanesPerPhase(vec);
    for (unsigned reg = 0; reg < registers.size(); reg += vec)
      for (unsigned first = 0; first < lanes.size(); first += lanesPerPhase) {
        words.clear();
        for (unsigned lane = first; lane < first + lanesPerPhase; ++lane) {
          int64_t byte = getByte(registers[reg], lanes[lane], strides);
          for (int64_t word = byte / kBankBytes;
               word <= (byte + vec * elementBytes - 1) / kBankBytes; ++word)
            words.push_back(word);
        }
        llvm::sort(words);
        std::array<int64_t, kBanks> perBank{};
        for (int64_t word : llvm::make_range(
                 words.begin(), std::unique(words.begin(), words.end())))
          ++perBank[word % kBanks];
        wavefronts += *std::max_element(perBank.begin(), perBank.end());
      }
    return wavefronts;
  }

  /// Wavefronts with no bank conflict at all: one per phase of each vector.
  int64_t countConflictFreeWavefronts(unsigned vec) const {
    return registers.size() / vec * (lanes.size() / getLanesPerPhase(vec));
  }

private:
  static constexpr unsigned kBanks = 32, kBankBytes = 4;

  unsigned getLanesPerPhase(unsigned vec) const {
    unsigned accessBytes = vec * elementBytes;
    return std::min<unsigned>(
        lanes.size(), accessBytes <= kBankBytes ? 32u : 128u / accessBytes);
  }

  /// The byte offset of the element at registerCoords XOR laneCoords (the
  /// layout's own composition of its bases).
  int64_t getByte(const LinearLayout::Basis &registerCoords,
                  const LinearLayout::Basis &laneCoords,
                  ArrayRef<int64_t> strides) const {
    int64_t offset = 0;
    for (auto [reg, lane, stride] :
         llvm::zip(registerCoords, laneCoords, strides))
      offset += (reg ^ lane) * stride;
    return offset * elementBytes;
  }

  unsigned elementBytes;
  SmallVector<LinearLayout::Basis> registers, lanes;
};

/// The padding search of getConversionScratch for one conversion.
ConversionScratch searchConversionScratch(const LinearLayout &src,
                                          const LinearLayout &dst,
                                          unsigned elementBytes) {
  ArrayRef<int64_t> shape = dst.getShape();
  unsigned rank = shape.size();
  auto withPadding = [&](int64_t pad) {
    ConversionScratch scratch;
    scratch.strides = getRowMajorStrides(shape, pad);
    scratch.elements = rank ? shape[0] * scratch.strides[0] : 1;
    scratch.storeVector =
        getSharedVectorWidth(src, scratch.strides, elementBytes);
    scratch.loadVector =
        getSharedVectorWidth(dst, scratch.strides, elementBytes);
    return scratch;
  };
  ConversionScratch best = withPadding(0);
  if (rank < 2)
    return best;
  WarpAccessPattern stores(src, elementBytes), loads(dst, elementBytes);
  auto cost = [&](const ConversionScratch &scratch) {
    return stores.countWavefronts(scratch.strides, scratch.storeVector) +
           loads.countWavefronts(scratch.strides, scratch.loadVector);
  };
  // Rows are powers of two (tile shapes), whose unpadded strides align every
  // vector a pad could: the unpadded vectors' conflict-free count is the
  // least any pad can reach (a miss here would only cost the search).
  int64_t leastCost = stores.countConflictFreeWavefronts(best.storeVector) +
                      loads.countConflictFreeWavefronts(best.loadVector);
  // Pads are tried from the smallest (one that misaligns a vector costs its
  // narrower accesses); the first of the cheapest wins.
  constexpr int64_t kMaxPadBytes = 128;
  int64_t bestCost = cost(best);
  for (int64_t pad = 1;
       bestCost > leastCost && pad * elementBytes <= kMaxPadBytes; ++pad) {
    ConversionScratch padded = withPadding(pad);
    int64_t paddedCost = cost(padded);
    if (paddedCost < bestCost) {
      best = std::move(padded);
      bestCost = paddedCost;
    }
  }
  return best;
}

/// A conversion's layouts and element size as one key: the shape, then each
/// basis list with its length.
std::vector<int64_t> getScratchKey(const LinearLayout &src,
                                   const LinearLayout &dst,
                                   unsigned elementBytes) {
  std::vector<int64_t> key = {elementBytes};
  for (const LinearLayout *layout : {&src, &dst}) {
    key.push_back(int64_t(layout->getShape().size()));
    llvm::append_range(key, layout->getShape());
    for (ArrayRef<LinearLayout::Basis> bases :
         {layout->getRegisterBases(), layout->getLaneBases(),
          layout->getWarpBases()}) {
      key.push_back(int64_t(bases.size()));
      for (const LinearLayout::Basis &basis : bases)
        llvm::append_range(key, basis);
    }
  }
  return key;
}
} // namespace

ConversionScratch tilec::getConversionScratch(const LinearLayout &src,
                                              const LinearLayout &dst,
                                              unsigned elementBytes) {
  // The same conversions are asked for by the barrier analysis, the
  // allocation, its check and the lowering, for every op of a kernel: the
  // search was 7% of a convolution's compile before PTX. Per thread (a
  // tuner compiles on several), bounded.
  thread_local std::map<std::vector<int64_t>, ConversionScratch> searched;
  std::vector<int64_t> key = getScratchKey(src, dst, elementBytes);
  if (auto found = searched.find(key); found != searched.end())
    return found->second;
  if (searched.size() >= 256)
    searched.clear();
  ConversionScratch scratch = searchConversionScratch(src, dst, elementBytes);
  searched.emplace(std::move(key), scratch);
  return scratch;
}

int64_t tilec::getSharedMemoryBytes(Operation *op) {
  // Only tensors with distributed layouts are lowered (ttir has none).
  if (!llvm::all_of(op->getOperandTypes(), [](Type type) {
        return !isa<RankedTensorType>(type) || getDistributedLayout(type);
      }))
    return 0;
  if (auto reduce = dyn_cast<tile::ReduceOp>(op))
    return getReductionSharedBytes(reduce);
  if (auto scan = dyn_cast<tile::ScanOp>(op))
    return getScanSharedBytes(scan);
  if (isa<tile::AtomicRMWOp, tile::AtomicCASOp>(op))
    return getAtomicSharedBytes(op);
  if (auto histogram = dyn_cast<tile::HistogramOp>(op))
    return 4 * cast<RankedTensorType>(histogram.getType()).getDimSize(0);
  if (auto rank = dyn_cast<tile::BinRankOp>(op))
    return getBinRankSharedBytes(rank);
  if (!isa<ConvertLayoutOp, tile::ReshapeOp, tile::TransOp>(op))
    return 0;
  auto src = cast<RankedTensorType>(op->getOperand(0).getType());
  auto dst = cast<RankedTensorType>(op->getResult(0).getType());
  if (!getDistributedLayout(dst))
    return 0;
  // A conversion whose threads already hold their elements renames
  // registers; reshape and trans always take the round trip.
  int64_t elementBytes = getSharedStorageBytes(dst.getElementType());
  if (!isa<ConvertLayoutOp>(op))
    return dst.getNumElements() * elementBytes;
  LinearLayout srcLayout = getLinearLayout(src);
  LinearLayout dstLayout = getLinearLayout(dst);
  if (succeeded(mapRegisters(
          srcLayout, dstLayout,
          [](const LinearLayout::Basis &coords) { return coords; })))
    return 0;
  return getConversionScratch(srcLayout, dstLayout, elementBytes).elements *
         elementBytes;
}

int64_t tilec::getAllocationBytes(Operation *op) {
  if (auto alloc = dyn_cast<LocalAllocOp>(op))
    return alloc.getType().getSizeInBytes();
  return getSharedMemoryBytes(op);
}

std::optional<int64_t> tilec::getSharedMemoryOffset(Operation *op) {
  if (auto offset =
          op->getAttrOfType<IntegerAttr>(TileGPUDialect::getOffsetAttrName()))
    return offset.getInt();
  return std::nullopt;
}
