#ifndef TILEC_DIALECT_TILE_IR_TILEDIALECT_TD
#define TILEC_DIALECT_TILE_IR_TILEDIALECT_TD

include "mlir/IR/OpBase.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::tilec::tile";
  let summary = "Whole-tile GPU kernel programming";
  let description = [{
    The `tile` dialect describes GPU kernels in terms of whole tiles: copies of
    buffer regions into shared tiles, tensor-core products of tiles, reductions,
    element-wise loops over a tile's index space and atomic accumulation into
    global tensors. Global tensors, shared tiles and register fragments are
    memrefs whose memory space is a `#tile.space<...>` attribute. At tile level
    a kernel body describes what one program (thread block) does, sequentially.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  // The `tile.*` attributes that the GPU lowering passes set on ops (TileDialect.cpp lists them): an unknown name,
  // or a layout that is not a layout attribute of the op's shape, is an error.
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Defined beside the type storage classes, which must be complete there.
    void registerTypes();
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

#endif
