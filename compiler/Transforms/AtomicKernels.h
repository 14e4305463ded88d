// Kernels that tile-legalize-atomics generates around a legalized kernel:
// f32 workspace initialisation and write-back, and the fixed-order sum of a
// split partial buffer, in its own kernel or at the end of the main kernel.
// Private to compiler/Transforms.
#ifndef TILEC_TRANSFORMS_ATOMICKERNELS_H
#define TILEC_TRANSFORMS_ATOMICKERNELS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "tilec/Dialect/Tile/IR/TileOps.h"
#include "tilec/Transforms/AtomicConflictAnalysis.h"

namespace tilec {

enum class AtomicKernelKind {
  /// (dst, ws): ws <- f32(dst).
  ToF32,
  /// (ws, dst): dst <- round(ws).
  FromF32,
  /// (partial[S, ...], dst): dst <- round(f32(dst) + partial[0] + ... +
  /// partial[S-1]), added in that order: bitwise reproducible.
  Sum,
};

/// Builds the kernel at the builder's insertion point. `dstType` is the
/// user's destination, `accType` the workspace (ToF32, FromF32: same shape,
/// f32; Sum: [splits, shape...]). One block per row chunk of at most 256
/// elements of the last dimension, over a one-dimensional grid.
tile::KernelOp buildAtomicKernel(mlir::OpBuilder &b, mlir::Location loc,
                                 llvm::StringRef name, AtomicKernelKind kind,
                                 mlir::MemRefType dstType,
                                 mlir::MemRefType accType, int64_t splits,
                                 llvm::StringRef dstName);

/// The kernel's grid extents as index values (arith ops the CUDA emitter and the launch plan both handle), grid
/// symbol i read as `dimOf(gridOperands[2i], gridOperands[2i+1])`.
llvm::SmallVector<mlir::Value>
gridExtentValues(mlir::OpBuilder &b, mlir::Location loc, tile::KernelOp kernel, llvm::ArrayRef<int64_t> gridOperands,
                 llvm::function_ref<mlir::Value(int64_t, int64_t)> dimOf);

/// Where addLastBlockSum put its new kernel arguments, and the last block's branch (where a later destination
/// with the same tiles of blocks adds its own sum).
struct LastBlockSumArgs {
  unsigned dstArg, counterArg;
  mlir::scf::IfOp lastBlock;
};

/// The split strategy's sum inside the main kernel (docs/atomics.md §3), for a covered split destination whose
/// partial buffer is argument `partialArg` (already retyped) and whose only site is `site`: appends the
/// destination (`dstType`) and an i32 counter per block of the grid as kernel arguments, then, at the end of the
/// body, the block's arrival at its tile's counter and the last block's fixed-order sum into the destination.
/// `userShapes` / `userGridOperands` are the kernel's tile.arg_shapes and grid operands before legalization.
/// With `sharing` (an earlier destination of the same kernel whose tiles are written by the same groups of blocks:
/// the same collisions, the same splits), no counter is added: the block's one arrival covers both, and this
/// destination's sum follows the earlier one in the last block's branch.
LastBlockSumArgs addLastBlockSum(tile::KernelOp kernel, tile::AtomicAddOp site, const AtomicConflict &conflict,
                                 unsigned partialArg, llvm::StringRef name, int64_t splits, mlir::MemRefType dstType,
                                 mlir::ArrayAttr userShapes, llvm::ArrayRef<int64_t> userGridOperands,
                                 const LastBlockSumArgs *sharing = nullptr);

} // namespace tilec

#endif
