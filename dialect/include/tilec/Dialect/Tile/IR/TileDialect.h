#ifndef TILEC_DIALECT_TILE_IR_TILEDIALECT_H
#define TILEC_DIALECT_TILE_IR_TILEDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Dialect.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h.inc"

#endif
