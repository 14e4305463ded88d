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

//===----------------------------------------------------------------------===//
// Fragment layouts: which thread of a block holds which element of a register tile (fragment or local), and how
// a parallel loop's iterations are spread over the threads. tile-infer-layouts decides them; the CUDA emitter
// prints from them. Each attribute names a factory of the layout algebra (tilec/Lowering/Layout.h) and its
// arguments; the block's thread count, which the algebra also takes, is the kernel's.
//===----------------------------------------------------------------------===//

class Tile_LayoutAttr<string name, string attrMnemonic> : AttrDef<Tile_Dialect, name> {
  let mnemonic = attrMnemonic;
  let genVerifyDecl = 1;
}

def Tile_ReplicatedLayoutAttr : Tile_LayoutAttr<"ReplicatedLayout", "replicated"> {
  let summary = "every thread holds every element";
  let parameters = (ins OptionalArrayRefParameter<"int64_t", "tile shape (empty for a rank-0 tile)">:$shape);
  let assemblyFormat = "`<` `[` (`]`) : ($shape^ `]`)? `>`";
}

def Tile_BlockedLayoutAttr : Tile_LayoutAttr<"BlockedLayout", "blocked"> {
  let summary = "element-wise distribution: `vec` consecutive elements of the last dim per thread";
  let description = [{
    Threads spread over the dims from the innermost outwards, repeated until the tile is covered; threads left
    over hold replicas. `#tile.blocked<[64, 128], vec 4>`.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t", "tile shape">:$shape, "int64_t":$vector);
  let assemblyFormat = "`<` `[` $shape `]` `,` `vec` $vector `>`";
}

def Tile_MmaAccumulatorLayoutAttr : Tile_LayoutAttr<"MmaAccumulatorLayout", "mma_c"> {
  let summary = "the mma.sync m16n8k16 accumulator of an MxN tile over warpsM x warpsN warps";
  let parameters = (ins ArrayRefParameter<"int64_t", "tile shape">:$shape, "int64_t":$warpsM, "int64_t":$warpsN);
  let assemblyFormat = "`<` `[` $shape `]` `,` `warps` ` ` `[` $warpsM `,` $warpsN `]` `>`";
}

def Tile_MmaOperandALayoutAttr : Tile_LayoutAttr<"MmaOperandALayout", "mma_a"> {
  let summary = "the A operand (MxK) of the mma.sync m16n8k16 gemm over warpsM x warpsN warps";
  let parameters = (ins ArrayRefParameter<"int64_t", "tile shape">:$shape, "int64_t":$warpsM, "int64_t":$warpsN);
  let assemblyFormat = "`<` `[` $shape `]` `,` `warps` ` ` `[` $warpsM `,` $warpsN `]` `>`";
}

def Tile_SliceLayoutAttr : Tile_LayoutAttr<"SliceLayout", "slice"> {
  let summary = "a layout with one dim reduced away (a reduction's result)";
  let description = [{
    The threads that spread the dropped dim become replicas. `#tile.slice<#tile.mma_c<[64, 64], warps [4, 1]>, dim 1>`.
  }];
  let parameters = (ins "::mlir::Attribute":$parent, "int64_t":$dim);
  let assemblyFormat = "`<` $parent `,` `dim` $dim `>`";
}

//===----------------------------------------------------------------------===//
// Other decisions of the GPU lowering passes (docs/gpu-lowering.md lists where each is set).
//===----------------------------------------------------------------------===//

// tile.mma on a tile.gemm (tile-infer-layouts): tensor cores with a warp partition, or a per-element loop.
def Tile_MmaSyncPlanAttr : AttrDef<Tile_Dialect, "MmaSyncPlan"> {
  let mnemonic = "mma_sync";
  let summary = "a gemm on mma.sync m16n8k16 tensor cores, the output tile split over warpsM x warpsN warps";
  let parameters = (ins "int64_t":$warpsM, "int64_t":$warpsN);
  let assemblyFormat = "`<` `m16n8k16` `,` `warps` ` ` `[` $warpsM `,` $warpsN `]` `>`";
  let genVerifyDecl = 1;
}

def Tile_SimtPlanAttr : AttrDef<Tile_Dialect, "SimtPlan"> {
  let mnemonic = "simt";
  let summary = "a gemm as a per-element loop over the threads (f32 operands, extents the mma atom does not divide)";
}

// tile.wgmma on a tile.gemm (tile-infer-layouts): the gemm also fits Hopper's warpgroup mma, m64nNk16 per warp.
def Tile_WgmmaPlanAttr : AttrDef<Tile_Dialect, "WgmmaPlan"> {
  let mnemonic = "wgmma";
  let summary = "the gemm also runs as wgmma m64nNk16 (sm_90a), N the columns of one warp's tile";
  let parameters = (ins "int64_t":$n);
  let assemblyFormat = "`<` `m64` `,` `n` $n `,` `k16` `>`";
  let genVerifyDecl = 1;
}

// tile.swizzle on a shared tile.alloc (tile-plan-shared-memory).
def Tile_SwizzleKind : I32EnumAttr<"SwizzleKind", "XOR swizzle of a shared tile's 16-byte chunks", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Xor8", 1, "xor8">,
    I32EnumAttrCase<"Xor4Rows2", 2, "xor4_rows2">,
    I32EnumAttrCase<"Xor8Panels", 3, "xor8_panels">
  ]> {
  let cppNamespace = "::tilec::tile";
  let genSpecializedAttr = 0;
}

def Tile_SwizzleAttr : EnumAttr<Tile_Dialect, Tile_SwizzleKind, "swizzle"> {
  let assemblyFormat = "`<` $value `>`";
}


// tile.copy_plan on a tile.copy and a tile.async_copy (tile-plan-copies): how the block's threads move its elements.
def Tile_CopyKind : I32EnumAttr<"CopyKind", "how the threads of a block move the elements of a copy", [
    I32EnumAttrCase<"Elementwise", 0, "elementwise">,
    I32EnumAttrCase<"Chunks", 1, "chunks">,
    I32EnumAttrCase<"RowChunks", 2, "row_chunks">,
    I32EnumAttrCase<"FragmentVectors", 3, "fragment_vectors">,
    I32EnumAttrCase<"PackedPairs", 4, "packed_pairs">
  ]> {
  let cppNamespace = "::tilec::tile";
  let genSpecializedAttr = 0;
}

def Tile_CopyPlanAttr : AttrDef<Tile_Dialect, "CopyPlan"> {
  let mnemonic = "copy";
  let summary = "how a copy is carried out: its form, the elements per access, a run-time alignment check";
  let description = [{
    `#tile.copy<KIND[, vec N][, checked][, lane_index]>`:
    `elementwise`, one element at a time; `chunks`, global to shared in
    16-byte chunks of N elements, chunk i of each step to thread i;
    `row_chunks`, the same where the threads cover whole rows of a 2-d tile,
    so each thread keeps one column and steps its addresses by constants;
    `fragment_vectors`, global to or from a distributed fragment, N
    consecutive slots of a thread per access; `packed_pairs`, a fragment of
    16-bit floats into a shared tile, two elements per 32-bit store
    (`lane_index`: the thread's swizzled index computed once, each slot
    pair's an XOR and an add of it). `checked`: the tensor's last extent is
    dynamic, and the vector form runs only where it is a multiple of N (an
    element-wise copy otherwise).
  }];
  let parameters = (ins "::tilec::tile::CopyKind":$kind, "int64_t":$vector, "bool":$checked, "bool":$laneIndex);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}


// tile.atomic_plan on a tile.atomic_add or tile.atomic_rmw of a whole tile (tile-plan-atomics): how the block's
// threads carry it out.
def Tile_AtomicKind : I32EnumAttr<"AtomicKind", "how the threads of a block carry out a tile-valued atomic", [
    I32EnumAttrCase<"Elementwise", 0, "elementwise">,
    I32EnumAttrCase<"ExclusiveRmw", 1, "exclusive_rmw">,
    I32EnumAttrCase<"Vectors", 2, "vectors">
  ]> {
  let cppNamespace = "::tilec::tile";
  let genSpecializedAttr = 0;
}

def Tile_AtomicPlanAttr : AttrDef<Tile_Dialect, "AtomicPlan"> {
  let mnemonic = "atomic";
  let summary = "how a tile-valued atomic is carried out: its form, the elements per access, a run-time check";
  let description = [{
    `#tile.atomic<KIND[, vec N][, checked]>`: `elementwise`, one atomic per
    element; `exclusive_rmw`, an exclusive add as a read-modify-write of a
    whole distributed fragment, every read before any write, N consecutive
    slots per access; `vectors`, relaxed f32 adds of a whole distributed
    fragment as N-element vector reductions (vector stores when
    `write_once`). `checked`: the destination's last extent is dynamic and
    the vector form runs only where it is a multiple of N (one element per
    access otherwise).
  }];
  let parameters = (ins "::tilec::tile::AtomicKind":$kind, "int64_t":$vector, "bool":$checked);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif
