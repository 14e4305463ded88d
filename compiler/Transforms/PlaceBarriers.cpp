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
#include "GpuLoweringUtils.h"
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

/// The bytes an operand touches: a shared tile's planned bytes, or a whole global tensor (kept apart from shared
/// memory and from other tensors by giving each argument its own range far above any shared offset).
std::optional<Range> rangeOf(Value v) {
  v = gpu::baseBuffer(v);
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (!gpu::isIn(v, MemorySpace::Global))
      return std::nullopt;
    int64_t base = (int64_t(1) << 40) + int64_t(arg.getArgNumber()) * (int64_t(1) << 32);
    return Range{base, base + (int64_t(1) << 32)};
  }
  auto alloc = v.getDefiningOp<AllocOp>();
  if (!alloc || getMemorySpaceOf(alloc.getType()) != MemorySpace::Shared)
    return std::nullopt;
  auto offset = alloc->getAttrOfType<IntegerAttr>(gpu::kOffsetAttr);
  MemRefType type = alloc.getType();
  int64_t bytes = (type.getNumElements() * type.getElementTypeBitWidth() + 7) / 8;
  int64_t lo = offset ? offset.getInt() : 0;
  if (!offset) // not planned: keep tiles apart by identity
    lo = (int64_t(1) << 36) + reinterpret_cast<intptr_t>(alloc.getOperation()) % (int64_t(1) << 30) * 64;
  return Range{lo, lo + bytes};
}

struct Effects {
  std::vector<Range> reads, writes;
  void read(Value v) {
    if (auto r = rangeOf(v))
      reads.push_back(*r);
  }
  void write(Value v) {
    if (auto r = rangeOf(v))
      writes.push_back(*r);
  }
};

Effects effectsOf(Operation *op) {
  Effects e;
  if (auto copy = dyn_cast<CopyOp>(op)) {
    e.read(copy.getSource());
    e.write(copy.getTarget());
  } else if (auto fill = dyn_cast<FillOp>(op)) {
    e.write(fill.getTarget());
  } else if (auto gemm = dyn_cast<GemmOp>(op)) {
    e.read(gemm.getA());
    e.read(gemm.getB());
  } else if (auto reduce = dyn_cast<ReduceOp>(op)) {
    e.read(reduce.getSource());
    e.write(reduce.getTarget());
  } else if (auto atomic = dyn_cast<AtomicAddOp>(op)) {
    if (isa<MemRefType, RegionType>(atomic.getValue().getType()))
      e.read(atomic.getValue());
    e.read(atomic.getDest());
    e.write(atomic.getDest());
  } else if (auto load = dyn_cast<memref::LoadOp>(op)) {
    e.read(load.getMemRef());
  } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
    e.write(store.getMemRef());
  } else if (auto loop = dyn_cast<ParallelOp>(op)) {
    loop.getBodyBlock().walk([&](Operation *inner) {
      Effects i = effectsOf(inner);
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

void placeIn(Block &block, State &state);

void placeAt(Operation *op, State &state) {
  if (isa<BarrierOp>(op)) {
    state.clear();
    return;
  }
  if (isa<PipelinedOp, scf::ForOp>(op)) {
    Block &body = op->getRegion(0).front();
    State before = state;
    placeIn(body, state);
    placeIn(body, state); // the next iteration after this one
    state.join(before);
    return;
  }
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    State thenState = state, elseState = state;
    placeIn(ifOp.getThenRegion().front(), thenState);
    if (!ifOp.getElseRegion().empty())
      placeIn(ifOp.getElseRegion().front(), elseState);
    state = thenState;
    state.join(elseState);
    return;
  }
  Effects e = effectsOf(op);
  if (anyOverlap(e.reads, state.writes) || anyOverlap(e.writes, state.writes) || anyOverlap(e.writes, state.reads)) {
    insertBarrierBefore(op);
    state.clear();
  }
  state.reads.insert(state.reads.end(), e.reads.begin(), e.reads.end());
  state.writes.insert(state.writes.end(), e.writes.begin(), e.writes.end());
}

void placeIn(Block &block, State &state) {
  for (Operation &op : llvm::make_early_inc_range(block))
    placeAt(&op, state);
}

struct PlaceBarriers : tilec::impl::PlaceBarriersBase<PlaceBarriers> {
  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      State state;
      placeIn(kernel.getBodyBlock(), state);
    });
  }
};

} // namespace
