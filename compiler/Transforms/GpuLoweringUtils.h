// Small queries shared by the GPU lowering passes and the CUDA emitter.
#ifndef TILEC_TRANSFORMS_GPULOWERINGUTILS_H
#define TILEC_TRANSFORMS_GPULOWERINGUTILS_H

#include "tilec/Dialect/Tile/IR/TileOps.h"
#include "tilec/Target/CUDA/Layout.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cstdio>
#include <optional>
#include <string>

namespace tilec::gpu {

/// Attribute names of the decisions the GPU passes record (visible in --emit=lowered).
inline constexpr const char *kLayoutAttr = "tile.layout";     // fragment/local allocs, tile.parallel
inline constexpr const char *kMmaAttr = "tile.mma";           // tile.gemm: "m16n8k16 warps AxB" or "simt"
inline constexpr const char *kOffsetAttr = "tile.offset";     // shared allocs: byte offset in dynamic smem
inline constexpr const char *kSwizzleAttr = "tile.swizzle";   // shared allocs: Swizzle::name()
inline constexpr const char *kScratchAttr = "tile.scratch_offset"; // kernel: reduction scratch offset
inline constexpr const char *kSharedBytesAttr = "tile.shared_bytes";

/// The buffer a tile operand refers to: the source of a tile.region, else itself.
inline mlir::Value baseBuffer(mlir::Value v) {
  while (auto region = v.getDefiningOp<tile::RegionOp>())
    v = region.getSource();
  return v;
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

/// The warp partition (warps along M, along N) of a `tile.mma = "m16n8k16 warps AxB"` plan; nothing for "simt" or
/// a gemm without a plan.
inline std::optional<std::pair<int64_t, int64_t>> mmaWarps(mlir::Operation *gemm) {
  auto plan = gemm->getAttrOfType<mlir::StringAttr>(kMmaAttr);
  long long wm = 0, wn = 0;
  if (!plan || std::sscanf(plan.str().c_str(), "m16n8k16 warps %lldx%lld", &wm, &wn) != 2 || wm <= 0 || wn <= 0)
    return std::nullopt;
  return std::make_pair(int64_t(wm), int64_t(wn));
}

/// The layout recorded on a fragment or local alloc.
inline std::optional<cuda::FragmentLayout> layoutOf(mlir::Value buffer, int64_t threads) {
  mlir::Operation *def = baseBuffer(buffer).getDefiningOp();
  if (!def)
    return std::nullopt;
  auto text = def->getAttrOfType<mlir::StringAttr>(kLayoutAttr);
  if (!text)
    return std::nullopt;
  return cuda::FragmentLayout::parse(text.str(), threads);
}

inline int64_t elementBytes(mlir::Type t) {
  unsigned bits = t.getIntOrFloatBitWidth();
  return bits <= 8 ? 1 : bits / 8;
}

} // namespace tilec::gpu

#endif
