// tile-place-barriers: inserts tile.barrier where threads of a block would otherwise race on memory.
//
// Every whole-tile op spreads its work over the threads differently (a copy into a shared tile by 16-byte chunks,
// a gemm reading it by ldmatrix rows), so any two ops touching the same bytes of shared memory, or the same global
// tensor, with at least one write, need a barrier between them. The pass walks each kernel body in order with the
// sets of bytes read and written since the last barrier, and inserts a barrier before the first op that conflicts.
// Loop bodies are walked twice, so a conflict between the end of one iteration and the start of the next is found
// too; a loop may run zero times, so its effects join the state before it. Fragments and local tiles are private
// to each thread and never need one. Barriers inside a reduction that combines values across warps are the
// emitter's (they are internal to that op).
#include "tilec/Lowering/GpuLoweringUtils.h"
#include "tilec/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace tilec {
#define GEN_PASS_DEF_PLACEBARRIERS
#include "tilec/Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;
using namespace tilec::tile;

namespace {

struct Range {
  int64_t lo, hi; // [lo, hi)
  bool overlaps(const Range &o) const { return lo < o.hi && o.lo < hi; }
};

struct State {
  std::vector<Range> reads, writes;
  void join(const State &o) {
    reads.insert(reads.end(), o.reads.begin(), o.reads.end());
    writes.insert(writes.end(), o.writes.begin(), o.writes.end());
  }
  void clear() {
    reads.clear();
    writes.clear();
  }
};

bool anyOverlap(const std::vector<Range> &a, const std::vector<Range> &b) {
  for (const Range &x : a)
    for (const Range &y : b)
      if (x.overlaps(y))
        return true;
  return false;
}

/// The bytes each shared tile of a kernel occupies: its planned bytes, or (not planned, as in a test of this pass
/// alone) a range of its own, numbered in program order.
using SharedRanges = llvm::DenseMap<Operation *, Range>;

SharedRanges sharedRanges(KernelOp kernel) {
  SharedRanges ranges;
  int64_t unplanned = 0;
  kernel.walk([&](AllocOp alloc) {
    MemRefType type = alloc.getType();
    if (getMemorySpaceOf(type) != MemorySpace::Shared)
      return;
    int64_t bytes = type.getNumElements() * gpu::elementBytes(type.getElementType()); // a bool is a byte
    if (auto stages = alloc->getAttrOfType<IntegerAttr>(gpu::kStagesAttr)) {
      auto stride = alloc->getAttrOfType<IntegerAttr>(gpu::kStageBytesAttr);
      bytes = (stride ? stride.getInt() : bytes) * stages.getInt(); // every buffer of a multi-buffered tile
    }
    auto offset = alloc->getAttrOfType<IntegerAttr>(gpu::kOffsetAttr);
    int64_t lo = offset ? offset.getInt() : (int64_t(1) << 36) + (unplanned++) * (int64_t(1) << 32);
    ranges[alloc] = Range{lo, lo + bytes};
  });
  return ranges;
}

/// The bytes an operand touches: a shared tile's, or a whole global tensor (kept apart from shared memory and from
/// other tensors by giving each argument its own range far above any shared offset).
std::optional<Range> rangeOf(Value v, const SharedRanges &shared) {
  v = gpu::baseBuffer(v);
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (!gpu::isIn(v, MemorySpace::Global))
      return std::nullopt;
    int64_t base = (int64_t(1) << 40) + int64_t(arg.getArgNumber()) * (int64_t(1) << 32);
    return Range{base, base + (int64_t(1) << 32)};
  }
  auto it = shared.find(v.getDefiningOp());
  if (it == shared.end())
    return std::nullopt;
  return it->second;
}

struct Effects {
  const SharedRanges &shared;
  std::vector<Range> reads, writes;
  void read(Value v) {
    if (auto r = rangeOf(v, shared))
      reads.push_back(*r);
  }
  void write(Value v) {
    if (auto r = rangeOf(v, shared))
      writes.push_back(*r);
  }
  /// An atomic update reads and writes `dest`, and reads `value` when it is a tile (the region form).
  void atomic(Value value, Value dest) {
    if (isa<MemRefType, RegionType>(value.getType()))
      read(value);
    read(dest);
    write(dest);
  }
};

