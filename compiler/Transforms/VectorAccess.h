// The vector accesses between a distributed fragment and a global tensor that tile-plan-copies and
// tile-plan-atomics may choose: how many of a thread's consecutive slots move in one access.
#ifndef TILEC_TRANSFORMS_VECTORACCESS_H
#define TILEC_TRANSFORMS_VECTORACCESS_H

#include "tilec/Lowering/GpuLoweringUtils.h"

#include "llvm/ADT/SmallVector.h"

namespace tilec::gpu {

/// The extents of the window an operand covers in its buffer: a region's sizes, else the buffer's shape.
llvm::SmallVector<int64_t> windowOf(mlir::Value operand);

/// Whether an operand is a whole buffer, not a region of one.
inline bool isWholeOperand(mlir::Value operand) { return !operand.getDefiningOp<tile::RegionOp>(); }

/// The layout of a fragment or local operand's buffer when it is spread over the threads (not replicated).
std::optional<layout::FragmentLayout> distributedLayout(mlir::Value operand, int64_t threads);

/// The elements G per access between the whole distributed fragment `fragment` (in layout `l`, driving the access)
/// and the global operand `global`: G consecutive slots of every thread hold G consecutive elements of the tensor's
/// last dim, starting at a multiple of G, in 4, 8 or 16 bytes of its dtype, so a group is wholly inside or outside
/// the tensor. 0 when no vector access applies; `*checked` when the tensor's last extent is dynamic (the kernel must
/// then test that it is a multiple of G).
int64_t fragmentVectorElements(const layout::FragmentLayout &l, mlir::Value fragment, mlir::Value global,
                               bool isLoad, bool *checked);

} // namespace tilec::gpu

#endif
