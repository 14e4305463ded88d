// tile-expand-pipelines: software pipelining of `tile.pipelined` loops, the schedule half (tile-multi-buffer made the
// decisions: which copies run ahead, how many buffers each target tile has).
//
// For S = stages, lo/hi the loop's bounds and the prefetched copies C (each into its own multi-buffered tile T):
//
//   for s in 0 .. S-2:                                   the prologue
//     if (lo + s < hi) { offsets of iteration lo+s; async_copy C -> stage_view T[s] }
//     async_commit                                       one group per iteration, empty past the end
//   scf.for n = lo to hi:
//     async_wait pending S-2                             iteration n's group landed (this thread's copies)
//     barrier                                            every thread's copies landed; all done with iteration n-1
//     T_n = stage_view T[(n - lo) mod S]                 the body reads T_n where it read T
//     if (n + S-1 < hi) { offsets of n+S-1; async_copy C -> stage_view T[(n+S-1 - lo) mod S] }
//     async_commit                                       into the buffer iteration n-1 read, which the barrier freed
//     the body, without C
//   async_wait pending 0
//
// The offsets of a prefetched iteration are the body's index arithmetic that the copies' sources depend on
// (tile-multi-buffer checked that it is side-effect free and uses only the induction variable and values from
// outside), cloned with the induction variable replaced. The barrier and the waits are the ones tile-place-barriers
// and tile-schedule-wgmma-waits assumed when they saw the loop unexpanded, so this pass runs after them. A pipelined
// loop with nothing to prefetch becomes a plain scf.for. Either way `tile.reread_thread_index` moves to the scf.for.
#include "tilec/Lowering/GpuLoweringUtils.h"
#include "tilec/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/SetVector.h"

namespace tilec {
#define GEN_PASS_DEF_EXPANDPIPELINES
#include "tilec/Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;
using namespace tilec::tile;

namespace {

/// The ops of `body` that `v` is computed by, into `slice` (operands first).
void collectSlice(Value v, Block &body, llvm::SetVector<Operation *> &slice) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != &body || slice.contains(def))
    return;
  for (Value operand : def->getOperands())
    collectSlice(operand, body, slice);
  slice.insert(def);
}

/// The index constant `value`, at the top of the kernel body around `at` (an existing one, or a new one there), so
/// that the expanded loops of a kernel share their constants.
Value indexConstant(Operation *at, int64_t value) {
  Block &entry = at->getParentOfType<KernelOp>().getBodyBlock();
  Operation *anchor = entry.findAncestorOpInBlock(*at);
  for (Operation &op : entry) {
    if (&op == anchor)
      break;
    if (auto c = dyn_cast<arith::ConstantIndexOp>(op); c && c.value() == value)
      return c;
  }
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  return arith::ConstantIndexOp::create(b, at->getLoc(), value);
}

/// A plain scf.for over [lower, upper) with `loop`'s body (its terminator-free block moved in), carrying its
/// attributes that still mean something.
scf::ForOp createFor(OpBuilder &b, PipelinedOp loop) {
  Location loc = loop.getLoc();
  Value one = indexConstant(loop, 1);
  auto forOp = scf::ForOp::create(b, loc, loop.getLower(), loop.getUpper(), one);
  if (loop->hasAttr(gpu::kRereadThreadIndexAttr))
    forOp->setAttr(gpu::kRereadThreadIndexAttr, b.getUnitAttr());
  return forOp;
}

/// Moves `loop`'s body to the end of `forOp`'s (before its yield), on `forOp`'s induction variable.
void moveBody(PipelinedOp loop, scf::ForOp forOp) {
  loop.getInductionVar().replaceAllUsesWith(forOp.getInductionVar());
  Block &from = loop.getBodyBlock();
  Block &to = *forOp.getBody();
  to.getOperations().splice(to.getTerminator()->getIterator(), from.getOperations());
}

