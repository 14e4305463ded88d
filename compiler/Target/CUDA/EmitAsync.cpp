// The asynchronous-copy ops tile-expand-pipelines writes a software pipeline with: tile.stage_view (a pointer to one
// buffer of a multi-buffered shared tile), tile.async_copy (the copy's 16-byte chunks as cp.async), tile.async_commit
// and tile.async_wait (cp.async groups).
#include "EmitterImpl.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::tile;

namespace tilec::cuda {

LogicalResult KernelEmitter::emitStageView(StageViewOp view) {
  auto found = buffers.find(view.getTile());
  if (found == buffers.end() || found->second.stages < 2)
    return view.emitError("internal compiler error: a stage view of a tile that is not multi-buffered");
  Buffer b = found->second;
  std::string stage = "(" + value(view.getIndex()) + ")";
  b.var = fresh(gpu::nameOf(view.getTile()));
  b.addrVar = b.var + "_addr";
  line() << cType(b.element) << " *const " << b.var << " = " << b.stagesVar << " + " << stage << " * "
         << b.stageElements << ";\n";
  line() << "const unsigned " << b.addrVar << " = " << b.stagesAddrVar << " + (unsigned)" << stage << " * "
         << b.stageElements * gpu::elementBytes(b.element) << "u;\n";
  b.stages = 1;
  buffers[view.getResult()] = b;
  return success();
}

LogicalResult KernelEmitter::emitAsyncCopy(AsyncCopyOp copy) {
  asyncCopies = true;
  LogicalResult result = emitCopy(CopyOperands(copy));
  asyncCopies = false;
  return result;
}

LogicalResult KernelEmitter::emitAsyncCommit(AsyncCommitOp) {
  line() << "tilec::device::cp_async_commit();\n";
  return success();
}

LogicalResult KernelEmitter::emitAsyncWait(AsyncWaitOp wait) {
  line() << "tilec::device::cp_async_wait<" << wait.getPending() << ">();\n";
  return success();
}

} // namespace tilec::cuda
