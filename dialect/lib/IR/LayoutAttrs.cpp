// Verifiers of the fragment layout attributes (#tile.replicated, #tile.blocked, #tile.mma_c, #tile.mma_a,
// #tile.slice). What depends on the block's thread count (an mma layout's warps must make the block) is checked
// where the layout is built for a kernel (tilec/Lowering/LayoutAttrs.h).
#include "tilec/Dialect/Tile/IR/TileAttrs.h"

using namespace mlir;

namespace tilec::tile {

bool isFragmentLayout(Attribute attr) {
  return isa<ReplicatedLayoutAttr, BlockedLayoutAttr, MmaAccumulatorLayoutAttr, MmaOperandALayoutAttr,
             SliceLayoutAttr>(attr);
}

std::optional<SmallVector<int64_t>> fragmentLayoutShape(Attribute attr) {
  if (auto slice = dyn_cast<SliceLayoutAttr>(attr)) {
    auto shape = fragmentLayoutShape(slice.getParent());
    if (!shape || slice.getDim() < 0 || slice.getDim() >= static_cast<int64_t>(shape->size()))
      return std::nullopt;
    shape->erase(shape->begin() + slice.getDim());
    return shape;
  }
  if (auto l = dyn_cast<ReplicatedLayoutAttr>(attr))
    return SmallVector<int64_t>(l.getShape());
  if (auto l = dyn_cast<BlockedLayoutAttr>(attr))
    return SmallVector<int64_t>(l.getShape());
  if (auto l = dyn_cast<MmaAccumulatorLayoutAttr>(attr))
    return SmallVector<int64_t>(l.getShape());
  if (auto l = dyn_cast<MmaOperandALayoutAttr>(attr))
    return SmallVector<int64_t>(l.getShape());
  return std::nullopt;
}

namespace {

LogicalResult verifyExtents(function_ref<InFlightDiagnostic()> emitError, ArrayRef<int64_t> shape) {
  for (int64_t e : shape)
    if (e <= 0)
      return emitError() << "the extents of a layout's shape must be positive, got " << e;
  return success();
}

LogicalResult verifyMma(function_ref<InFlightDiagnostic()> emitError, ArrayRef<int64_t> shape, int64_t warpsM,
                        int64_t warpsN, int64_t rowsPerAtom, int64_t colsPerAtom, bool colsOverWarps) {
  if (shape.size() != 2)
    return emitError() << "an mma layout's shape has rank 2, got rank " << shape.size();
  if (failed(verifyExtents(emitError, shape)))
    return failure();
  if (warpsM <= 0 || warpsN <= 0)
    return emitError() << "an mma layout's warps must be positive, got [" << warpsM << ", " << warpsN << "]";
  if (shape[0] % (rowsPerAtom * warpsM) != 0 || shape[1] % (colsPerAtom * (colsOverWarps ? warpsN : 1)) != 0)
    return emitError() << "tile " << shape[0] << "x" << shape[1] << " does not split into m16n8k16 atoms over warps ["
                       << warpsM << ", " << warpsN << "]";
  return success();
}

} // namespace

LogicalResult ReplicatedLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError, ArrayRef<int64_t> shape) {
  return verifyExtents(emitError, shape);
}

LogicalResult BlockedLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError, ArrayRef<int64_t> shape,
                                        int64_t vector) {
  if (shape.empty())
    return emitError() << "a blocked layout needs a shape of rank 1 or more";
  if (failed(verifyExtents(emitError, shape)))
    return failure();
  if (vector <= 0)
    return emitError() << "a blocked layout's vector must be positive, got " << vector;
  return success();
}

LogicalResult MmaAccumulatorLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError, ArrayRef<int64_t> shape,
                                               int64_t warpsM, int64_t warpsN) {
  return verifyMma(emitError, shape, warpsM, warpsN, 16, 8, /*colsOverWarps=*/true);
}

LogicalResult MmaOperandALayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError, ArrayRef<int64_t> shape,
                                            int64_t warpsM, int64_t warpsN) {
  return verifyMma(emitError, shape, warpsM, warpsN, 16, 16, /*colsOverWarps=*/false);
}

LogicalResult SliceLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError, Attribute parent, int64_t dim) {
  if (!isFragmentLayout(parent))
    return emitError() << "a slice's parent must be a fragment layout attribute, got " << parent;
  auto parentShape = fragmentLayoutShape(parent);
  int64_t rank = parentShape ? static_cast<int64_t>(parentShape->size()) : 0;
  if (dim < 0 || dim >= rank)
    return emitError() << "slice dim " << dim << " is out of range for a layout of rank " << rank;
  return success();
}

LogicalResult MmaSyncPlanAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t warpsM, int64_t warpsN) {
  if (warpsM <= 0 || warpsN <= 0)
    return emitError() << "a gemm's warps must be positive, got [" << warpsM << ", " << warpsN << "]";
  return success();
}

