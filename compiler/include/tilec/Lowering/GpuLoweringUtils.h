// Small queries shared by the GPU lowering passes (compiler/Transforms) and the CUDA emitter (compiler/Target/CUDA):
// the names of the attributes the passes record, and reading them back.
#ifndef TILEC_LOWERING_GPULOWERINGUTILS_H
#define TILEC_LOWERING_GPULOWERINGUTILS_H

#include "tilec/Dialect/Tile/IR/TileOps.h"
#include "tilec/Lowering/Layout.h"
#include "tilec/Lowering/LayoutAttrs.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <string>

namespace tilec::gpu {

/// Attribute names of the decisions the GPU passes record (visible in --emit=lowered).
inline constexpr const char *kLayoutAttr = "tile.layout"; // fragment/local allocs, tile.parallel: a layout attribute
// tile.gemm: #tile.wgmma<m64, n N, k16>, set beside a "m16n8k16 warps Wx1" plan whose warps each hold 16 whole rows, where the gemm
// also fits Hopper's warpgroup mma (wgmma); the CUDA emitter then emits both, chosen by the compile's arch.
inline constexpr const char *kWgmmaAttr = "tile.wgmma";
inline constexpr const char *kMmaAttr = "tile.mma"; // tile.gemm: #tile.mma_sync<m16n8k16, warps [A, B]> or #tile.simt
inline constexpr const char *kOffsetAttr = "tile.offset";     // shared allocs: byte offset in dynamic smem
inline constexpr const char *kSwizzleAttr = "tile.swizzle"; // shared allocs: #tile.swizzle<kind>
inline constexpr const char *kScratchAttr = "tile.scratch_offset"; // kernel: reduction scratch offset
inline constexpr const char *kSharedBytesAttr = "tile.shared_bytes";
inline constexpr const char *kStagesAttr = "tile.stages";         // shared allocs: buffers of a pipelined loop
inline constexpr const char *kStageBytesAttr = "tile.stage_bytes"; // shared allocs: bytes from one stage to the next
inline constexpr const char *kPrefetchAttr = "tile.prefetch";     // tile.copy: issued stages-1 iterations ahead
// tile.pipelined: the emitter re-reads the thread index at the top of each iteration (tile-multi-buffer decides)
inline constexpr const char *kRereadThreadIndexAttr = "tile.reread_thread_index";
// tile.parallel: only the primary thread of each iteration runs the body (tile-infer-layouts decides, for a loop
// that reads back memory it writes while several threads would run each iteration)
inline constexpr const char *kPrimaryOnlyAttr = "tile.primary_only";
// tile.copy, tile.async_copy: #tile.copy<...>, how the block's threads carry it out (tile-plan-copies decides)
inline constexpr const char *kCopyPlanAttr = "tile.copy_plan";
// tile-valued tile.atomic_add, tile.atomic_rmw: #tile.atomic<...>, how the block's threads carry it out
// (tile-plan-atomics decides)
inline constexpr const char *kAtomicPlanAttr = "tile.atomic_plan";

/// The buffer a tile operand refers to: the source of a tile.region, else itself.
inline mlir::Value baseBuffer(mlir::Value v) {
  while (auto region = v.getDefiningOp<tile::RegionOp>())
    v = region.getSource();
  return v;
}

/// Whether `v` is a whole on-chip tile: its tile.alloc, or one buffer of a multi-buffered one (tile.stage_view).
inline bool isWholeTile(mlir::Value v) {
  return v.getDefiningOp<tile::AllocOp>() || v.getDefiningOp<tile::StageViewOp>();
}

inline std::optional<tile::MemorySpace> spaceOf(mlir::Value v) { return tile::getMemorySpaceOf(v.getType()); }

inline bool isIn(mlir::Value v, tile::MemorySpace space) {
  auto s = spaceOf(v);
  return s && *s == space;
}

/// The source name of a value (NameLoc of its alloc), or "tile".
inline std::string nameOf(mlir::Value v) {
  v = baseBuffer(v);
  if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(v))
    if (auto kernel = llvm::dyn_cast<tile::KernelOp>(arg.getOwner()->getParentOp()))
      if (auto names = kernel->getAttrOfType<mlir::ArrayAttr>("tile.arg_names"))
        if (arg.getArgNumber() < names.size())
          return llvm::cast<mlir::StringAttr>(names[arg.getArgNumber()]).str();
  if (mlir::Operation *def = v.getDefiningOp())
    if (auto name = llvm::dyn_cast<mlir::NameLoc>(def->getLoc()))
      return name.getName().str();
  return "tile";
}

