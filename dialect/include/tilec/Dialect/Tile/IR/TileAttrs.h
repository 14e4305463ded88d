#ifndef TILEC_DIALECT_TILE_IR_TILEATTRS_H
#define TILEC_DIALECT_TILE_IR_TILEATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include <optional>

#include "tilec/Dialect/Tile/IR/TileEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tilec/Dialect/Tile/IR/TileAttrs.h.inc"

namespace tilec::tile {
/// Whether `attr` is one of the fragment layout attributes (#tile.replicated, blocked, mma_c, mma_a, slice).
bool isFragmentLayout(mlir::Attribute attr);
/// The shape of the tiles a fragment layout attribute lays out; nothing if it is none.
std::optional<llvm::SmallVector<int64_t>> fragmentLayoutShape(mlir::Attribute attr);
} // namespace tilec::tile

#endif
