#include "tilec/Pipeline/Pipelines.h"
#include "tilec/Transforms/Passes.h"

namespace tilec {

void buildGpuLoweringPipeline(mlir::OpPassManager &pm) {
  pm.addPass(createUnswitchParallel());
  pm.addPass(createInferLayouts());
  pm.addPass(createMultiBuffer());
  pm.addPass(createPlanSharedMemory());
  pm.addPass(createPlaceBarriers());
  pm.addPass(createScheduleWgmmaWaits());
  pm.addPass(createPlanCopies());
  pm.addPass(createPlanAtomics());
  pm.addPass(createExpandPipelines());
}

} // namespace tilec
