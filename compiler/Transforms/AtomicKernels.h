// Kernels that tile-legalize-atomics generates around a legalized kernel:
// f32 workspace initialisation and write-back, and the fixed-order sum of a
// split partial buffer. Private to compiler/Transforms.
#ifndef TILEC_TRANSFORMS_ATOMICKERNELS_H
#define TILEC_TRANSFORMS_ATOMICKERNELS_H

#include "tilec/Dialect/Tile/IR/TileOps.h"

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

} // namespace tilec

#endif
