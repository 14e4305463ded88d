// tile-infer-layouts' gemm decisions: see GemmPlans.h.
#include "GemmPlans.h"
#include "tilec/Lowering/GpuLoweringUtils.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::tile;
using layout::FragmentLayout;
using gpu::isIn;

namespace tilec {

static std::vector<int64_t> shapeOf(Value v) {
  auto s = getShapeOf(v.getType());
  return std::vector<int64_t>(s.begin(), s.end());
}

std::optional<std::pair<int64_t, int64_t>> WarpPartitioner::partition(GemmOp gemm, bool preferRows) {
  auto c = shapeOf(gemm.getC());
  Type element = getElementTypeOf(gemm.getA().getType());
  if (!(element.isBF16() || element.isF16()) || c.size() != 2 ||
      getElementTypeOf(gemm.getB().getType()) != element)
    return std::nullopt;
  auto aSq = getSqueezedShape(shapeOf(gemm.getA()));
  if (aSq.size() != 2)
    return std::nullopt;
  int64_t m = c[0], n = c[1], k = gemm.getTransposeA() ? aSq[0] : aSq[1];
  int64_t warps = threads / 32;
  if (k % 16 != 0)
    return std::nullopt;
  std::optional<int64_t> sameRows;
  if (auto it = rowsSplitByM.find(m); it != rowsSplitByM.end())
    sameRows = it->second;
  std::optional<std::pair<int64_t, int64_t>> best;
  auto better = [&](int64_t wm, int64_t wn) {
    if (!best)
      return true;
    switch (gemm.getPolicy()) {
    case GemmPolicy::FullRow:
      return wm > best->first;
    case GemmPolicy::FullCol:
      return wn > best->second;
    case GemmPolicy::Square: {
      if (preferRows && (wn == 1) != (best->second == 1))
        return wn == 1;
      if (sameRows && (wm == *sameRows) != (best->first == *sameRows))
        return wm == *sameRows;
      int64_t d = m / wm + n / wn, bd = m / best->first + n / best->second;
      return d < bd || (d == bd && wm > best->first);
    }
    }
    return false;
  };
  for (int64_t wm = 1; wm <= warps; ++wm) {
    if (warps % wm)
      continue;
    int64_t wn = warps / wm;
    if (m % (16 * wm) == 0 && n % (8 * wn) == 0 && better(wm, wn))
      best = {wm, wn};
  }
  if (best)
    rowsSplitByM.try_emplace(m, best->first);
  return best;
}

void markWgmmaGemms(KernelOp kernel, llvm::function_ref<const FragmentLayout *(Value)> layoutOf) {
  kernel.walk([&](GemmOp gemm) {
    auto warps = gpu::mmaWarps(gemm);
    auto c = shapeOf(gemm.getC());
    Type element = getElementTypeOf(gemm.getB().getType());
    if (!warps || warps->first % 4 != 0 || c.size() != 2 || c[0] != 16 * warps->first ||
        !(element.isBF16() || element.isF16()) || getElementTypeOf(gemm.getA().getType()) != element)
      return;
    // Warpgroups: wm / 4 along M (64 rows each), wn along N (tileN columns each).
    int64_t tileN = c[1] / warps->second, panelCols = 128 / gpu::elementBytes(element);
    if (tileN % 8 != 0 || tileN > 256)
      return;
    auto sharedRowsFit = [&](Value v) {
      if (!v.getDefiningOp<AllocOp>() || !isIn(v, MemorySpace::Shared))
        return false;
      auto s = shapeOf(v);
      return s.size() == 2 && (s[1] * gpu::elementBytes(element)) % 128 == 0;
    };
    if (!sharedRowsFit(gemm.getB()))
      return;
    // A K x N B (N-major) is read a warpgroup's columns at a time: they must start on a panel, or, narrower than a
    // panel, at a fixed place in every panel row (the descriptor's start moves within the 128-byte row; the swizzle
    // is applied to the address bits, as for a K-major operand's k-steps).
    if (!gemm.getTransposeB() && warps->second > 1 && tileN % panelCols != 0 && panelCols % tileN != 0)
      return;
    Value a = gemm.getA();
    if (a.getDefiningOp<AllocOp>() && isIn(a, MemorySpace::Fragment)) {
      auto s = shapeOf(a);
      if (gemm.getTransposeA() || s.size() != 2 ||
          !layout::registerAccessMap(FragmentLayout::mmaOperandA(s[0], s[1], warps->first, warps->second),
                                   *layoutOf(a), {0, 1}))
        return;
    } else if (!sharedRowsFit(a)) {
      return;
    }
    gemm->setAttr(gpu::kWgmmaAttr, tile::WgmmaPlanAttr::get(kernel.getContext(), tileN));
  });
}

} // namespace tilec
