#ifndef TILEC_DIALECT_TILE_IR_TILETYPES_H
#define TILEC_DIALECT_TILE_IR_TILETYPES_H

#include "tilec/Dialect/Tile/IR/TileAttrs.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#include <optional>

#define GET_TYPEDEF_CLASSES
#include "tilec/Dialect/Tile/IR/TileTypes.h.inc"

namespace tilec::tile {

/// The memory space of a memref or region; nullopt for a memref that has no
/// `#tile.space` (an error wherever a tile is expected) and for other types.
std::optional<MemorySpace> getMemorySpaceOf(mlir::Type type);

/// The element type of a memref or region, or null.
mlir::Type getElementTypeOf(mlir::Type type);

/// The static extents of a memref or region (dynamic dims are
/// ShapedType::kDynamic).
llvm::SmallVector<int64_t> getShapeOf(mlir::Type type);

/// The extents with every dimension of extent 1 dropped: what two tiles must
/// agree on to be copied into one another.
llvm::SmallVector<int64_t> getSqueezedShape(llvm::ArrayRef<int64_t> shape);

/// A memref type in a tile memory space.
mlir::MemRefType getTileMemRefType(llvm::ArrayRef<int64_t> shape,
                                   mlir::Type elementType, MemorySpace space);

/// "64x128xbf16 in shared" style text for diagnostics.
std::string describeTile(mlir::Type type);

} // namespace tilec::tile

#endif
