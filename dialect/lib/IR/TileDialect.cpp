#include "tilec/Dialect/Tile/IR/TileDialect.h"
#include "tilec/Dialect/Tile/IR/TileOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringMap.h"
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
  if (name == "tile.primary_only" && !isa<ParallelOp>(op))
    return op->emitOpError() << "'tile.primary_only' belongs on a tile.parallel";
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
  // Every other tile.* attribute, with the kind of value it holds.
  enum class Kind { Names, Shapes, Integer, Unit, GemmPlan, Wgmma, Swizzle, CopyPlan, AtomicPlan };
  static const llvm::StringMap<Kind> known = {
      {"tile.arg_names", Kind::Names},      {"tile.index_names", Kind::Names},   {"tile.dim_names", Kind::Names},
      {"tile.arg_shapes", Kind::Shapes},    {"tile.offset", Kind::Integer},      {"tile.stages", Kind::Integer},
      {"tile.stage_bytes", Kind::Integer},  {"tile.scratch_offset", Kind::Integer},
      {"tile.shared_bytes", Kind::Integer}, {"tile.prefetch", Kind::Unit},       {"tile.reread_thread_index", Kind::Unit},
      {"tile.primary_only", Kind::Unit},
      {"tile.mma", Kind::GemmPlan},         {"tile.wgmma", Kind::Wgmma},         {"tile.swizzle", Kind::Swizzle},
      {"tile.copy_plan", Kind::CopyPlan},   {"tile.atomic_plan", Kind::AtomicPlan}};
  auto found = known.find(name);
  if (found == known.end())
    return op->emitOpError() << "unknown attribute '" << name << "' of the tile dialect";
  Attribute value = attribute.getValue();
  auto arrayOf = [&](auto isElement) {
    auto array = dyn_cast<ArrayAttr>(value);
    return array && llvm::all_of(array, isElement);
  };
  bool ok = false;
  const char *expected = "";
  switch (found->second) {
  case Kind::Names:
    ok = arrayOf([](Attribute a) { return isa<StringAttr>(a); });
    expected = "an array of strings";
    break;
  case Kind::Shapes:
    ok = arrayOf([](Attribute a) { return isa<AffineMapAttr>(a); });
    expected = "an array of affine maps";
    break;
  case Kind::Integer:
    ok = isa<IntegerAttr>(value);
    expected = "an integer";
    break;
  case Kind::Unit:
    ok = isa<UnitAttr>(value);
    expected = "a unit attribute";
    break;
  case Kind::GemmPlan:
    ok = isa<MmaSyncPlanAttr, SimtPlanAttr>(value);
    expected = "#tile.mma_sync<...> or #tile.simt";
    break;
  case Kind::Wgmma:
    ok = isa<WgmmaPlanAttr>(value);
    expected = "#tile.wgmma<...>";
    break;
  case Kind::Swizzle:
    ok = isa<SwizzleKindAttr>(value);
    expected = "#tile.swizzle<...>";
    break;
  case Kind::CopyPlan:
    ok = isa<CopyPlanAttr>(value);
    expected = "#tile.copy<...>";
    break;
  case Kind::AtomicPlan:
    ok = isa<AtomicPlanAttr>(value);
    expected = "#tile.atomic<...>";
    break;
  }
  if (!ok)
    return op->emitOpError() << "'" << name << "' must be " << expected << ", got " << value;
  return success();
}
