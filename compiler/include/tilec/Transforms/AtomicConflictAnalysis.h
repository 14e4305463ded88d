// Which blocks of a launch can update the same element through one
// tile.atomic_add: the analysis behind tile-legalize-atomics.
//
// Each offset (region form) or index (element form) of the destination is
// classified as a function of the block indices:
//   invariant   the same value in every block and every execution (constants,
//               dims of kernel arguments, index arithmetic on them);
//   a*(b_k floordiv q) + c   with c invariant, a > 0, q >= 1;
//   unknown     anything else (loop induction variables, loaded data, several
//               block indices at once, unsupported operations).
// A dimension of the second kind, with window size s, separates blocks whose
// b_k differ but agree modulo q*ceil(s/a): split index `b_k mod q*ceil(s/a)`
// (period 1: b_k alone is separated). Grid dimensions that no destination
// dimension separates collide over their whole extent.
#ifndef TILEC_TRANSFORMS_ATOMICCONFLICTANALYSIS_H
#define TILEC_TRANSFORMS_ATOMICCONFLICTANALYSIS_H

#include "tilec/Dialect/Tile/IR/TileOps.h"

#include <optional>
#include <string>

namespace tilec {

/// A grid dimension over which blocks may update the same element.
struct GridCollision {
  unsigned blockIndex = 0;
  /// Blocks whose index agrees modulo `period` never collide; nullopt when
  /// no destination dimension separates this block index at all.
  std::optional<int64_t> period;
  /// The grid extent, if a compile-time constant.
  std::optional<int64_t> gridExtent;
  /// Split extent: min(period, grid extent) where known.
  std::optional<int64_t> splitExtent() const;
};

struct AtomicConflict {
  enum class Kind {
    /// Every element is updated by at most one block (and, within a block,
    /// by one op execution at a time): a plain read-modify-write is exact.
    Exclusive,
    /// Blocks collide only over grid dimensions with constant split extents
    /// whose product is within the bound.
    ConstantSplit,
    /// A colliding grid dimension has an extent that is not a compile-time
    /// constant.
    DynamicSplit,
    /// The split extents are constant but their product exceeds the bound.
    TooLarge,
    /// Updates collide within one block (inside tile.parallel): neither a
    /// plain read-modify-write nor a split is safe.
    Unsplittable,
  };
  Kind kind = Kind::Unsplittable;
  llvm::SmallVector<GridCollision> collisions;
  /// Product of the split extents (ConstantSplit, TooLarge).
  int64_t splitExtent = 1;
  /// The op may run several times per block (inside a serial loop), so a
  /// block may update one element more than once.
  bool repeats = false;
  /// Human-readable explanation, for remarks.
  std::string reason;
};

/// Analyses one atomic_add whose destination is (a region of) a kernel
/// argument; `maxSplit` bounds ConstantSplit.
AtomicConflict analyzeAtomicConflict(tile::AtomicAddOp op,
                                     tile::KernelOp kernel, int64_t maxSplit);

/// The kernel argument that `op` updates (through any tile.region), or
/// nullopt if the destination is not a kernel argument (a shared tile).
std::optional<unsigned> atomicDestinationArgument(tile::AtomicAddOp op,
                                                  tile::KernelOp kernel);

/// Whether the blocks of the launch, together, write every element of every
/// partial slice that the split strategy gives `op` (`conflict`, a
/// ConstantSplit of `op`): then the slices need no zeroing. Proven when the
/// op runs once in every block (directly in the kernel body), updates a
/// region of the argument, and each dimension of the destination is either
/// whole (offset 0, a window at least the static extent) or tiled by one
/// block index, `b floordiv q` times the window size, whose grid extent is
/// at least q * ceildiv(extent, window) symbolically; colliding block indices
/// in no dimension span their whole constant extent.
bool splitSlicesCovered(tile::AtomicAddOp op, tile::KernelOp kernel,
                        const AtomicConflict &conflict);

/// "grid extent s1 ceildiv 64" with symbols replaced by the kernel's dim
/// names where known: "seq ceildiv 64".
std::string describeGridExtent(tile::KernelOp kernel, unsigned blockIndex);

} // namespace tilec

#endif
