// Tile IR after the GPU passes (layouts, shared-memory plan, barriers) -> CUDA C++ source, one
// `extern "C" __global__` function per tile.kernel, including only the embedded device library.
#ifndef TILEC_TARGET_CUDA_CUDAEMITTER_H
#define TILEC_TARGET_CUDA_CUDAEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace tilec {

/// Emits every tile.kernel of `module`. Fails (with a diagnostic at the op) on IR the GPU passes have not
/// prepared or on a construct the emitter does not support yet. Same input, byte-identical output.
mlir::LogicalResult emitCuda(mlir::ModuleOp module, llvm::raw_ostream &os);

} // namespace tilec

#endif
