//===- TileGPUToLLVM.cpp - ttgir -> LLVM + NVVM dialects ------------------===//
//
// Three steps:
//  1. tensors -> registers: every tile/tilegpu op and every arith/math op on
//     tensors becomes per-thread code (1:N type conversion, scf loops carry
//     the registers);
//  2. scf -> cf;
//  3. the remaining scalar arith/math/cf/func ops -> LLVM (math functions
//     through libdevice), kernels marked for NVVM.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "tilec/Conversion/Passes.h"
#include "tilec/Conversion/TileGPUToLLVM/AccessVectorWidth.h"
#include "tilec/Conversion/TileGPUToLLVM/BlockResources.h"
#include "tilec/Dialect/TileGPU/Transforms/DeadLoopValues.h"
#include "tilec/Dialect/TileGPU/Transforms/SharedMemory.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Transforms/RegionUtils.h"

namespace tilec {
#define GEN_PASS_DEF_CONVERTTILEGPUTOLLVM
#include "tilec/Conversion/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;
using namespace tilec::lowering;

namespace {

constexpr StringLiteral kSharedMemoryName = "global_smem";

/// Scalars and pointers as LLVM types; a tensor as the registers of its
/// layout.
class RegisterTypeConverter : public LLVMTypeConverter {
public:
  explicit RegisterTypeConverter(MLIRContext *context)
      : LLVMTypeConverter(context) {
    addConversion([context](tile::PointerType type) -> Type {
      return LLVM::LLVMPointerType::get(context, type.getAddressSpace());
    });
    addConversion([this](RankedTensorType type, SmallVectorImpl<Type> &results)
                      -> std::optional<LogicalResult> {
      if (!getDistributedLayout(type))
        return std::nullopt;
      Type element = convertType(type.getElementType());
      if (!element)
        return failure();
      results.append(getLinearLayout(type).getNumRegisters(), element);
      return success();
    });
    // A shared buffer is its base address; the layout is static.
    addConversion([context](MemDescType) -> Type {
      return LLVM::LLVMPointerType::get(context, 3);
    });
    // A tensor map is the generic address of its (grid-constant) parameter.
    addConversion([context](TensorMapType) -> Type {
      return LLVM::LLVMPointerType::get(context);
    });
  }

  bool isLegal(Type type) const {
    return !isa<RankedTensorType, tile::PointerType, MemDescType,
                TensorMapType>(type);
  }
};

/// The vector width computeAccessVectorWidths found for an op, 1 if none.
VectorWidthQuery
getVectorWidthQuery(const llvm::DenseMap<Operation *, unsigned> &widths) {
  return [&widths](Operation *op) {
    auto it = widths.find(op);
    return it == widths.end() ? 1u : it->second;
  };
}

struct ConvertTileGPUToLLVMPass
    : tilec::impl::ConvertTileGPUToLLVMBase<ConvertTileGPUToLLVMPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    int numWarps = TileGPUDialect::getNumWarps(module);
    int threadsPerWarp = TileGPUDialect::getThreadsPerWarp(module);
    if (numWarps <= 0 || threadsPerWarp <= 0) {
      module.emitError() << "missing '" << TileGPUDialect::getNumWarpsAttrName()
                         << "' or '"
                         << TileGPUDialect::getThreadsPerWarpAttrName()
                         << "': run convert-tile-to-tilegpu first";
      return signalPassFailure();
    }
    if (failed(checkLayouts(module)) || failed(verifyBlockResources(module)) ||
        failed(checkSharedMemoryPlaced(module)))
      return signalPassFailure();
    llvm::DenseMap<Operation *, unsigned> vectorWidths =
        computeAccessVectorWidths(module);
    if (failed(verifySharedMemoryBuffers(module,
                                         getVectorWidthQuery(vectorWidths))))
      return signalPassFailure();
    declareSharedMemory(module);

    if (failed(distributeTensors(module, vectorWidths)))
      return signalPassFailure();
    pruneRegisters(module);
    if (failed(lowerStructuredControlFlow(module)) ||
        failed(lowerScalarsToLLVM(module, numWarps * threadsPerWarp,
                                  TileGPUDialect::getMinBlocksPerSM(module))))
      return signalPassFailure();

    if (auto smem = module.lookupSymbol<LLVM::GlobalOp>(kSharedMemoryName))
      if (SymbolTable::symbolKnownUseEmpty(smem, module))
        smem.erase();
  }

