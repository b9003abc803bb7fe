//===- tilec-opt.cpp - run tilec passes on MLIR files ---------------------===//
//
// An mlir-opt for tilec: our dialects and passes plus the upstream dialects
// and passes a tile program uses. Only what is used is registered, which keeps
// the tool small and quick to build.
//
//===----------------------------------------------------------------------===//

#include "tilec/Analysis/Passes.h"
#include "tilec/Conversion/Passes.h"
#include "tilec/Dialect/Tile/IR/Tile.h"
#include "tilec/Dialect/TileGPU/IR/TileGPU.h"
#include "tilec/Dialect/TileGPU/Transforms/Passes.h"
#include "tilec/Support/LargeStack.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerInlinerPass();
  mlir::registerSymbolDCEPass();
  mlir::registerLoopInvariantCodeMotionPass();
  mlir::registerSCCPPass();
  tilec::registerTilecConversionPasses();
  tilec::registerTilecAnalysisPasses();
  tilec::tilegpu::registerTileGPUTransformsPasses();

  mlir::DialectRegistry registry;
  registry.insert<tilec::tile::TileDialect, tilec::tilegpu::TileGPUDialect,
                  mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::math::MathDialect,
                  mlir::scf::SCFDialect, mlir::cf::ControlFlowDialect,
                  mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect>();
  // Deeply nested input ends in a parse error, not a stack overflow.
  return tilec::runOnLargeStack([&] {
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, "tilec optimizer driver\n", registry));
  });
}
