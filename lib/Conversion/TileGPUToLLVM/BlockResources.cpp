//===- BlockResources.cpp - what a block needs of the target -------------===//

#include "tilec/Conversion/TileGPUToLLVM/BlockResources.h"

#include "LoweringUtils.h"

#include "tilec/Conversion/Passes.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

namespace tilec {
#define GEN_PASS_DEF_TILEGPUCHECKBLOCKRESOURCES
#include "tilec/Conversion/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;

namespace {
struct TargetSharedMemory {
  unsigned computeCapability;
  int64_t kiB;
};
} // namespace

/// The opt-in maximum of shared memory per block (CUDA C++ Programming Guide,
/// technical specifications per compute capability).
static constexpr TargetSharedMemory kTargets[] = {
    {75, 64},   {80, 163},  {86, 99},   {87, 163}, {89, 99}, {90, 227},
    {100, 227}, {103, 227}, {110, 227}, {120, 99}, {121, 99}};

std::optional<int64_t> tilec::getMaxSharedBytesPerBlock(StringRef target) {
  unsigned capability = 0;
  if (!target.consume_front("sm_") ||
      target.take_while(llvm::isDigit).getAsInteger(10, capability))
    return std::nullopt;
  for (const TargetSharedMemory &known : kTargets)
    if (known.computeCapability == capability)
      return known.kiB * 1024;
  return std::nullopt;
}

int64_t tilec::getRegistersPerThread(RankedTensorType type) {
  Type element = type.getElementType();
  unsigned bits =
      isa<tile::PointerType>(element) ? 64 : element.getIntOrFloatBitWidth();
  return int64_t(getLinearLayout(type).getNumRegisters()) *
         llvm::divideCeil(bits, 32);
}

/// Bytes of one element in shared memory, stored as getSharedStorageType
/// says: i1 as i8, pointers as i64.
static int64_t getSharedStorageBytes(Type element) {
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

int64_t tilec::getSharedMemoryBytes(Operation *op) {
  // Only tensors with distributed layouts are lowered (ttir has none).
  if (!llvm::all_of(op->getOperandTypes(), [](Type type) {
        return !isa<RankedTensorType>(type) || getDistributedLayout(type);
      }))
    return 0;
  if (auto reduce = dyn_cast<tile::ReduceOp>(op))
    return getReductionSharedBytes(reduce);
  if (!isa<ConvertLayoutOp, tile::ReshapeOp, tile::TransOp>(op))
    return 0;
  auto src = cast<RankedTensorType>(op->getOperand(0).getType());
  auto dst = cast<RankedTensorType>(op->getResult(0).getType());
  if (!getDistributedLayout(dst))
    return 0;
  // A conversion whose threads already hold their elements renames
  // registers; reshape and trans always take the round trip.
  if (isa<ConvertLayoutOp>(op) &&
      succeeded(lowering::mapRegisters(
          getLinearLayout(src), getLinearLayout(dst),
          [](const LinearLayout::Basis &coords) { return coords; })))
    return 0;
  return dst.getNumElements() * getSharedStorageBytes(dst.getElementType());
}

namespace {
/// Checks the ops of one ttgir module against the limits of its target.
class BlockResourceChecker {
public:
  BlockResourceChecker(StringRef target, int64_t maxSharedBytes)
      : target(target), maxSharedBytes(maxSharedBytes) {}

  LogicalResult check(Operation *op) {
    for (Type type : op->getResultTypes())
      if (failed(checkRegisters(op, type)))
        return failure();
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Type type : block.getArgumentTypes())
          if (failed(checkRegisters(op, type)))
            return failure();
    int64_t bytes = getSharedMemoryBytes(op);
    if (bytes <= maxSharedBytes)
      return success();
    return op->emitOpError()
           << "needs " << bytes << " B of shared memory for "
           << op->getOperand(0).getType() << "; a block on " << target
           << " has at most " << maxSharedBytes << " B";
  }

private:
  LogicalResult checkRegisters(Operation *op, Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !getDistributedLayout(tensor) ||
        !checked.insert(type).second)
      return success();
    int64_t registers = getRegistersPerThread(tensor);
    if (registers <= kMaxTensorRegistersPerThread)
      return success();
    return op->emitError() << tensor << " needs " << registers
                           << " registers per thread; one tensor may take at "
                              "most "
                           << kMaxTensorRegistersPerThread;
  }

  StringRef target;
  int64_t maxSharedBytes;
  /// Tensor types seen: each one's layout is built once.
  llvm::DenseSet<Type> checked;
};
} // namespace

LogicalResult tilec::verifyBlockResources(ModuleOp module) {
  auto target =
      module->getAttrOfType<StringAttr>(TileGPUDialect::getTargetAttrName());
  if (!target)
    return module.emitError()
           << "missing '" << TileGPUDialect::getTargetAttrName()
           << "': run convert-tile-to-tilegpu first";
  std::optional<int64_t> maxSharedBytes =
      getMaxSharedBytesPerBlock(target.getValue());
  if (!maxSharedBytes) {
    std::string known;
    for (const TargetSharedMemory &entry : kTargets)
      known += " sm_" + std::to_string(entry.computeCapability);
    return module.emitError() << "no shared-memory limit known for target '"
                              << target.getValue() << "'; known:" << known;
  }
  BlockResourceChecker checker(target.getValue(), *maxSharedBytes);
  WalkResult result = module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    return failed(checker.check(op)) ? WalkResult::interrupt()
                                     : WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

namespace {
struct TileGPUCheckBlockResourcesPass
    : tilec::impl::TileGPUCheckBlockResourcesBase<
          TileGPUCheckBlockResourcesPass> {
  void runOnOperation() override {
    if (failed(verifyBlockResources(getOperation())))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
