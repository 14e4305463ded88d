// The named pass pipelines: the one place that says which passes run in which order.
#ifndef TILEC_PIPELINE_PIPELINES_H
#define TILEC_PIPELINE_PIPELINES_H

#include "mlir/Pass/PassManager.h"

namespace tilec {

/// Tile IR after atomic legalization -> tile IR with every GPU decision recorded (what --emit=lowered prints and the
/// CUDA emitter executes):
///   1. tile-infer-layouts       fragment layouts, gemm plans, loop distributions, conversions through shared memory
///   2. tile-plan-shared-memory  offsets and swizzles in one dynamic buffer, reduction scratch, the budget
///   3. tile-place-barriers      __syncthreads() where threads would race on shared or global memory
/// Barriers come last because they depend on which tiles share bytes (step 2) and on the staging tiles (step 1).
void buildGpuLoweringPipeline(mlir::OpPassManager &pm);

} // namespace tilec

#endif