/// The warp partition (warps along M, along N) of a `tile.mma = #tile.mma_sync<m16n8k16, warps [A, B]>` plan;
/// nothing for #tile.simt or a gemm without a plan.
inline std::optional<std::pair<int64_t, int64_t>> mmaWarps(mlir::Operation *gemm) {
  auto plan = gemm->getAttrOfType<tile::MmaSyncPlanAttr>(kMmaAttr);
  if (!plan)
    return std::nullopt;
  return std::make_pair(plan.getWarpsM(), plan.getWarpsN());
}

/// How a block's `threads` copy a shared tile of `shape` (its extents, unit dims included) in chunks of `vec`
/// elements when they cover whole rows of its squeezed 2-d shape in every step: `step` rows per step, `iterations`
/// steps, and the element offset `delta` one step adds to every thread's chunk under `swizzle` (#tile.copy<row_chunks>).
/// Nothing when the shape is not 2-d once squeezed, the threads do not cover whole rows, or the swizzle does not move
/// every thread's chunk by the same constant from one step to the next.
struct RowChunkSteps {
  int64_t step, iterations, delta;
};
inline std::optional<RowChunkSteps> rowChunkSteps(llvm::ArrayRef<int64_t> shape, int64_t elementBytes,
                                                  const layout::Swizzle &swizzle, int64_t threads, int64_t vec) {
  llvm::SmallVector<int64_t> squeezed = tile::getSqueezedShape(shape);
  if (squeezed.size() != 2)
    return std::nullopt;
  int64_t rows = squeezed[0], cols = squeezed[1], tileCols = shape.back();
  if ((threads * vec) % cols != 0 || (rows * cols) % (threads * vec) != 0)
    return std::nullopt;
  int64_t step = threads * vec / cols, iterations = rows * cols / (threads * vec);
  auto offset = [&](int64_t r, int64_t c) { return swizzle.apply(r, c, tileCols, elementBytes); };
  int64_t delta = offset(step, 0) - offset(0, 0);
  for (int64_t t = 0; t < threads; ++t) {
    int64_t r = t * vec / cols, c = t * vec % cols;
    for (int64_t k = 1; k < iterations; ++k)
      if (offset(r + k * step, c) != offset(r, c) + k * delta)
        return std::nullopt;
  }
  return RowChunkSteps{step, iterations, delta};
}

/// The layout recorded on a fragment or local alloc.
inline std::optional<layout::FragmentLayout> layoutOf(mlir::Value buffer, int64_t threads) {
  mlir::Operation *def = baseBuffer(buffer).getDefiningOp();
  if (!def)
    return std::nullopt;
  return layout::fromAttr(def->getAttr(kLayoutAttr), threads);
}

/// The copies of a loop body that tile-multi-buffer marked `tile.prefetch` (issued stages-1 iterations ahead), in
/// order; none for a loop that is not software-pipelined.
inline llvm::SmallVector<tile::CopyOp> prefetchedCopies(mlir::Block &body) {
  llvm::SmallVector<tile::CopyOp> copies;
  for (mlir::Operation &op : body)
    if (op.hasAttr(kPrefetchAttr))
      copies.push_back(llvm::cast<tile::CopyOp>(op));
  return copies;
}

inline int64_t elementBytes(mlir::Type t) {
  unsigned bits = t.getIntOrFloatBitWidth();
  return bits <= 8 ? 1 : bits / 8;
}

/// The swizzle tile-plan-shared-memory recorded on the shared tile `tile` (a tile.alloc or a tile.stage_view of one), as
/// the layout algebra's Swizzle for the tile's shape; nothing when none is recorded or it does not fit the tile.
inline std::optional<layout::Swizzle> plannedSwizzle(mlir::Value tile) {
  if (auto view = tile.getDefiningOp<tile::StageViewOp>())
    tile = view.getTile();
  mlir::Operation *alloc = tile.getDefiningOp();
  if (!alloc)
    return std::nullopt;
  std::optional<layout::Swizzle::Kind> kind = layout::swizzleKindOf(alloc->getAttr(kSwizzleAttr));
  if (!kind)
    return std::nullopt;
  if (*kind == layout::Swizzle::Kind::None)
    return layout::Swizzle{};
  auto type = llvm::cast<mlir::MemRefType>(tile.getType());
  int64_t bytes = elementBytes(type.getElementType());
  if (type.getRank() == 2 || (type.getRank() > 2 && *kind != layout::Swizzle::Kind::Xor8Panels))
    return layout::Swizzle::ofKind(*kind, type.getShape()[0], type.getShape().back() * bytes, bytes);
  return std::nullopt;
}

