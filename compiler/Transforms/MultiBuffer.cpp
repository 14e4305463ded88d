// tile-multi-buffer: software pipelining of `tile.pipelined` loops, the decisions half (the CUDA emitter executes
// them with cp.async).
//
// A copy at the top level of a pipelined loop's body that moves a region of a global tensor into a whole shared
// tile can run `stages - 1` iterations ahead of the compute that reads it, if the tile gets `stages` buffers. The
// pass picks those copies and records the plan:
//   - the copy gets `tile.prefetch`: the emitter issues it, as cp.async groups, for iterations lo .. lo+stages-2
//     before the loop and for iteration n+stages-1 at the top of iteration n, and emits nothing where it stands;
//   - the tile's alloc gets `tile.stages` = stages: tile-plan-shared-memory reserves that many buffers, and
//     iteration n reads buffer (n - lo) mod stages.
// A copy qualifies when cp.async can do it (16-byte chunks: gpu::vectorCopyElements; a dynamic last dim is checked
// at run time by the emitter, which fills the buffer with plain stores when the check fails), its source region's offsets
// are computed in the body from the induction variable and values from outside by side-effect-free index
// arithmetic (the emitter recomputes them for a later iteration), it comes before every other use of the tile in
// the body, nothing else in the loop writes the tile or the tensor, and the tile is not used outside the loop (which buffer
// holds what after the loop is nobody's business). Every copy that could be a candidate and is not gets a remark
// saying why; a loop with stages > 1 and no candidate gets one too.
//
// Register pressure: NVVM hoists every per-thread index and address that does not change between iterations out of
// the loop, one register each. Where the kernel's fragments already take most of the 255 registers a thread has
// (kRereadFragmentRegisters or more, counted from their layouts, of the fragments live in the loop), those hoisted values are what ptxas spills; the
// loop then gets `tile.reread_thread_index` and the emitter re-reads %tid.x at the top of each iteration through an
// opaque asm, so that the index arithmetic is recomputed in the loop instead (more integer instructions, no spills).
// Measured on an H200: the flash-attention backward at d=128 (240 fragment registers) goes from 80 bytes of spill
// to none and is 5 % faster; at d=64 (160) it has no spills and re-reading is 5 % slower.
#include "tilec/Lowering/GpuLoweringUtils.h"
#include "tilec/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace tilec {
#define GEN_PASS_DEF_MULTIBUFFER
#include "tilec/Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;
using namespace tilec::tile;

namespace {

/// Fragment registers per thread from which a pipelined loop re-reads the thread index (see the file comment).
constexpr int64_t kRereadFragmentRegisters = 200;

/// Whether fragment `alloc` holds values while `loop` runs: used inside it, or used both before and after it
/// (a fragment used only after the loop, such as the split strategy's sum tiles at the end of the flash-attention
/// backward, is not: counting those turned re-reading on at d=64 and made the split backward up to 1.39x the fp32
/// strategy's time on an H100, together with the arrival's fences).
bool liveInLoop(AllocOp alloc, PipelinedOp loop) {
  Block *block = loop->getBlock();
  bool before = false, after = false;
  for (Operation *user : alloc.getResult().getUsers()) {
    if (loop->isAncestor(user))
      return true;
    Operation *at = block->findAncestorOpInBlock(*user);
    if (!at)
      continue;
    (at->isBeforeInBlock(loop) ? before : after) = true;
  }
  return before && after;
}

/// 32-bit registers per thread that the fragments live in `loop` take (slots times element bytes, rounded up to
/// words).
int64_t fragmentRegisters(KernelOp kernel, PipelinedOp loop) {
  int64_t words = 0;
  kernel.walk([&](AllocOp alloc) {
    if (!gpu::isIn(alloc.getResult(), MemorySpace::Fragment) || !liveInLoop(alloc, loop))
      return;
    if (auto layout = gpu::layoutOf(alloc.getResult(), kernel.getThreads()))
      words += (layout->numSlots() * gpu::elementBytes(getElementTypeOf(alloc.getType())) + 3) / 4;
  });
  return words;
}

/// Whether `v`, used in `body`, is computed only from the induction variable and values defined outside `loop`
/// by ops the emitter can recompute (arith on index and integer values, tile.region). Collects those ops.
bool recomputable(Value v, PipelinedOp loop, llvm::SetVector<Operation *> &slice) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() != &loop.getBodyBlock() || arg == loop.getInductionVar() ||
           !loop->isAncestor(arg.getOwner()->getParentOp());
  Operation *def = v.getDefiningOp();
  if (!loop->isAncestor(def))
    return true;
  if (def->getBlock() != &loop.getBodyBlock())
    return false; // computed in a nested region
  bool pureIndexArith = def->getDialect() && def->getDialect()->getNamespace() == "arith" && def->getNumRegions() == 0 &&
                        llvm::all_of(def->getResultTypes(), [](Type t) { return t.isIntOrIndex(); });
  if (!pureIndexArith && !isa<RegionOp>(def))
    return false;
  for (Value operand : def->getOperands())
    if (!recomputable(operand, loop, slice))
      return false;
  slice.insert(def);
  return true;
}

