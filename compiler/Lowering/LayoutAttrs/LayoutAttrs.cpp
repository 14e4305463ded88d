// Layout specs to and from the dialect's layout attributes (see LayoutAttrs.h).
#include "tilec/Lowering/LayoutAttrs.h"

#include "tilec/Dialect/Tile/IR/TileAttrs.h"

using namespace mlir;

namespace tilec::layout {

namespace {

Attribute specToAttr(MLIRContext *context, const LayoutSpec &spec) {
  switch (spec.kind) {
  case LayoutSpec::Kind::Replicated:
    return tile::ReplicatedLayoutAttr::get(context, spec.shape);
  case LayoutSpec::Kind::Blocked:
    return tile::BlockedLayoutAttr::get(context, spec.shape, spec.vector);
  case LayoutSpec::Kind::MmaAccumulator:
    return tile::MmaAccumulatorLayoutAttr::get(context, spec.shape, spec.warpsM, spec.warpsN);
  case LayoutSpec::Kind::MmaOperandA:
    return tile::MmaOperandALayoutAttr::get(context, spec.shape, spec.warpsM, spec.warpsN);
  case LayoutSpec::Kind::Slice:
    return tile::SliceLayoutAttr::get(context, specToAttr(context, *spec.parent), spec.dim);
  }
  return {};
}

std::vector<int64_t> toVector(ArrayRef<int64_t> shape) { return std::vector<int64_t>(shape.begin(), shape.end()); }

} // namespace

Attribute toAttr(MLIRContext *context, const FragmentLayout &layout) { return specToAttr(context, layout.spec()); }

std::optional<LayoutSpec> specOf(Attribute attr) {
  using Kind = LayoutSpec::Kind;
  if (auto l = dyn_cast_or_null<tile::ReplicatedLayoutAttr>(attr))
    return LayoutSpec{Kind::Replicated, toVector(l.getShape())};
  if (auto l = dyn_cast_or_null<tile::BlockedLayoutAttr>(attr))
    return LayoutSpec{Kind::Blocked, toVector(l.getShape()), l.getVector()};
  if (auto l = dyn_cast_or_null<tile::MmaAccumulatorLayoutAttr>(attr))
    return LayoutSpec{Kind::MmaAccumulator, toVector(l.getShape()), 0, l.getWarpsM(), l.getWarpsN()};
  if (auto l = dyn_cast_or_null<tile::MmaOperandALayoutAttr>(attr))
    return LayoutSpec{Kind::MmaOperandA, toVector(l.getShape()), 0, l.getWarpsM(), l.getWarpsN()};
  if (auto l = dyn_cast_or_null<tile::SliceLayoutAttr>(attr)) {
    auto parent = specOf(l.getParent());
    if (!parent)
      return std::nullopt;
    return LayoutSpec{Kind::Slice, {}, 0, 0, 0, static_cast<int>(l.getDim()),
                      std::make_shared<const LayoutSpec>(std::move(*parent))};
  }
  return std::nullopt;
}

std::optional<FragmentLayout> fromAttr(Attribute attr, int64_t threads, std::string *error) {
  auto spec = specOf(attr);
  if (!spec) {
    if (error)
      *error = "not a fragment layout attribute";
    return std::nullopt;
  }
  return FragmentLayout::build(*spec, threads, error);
}

Attribute swizzleAttr(MLIRContext *context, const Swizzle &swizzle) {
  tile::SwizzleKind kind = tile::SwizzleKind::None;
  switch (swizzle.kind()) {
  case Swizzle::Kind::None:
    kind = tile::SwizzleKind::None;
    break;
  case Swizzle::Kind::Xor8:
    kind = tile::SwizzleKind::Xor8;
    break;
  case Swizzle::Kind::Xor4Rows2:
    kind = tile::SwizzleKind::Xor4Rows2;
    break;
  case Swizzle::Kind::Xor8Panels:
    kind = tile::SwizzleKind::Xor8Panels;
    break;
  }
  return tile::SwizzleKindAttr::get(context, kind);
}

std::optional<Swizzle::Kind> swizzleKindOf(Attribute attr) {
  auto swizzle = dyn_cast_or_null<tile::SwizzleKindAttr>(attr);
  if (!swizzle)
    return std::nullopt;
  switch (swizzle.getValue()) {
  case tile::SwizzleKind::None:
    return Swizzle::Kind::None;
  case tile::SwizzleKind::Xor8:
    return Swizzle::Kind::Xor8;
  case tile::SwizzleKind::Xor4Rows2:
    return Swizzle::Kind::Xor4Rows2;
  case tile::SwizzleKind::Xor8Panels:
    return Swizzle::Kind::Xor8Panels;
  }
  return std::nullopt;
}

} // namespace tilec::layout
