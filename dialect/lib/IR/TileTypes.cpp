#include "tilec/Dialect/Tile/IR/TileTypes.h"
#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace tilec::tile;

// `64x128xbf16`, or just `bf16` for a single element.
static ParseResult parseRegionShape(AsmParser &parser,
                                    SmallVector<int64_t> &shape,
                                    Type &elementType) {
  if (parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType))
    return failure();
  return success();
}

static void printRegionShape(AsmPrinter &printer, ArrayRef<int64_t> shape,
                             Type elementType) {
  for (int64_t d : shape)
    printer << d << 'x';
  printer << elementType;
}

#define GET_TYPEDEF_CLASSES
#include "tilec/Dialect/Tile/IR/TileTypes.cpp.inc"

void TileDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "tilec/Dialect/Tile/IR/TileTypes.cpp.inc"
      >();
}

LogicalResult
RegionType::verify(function_ref<InFlightDiagnostic()> emitError,
                   ArrayRef<int64_t> shape, Type elementType,
                   MemorySpace space) {
  for (int64_t d : shape)
    if (d <= 0)
      return emitError() << "region extents must be positive, got " << d;
  // As tiles (tile.alloc): a region of index elements would pass here and be refused by every op that reads it.
  if (!elementType.isIntOrFloat())
    return emitError() << "region element type must be an integer or float, got "
                       << elementType;
  if (space == MemorySpace::Local)
    return emitError() << "regions view global, shared or fragment buffers, "
                          "not local arrays";
  return success();
}

int64_t RegionType::getNumElements() const {
  int64_t n = 1;
  for (int64_t d : getShape())
    n *= d;
  return n;
}

namespace tilec::tile {

std::optional<MemorySpace> getMemorySpaceOf(Type type) {
  if (auto region = dyn_cast<RegionType>(type))
    return region.getSpace();
  if (auto memref = dyn_cast<MemRefType>(type))
    if (auto space = dyn_cast_or_null<MemorySpaceAttr>(memref.getMemorySpace()))
      return space.getValue();
  return std::nullopt;
}

Type getElementTypeOf(Type type) {
  if (auto region = dyn_cast<RegionType>(type))
    return region.getElementType();
  if (auto memref = dyn_cast<MemRefType>(type))
    return memref.getElementType();
  return {};
}

SmallVector<int64_t> getShapeOf(Type type) {
  if (auto region = dyn_cast<RegionType>(type))
    return llvm::to_vector(region.getShape());
  if (auto memref = dyn_cast<MemRefType>(type))
    return llvm::to_vector(memref.getShape());
  return {};
}

SmallVector<int64_t> getSqueezedShape(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> out;
  for (int64_t d : shape)
    if (d != 1)
      out.push_back(d);
  return out;
}

MemRefType getTileMemRefType(ArrayRef<int64_t> shape, Type elementType,
                             MemorySpace space) {
  return MemRefType::get(shape, elementType, MemRefLayoutAttrInterface{},
                         MemorySpaceAttr::get(elementType.getContext(), space));
}

std::string describeTile(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  SmallVector<int64_t> shape = getShapeOf(type);
  for (int64_t d : shape) {
    if (ShapedType::isDynamic(d))
      os << '?';
    else
      os << d;
    os << 'x';
  }
  if (Type element = getElementTypeOf(type))
    os << element;
  else
    os << type;
  if (auto space = getMemorySpaceOf(type))
    os << " (" << stringifyMemorySpace(*space) << ")";
  return text;
}

} // namespace tilec::tile
