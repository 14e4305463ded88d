#include "VectorAccess.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::tile;
using layout::FragmentLayout;
using layout::LayoutTerm;

namespace tilec::gpu {

SmallVector<int64_t> windowOf(Value operand) {
  if (auto region = operand.getDefiningOp<RegionOp>())
    return SmallVector<int64_t>(region.getSizes());
  return SmallVector<int64_t>(cast<MemRefType>(operand.getType()).getShape());
}

std::optional<FragmentLayout> distributedLayout(Value operand, int64_t threads) {
  Value base = baseBuffer(operand);
  if (!isIn(base, MemorySpace::Fragment) && !isIn(base, MemorySpace::Local))
    return std::nullopt;
  std::optional<FragmentLayout> l = layoutOf(base, threads);
  if (!l || l->isReplicated())
    return std::nullopt;
  return l;
}

int64_t fragmentVectorElements(const FragmentLayout &l, Value fragment, Value global, bool isLoad, bool *checked) {
  auto g = cast<MemRefType>(baseBuffer(global).getType());
  SmallVector<int64_t> window = windowOf(global);
  auto region = global.getDefiningOp<RegionOp>();
  double pad = region && region.getPad() ? region.getPad()->convertToDouble() : 0.0;
  auto fragmentShape = cast<MemRefType>(fragment.getType()).getShape();
  if (l.rank() == 0 || l.hasPadding() || fragmentShape.back() == 1 || window.empty() || window.back() == 1 ||
      (isLoad && pad != 0))
    return 0;
  if (region && baseBuffer(region.getSource()) != region.getSource())
    return 0; // a region of a region: its offsets compose
  int last = l.rank() - 1;
  // The innermost slot digit must walk the last dim one element at a time.
  const LayoutTerm *inner = nullptr;
  for (const LayoutTerm &t : l.slotTerms())
    if (t.stride == 1)
      inner = &t;
  if (!inner || inner->dim != last || inner->scale != 1 || inner->extent < 2)
    return 0;
  int64_t bytes = elementBytes(g.getElementType());
  int64_t width = 1;
  while (inner->extent % (width * 2) == 0 && width * 2 * bytes <= 16)
    width *= 2;
  if (width * bytes < 4)
    return 0;
  // Every other step along the last dim (thread digits, outer slot digits) must keep groups aligned.
  for (const auto *terms : {&l.threadTerms(), &l.slotTerms()})
    for (const LayoutTerm &t : *terms)
      if (&t != inner && t.dim == last && t.scale % width != 0)
        return 0;
  if (fragmentShape.back() % width != 0)
    return 0;
  if (region && knownDivisor(region.getOffsets().back()) % width != 0)
    return 0;
  int64_t extent = g.getShape().back();
  if (ShapedType::isDynamic(extent))
    *checked = true;
  else if (extent % width != 0)
    return 0;
  return width;
}

} // namespace tilec::gpu
