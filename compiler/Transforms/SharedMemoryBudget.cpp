// tile-shared-memory-budget: the shared-memory footprint of every kernel,
// before any reuse, checked against what one block may use.
#include "tilec/Dialect/Tile/IR/TileOps.h"
#include "tilec/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"

namespace tilec {
#define GEN_PASS_DEF_SHAREDMEMORYBUDGET
#include "tilec/Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec::tile;

namespace {

int64_t tileBytes(MemRefType type) {
  int64_t bits = type.getElementTypeBitWidth();
  return (type.getNumElements() * bits + 7) / 8;
}

struct SharedMemoryBudget
    : tilec::impl::SharedMemoryBudgetBase<SharedMemoryBudget> {
  using SharedMemoryBudgetBase::SharedMemoryBudgetBase;

  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](KernelOp kernel) {
      SmallVector<AllocOp> tiles;
      int64_t total = 0;
      kernel.walk([&](AllocOp alloc) {
        if (getMemorySpaceOf(alloc.getType()) != MemorySpace::Shared)
          return;
        tiles.push_back(alloc);
        total += tileBytes(alloc.getType());
      });
      kernel->setAttr("tile.shared_bytes",
                      Builder(kernel).getI64IntegerAttr(total));
      int64_t budget = limit;
      if (total <= budget)
        return;
      failed = true;
      llvm::stable_sort(tiles, [](AllocOp a, AllocOp b) {
        return tileBytes(a.getType()) > tileBytes(b.getType());
      });
      auto diag = kernel.emitError()
                  << "kernel '" << kernel.getSymName() << "' needs " << total
                  << " bytes of shared memory, more than the " << budget
                  << " one block may use";
      for (AllocOp alloc : llvm::ArrayRef(tiles).take_front(3))
        diag.attachNote(alloc.getLoc())
            << "shared tile of " << tileBytes(alloc.getType()) << " bytes";
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
