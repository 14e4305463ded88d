// Checks shared by the verifiers of the tile ops (not part of the public API).
#ifndef TILEC_DIALECT_TILE_IR_VERIFYUTILS_H
#define TILEC_DIALECT_TILE_IR_VERIFYUTILS_H

#include "tilec/Dialect/Tile/IR/TileTypes.h"

#include "mlir/IR/Operation.h"

namespace tilec::tile::detail {

/// "64x128", "?x128", or "scalar".
std::string shapeText(llvm::ArrayRef<int64_t> shape);

/// Checks that `value` is a tile in one of the `allowed` memory spaces and
/// that an on-chip tile is only used inside a tile.kernel; `role` names the
/// operand in the message ("operand A", "destination").
mlir::LogicalResult verifyTileOperand(mlir::Operation *op, mlir::Value value,
                                      llvm::StringRef role,
                                      llvm::ArrayRef<MemorySpace> allowed);

} // namespace tilec::tile::detail

#endif