Effects effectsOf(Operation *op, const SharedRanges &shared) {
  Effects e{shared, {}, {}};
  if (op->hasAttr(gpu::kPrefetchAttr))
    return e; // issued ahead by the emitter, which orders it with its own wait and barrier (see placeAt)
  if (auto copy = dyn_cast<CopyOp>(op)) {
    e.read(copy.getSource());
    e.write(copy.getTarget());
  } else if (auto fill = dyn_cast<FillOp>(op)) {
    e.write(fill.getTarget());
  } else if (auto discard = dyn_cast<DiscardOp>(op)) {
    e.write(discard.getRegion()); // a line is dropped only after every thread has read its part of it
  } else if (auto gemm = dyn_cast<GemmOp>(op)) {
    e.read(gemm.getA());
    e.read(gemm.getB());
  } else if (auto reduce = dyn_cast<ReduceOp>(op)) {
    e.read(reduce.getSource());
    e.write(reduce.getTarget());
  } else if (auto add = dyn_cast<AtomicAddOp>(op)) {
    e.atomic(add.getValue(), add.getDest());
  } else if (auto rmw = dyn_cast<AtomicRmwOp>(op)) {
    e.atomic(rmw.getValue(), rmw.getDest());
  } else if (auto load = dyn_cast<memref::LoadOp>(op)) {
    e.read(load.getMemRef());
  } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
    e.write(store.getMemRef());
  } else if (auto loop = dyn_cast<ParallelOp>(op)) {
    loop.getBodyBlock().walk([&](Operation *inner) {
      Effects i = effectsOf(inner, shared);
      e.reads.insert(e.reads.end(), i.reads.begin(), i.reads.end());
      e.writes.insert(e.writes.end(), i.writes.begin(), i.writes.end());
    });
  }
  return e;
}

void insertBarrierBefore(Operation *op) {
  if (Operation *prev = op->getPrevNode(); prev && isa<BarrierOp>(prev))
    return;
  OpBuilder b(op);
  BarrierOp::create(b, op->getLoc());
}

void placeIn(Block &block, State &state, const SharedRanges &shared);

void placeAt(Operation *op, State &state, const SharedRanges &shared) {
  // tile.arrive_last waits for every thread of the block itself (__syncthreads before the count, and after).
  if (isa<BarrierOp, ArriveLastOp>(op)) {
    state.clear();
    return;
  }
  if (isa<PipelinedOp, scf::ForOp>(op)) {
    Block &body = op->getRegion(0).front();
    // A loop with prefetched copies (tile-multi-buffer) is emitted as: the first copies issued before the loop,
    // then each iteration waits for its copies and has a barrier (all threads' copies landed; all threads done
    // with the previous iteration, whose buffer the next prefetch overwrites) before anything else.
    SmallVector<CopyOp> prefetched = gpu::prefetchedCopies(body);
    if (!prefetched.empty()) {
      Effects prologue{shared, {}, {}};
      for (CopyOp copy : prefetched) {
        prologue.read(copy.getSource());
        prologue.write(copy.getTarget());
      }
      if (anyOverlap(prologue.reads, state.writes) || anyOverlap(prologue.writes, state.writes) ||
          anyOverlap(prologue.writes, state.reads)) {
        insertBarrierBefore(op);
        state.clear();
      }
      state.reads.insert(state.reads.end(), prologue.reads.begin(), prologue.reads.end());
      state.writes.insert(state.writes.end(), prologue.writes.begin(), prologue.writes.end());
      State before = state;
      state.clear(); // the barrier at the top of every iteration
      placeIn(body, state, shared);
      state.join(before);
      return;
    }
    State before = state;
    placeIn(body, state, shared);
    placeIn(body, state, shared); // the next iteration after this one
    state.join(before);
    return;
  }
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    State thenState = state, elseState = state;
    placeIn(ifOp.getThenRegion().front(), thenState, shared);
    if (!ifOp.getElseRegion().empty())
      placeIn(ifOp.getElseRegion().front(), elseState, shared);
    state = thenState;
    state.join(elseState);
    return;
  }
  Effects e = effectsOf(op, shared);
  if (anyOverlap(e.reads, state.writes) || anyOverlap(e.writes, state.writes) || anyOverlap(e.writes, state.reads)) {
    insertBarrierBefore(op);
    state.clear();
  }
  state.reads.insert(state.reads.end(), e.reads.begin(), e.reads.end());
  state.writes.insert(state.writes.end(), e.writes.begin(), e.writes.end());
}

void placeIn(Block &block, State &state, const SharedRanges &shared) {
  for (Operation &op : llvm::make_early_inc_range(block))
    placeAt(&op, state, shared);
}

struct PlaceBarriers : tilec::impl::PlaceBarriersBase<PlaceBarriers> {
  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      State state;
      placeIn(kernel.getBodyBlock(), state, sharedRanges(kernel));
    });
  }
};

} // namespace