void expand(PipelinedOp loop) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Block &body = loop.getBodyBlock();
  SmallVector<CopyOp> copies = gpu::prefetchedCopies(body);
  if (copies.empty()) {
    scf::ForOp forOp = createFor(b, loop);
    moveBody(loop, forOp);
    loop.erase();
    return;
  }
  const int64_t stages = loop.getStages();
  Value lo = loop.getLower(), hi = loop.getUpper(), iv = loop.getInductionVar();
  llvm::SetVector<Operation *> sliceSet;
  for (CopyOp copy : copies)
    collectSlice(copy.getSource(), body, sliceSet);
  SmallVector<Operation *> slice(sliceSet.begin(), sliceSet.end());
  llvm::sort(slice, [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  Value stageCount = indexConstant(loop, stages);
  // (source, multi-buffered tile) of each copy, taken before the body's uses of the tiles become stage views.
  struct Move {
    Value source, tile;
    Attribute plan; // tile-plan-copies' #tile.copy<...>, kept on the asynchronous copy
  };
  SmallVector<Move> moves;
  for (CopyOp copy : copies)
    moves.push_back({copy.getSource(), copy.getTarget(), copy->getAttr(gpu::kCopyPlanAttr)});

  // Issues iteration `iteration`'s copies into buffer `stage` of their tiles when it is below the upper bound, then
  // commits (an empty group otherwise: the waits count groups per iteration).
  auto prefetch = [&](OpBuilder &at, Value iteration, Value stage) {
    Value inRange = arith::CmpIOp::create(at, loc, arith::CmpIPredicate::slt, iteration, hi);
    auto ifOp = scf::IfOp::create(at, loc, inRange, /*withElseRegion=*/false);
    OpBuilder inside = ifOp.getThenBodyBuilder();
    IRMapping map;
    map.map(iv, iteration);
    for (Operation *op : slice)
      inside.clone(*op, map);
    for (const Move &move : moves) {
      Value view = StageViewOp::create(inside, move.tile.getLoc(), move.tile.getType(), move.tile, stage);
      auto copy = AsyncCopyOp::create(inside, move.source.getLoc(), map.lookupOrDefault(move.source), view);
      if (move.plan)
        copy->setAttr(gpu::kCopyPlanAttr, move.plan);
    }
    AsyncCommitOp::create(at, loc);
  };

  for (int64_t s = 0; s + 1 < stages; ++s) {
    Value stage = indexConstant(loop, s);
    Value iteration = s == 0 ? lo : arith::AddIOp::create(b, loc, lo, stage).getResult();
    prefetch(b, iteration, stage);
  }

  scf::ForOp forOp = createFor(b, loop);
  OpBuilder top = OpBuilder::atBlockBegin(forOp.getBody());
  Value n = forOp.getInductionVar();
  AsyncWaitOp::create(top, loc, stages - 2);
  BarrierOp::create(top, loc);
  auto stageOf = [&](Value iteration) {
    Value fromStart = top.createOrFold<arith::SubIOp>(loc, iteration, lo);
    return arith::RemSIOp::create(top, loc, fromStart, stageCount).getResult();
  };
  Value current = stageOf(n);
  llvm::SmallSetVector<Value, 4> tiles;
  for (const Move &move : moves)
    tiles.insert(move.tile);
  for (Value tile : tiles) {
    Value view = StageViewOp::create(top, tile.getLoc(), tile.getType(), tile, current);
    tile.replaceUsesWithIf(view, [&](OpOperand &use) { return loop->isAncestor(use.getOwner()); });
  }
  Value ahead = indexConstant(loop, stages - 1);
  Value next = arith::AddIOp::create(top, loc, n, ahead);
  prefetch(top, next, stageOf(next));

  // The body without the prefetched copies and the index arithmetic only they used.
  for (CopyOp copy : copies)
    copy.erase();
  for (Operation *op : llvm::reverse(slice))
    if (op->use_empty() && isPure(op))
      op->erase();
  moveBody(loop, forOp);
  b.setInsertionPointAfter(forOp);
  AsyncWaitOp::create(b, loc, 0);
  loop.erase();
}

struct ExpandPipelines : tilec::impl::ExpandPipelinesBase<ExpandPipelines> {
  void runOnOperation() override {
    SmallVector<PipelinedOp> loops;
    getOperation().walk([&](PipelinedOp loop) { loops.push_back(loop); }); // inner loops first
    for (PipelinedOp loop : loops)
      expand(loop);
  }
};

} // namespace
