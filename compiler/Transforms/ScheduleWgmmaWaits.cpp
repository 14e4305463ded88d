// tile-schedule-wgmma-waits: decides where the warpgroup waits for its asynchronous wgmma groups.
//
// A gemm that tile-infer-layouts marked `tile.wgmma` issues its wgmmas as one commit group and leaves them in
// flight, so that independent work (another gemm, element-wise ops on other fragments, global atomics) overlaps the
// tensor cores. This pass walks each kernel in program order with the groups in flight and inserts
// `tile.wgmma_wait pending N (accumulators)` where the program needs a group to have completed:
//   - before the first later op that touches (reads or writes, at any depth of its regions) the group's accumulator
//     or its register A operand: groups complete in commit order, so the wait keeps the N groups committed after
//     that one in flight (in flash attention's backward the softmax of S runs while dP = V·dOᵀ is still running);
//   - before every block barrier (`tile.barrier`, `tile.arrive_last`) and before a pipelined loop that prefetches
//     (each of its iterations starts with one): after a barrier other threads may overwrite the shared tiles a
//     wgmma still reads (the next stage's prefetch, a tile tile-place-barriers protected);
//   - at the end of the block (loop body, branch, kernel) that issued a group still in flight: none is left in
//     flight across a loop's back edge, where ptxas would serialise every wgmma of the kernel (C7515: it sees the
//     loop-carried accumulators defined between the wgmma and its wait), nor past the end of the kernel.
// A wait in a nested block may not run on every path (a branch not taken, a loop of no iterations), so after the
// block the groups in flight at its entry count as still in flight; waiting again for a completed group is free.
// On the mma.sync path of the same code the waits do nothing.
#include "tilec/Lowering/GpuLoweringUtils.h"
#include "tilec/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace tilec {
#define GEN_PASS_DEF_SCHEDULEWGMMAWAITS
#include "tilec/Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;
using namespace tilec::tile;

namespace {

/// One gemm's commit group in flight.
struct Group {
  int64_t serial;                     // the how-manieth group of the kernel, in program order
  Value accumulator;                  // C
  SmallVector<Value, 2> buffers;      // what the group reads or writes in registers: C and a register A operand
};

class WaitScheduler {
public:
  void run(KernelOp kernel) {
    SmallVector<Group> pending;
    schedule(kernel.getBodyBlock(), pending);
  }

private:
  int64_t issued = 0;

  /// The index in `pending` of the latest group whose registers `op` (or an op nested in it) touches; -1 if none.
  static int latestTouchedBy(Operation *op, ArrayRef<Group> pending) {
    int latest = -1;
    if (pending.empty())
      return latest;
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands()) {
        if (!isa<MemRefType>(v.getType()))
          continue;
        Value base = gpu::baseBuffer(v);
        for (auto [g, group] : llvm::enumerate(pending))
          if (llvm::is_contained(group.buffers, base))
            latest = std::max(latest, int(g));
      }
    });
    return latest;
  }

  /// Waits, at `b`'s insertion point, for the groups in flight up to and including pending[last].
  static void waitFor(OpBuilder &b, Location loc, int last, SmallVector<Group> &pending) {
    SmallVector<Value> accumulators;
    for (int g = 0; g <= last; ++g)
      accumulators.push_back(pending[g].accumulator);
    WgmmaWaitOp::create(b, loc, int64_t(pending.size()) - 1 - last, accumulators);
    pending.erase(pending.begin(), pending.begin() + last + 1);
  }

  void schedule(Block &block, SmallVector<Group> &pending) {
    int64_t firstIssuedHere = issued;
    SmallVector<Group> inFlightAtEntry = pending;
    SmallVector<Operation *> ops;
    for (Operation &op : block)
      ops.push_back(&op);
    OpBuilder b(block.getParent()->getContext());
    for (Operation *op : ops) {
      b.setInsertionPoint(op);
      if (int latest = latestTouchedBy(op, pending); latest >= 0)
        waitFor(b, op->getLoc(), latest, pending);
      bool barrier = isa<BarrierOp, ArriveLastOp>(op);
      if (auto loop = dyn_cast<PipelinedOp>(op))
        barrier = !gpu::prefetchedCopies(loop.getBodyBlock()).empty();
      if (barrier && !pending.empty())
        waitFor(b, op->getLoc(), int(pending.size()) - 1, pending);
      for (Region &region : op->getRegions())
        for (Block &inner : region)
          schedule(inner, pending);
      if (auto gemm = dyn_cast<GemmOp>(op); gemm && gemm->hasAttr(gpu::kWgmmaAttr)) {
        Group group{issued++, gemm.getC(), {gemm.getC()}};
        if (gpu::spaceOf(gemm.getA()) != MemorySpace::Shared)
          group.buffers.push_back(gpu::baseBuffer(gemm.getA()));
        pending.push_back(std::move(group));
      }
    }
    // Issued in this block and still in flight: waited for before leaving it.
    if (!pending.empty() && pending.back().serial >= firstIssuedHere) {
      Operation *terminator = block.empty() ? nullptr : &block.back();
      if (terminator && terminator->hasTrait<OpTrait::IsTerminator>())
        b.setInsertionPoint(terminator);
      else
        b.setInsertionPointToEnd(&block);
      Location loc = terminator ? terminator->getLoc() : block.getParentOp()->getLoc();
      waitFor(b, loc, int(pending.size()) - 1, pending);
    }
    pending = std::move(inFlightAtEntry);
  }
};

struct ScheduleWgmmaWaits : tilec::impl::ScheduleWgmmaWaitsBase<ScheduleWgmmaWaits> {
  void runOnOperation() override {
    // Scheduled from scratch: a second run gives the same waits.
    getOperation().walk([](WgmmaWaitOp wait) { wait.erase(); });
    getOperation().walk([](KernelOp kernel) { WaitScheduler().run(kernel); });
  }
};

} // namespace
