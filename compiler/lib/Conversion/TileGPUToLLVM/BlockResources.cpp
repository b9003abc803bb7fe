//===- BlockResources.cpp - what a block needs of the target -------------===//

#include "tilec/Conversion/TileGPUToLLVM/BlockResources.h"

#include "tilec/Conversion/Passes.h"
#include "tilec/Dialect/Tile/IR/Tile.h"
#include "tilec/Dialect/TileGPU/IR/TileGPU.h"
#include "tilec/Dialect/TileGPU/Transforms/SharedMemory.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
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

namespace {
/// Checks the tensors of one ttgir module against the registers the lowering
/// writes code for.
class RegisterChecker {
public:
  LogicalResult check(Operation *op) {
    for (Type type : op->getResultTypes())
      if (failed(checkRegisters(op, type)))
        return failure();
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Type type : block.getArgumentTypes())
          if (failed(checkRegisters(op, type)))
            return failure();
    return success();
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

  /// Tensor types seen: each one's layout is built once.
  llvm::DenseSet<Type> checked;
};
} // namespace

/// The shared memory of the blocks the module asks an SM to hold at once
/// (tilegpu.min-blocks-per-sm) against an SM's. An SM has the most one block
/// may opt in to plus the 1 KiB the system reserves per block (the CUDA C++
/// Programming Guide's tables: 228 KiB on sm_90, 164 on sm_80, 100 on
/// sm_86), and each block also takes that 1 KiB.
static BlockResourcesVerdict checkBlocksPerSM(ModuleOp module, StringRef target,
                                              int64_t total,
                                              int64_t maxSharedBytes) {
  constexpr int64_t kReservedPerBlock = 1024;
  int blocks = TileGPUDialect::getMinBlocksPerSM(module);
  if (blocks * (total + kReservedPerBlock) <=
      maxSharedBytes + kReservedPerBlock)
    return BlockResourcesVerdict::Fits;
  // At the kernel: the module would be printed whole.
  Operation *at = module;
  module.walk([&](func::FuncOp func) {
    at = func;
    return WalkResult::interrupt();
  });
  at->emitError() << TileGPUDialect::getMinBlocksPerSMAttrName() << " = "
                  << blocks << " needs " << blocks << " x (" << total << " + "
                  << kReservedPerBlock
                  << ") B of shared memory on an SM; an SM of " << target
                  << " has " << maxSharedBytes + kReservedPerBlock << " B";
  return BlockResourcesVerdict::ExceedsTarget;
}

/// The module's total shared memory (tilegpu.shared) against the target's
/// limit. The error sits at the allocation that reaches the total, where
/// there is one: the module itself would be printed whole.
static BlockResourcesVerdict
checkSharedMemory(ModuleOp module, StringRef target, int64_t maxSharedBytes) {
  auto shared =
      module->getAttrOfType<IntegerAttr>(TileGPUDialect::getSharedAttrName());
  if (!shared) {
    WalkResult result = module.walk([&](Operation *op) {
      if (getAllocationBytes(op) == 0)
        return WalkResult::advance();
      op->emitOpError() << "uses shared memory but the module has no '"
                        << TileGPUDialect::getSharedAttrName()
                        << "': run tilegpu-allocate-shared-memory first";
      return WalkResult::interrupt();
    });
    return result.wasInterrupted() ? BlockResourcesVerdict::Unchecked
                                   : BlockResourcesVerdict::Fits;
  }
  int64_t total = shared.getInt();
  if (total <= maxSharedBytes)
    return checkBlocksPerSM(module, target, total, maxSharedBytes);
  // The allocation at the lowest offset that ends past the limit: the one
  // whose size a user changes (the last one placed may be a few bytes of
  // mbarriers after it).
  Operation *crossing = nullptr;
  int64_t crossingOffset = 0;
  module.walk([&](Operation *op) {
    std::optional<int64_t> offset = getSharedMemoryOffset(op);
    int64_t bytes = getAllocationBytes(op);
    if (!offset || bytes == 0 || *offset + bytes <= maxSharedBytes)
      return;
    if (!crossing || *offset < crossingOffset) {
      crossing = op;
      crossingOffset = *offset;
    }
  });
  InFlightDiagnostic diag =
      crossing ? crossing->emitOpError() : module.emitError();
  diag << "needs " << total << " B of shared memory in all; a block on "
       << target << " has at most " << maxSharedBytes << " B";
  if (crossing)
    diag << " (this op's " << getAllocationBytes(crossing) << " B at offset "
         << crossingOffset << " cross the limit)";
  return BlockResourcesVerdict::ExceedsTarget;
}

BlockResourcesVerdict tilec::checkBlockResources(ModuleOp module) {
  auto target =
      module->getAttrOfType<StringAttr>(TileGPUDialect::getTargetAttrName());
  if (!target) {
    module.emitError() << "missing '" << TileGPUDialect::getTargetAttrName()
                       << "': run convert-tile-to-tilegpu first";
    return BlockResourcesVerdict::Unchecked;
  }
  std::optional<int64_t> maxSharedBytes =
      getMaxSharedBytesPerBlock(target.getValue());
  if (!maxSharedBytes) {
    std::string known;
    for (const TargetSharedMemory &entry : kTargets)
      known += " sm_" + std::to_string(entry.computeCapability);
    module.emitError() << "no shared-memory limit known for target '"
                       << target.getValue() << "'; known:" << known;
    return BlockResourcesVerdict::Unchecked;
  }
  RegisterChecker checker;
  WalkResult result = module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    return failed(checker.check(op)) ? WalkResult::interrupt()
                                     : WalkResult::advance();
  });
  if (result.wasInterrupted())
    return BlockResourcesVerdict::ExceedsTarget;
  return checkSharedMemory(module, target.getValue(), *maxSharedBytes);
}

LogicalResult tilec::verifyBlockResources(ModuleOp module) {
  return success(checkBlockResources(module) == BlockResourcesVerdict::Fits);
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
