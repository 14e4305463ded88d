// tile-plan-atomics: how the threads of a block carry out each tile-valued tile.atomic_add / tile.atomic_rmw, recorded
// as `tile.atomic_plan` (#tile.atomic<...>) for the CUDA emitter, which prints the form it is given. Element-form
// atomics (one element at given indices) need no plan.
//
//   - inside a tile.parallel body: elementwise (once per iteration, by the iteration's threads);
//   - an exclusive, not write-once add of a whole distributed fragment into a global f32/bf16/f16 tensor (the block
//     owns those elements: flash attention's dK and dV under MHA): exclusive_rmw, a read-modify-write with every
//     read before any write, with vectors of the fragment's consecutive slots where gpu::fragmentVectorElements
//     allows more than one;
//   - a relaxed add of a whole distributed fragment into a global f32 tensor: vectors of 2 or 4 where
//     gpu::fragmentVectorElements allows (red.global.add.v2/v4.f32; vector stores for a write-once add);
//   - elementwise otherwise.
// `checked`: the destination's last extent is dynamic, and the vector form runs only where it is a multiple of the
// vector (one element per access otherwise).
#include "VectorAccess.h"
#include "tilec/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace tilec {
#define GEN_PASS_DEF_PLANATOMICS
#include "tilec/Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;
using namespace tilec::tile;

namespace {

AtomicPlanAttr planAtomic(Operation *op, Value value, Value dest, bool isAdd, bool exclusive, bool writeOnce,
                          MemoryOrder order, int64_t threads) {
  MLIRContext *ctx = op->getContext();
  auto plan = [&](AtomicKind kind, int64_t vector = 1, bool checked = false) {
    return AtomicPlanAttr::get(ctx, kind, vector, checked);
  };
  if (op->getParentOfType<ParallelOp>())
    return plan(AtomicKind::Elementwise);
  std::optional<layout::FragmentLayout> source = gpu::distributedLayout(value, threads);
  Value tensor = gpu::baseBuffer(dest);
  Type element = getElementTypeOf(dest.getType());
  bool wholeFragment = source && gpu::isWholeOperand(value) && gpu::isIn(tensor, MemorySpace::Global);
  if (isAdd && exclusive && !writeOnce && wholeFragment && (element.isF32() || element.isBF16() || element.isF16())) {
    bool checked = false;
    int64_t width = gpu::fragmentVectorElements(*source, value, dest, /*isLoad=*/false, &checked);
    return width > 1 ? plan(AtomicKind::ExclusiveRmw, width, checked) : plan(AtomicKind::ExclusiveRmw);
  }
  if (isAdd && order == MemoryOrder::Relaxed && element.isF32() && wholeFragment) {
    bool checked = false;
    int64_t width = gpu::fragmentVectorElements(*source, value, dest, /*isLoad=*/false, &checked);
    if (width == 2 || width == 4)
      return plan(AtomicKind::Vectors, width, checked);
  }
  return plan(AtomicKind::Elementwise);
}

struct PlanAtomics : tilec::impl::PlanAtomicsBase<PlanAtomics> {
  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      int64_t threads = kernel.getThreads();
      kernel.walk([&](Operation *op) {
        AtomicPlanAttr plan;
        if (auto add = dyn_cast<AtomicAddOp>(op); add && !add.isElementForm())
          plan = planAtomic(op, add.getValue(), add.getDest(), /*isAdd=*/true, add.getExclusive(),
                            add.getWriteOnce(), add.getOrder(), threads);
        else if (auto rmw = dyn_cast<AtomicRmwOp>(op); rmw && !rmw.isElementForm())
          plan = planAtomic(op, rmw.getValue(), rmw.getDest(), /*isAdd=*/false, /*exclusive=*/false,
                            /*writeOnce=*/false, rmw.getOrder(), threads);
        if (plan)
          op->setAttr(gpu::kAtomicPlanAttr, plan);
      });
    });
  }
};

} // namespace
