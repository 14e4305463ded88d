#include "tilec/Dialect/Tile/IR/TileDialect.h"
#include "tilec/Dialect/Tile/IR/TileOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tilec::tile;

#include "tilec/Dialect/Tile/IR/TileDialect.cpp.inc"
#include "tilec/Dialect/Tile/IR/TileEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tilec/Dialect/Tile/IR/TileAttrs.cpp.inc"

void TileDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tilec/Dialect/Tile/IR/TileAttrs.cpp.inc"
      >();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "tilec/Dialect/Tile/IR/TileOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "tilec/Dialect/Tile/IR/TilePlanOps.cpp.inc"
      >();
}

/// The discardable `tile.*` attributes: what MLIRGen records for messages and plans (argument names and shapes,
/// dim and block-index names) and what the GPU lowering passes decide (docs/gpu-lowering.md lists each, with the
/// pass that sets it).
LogicalResult TileDialect::verifyOperationAttribute(Operation *op, NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  if (name == "tile.layout") {
    Attribute layout = attribute.getValue();
    if (!isFragmentLayout(layout))
      return op->emitOpError() << "'tile.layout' must be a fragment layout (#tile.replicated, #tile.blocked, "
                                  "#tile.mma_c, #tile.mma_a or #tile.slice), got "
                               << layout;
    SmallVector<int64_t> expected;
    if (auto alloc = dyn_cast<AllocOp>(op)) {
      auto type = cast<MemRefType>(alloc.getType());
      expected.assign(type.getShape().begin(), type.getShape().end());
    } else if (auto loop = dyn_cast<ParallelOp>(op)) {
      expected.assign(loop.getExtents().begin(), loop.getExtents().end());
    } else {
      return op->emitOpError() << "'tile.layout' belongs on a tile.alloc or a tile.parallel";
    }
    auto shape = fragmentLayoutShape(layout);
    if (!shape || *shape != expected) {
      auto text = [](ArrayRef<int64_t> s) {
        std::string t;
        for (size_t i = 0; i < s.size(); ++i)
          t += (i ? ", " : "") + std::to_string(s[i]);
        return "[" + t + "]";
      };
      return op->emitOpError() << "'tile.layout' lays out shape " << (shape ? text(*shape) : "?")
                               << ", but the " << (isa<AllocOp>(op) ? "tile" : "loop") << " has shape "
                               << text(expected);
    }
    return success();
  }
  static const llvm::StringSet<> known = {
      "tile.arg_names", "tile.arg_shapes", "tile.dim_names",   "tile.index_names", "tile.mma",
      "tile.wgmma",     "tile.offset",     "tile.swizzle",     "tile.stages",      "tile.stage_bytes",
      "tile.prefetch",  "tile.scratch_offset", "tile.shared_bytes", "tile.reread_thread_index"};
  if (!known.contains(name))
    return op->emitOpError() << "unknown attribute '" << name << "' of the tile dialect";
  return success();
}
