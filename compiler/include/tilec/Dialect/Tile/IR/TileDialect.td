//===- TileDialect.td - the tile dialect (ttir) ------------*- tablegen -*-===//
//
// The block-level IR of tilec: one kernel program instance operates on
// statically shaped tensors of scalars and pointers.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_DIALECT_TILE_IR_TILEDIALECT_TD
#define TILEC_DIALECT_TILE_IR_TILEDIALECT_TD

include "mlir/IR/OpBase.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::tilec::tile";
  let summary = "Block-level tensor programs (tilec's ttir)";
  let description = [{
    A `tile` program describes what one program instance (a CUDA thread
    block) computes on statically shaped tensors: program ids, index ranges,
    pointer arithmetic, masked loads and stores, `dot` and reductions.
    Elementwise arithmetic uses `arith` and `math` on tensors; loops use
    `scf.for` with carried values. Kernels are `func.func` ops carrying the
    `tile.kernel` attribute.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Unit attribute that marks a func.func as a kernel entry point.
    static constexpr ::llvm::StringLiteral getKernelAttrName() {
      return ::llvm::StringLiteral("tile.kernel");
    }
    /// Integer attribute on a kernel argument: the value (or the address, for
    /// pointers) is a multiple of this power of two.
    static constexpr ::llvm::StringLiteral getDivisibilityAttrName() {
      return ::llvm::StringLiteral("tile.divisibility");
    }
    /// Unit attribute on an integer kernel argument: the kernel was
    /// specialized for the value 1 (the body uses the constant); launching
    /// it with another value is refused.
    static constexpr ::llvm::StringLiteral getEqualToOneAttrName() {
      return ::llvm::StringLiteral("tile.equal_to_one");
    }
    /// The most elements a tensor in a kernel may have (Triton's
    /// TRITON_MAX_TENSOR_NUMEL): a block tensor is one program instance's
    /// data, spread over the registers of its threads.
    static constexpr int64_t getMaxBlockTensorElements() { return 1 << 20; }
  }];
}

#endif // TILEC_DIALECT_TILE_IR_TILEDIALECT_TD