  /// Every tensor must have a distributed layout the lowering can index.
  LogicalResult checkLayouts(ModuleOp module) {
    WalkResult result = module.walk([&](Operation *op) {
      for (Type type : op->getResultTypes()) {
        auto tensor = dyn_cast<RankedTensorType>(type);
        if (!tensor)
          continue;
        if (!getDistributedLayout(tensor)) {
          op->emitError() << "tensor without a distributed layout: " << type
                          << "; run convert-tile-to-tilegpu first";
          return WalkResult::interrupt();
        }
        LinearLayout layout = getLinearLayout(tensor);
        if (!layout.hasDisjointBases()) {
          op->emitError() << "layout " << tensor.getEncoding()
                          << " cannot be indexed by addition for " << type
                          << ": " << layout.toString();
          return WalkResult::interrupt();
        }
      }
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }

  /// Every op that uses shared memory must have its place; the module's
  /// `tilegpu.shared` (checked by verifyBlockResources) sizes the launch.
  LogicalResult checkSharedMemoryPlaced(ModuleOp module) {
    WalkResult result = module.walk([&](Operation *op) {
      if (getAllocationBytes(op) == 0 || getSharedMemoryOffset(op))
        return WalkResult::advance();
      op->emitOpError() << "uses shared memory but has no '"
                        << TileGPUDialect::getOffsetAttrName()
                        << "': run tilegpu-allocate-shared-memory first";
      return WalkResult::interrupt();
    });
    return failure(result.wasInterrupted());
  }

  /// The dynamic shared memory buffer: its size is the module's
  /// `tilegpu.shared`, given at launch.
  void declareSharedMemory(ModuleOp module) {
    OpBuilder builder(module.getBodyRegion());
    auto type = LLVM::LLVMArrayType::get(builder.getI8Type(), 0);
    auto global = LLVM::GlobalOp::create(
        builder, module.getLoc(), type, /*isConstant=*/false,
        LLVM::Linkage::External, kSharedMemoryName, Attribute(),
        /*alignment=*/16, /*addrSpace=*/3);
    (void)global;
  }

  LogicalResult
  distributeTensors(ModuleOp module,
                    const llvm::DenseMap<Operation *, unsigned> &widths) {
    MLIRContext *context = &getContext();
    RegisterTypeConverter converter(context);
    ConversionTarget target(*context);
    target.addLegalDialect<LLVM::LLVMDialect, NVVM::NVVMDialect>();
    target.addIllegalDialect<tile::TileDialect, TileGPUDialect>();
    auto isLegal = [&](Operation *op) {
      return llvm::all_of(op->getOperandTypes(),
                          [&](Type t) { return converter.isLegal(t); }) &&
             llvm::all_of(op->getResultTypes(),
                          [&](Type t) { return converter.isLegal(t); });
    };
    target.addDynamicallyLegalDialect<arith::ArithDialect, math::MathDialect,
                                      cf::ControlFlowDialect>(isLegal);
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      return converter.isSignatureLegal(op.getFunctionType());
    });
    target.addDynamicallyLegalOp<func::ReturnOp>(isLegal);

    RewritePatternSet patterns(context);
    populateElementwiseOpToLLVMPatterns(converter, patterns);
    populateMemoryOpToLLVMPatterns(converter, patterns,
                                   getVectorWidthQuery(widths));
    populateSharedMemoryOpToLLVMPatterns(converter, patterns);
    populateAtomicOpToLLVMPatterns(converter, patterns);
    populateScanOpToLLVMPatterns(converter, patterns);
    populateHistogramOpToLLVMPatterns(converter, patterns);
    populateSharedMemoryBufferOpToLLVMPatterns(converter, patterns,
                                               getVectorWidthQuery(widths));
    populateDotOperandToLLVMPatterns(converter, patterns);
    populateDotOpToLLVMPatterns(converter, patterns);
    populateWarpGroupDotOpToLLVMPatterns(converter, patterns);
    populateTmaOpToLLVMPatterns(converter, patterns);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    return applyPartialConversion(module, target, std::move(patterns));
  }

