//===- TileAttrs.td - tile dialect enums -------------------*- tablegen -*-===//

#ifndef TILEC_DIALECT_TILE_IR_TILEATTRS_TD
#define TILEC_DIALECT_TILE_IR_TILEATTRS_TD

include "tilec/Dialect/Tile/IR/TileDialect.td"
include "mlir/IR/EnumAttr.td"

def Tile_ProgramAxis : I32EnumAttr<"ProgramAxis", "grid axis", [
    I32EnumAttrCase<"X", 0, "x">, I32EnumAttrCase<"Y", 1, "y">,
    I32EnumAttrCase<"Z", 2, "z">]> {
  // A plain integer-backed attribute: it only ever appears as a keyword in
  // the assembly of program_id and num_programs.
  let cppNamespace = "::tilec::tile";
}

def Tile_CacheModifier : I32EnumAttr<"CacheModifier", "global load/store cache policy", [
    I32EnumAttrCase<"None", 0, "none">, I32EnumAttrCase<"CA", 1, "ca">,
    I32EnumAttrCase<"CG", 2, "cg">, I32EnumAttrCase<"CS", 3, "cs">,
    I32EnumAttrCase<"CV", 4, "cv">, I32EnumAttrCase<"WB", 5, "wb">,
    I32EnumAttrCase<"WT", 6, "wt">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::tilec::tile";
}
def Tile_CacheModifierAttr : EnumAttr<Tile_Dialect, Tile_CacheModifier, "cache"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tile_EvictionPolicy : I32EnumAttr<"EvictionPolicy", "L1/L2 eviction priority", [
    I32EnumAttrCase<"Normal", 0, "evict_normal">,
    I32EnumAttrCase<"EvictFirst", 1, "evict_first">,
    I32EnumAttrCase<"EvictLast", 2, "evict_last">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::tilec::tile";
}
def Tile_EvictionPolicyAttr : EnumAttr<Tile_Dialect, Tile_EvictionPolicy, "evict"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tile_InputPrecision : I32EnumAttr<"InputPrecision", "precision of f32 dot inputs", [
    I32EnumAttrCase<"IEEE", 0, "ieee">, I32EnumAttrCase<"TF32", 1, "tf32">,
    I32EnumAttrCase<"TF32x3", 2, "tf32x3">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::tilec::tile";
}
def Tile_InputPrecisionAttr : EnumAttr<Tile_Dialect, Tile_InputPrecision, "precision"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tile_ReduceKind : I32EnumAttr<"ReduceKind", "combining operation of a reduction", [
    I32EnumAttrCase<"Add", 0, "add">, I32EnumAttrCase<"Mul", 1, "mul">,
    I32EnumAttrCase<"Max", 2, "max">, I32EnumAttrCase<"Min", 3, "min">,
    I32EnumAttrCase<"UMax", 4, "umax">, I32EnumAttrCase<"UMin", 5, "umin">,
    I32EnumAttrCase<"And", 6, "and">, I32EnumAttrCase<"Or", 7, "or">,
    I32EnumAttrCase<"Xor", 8, "xor">]> {
  // Integer-backed: it only appears as a keyword in tile.reduce's assembly.
  let cppNamespace = "::tilec::tile";
}

def Tile_AtomicRMWKind : I32EnumAttr<"AtomicRMWKind", "read-modify-write operation of an atomic", [
    I32EnumAttrCase<"Add", 0, "add">, I32EnumAttrCase<"Max", 1, "max">,
    I32EnumAttrCase<"Min", 2, "min">, I32EnumAttrCase<"UMax", 3, "umax">,
    I32EnumAttrCase<"UMin", 4, "umin">, I32EnumAttrCase<"And", 5, "and">,
    I32EnumAttrCase<"Or", 6, "or">, I32EnumAttrCase<"Xor", 7, "xor">,
    I32EnumAttrCase<"Xchg", 8, "xchg">]> {
  // Integer-backed: it only appears as a keyword in tile.atomic_rmw's assembly.
  let cppNamespace = "::tilec::tile";
}

// The memory orderings and scopes of PTX atomics (PTX ISA "Memory Consistency
// Model"), as Triton names them.
def Tile_MemSemantic : I32EnumAttr<"MemSemantic", "memory ordering of an atomic", [
    I32EnumAttrCase<"Relaxed", 0, "relaxed">,
    I32EnumAttrCase<"Acquire", 1, "acquire">,
    I32EnumAttrCase<"Release", 2, "release">,
    I32EnumAttrCase<"AcqRel", 3, "acq_rel">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::tilec::tile";
}
def Tile_MemSemanticAttr : EnumAttr<Tile_Dialect, Tile_MemSemantic, "sem"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tile_MemSyncScope : I32EnumAttr<"MemSyncScope", "threads an atomic is ordered with", [
    I32EnumAttrCase<"CTA", 0, "cta">, I32EnumAttrCase<"GPU", 1, "gpu">,
    I32EnumAttrCase<"System", 2, "sys">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::tilec::tile";
}
def Tile_MemSyncScopeAttr : EnumAttr<Tile_Dialect, Tile_MemSyncScope, "scope"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // TILEC_DIALECT_TILE_IR_TILEATTRS_TD
