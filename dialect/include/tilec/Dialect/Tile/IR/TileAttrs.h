#ifndef TILEC_DIALECT_TILE_IR_TILEATTRS_H
#define TILEC_DIALECT_TILE_IR_TILEATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "tilec/Dialect/Tile/IR/TileEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tilec/Dialect/Tile/IR/TileAttrs.h.inc"

#endif