LogicalResult WgmmaPlanAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t n) {
  if (n < 8 || n > 256 || n % 8 != 0)
    return emitError() << "wgmma's N is a multiple of 8 from 8 to 256, got " << n;
  return success();
}

// #tile.copy<KIND[, vec N][, checked][, lane_index]>
Attribute CopyPlanAttr::parse(AsmParser &parser, Type) {
  llvm::SMLoc at = parser.getCurrentLocation();
  StringRef kindName;
  if (parser.parseLess() || parser.parseKeyword(&kindName))
    return {};
  std::optional<CopyKind> kind = symbolizeCopyKind(kindName);
  if (!kind) {
    parser.emitError(at) << "unknown copy kind '" << kindName
                         << "' (expected elementwise, chunks, row_chunks, fragment_vectors or packed_pairs)";
    return {};
  }
  int64_t vector = 1;
  bool checked = false, laneIndex = false;
  while (succeeded(parser.parseOptionalComma())) {
    if (succeeded(parser.parseOptionalKeyword("vec"))) {
      if (parser.parseInteger(vector))
        return {};
    } else if (succeeded(parser.parseOptionalKeyword("checked"))) {
      checked = true;
    } else if (succeeded(parser.parseOptionalKeyword("lane_index"))) {
      laneIndex = true;
    } else {
      parser.emitError(parser.getCurrentLocation(), "expected 'vec N', 'checked' or 'lane_index'");
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(at); }, parser.getContext(), *kind, vector, checked, laneIndex);
}

void CopyPlanAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyCopyKind(getKind());
  if (getVector() != 1)
    printer << ", vec " << getVector();
  if (getChecked())
    printer << ", checked";
  if (getLaneIndex())
    printer << ", lane_index";
  printer << ">";
}

LogicalResult CopyPlanAttr::verify(function_ref<InFlightDiagnostic()> emitError, CopyKind kind, int64_t vector,
                                   bool checked, bool laneIndex) {
  if (vector < 1 || vector > 16 || (vector & (vector - 1)) != 0)
    return emitError() << "a copy's elements per access are a power of two from 1 to 16, got " << vector;
  if (kind == CopyKind::Elementwise && vector != 1)
    return emitError() << "an elementwise copy moves one element per access, got vec " << vector;
  if (kind == CopyKind::PackedPairs && vector != 2)
    return emitError() << "a packed_pairs copy stores two elements per access, got vec " << vector;
  if (checked && kind != CopyKind::Chunks && kind != CopyKind::RowChunks && kind != CopyKind::FragmentVectors)
    return emitError() << "only a vector copy (chunks, row_chunks, fragment_vectors) has a run-time check";
  if (laneIndex && kind != CopyKind::PackedPairs)
    return emitError() << "lane_index applies to packed_pairs copies only";
  return success();
}

// #tile.atomic<KIND[, vec N][, checked]>
Attribute AtomicPlanAttr::parse(AsmParser &parser, Type) {
  llvm::SMLoc at = parser.getCurrentLocation();
  StringRef kindName;
  if (parser.parseLess() || parser.parseKeyword(&kindName))
    return {};
  std::optional<AtomicKind> kind = symbolizeAtomicKind(kindName);
  if (!kind) {
    parser.emitError(at) << "unknown atomic kind '" << kindName
                         << "' (expected elementwise, exclusive_rmw or vectors)";
    return {};
  }
  int64_t vector = 1;
  bool checked = false;
  while (succeeded(parser.parseOptionalComma())) {
    if (succeeded(parser.parseOptionalKeyword("vec"))) {
      if (parser.parseInteger(vector))
        return {};
    } else if (succeeded(parser.parseOptionalKeyword("checked"))) {
      checked = true;
    } else {
      parser.emitError(parser.getCurrentLocation(), "expected 'vec N' or 'checked'");
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(at); }, parser.getContext(), *kind, vector, checked);
}

void AtomicPlanAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyAtomicKind(getKind());
  if (getVector() != 1)
    printer << ", vec " << getVector();
  if (getChecked())
    printer << ", checked";
  printer << ">";
}

LogicalResult AtomicPlanAttr::verify(function_ref<InFlightDiagnostic()> emitError, AtomicKind kind, int64_t vector,
                                     bool checked) {
  if (vector < 1 || vector > 16 || (vector & (vector - 1)) != 0)
    return emitError() << "an atomic's elements per access are a power of two from 1 to 16, got " << vector;
  if (kind == AtomicKind::Elementwise && (vector != 1 || checked))
    return emitError() << "an elementwise atomic updates one element per access (no vec, no check)";
  if (kind == AtomicKind::Vectors && vector != 2 && vector != 4)
    return emitError() << "vector reductions take 2 or 4 elements, got vec " << vector;
  if (checked && vector == 1)
    return emitError() << "a run-time check guards a vector form (vec > 1)";
  return success();
}

} // namespace tilec::tile