/// Whether `op` writes `tile` (through any view of it).
bool writes(Operation *op, Value tile) {
  auto is = [&](Value v) { return gpu::baseBuffer(v) == tile; };
  if (auto copy = dyn_cast<CopyOp>(op))
    return is(copy.getTarget());
  if (auto fill = dyn_cast<FillOp>(op))
    return is(fill.getTarget());
  if (auto gemm = dyn_cast<GemmOp>(op))
    return is(gemm.getC());
  if (auto reduce = dyn_cast<ReduceOp>(op))
    return is(reduce.getTarget());
  if (auto atomic = dyn_cast<AtomicAddOp>(op))
    return is(atomic.getDest());
  if (auto atomic = dyn_cast<AtomicRmwOp>(op))
    return is(atomic.getDest());
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return is(store.getMemRef());
  return false;
}

/// Why `copy` cannot be prefetched in `loop`, or "" when it can.
std::string whyNot(CopyOp copy, PipelinedOp loop) {
  // A dynamic last dim qualifies too: the emitter checks at run time that it keeps 16-byte chunks aligned and
  // otherwise fills the same buffer with plain stores.
  bool dynamicLast = false;
  if (gpu::vectorCopyElements(copy.getSource(), copy.getTarget(), &dynamicLast) == 0)
    return "cp.async moves 16-byte chunks and this copy cannot (it needs a region of a global tensor whose last "
           "dim is a multiple of 16 bytes or dynamic, 16-byte rows at offsets known to be 16-byte aligned, pad 0 "
           "and no dtype change, into a whole shared tile)";
  Value tile = copy.getTarget();
  Value tensor = gpu::baseBuffer(copy.getSource());
  bool tensorWritten = false;
  loop.getBodyBlock().walk([&](Operation *op) { tensorWritten |= writes(op, tensor); });
  if (tensorWritten)
    return "the loop also writes '" + gpu::nameOf(tensor) + "', which an early copy could read before the write";
  auto alloc = tile.getDefiningOp<AllocOp>();
  if (loop->isAncestor(alloc))
    return "its shared tile is allocated inside the loop";
  llvm::SetVector<Operation *> slice;
  if (!recomputable(copy.getSource(), loop, slice))
    return "its source region's offsets depend on values computed in the loop by more than index arithmetic";
  // Every use of the tile: this copy first in the body, nothing after the loop or before it, no other writer.
  SmallVector<Value> views = {tile};
  while (!views.empty()) {
    Value v = views.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (auto region = dyn_cast<RegionOp>(user)) {
        views.push_back(region.getResult());
        continue;
      }
      if (user == copy.getOperation())
        continue;
      if (!loop->isAncestor(user))
        return "its shared tile '" + gpu::nameOf(tile) + "' is also used outside the loop";
      Operation *top = user;
      while (top->getBlock() != &loop.getBodyBlock())
        top = top->getParentOp();
      if (top->isBeforeInBlock(copy))
        return "its shared tile '" + gpu::nameOf(tile) + "' is used in the body before the copy";
      bool written = false;
      top->walk([&](Operation *inner) { written |= writes(inner, tile); });
      if (written || writes(top, tile))
        return "something else in the loop writes its shared tile '" + gpu::nameOf(tile) + "'";
    }
  }
  return "";
}

/// More buffers than this never pay (each costs a tile of shared memory) and would only blow up the emitted code.
constexpr int64_t kMaxStages = 8;

struct MultiBuffer : tilec::impl::MultiBufferBase<MultiBuffer> {
  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](PipelinedOp loop) {
      int64_t stages = loop.getStages();
      if (stages > kMaxStages) {
        loop.emitError() << "pipelined loop with stages " << stages << ": the GPU lowering supports at most "
                         << kMaxStages << " stages";
        failed = true;
        return;
      }
      if (stages < 2)
        return;
      if (loop->getParentOfType<ParallelOp>()) {
        // Each iteration of the parallel loop runs this loop alone, in its own thread: nothing to share a prefetch.
        loop.emitRemark() << "pipelined loop (stages " << stages
                          << ") inside a parallel loop: each iteration's thread runs it as a plain loop";
        return;
      }
      Builder b(loop.getContext());
      int prefetched = 0;
      for (Operation &op : loop.getBodyBlock()) {
        auto copy = dyn_cast<CopyOp>(op);
        if (!copy || !gpu::isIn(gpu::baseBuffer(copy.getSource()), MemorySpace::Global) ||
            !gpu::isIn(copy.getTarget(), MemorySpace::Shared))
          continue;
        std::string reason = whyNot(copy, loop);
        if (!reason.empty()) {
          copy.emitRemark() << "pipelined loop (stages " << stages << "): copy into '"
                            << gpu::nameOf(copy.getTarget()) << "' is not prefetched: " << reason;
          continue;
        }
        copy->setAttr(gpu::kPrefetchAttr, b.getUnitAttr());
        copy.getTarget().getDefiningOp()->setAttr(gpu::kStagesAttr, b.getI64IntegerAttr(stages));
        ++prefetched;
      }
      if (prefetched == 0)
        loop.emitRemark() << "pipelined loop (stages " << stages
                          << "): no copy from global into a shared tile can be prefetched; it runs as a plain loop";
    });
    getOperation().walk([&](KernelOp kernel) {
      kernel.walk([&](PipelinedOp loop) {
        int64_t registers = fragmentRegisters(kernel, loop);
        if (registers < kRereadFragmentRegisters)
          return;
        loop->setAttr(gpu::kRereadThreadIndexAttr, UnitAttr::get(loop.getContext()));
        loop.emitRemark() << "pipelined loop: the fragments live in it take " << registers
                          << " registers per thread (at least " << kRereadFragmentRegisters
                          << "), so each iteration re-reads the thread index instead of keeping indices computed "
                             "from it in registers";
      });
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
