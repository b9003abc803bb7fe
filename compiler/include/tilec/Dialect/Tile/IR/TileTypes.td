//===- TileTypes.td - tile dialect types -------------------*- tablegen -*-===//

#ifndef TILEC_DIALECT_TILE_IR_TILETYPES_TD
#define TILEC_DIALECT_TILE_IR_TILETYPES_TD

include "tilec/Dialect/Tile/IR/TileDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"
include "mlir/IR/CommonTypeConstraints.td"

class Tile_TypeDef<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Tile_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Tile_PointerType : Tile_TypeDef<"Pointer", "ptr"> {
  let summary = "Pointer to a scalar in an address space";
  let description = [{
    `!tile.ptr<f16>` points to an f16 in global memory (address space 1);
    `!tile.ptr<f32, 3>` points to shared memory. Tensors of pointers are
    builtin ranked tensors with this element type.
  }];
  let parameters = (ins "::mlir::Type":$pointeeType,
                        DefaultValuedParameter<"int", "1">:$addressSpace);
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::Type":$pointeeType,
                                        CArg<"int", "1">:$addressSpace), [{
      return $_get(pointeeType.getContext(), pointeeType, addressSpace);
    }]>
  ];
  let assemblyFormat = "`<` $pointeeType (`,` $addressSpace^)? `>`";
  let genVerifyDecl = 1;
  let skipDefaultBuilders = 1;
}

def Tile_Float : AnyTypeOf<[F16, BF16, F32, F64], "floating-point">;
def Tile_Int : AnyTypeOf<[I1, I8, I16, I32, I64], "signless integer">;
def Tile_Ptr : Type<CPred<"::llvm::isa<::tilec::tile::PointerType>($_self)">,
                    "tile pointer", "::tilec::tile::PointerType">;
def Tile_Scalar : AnyTypeOf<[Tile_Float, Tile_Int, Tile_Ptr]>;

def Tile_Tensor : RankedTensorOf<[Tile_Float, Tile_Int, Tile_Ptr]>;
def Tile_StaticTensor : Type<And<[Tile_Tensor.predicate,
                                  CPred<"::llvm::cast<::mlir::RankedTensorType>($_self).hasStaticShape()">]>,
                             "statically shaped tensor", "::mlir::RankedTensorType">;
def Tile_Value : AnyTypeOf<[Tile_Scalar, Tile_StaticTensor]>;

def Tile_PtrTensor : Type<And<[Tile_StaticTensor.predicate,
                               CPred<"::llvm::isa<::tilec::tile::PointerType>(::llvm::cast<::mlir::RankedTensorType>($_self).getElementType())">]>,
                          "tensor of tile pointers", "::mlir::RankedTensorType">;
def Tile_PtrLike : AnyTypeOf<[Tile_Ptr, Tile_PtrTensor]>;
def Tile_IntTensor : Type<And<[Tile_StaticTensor.predicate,
                               CPred<"::llvm::cast<::mlir::RankedTensorType>($_self).getElementType().isSignlessInteger()">]>,
                          "tensor of integers", "::mlir::RankedTensorType">;
def Tile_IntLike : AnyTypeOf<[Tile_Int, Tile_IntTensor]>;
def Tile_BoolTensor : Type<And<[Tile_StaticTensor.predicate,
                                CPred<"::llvm::cast<::mlir::RankedTensorType>($_self).getElementType().isInteger(1)">]>,
                           "tensor of i1", "::mlir::RankedTensorType">;
def Tile_BoolLike : AnyTypeOf<[I1, Tile_BoolTensor]>;
def Tile_FloatTensor : Type<And<[Tile_StaticTensor.predicate,
                                 CPred<"::llvm::isa<::mlir::FloatType>(::llvm::cast<::mlir::RankedTensorType>($_self).getElementType())">]>,
                            "tensor of floats", "::mlir::RankedTensorType">;
def Tile_NumericTensor : Type<And<[Tile_StaticTensor.predicate,
                                   CPred<"!::llvm::isa<::tilec::tile::PointerType>(::llvm::cast<::mlir::RankedTensorType>($_self).getElementType())">]>,
                              "tensor of numbers", "::mlir::RankedTensorType">;

#endif // TILEC_DIALECT_TILE_IR_TILETYPES_TD
