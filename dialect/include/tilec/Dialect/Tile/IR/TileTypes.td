#ifndef TILEC_DIALECT_TILE_IR_TILETYPES_TD
#define TILEC_DIALECT_TILE_IR_TILETYPES_TD

include "tilec/Dialect/Tile/IR/TileAttrs.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

class Tile_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Tile_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Tile_RegionType : Tile_Type<"Region", "region"> {
  let summary = "a static-shape window at dynamic offsets into a buffer";
  let description = [{
    A buffer region views `shape` elements of a buffer in memory space `space`,
    starting at offsets known only at run time. The window may overhang the
    buffer: reads past the bounds yield the region's pad value, and writes and
    atomics past the bounds are dropped. Dimensions of extent 1 taken from the
    buffer are dropped from the region's shape.

    Example: `!tile.region<64x128xbf16, global>`
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$shape,
    "::mlir::Type":$elementType,
    "::tilec::tile::MemorySpace":$space
  );
  let assemblyFormat = [{
    `<` custom<RegionShape>($shape, $elementType) `,` $space `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    int64_t getNumElements() const;
  }];
}

#endif
