#ifndef TILEC_DIALECT_TILE_IR_TILEATTRS_TD
#define TILEC_DIALECT_TILE_IR_TILEATTRS_TD

include "tilec/Dialect/Tile/IR/TileDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Tile_MemorySpace : I32EnumAttr<"MemorySpace", "where a buffer lives", [
    I32EnumAttrCase<"Global", 0, "global">,
    I32EnumAttrCase<"Shared", 1, "shared">,
    I32EnumAttrCase<"Fragment", 2, "fragment">,
    I32EnumAttrCase<"Local", 3, "local">
  ]> {
  let cppNamespace = "::tilec::tile";
  let genSpecializedAttr = 0;
}

// Used as the memory space of memrefs: memref<64x128xbf16, #tile.space<shared>>.
def Tile_MemorySpaceAttr : EnumAttr<Tile_Dialect, Tile_MemorySpace, "space"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tile_ReduceKindAttr : I32EnumAttr<"ReduceKind", "reduction combiner", [
    I32EnumAttrCase<"Sum", 0, "sum">,
    I32EnumAttrCase<"Max", 1, "max">,
    I32EnumAttrCase<"Min", 2, "min">
  ]> {
  let cppNamespace = "::tilec::tile";
}

def Tile_MemoryOrderAttr : I32EnumAttr<"MemoryOrder", "memory order of an atomic", [
    I32EnumAttrCase<"Relaxed", 0, "relaxed">,
    I32EnumAttrCase<"Release", 1, "release">,
    I32EnumAttrCase<"AcqRel", 2, "acq_rel">,
    I32EnumAttrCase<"SeqCst", 3, "seq_cst">
  ]> {
  let cppNamespace = "::tilec::tile";
}

// The combiners of tile.atomic_rmw (tile.atomic_add is its own op: it alone goes through the atomic strategies).
def Tile_AtomicRmwKindAttr : I32EnumAttr<"AtomicRmwKind", "combiner of an atomic read-modify-write", [
    I32EnumAttrCase<"Max", 0, "max">,
    I32EnumAttrCase<"Min", 1, "min">
  ]> {
  let cppNamespace = "::tilec::tile";
}

// How the warps of a block share a gemm's output tile.
def Tile_GemmPolicyAttr : I32EnumAttr<"GemmPolicy", "warp partition of a gemm", [
    I32EnumAttrCase<"Square", 0, "square">,
    I32EnumAttrCase<"FullRow", 1, "full_row">,
    I32EnumAttrCase<"FullCol", 2, "full_col">
  ]> {
  let cppNamespace = "::tilec::tile";
}

#endif