/// A divisor every value of the index `v` is known to have (constants, and sums and products of them with
/// anything); 1 when nothing is known, 2^30 for zero.
inline int64_t knownDivisor(mlir::Value v) {
  constexpr int64_t kAny = int64_t(1) << 30;
  if (auto c = v.getDefiningOp<mlir::arith::ConstantIndexOp>())
    return c.value() == 0 ? kAny : std::abs(c.value());
  if (auto mul = v.getDefiningOp<mlir::arith::MulIOp>())
    return std::min<int64_t>(knownDivisor(mul.getLhs()) * knownDivisor(mul.getRhs()), kAny);
  if (auto add = v.getDefiningOp<mlir::arith::AddIOp>())
    return std::gcd(knownDivisor(add.getLhs()), knownDivisor(add.getRhs()));
  if (auto sub = v.getDefiningOp<mlir::arith::SubIOp>())
    return std::gcd(knownDivisor(sub.getLhs()), knownDivisor(sub.getRhs()));
  return 1;
}

/// The elements per 16-byte chunk when `copy` can move whole 16-byte chunks from a global tensor into a whole
/// shared tile (same dtype, pad 0, every chunk inside one row of both and 16-byte aligned in the tensor as far as
/// its static shape and the region's offsets show); 0 when it cannot. The CUDA emitter's vector path and the
/// multi-buffering of pipelined loops (cp.async moves 16-byte chunks) both ask this. With `dynamicLast`, a tensor
/// whose last dim is dynamic also qualifies and `*dynamicLast` says so: the caller must then check at run time that
/// the extent is a multiple of the chunk (the rows' starts are then 16-byte aligned too).
/// The target is a whole shared tile: its tile.alloc, or one buffer of it (tile.stage_view).
inline int64_t vectorCopyElements(mlir::Value source, mlir::Value target, bool *dynamicLast = nullptr) {
  mlir::Value global = baseBuffer(source);
  if (!isIn(global, tile::MemorySpace::Global) || !isIn(target, tile::MemorySpace::Shared) ||
      !isWholeTile(target))
    return 0;
  auto g = llvm::cast<mlir::MemRefType>(global.getType());
  auto s = llvm::cast<mlir::MemRefType>(target.getType());
  if (g.getElementType() != s.getElementType() || s.getRank() == 0)
    return 0;
  int64_t vec = 16 / elementBytes(g.getElementType());
  llvm::SmallVector<int64_t> window(g.getShape().begin(), g.getShape().end());
  auto region = source.getDefiningOp<tile::RegionOp>();
  if (region) {
    if (baseBuffer(region.getSource()) != region.getSource())
      return 0; // a region of a region: offsets compose, which the emitter's path does not handle
    if (auto pad = region.getPad(); pad && !pad->isPosZero())
      return 0; // chunks past the tensor's edge are zero-filled
    window.assign(region.getSizes().begin(), region.getSizes().end());
  }
  auto squeeze = [](llvm::ArrayRef<int64_t> shape) {
    llvm::SmallVector<int64_t> out;
    for (int64_t x : shape)
      if (x != 1)
        out.push_back(x);
    return out;
  };
  int64_t last = g.getShape().back();
  bool dynamic = mlir::ShapedType::isDynamic(last);
  if ((dynamic && !dynamicLast) || (!dynamic && last % vec != 0) || window.back() % vec != 0 ||
      s.getShape().back() % vec != 0 || window.back() != s.getShape().back() ||
      squeeze(window) != squeeze(s.getShape()))
    return 0;
  if (region && knownDivisor(region.getOffsets().back()) % vec != 0)
    return 0;
  if (dynamicLast)
    *dynamicLast = dynamic;
  return vec;
}

} // namespace tilec::gpu

#endif