  /// A tensor op computes every register of its result, and a loop carries
  /// them all, but a vector load or store reads one pointer and one mask
  /// bit per vector: the rest is dead, kept alive only through the back
  /// edge. Dropping it here spares translation and LLVM's optimizer a large
  /// part of a matmul's IR.
  void pruneRegisters(ModuleOp module) {
    if (!removeDeadLoopValues(module))
      return;
    // The dead iter_args now yield themselves; their updates and everything
    // else without uses go. (A greedy canonicalization would also drop the
    // iter_args, for several times the cost; LLVM folds those phis.)
    IRRewriter rewriter(&getContext());
    (void)runRegionDCE(rewriter, module->getRegions());
  }

  LogicalResult lowerStructuredControlFlow(ModuleOp module) {
    MLIRContext *context = &getContext();
    ConversionTarget target(*context);
    target.addIllegalDialect<scf::SCFDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(context);
    populateSCFToControlFlowConversionPatterns(patterns);
    return applyPartialConversion(module, target, std::move(patterns));
  }

  LogicalResult lowerScalarsToLLVM(ModuleOp module, int threadsPerCTA,
                                   int minBlocksPerSM) {
    MLIRContext *context = &getContext();
    // Kernel markers and specialization hints become their LLVM forms.
    SmallVector<StringAttr> kernels;
    module.walk([&](func::FuncOp func) {
      if (func->removeAttr(tile::TileDialect::getKernelAttrName()))
        kernels.push_back(func.getSymNameAttr());
      for (unsigned arg = 0; arg < func.getNumArguments(); ++arg) {
        // A tensor map is a 128-byte, 64-byte aligned parameter read in
        // place (its address goes to the TMA copies).
        if (func.removeArgAttr(arg, TileGPUDialect::getTensorMapAttrName())) {
          Builder b(context);
          func.setArgAttr(arg, LLVM::LLVMDialect::getByValAttrName(),
                          TypeAttr::get(LLVM::LLVMArrayType::get(
                              b.getI8Type(), 128)));
          func.setArgAttr(arg, LLVM::LLVMDialect::getAlignAttrName(),
                          b.getI64IntegerAttr(64));
          func.setArgAttr(arg, NVVM::NVVMDialect::getGridConstantAttrName(),
                          b.getUnitAttr());
        }
        func.removeArgAttr(arg, tile::TileDialect::getEqualToOneAttrName());
        Attribute divisibility = func.removeArgAttr(
            arg, tile::TileDialect::getDivisibilityAttrName());
        if (divisibility &&
            isa<LLVM::LLVMPointerType>(func.getArgument(arg).getType()))
          func.setArgAttr(arg, LLVM::LLVMDialect::getAlignAttrName(),
                          divisibility);
      }
    });

    LLVMTypeConverter converter(context);
    LLVMConversionTarget target(*context);
    target.addLegalOp<ModuleOp>();
    target.addLegalDialect<NVVM::NVVMDialect>();
    RewritePatternSet patterns(context);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    // libdevice first: NVPTX has no instructions for exp, log, ...
    populateLibDeviceConversionPatterns(converter, patterns, /*benefit=*/10);
    populateMathToLLVMConversionPatterns(converter, patterns);
    cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    populateFuncToLLVMConversionPatterns(converter, patterns);
    index::populateIndexToLLVMConversionPatterns(converter, patterns);
    ub::populateUBToLLVMConversionPatterns(converter, patterns);
    if (failed(applyFullConversion(module, target, std::move(patterns))))
      return failure();
    // NVVM ops without an LLVM intrinsic (wgmma.mma_async) become inline
    // PTX.
    RewritePatternSet ptxPatterns(context);
    populateNVVMToLLVMConversionPatterns(ptxPatterns);
    if (failed(applyPatternsGreedily(module, std::move(ptxPatterns))))
      return failure();

    Builder builder(context);
    for (StringAttr name : kernels) {
      auto func = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
      if (!func)
        continue;
      func->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(),
                    builder.getUnitAttr());
      func->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                    builder.getDenseI32ArrayAttr({threadsPerCTA, 1, 1}));
      // With only .maxntid, ptxas sizes registers for the most CTAs an SM
      // can hold (32 per thread at 128 threads) and spills; .minnctapersm 1
      // leaves it the full 255 and its own occupancy trade-off, and a
      // config's min_blocks_per_sm caps them at what that many blocks leave.
      func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    builder.getI32IntegerAttr(minBlocksPerSM));
    }
    return success();
  }
};

} // namespace
