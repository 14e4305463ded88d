// tile-infer-layouts: gives every fragment and local tile a thread layout, every gemm its tensor-core plan and every
// parallel loop the layout its iterations are spread by. Where two uses of a fragment need different layouts, the
// pass converts explicitly through a shared tile and says so in a remark; where it cannot, it fails at the op.
//
// Order of decisions (each step only fills in what earlier steps left open):
//   1. local tiles, and fragments indexed dynamically (from scalar code, through a region, or by an expression that is
//      not a loop variable), are replicated: every thread holds the whole tile;
//   2. gemm accumulators take the mma.sync m16n8k16 accumulator layout of their gemm's warp partition;
//   3. layouts flow along fragment-to-fragment copies, from a reduction's source to its target (a slice), and through
//      parallel loops (a fragment indexed by all loop variables shares the loop's layout, one indexed by some of
//      them gets a slice of it), until nothing changes;
//   4. fragments still open get a blocked layout (16 bytes per thread along the last dim), one at a time, highest
//      rank first and then in program order, each followed by step 3 again;
//   5. every use is checked against the layouts, and conversions are inserted where they disagree (a tile held whole
//      by every thread that a loop spread over the threads writes is written through a shared copy);
//   6. gemms that also fit Hopper's wgmma are marked for it (the layouts do not change).
#include "GemmPlans.h"
#include "tilec/Lowering/GpuLoweringUtils.h"
#include "tilec/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <limits>
#include <map>
#include <tuple>

namespace tilec {
#define GEN_PASS_DEF_INFERLAYOUTS
#include "tilec/Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;
using namespace tilec::tile;
using layout::FragmentLayout;

namespace {

/// How a parallel loop's body indexes a tile: for each tile dim, the loop dim that gives it (-1: constant).
struct Access {
  Operation *op;  // memref.load or memref.store
  Value buffer;   // the alloc
  SmallVector<int> dims;
  SmallVector<int64_t> constants;
  bool simple;    // every index is a loop variable or a constant
  bool isStore;
};

class KernelLayouts {
public:
  KernelLayouts(KernelOp kernel) : kernel(kernel), threads(kernel.getThreads()) {}

  LogicalResult run() {
    if (failed(checkSizes()))
      return failure();
    kernel.walk([&](AllocOp alloc) {
      auto space = getMemorySpaceOf(alloc.getType());
      if (space == MemorySpace::Fragment || space == MemorySpace::Local)
        tiles.push_back(alloc.getResult());
    });
    markReplicated();
    planGemms();
    propagate();
    // Highest rank first: a loop over a 2-d tile that reads a 1-d one can serve the 1-d tile with a slice of the
    // 2-d tile's layout, never the other way round. Program order among tiles of one rank.
    SmallVector<Value> byRank(tiles.begin(), tiles.end());
    llvm::stable_sort(byRank, [](Value a, Value b) {
      return cast<MemRefType>(a.getType()).getRank() > cast<MemRefType>(b.getType()).getRank();
    });
    for (Value tile : byRank)
      if (!layouts.count(tile)) {
        layouts.try_emplace(tile, defaultLayout(tile));
        propagate();
      }
    if (failed(insertConversions()) || failed(annotateLoops()))
      return failure();
    planWgmma();
    for (Value tile : tiles)
      tile.getDefiningOp()->setAttr(gpu::kLayoutAttr, layout::toAttr(kernel.getContext(), layouts.find(tile)->second));
    return success();
  }

private:
  KernelOp kernel;
  int64_t threads;

  /// Register tiles live in the threads' registers, and a parallel loop's iterations are spread over them: sizes
  /// past what a block's registers (64K 32-bit registers per SM) could ever hold are refused here, before the layout
  /// questions below enumerate their elements.
  LogicalResult checkSizes() {
    constexpr int64_t kMaxRegisterTileElements = int64_t(1) << 16;
    constexpr int64_t kMaxParallelIterations = int64_t(1) << 17;
    auto count = [](ArrayRef<int64_t> shape) {
      int64_t n = 1;
      for (int64_t d : shape)
        if (d <= 0 || __builtin_mul_overflow(n, d, &n))
          return std::numeric_limits<int64_t>::max();
      return n;
    };
    LogicalResult result = success();
    kernel.walk([&](Operation *op) {
      if (auto alloc = dyn_cast<AllocOp>(op)) {
        auto space = getMemorySpaceOf(alloc.getType());
        if ((space == MemorySpace::Fragment || space == MemorySpace::Local) &&
            count(getShapeOf(alloc.getType())) > kMaxRegisterTileElements) {
          alloc.emitError() << "this register tile has " << count(getShapeOf(alloc.getType()))
                            << " elements; the GPU lowering holds register tiles in the threads' registers and "
                               "supports at most "
                            << kMaxRegisterTileElements << " per block";
          result = failure();
        }
      } else if (auto loop = dyn_cast<ParallelOp>(op)) {
        int64_t n = count(loop.getExtents());
        if (n > kMaxParallelIterations) {
          loop.emitError() << "this parallel loop has " << n
                           << " iterations; the GPU lowering spreads them over the block's threads and supports at "
                              "most "
                           << kMaxParallelIterations;
          result = failure();
        }
      }
    });
    return result;
  }

  SmallVector<Value> tiles;
  llvm::DenseMap<Value, FragmentLayout> layouts;
  /// The copies that parallel loops read in their own layout (readThroughCopy), by loop and fragment.
  llvm::DenseMap<std::pair<Operation *, Value>, Value> readCopies;
  // (parallel loop, replicated tile) pairs whose writes go through a shared copy (writeThroughShared).
  llvm::DenseSet<std::pair<Operation *, Value>> stagedWrites;

  bool isFragmentAlloc(Value v) { return v.getDefiningOp<AllocOp>() && isIn(v, MemorySpace::Fragment); }
  static bool isIn(Value v, MemorySpace s) { return gpu::isIn(v, s); }

  FragmentLayout defaultLayout(Value tile) {
    auto type = cast<MemRefType>(tile.getType());
    int64_t vector = 16 / gpu::elementBytes(type.getElementType());
    return FragmentLayout::blocked(shapeOf(tile), threads, vector);
  }

  static std::vector<int64_t> shapeOf(Value v) {
    auto s = getShapeOf(v.getType());
    return std::vector<int64_t>(s.begin(), s.end());
  }

  static Access accessOf(Operation *op, ParallelOp loop) {
    Access a{op, nullptr, {}, {}, true, isa<memref::StoreOp>(op)};
    ValueRange indices;
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      a.buffer = load.getMemRef();
      indices = load.getIndices();
    } else {
      auto store = cast<memref::StoreOp>(op);
      a.buffer = store.getMemRef();
      indices = store.getIndices();
    }
    for (Value index : indices) {
      auto arg = dyn_cast<BlockArgument>(index);
      if (loop && arg && arg.getOwner() == &loop.getBodyBlock()) {
        a.dims.push_back(arg.getArgNumber());
        a.constants.push_back(0);
      } else if (auto c = index.getDefiningOp<arith::ConstantIndexOp>()) {
        a.dims.push_back(-1);
        a.constants.push_back(c.value());
      } else {
        a.simple = false;
        a.dims.push_back(-1);
        a.constants.push_back(0);
      }
    }
    return a;
  }

  static SmallVector<Access> accessesIn(ParallelOp loop) {
    SmallVector<Access> out;
    loop.getBodyBlock().walk([&](Operation *op) {
      if (isa<memref::LoadOp, memref::StoreOp>(op))
        out.push_back(accessOf(op, loop));
    });
    return out;
  }

  /// The whole-tile ops a parallel loop's body may hold (at any depth): each runs once per iteration of the loop,
  /// in the thread that runs the iteration (the CUDA emitter's per-iteration form). The element form of an atomic
  /// takes no tile operand and is not one of them.
  static bool runsPerIteration(Operation *op) {
    if (!op->getParentOfType<ParallelOp>())
      return false;
    if (isa<CopyOp, FillOp>(op))
      return true;
    if (auto add = dyn_cast<AtomicAddOp>(op))
      return !add.isElementForm();
    if (auto rmw = dyn_cast<AtomicRmwOp>(op))
      return !rmw.isElementForm();
    return false;
  }

  /// The tile operands of such an op, and which of them it writes.
  static SmallVector<std::pair<Value, bool>> tileOperands(Operation *op) {
    if (auto copy = dyn_cast<CopyOp>(op))
      return {{copy.getSource(), false}, {copy.getTarget(), true}};
    if (auto fill = dyn_cast<FillOp>(op))
      return {{fill.getTarget(), true}};
    if (auto add = dyn_cast<AtomicAddOp>(op))
      return {{add.getValue(), false}, {add.getDest(), true}};
    if (auto rmw = dyn_cast<AtomicRmwOp>(op))
      return {{rmw.getValue(), false}, {rmw.getDest(), true}};
    return {};
  }

  // Step 1.
  void markReplicated() {
    auto replicate = [&](Value tile) {
      if (!layouts.count(tile))
        layouts.try_emplace(tile, FragmentLayout::replicated(shapeOf(tile), threads));
    };
    for (Value tile : tiles)
      if (isIn(tile, MemorySpace::Local))
        replicate(tile);
    kernel.walk([&](Operation *op) {
      if (auto region = dyn_cast<RegionOp>(op)) {
        Value base = gpu::baseBuffer(region.getSource());
        if (isFragmentAlloc(base))
          replicate(base);
        return;
      }
      // A whole fragment that a per-iteration op reads or writes: each iteration's thread needs all of it.
      if (runsPerIteration(op)) {
        for (auto [operand, written] : tileOperands(op))
          if (isFragmentAlloc(operand))
            replicate(operand);
        return;
      }
      if (!isa<memref::LoadOp, memref::StoreOp>(op))
        return;
      auto loop = op->getParentOfType<ParallelOp>();
      Access a = accessOf(op, loop);
      if (!isFragmentAlloc(a.buffer))
        return;
      if (!loop || !a.simple)
        replicate(a.buffer);
    });
  }

  // Step 2: which gemms run on tensor cores, and with which warp partition (GemmPlans.h).
  WarpPartitioner partitioner{threads};

  void planGemms() {
    // Accumulators whose values become the register A operand of a gemm (directly or through fragment copies)
    // prefer a partition where each warp holds whole rows, which makes that operand register-resident.
    llvm::DenseSet<Value> feedsRegisterA;
    kernel.walk([&](GemmOp g) {
      if (isFragmentAlloc(g.getA()))
        feedsRegisterA.insert(g.getA());
    });
    for (bool changed = true; changed;) {
      changed = false;
      kernel.walk([&](CopyOp copy) {
        if (isFragmentAlloc(copy.getSource()) && feedsRegisterA.count(copy.getTarget()))
          changed |= feedsRegisterA.insert(copy.getSource()).second;
      });
    }
    // Whole rows per warp are preferred kernel-wide when an accumulator that feeds a register A operand can have
    // them (one warp across N needs M % (16 warps) == 0).
    bool rowsPreferred = false;
    kernel.walk([&](GemmOp gemm) {
      auto c = shapeOf(gemm.getC());
      if (feedsRegisterA.count(gemm.getC()) && c.size() == 2 && c[0] % (16 * (threads / 32)) == 0)
        rowsPreferred = true;
    });
    kernel.walk([&](GemmOp gemm) {
      Value c = gemm.getC();
      Attribute simt = SimtPlanAttr::get(kernel.getContext());
      if (!isFragmentAlloc(c)) {
        gemm->setAttr(gpu::kMmaAttr, simt);
        return;
      }
      auto found = layouts.find(c);
      std::optional<std::pair<int64_t, int64_t>> warps;
      if (found != layouts.end()) {
        // Already decided (another gemm, or replicated): reuse that partition when it is an accumulator layout.
        auto c2 = shapeOf(c);
        for (int64_t wm = 1; wm <= threads / 32; ++wm)
          if ((threads / 32) % wm == 0 && c2[0] % (16 * wm) == 0 && c2[1] % (8 * (threads / 32 / wm)) == 0 &&
              found->second == FragmentLayout::mmaAccumulator(c2[0], c2[1], wm, threads / 32 / wm) &&
              partitioner.partition(gemm, false))
            warps = {wm, threads / 32 / wm};
      } else {
        warps = partitioner.partition(gemm, rowsPreferred);
        if (warps) {
          auto s = shapeOf(c);
          layouts.try_emplace(c, FragmentLayout::mmaAccumulator(s[0], s[1], warps->first, warps->second));
        }
      }
      gemm->setAttr(gpu::kMmaAttr,
                    warps ? MmaSyncPlanAttr::get(kernel.getContext(), warps->first, warps->second) : simt);
    });
  }

  // Step 6: which tensor-core gemms also fit Hopper's wgmma (GemmPlans.h).
  void planWgmma() {
    markWgmmaGemms(kernel, [&](Value a) { return &layouts.find(a)->second; });
  }

  // Step 3.
  void propagate() {
    for (bool changed = true; changed;) {
      changed = false;
      auto give = [&](Value tile, const FragmentLayout &l) {
        if (layouts.count(tile) || !llvm::is_contained(tiles, tile))
          return;
        layouts.try_emplace(tile, l);
        changed = true;
      };
      kernel.walk([&](Operation *op) {
        if (auto copy = dyn_cast<CopyOp>(op)) {
          Value s = copy.getSource(), t = copy.getTarget();
          if (!isFragmentAlloc(s) || !isFragmentAlloc(t) || shapeOf(s) != shapeOf(t))
            return;
          if (layouts.count(s))
            give(t, layouts.find(s)->second);
          else if (layouts.count(t))
            give(s, layouts.find(t)->second);
        } else if (auto reduce = dyn_cast<ReduceOp>(op)) {
          Value s = reduce.getSource(), t = reduce.getTarget();
          if (isFragmentAlloc(s) && isFragmentAlloc(t) && layouts.count(s))
            give(t, layouts.find(s)->second.slice(reduce.getDim()));
        } else if (auto loop = dyn_cast<ParallelOp>(op)) {
          SmallVector<Access> accesses = accessesIn(loop);
          std::optional<FragmentLayout> driver = drivingLayout(loop, accesses);
          if (!driver)
            return;
          for (const Access &a : accesses) {
            if (!isFragmentAlloc(a.buffer) || layouts.count(a.buffer) || !a.simple)
              continue;
            // Indices must be distinct loop variables in increasing order: the tile is the loop space with some
            // dims dropped.
            bool increasing = true;
            for (size_t k = 0; k < a.dims.size(); ++k)
              if (a.dims[k] < 0 || (k && a.dims[k] <= a.dims[k - 1]))
                increasing = false;
            if (!increasing)
              continue;
            FragmentLayout l = *driver;
            for (int d = driver->rank() - 1; d >= 0; --d)
              if (!llvm::is_contained(a.dims, d))
                l = l.slice(d);
            if (l.shape() == shapeOf(a.buffer))
              give(a.buffer, l);
          }
        }
      });
    }
  }

  /// The layout of the first fragment the loop indexes with all of its variables in order, if it has one.
  std::optional<FragmentLayout> drivingLayout(ParallelOp loop, ArrayRef<Access> accesses) {
    auto extents = loop.getExtents();
    // A store decides first: the loop runs where its results live.
    for (bool stores : {true, false})
      for (const Access &a : accesses) {
        if (a.isStore != stores || !isFragmentAlloc(a.buffer) || !layouts.count(a.buffer))
          continue;
        bool identity = a.simple && a.dims.size() == extents.size();
        for (size_t k = 0; identity && k < a.dims.size(); ++k)
          identity = a.dims[k] == int(k);
        if (identity && shapeOf(a.buffer) == std::vector<int64_t>(extents.begin(), extents.end()))
          return layouts.find(a.buffer)->second;
      }
    return std::nullopt;
  }

  // Step 5a: conversions through shared memory.
  Value stagingTile(Value like, ArrayRef<int64_t> shape, Location loc) {
    OpBuilder b(kernel.getContext());
    b.setInsertionPointToStart(&kernel.getBodyBlock());
    auto name = NameLoc::get(StringAttr::get(kernel.getContext(), gpu::nameOf(like) + "_staged"), loc);
    auto type = getTileMemRefType(shape, getElementTypeOf(like.getType()), MemorySpace::Shared);
    return AllocOp::create(b, name, type).getResult();
  }

  LogicalResult insertConversions() {
    SmallVector<Operation *> ops;
    kernel.walk([&](Operation *op) {
      if (isa<GemmOp, CopyOp, ReduceOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto gemm = dyn_cast<GemmOp>(op)) {
        Value a = gemm.getA();
        if (!isFragmentAlloc(a))
          continue;
        const FragmentLayout &la = layouts.find(a)->second;
        bool inRegisters = false;
        std::string need = "every thread holding all of it";
        if (auto warps = gpu::mmaWarps(gemm)) {
          auto s = shapeOf(a);
          FragmentLayout operand = FragmentLayout::mmaOperandA(s[0], s[1], warps->first, warps->second);
          inRegisters = layout::registerAccessMap(operand, la, {0, 1}).has_value();
          need = operand.name();
        } else {
          inRegisters = la.isReplicated();
        }
        if (inRegisters)
          continue;
        Value staged = stagingTile(a, shapeOf(a), gemm.getLoc());
        OpBuilder b(gemm);
        CopyOp::create(b, gemm.getLoc(), a, staged);
        gemm.getAMutable().assign(staged);
        gemm.emitRemark() << "fragment '" << gpu::nameOf(a) << "' (" << la.name()
                          << ") is not in the layout this gemm reads A in (" << need
                          << "); it is staged through shared memory";
      } else if (auto reduce = dyn_cast<ReduceOp>(op)) {
        Value s = reduce.getSource(), t = reduce.getTarget();
        if (!isFragmentAlloc(s) && !isIn(gpu::baseBuffer(s), MemorySpace::Local))
          continue;
        FragmentLayout want = layouts.find(gpu::baseBuffer(s))->second;
        if (gpu::baseBuffer(s) != s) {
          reduce.emitError() << "reducing a region of a fragment is not supported yet; reduce the whole tile";
          return failure();
        }
        want = want.slice(reduce.getDim());
        if (isFragmentAlloc(t) && layouts.find(t)->second == want)
          continue;
        if (isIn(t, MemorySpace::Shared) || isIn(gpu::baseBuffer(t), MemorySpace::Global)) {
          // A shared or global target is written by the primary threads of the slice layout: no conversion.
          continue;
        }
        // Reduce into a fragment in the slice layout, then copy (converting if needed) into the target.
        OpBuilder b(kernel.getContext());
        b.setInsertionPointToStart(&kernel.getBodyBlock());
        auto name = NameLoc::get(StringAttr::get(kernel.getContext(), gpu::nameOf(t) + "_partial"), reduce.getLoc());
        auto type = getTileMemRefType(want.shape(), getElementTypeOf(t.getType()), MemorySpace::Fragment);
        Value partial = AllocOp::create(b, name, type).getResult();
        tiles.push_back(partial);
        layouts.try_emplace(partial, want);
        b.setInsertionPoint(reduce);
        // With clear=false the old contents take part: they come in the same way the result goes back, through
        // shared memory where the layouts differ (a direct copy between two distributed layouts has no lowering).
        CopyOp in;
        if (!reduce.getClear())
          in = CopyOp::create(b, reduce.getLoc(), t, partial);
        b.setInsertionPointAfter(reduce);
        auto back = CopyOp::create(b, reduce.getLoc(), partial, t);
        reduce.getTargetMutable().assign(partial);
        reduce.emitRemark() << "the target of this reduction is not in the reduction's layout (" << want.name()
                            << "); it reduces into '" << gpu::nameOf(partial) << "' and copies";
        if (failed(convertCopy(back)) || (in && failed(convertCopy(in))))
          return failure();
      } else if (auto copy = dyn_cast<CopyOp>(op)) {
        if (failed(convertCopy(copy)))
          return failure();
      }
    }
    return success();
  }

  LogicalResult convertCopy(CopyOp copy) {
    Value s = gpu::baseBuffer(copy.getSource()), t = gpu::baseBuffer(copy.getTarget());
    auto onChipRegisters = [&](Value v) { return isFragmentAlloc(v) || isIn(v, MemorySpace::Local); };
    if (!onChipRegisters(s) || !onChipRegisters(t))
      return success();
    // A copy inside a parallel loop runs once per iteration, element by element, in the thread running the
    // iteration (annotateLoops checks that it holds both tiles whole, or writes a shared copy of the target). A
    // staging tile here would be one buffer for every thread running an iteration at once.
    if (copy->getParentOfType<ParallelOp>())
      return success();
    const FragmentLayout &ls = layouts.find(s)->second, &lt = layouts.find(t)->second;
    if (copy.getSource() == s && copy.getTarget() == t && ls == lt)
      return success();
    if (ls.isReplicated() && copy.getSource() == s && lt.shape() == ls.shape())
      return success(); // every thread holds the source: it reads what it needs
    Value staged = stagingTile(copy.getSource(), getShapeOf(copy.getSource().getType()), copy.getLoc());
    OpBuilder b(copy);
    CopyOp::create(b, copy.getLoc(), copy.getSource(), staged);
    CopyOp::create(b, copy.getLoc(), staged, copy.getTarget());
    copy.emitRemark() << "'" << gpu::nameOf(s) << "' (" << ls.name() << ") and '" << gpu::nameOf(t) << "' ("
                      << lt.name() << ") are laid out differently; the copy goes through shared memory";
    copy.erase();
    return success();
  }

  // A fragment that a parallel loop only reads, at elements its threads do not hold (a row statistic laid out for
  // one gemm's accumulator, read in a loop over another's): the loop reads a copy in a slice of its own layout,
  // made just before it (through shared memory where the layouts differ). Each buffer index must be a distinct
  // loop variable, in loop order. Returns false (the caller reports the access) where this does not apply.
  bool readThroughCopy(ParallelOp loop, const FragmentLayout &driver, const Access &a,
                       ArrayRef<Access> accesses) {
    if (a.isStore || !a.simple)
      return false;
    for (const Access &other : accesses)
      if (other.buffer == a.buffer && (other.isStore || other.dims != a.dims))
        return false;
    SmallVector<int> used(a.dims.begin(), a.dims.end());
    if (llvm::is_contained(used, -1) || !llvm::is_sorted(used) ||
        std::adjacent_find(used.begin(), used.end()) != used.end())
      return false;
    FragmentLayout want = driver;
    for (int d = driver.rank() - 1; d >= 0; --d)
      if (!llvm::is_contained(used, d))
        want = want.slice(d);
    if (want.shape() != shapeOf(a.buffer))
      return false;
    std::vector<int> dims(used.begin(), used.end());
    if (!layout::registerAccessMap(driver, want, dims, std::vector<int64_t>(dims.size(), 0)))
      return false;
    auto it = readCopies.find({loop.getOperation(), a.buffer});
    Value copy;
    if (it != readCopies.end()) {
      copy = it->second;
    } else {
      OpBuilder b(kernel.getContext());
      b.setInsertionPointToStart(&kernel.getBodyBlock());
      auto name = NameLoc::get(StringAttr::get(kernel.getContext(), gpu::nameOf(a.buffer) + "_read"), loop.getLoc());
      auto type = getTileMemRefType(want.shape(), getElementTypeOf(a.buffer.getType()), MemorySpace::Fragment);
      copy = AllocOp::create(b, name, type).getResult();
      tiles.push_back(copy);
      layouts.try_emplace(copy, want);
      b.setInsertionPoint(loop);
      auto in = CopyOp::create(b, loop.getLoc(), a.buffer, copy);
      if (failed(convertCopy(in)))
        return false;
      readCopies[{loop.getOperation(), a.buffer}] = copy;
      loop.emitRemark() << "'" << gpu::nameOf(a.buffer) << "' (" << layouts.find(a.buffer)->second.name()
                        << ") is read here at elements that the threads of this loop (" << driver.name()
                        << ") do not hold; the loop reads a copy in " << want.name();
    }
    cast<memref::LoadOp>(a.op).getMemrefMutable().assign(copy);
    return true;
  }

  // A tile that every thread holds whole (a local tile, or a fragment also indexed from scalar code), written by a
  // parallel loop spread over the threads: each thread runs only its own iterations, so after the loop the others'
  // copies would miss its writes. The loop works on a shared copy instead: the tile is copied in before the loop
  // (elements no iteration writes keep their values), every use of it in the loop goes to the copy, and the copy
  // comes back to every thread after the loop (tile-place-barriers orders the three).
  void writeThroughShared(ParallelOp loop, Value buffer, const FragmentLayout &driver, StringRef why) {
    if (!stagedWrites.insert({loop.getOperation(), buffer}).second)
      return;
    Value staged = stagingTile(buffer, shapeOf(buffer), loop.getLoc());
    OpBuilder b(loop);
    CopyOp::create(b, loop.getLoc(), buffer, staged);
    b.setInsertionPointAfter(loop);
    CopyOp::create(b, loop.getLoc(), staged, buffer);
    buffer.replaceUsesWithIf(staged, [&](OpOperand &use) { return loop->isProperAncestor(use.getOwner()); });
    // Regions of it inside the loop now view the shared copy (a region's type names its memory space).
    SmallVector<Value> views{staged};
    while (!views.empty()) {
      Value v = views.pop_back_val();
      for (Operation *user : v.getUsers())
        if (auto region = dyn_cast<RegionOp>(user); region && region.getSource() == v) {
          auto type = cast<RegionType>(region.getType());
          region.getResult().setType(RegionType::get(type.getContext(), type.getShape(), type.getElementType(),
                                                     MemorySpace::Shared));
          views.push_back(region.getResult());
        }
    }
    loop.emitRemark() << "'" << gpu::nameOf(buffer) << "' (" << layouts.find(buffer)->second.name() << ") " << why
                      << "; the loop (" << driver.name() << ") works on '" << gpu::nameOf(staged)
                      << "' in shared memory, copied in before it and back after it";
  }

  /// Refuses, at the op, what a parallel loop's body may not hold on the GPU: each of these spreads its own work
  /// over the block's threads (and may synchronize them), which the loop's iterations, spread over the same threads,
  /// cannot do once per iteration.
  LogicalResult checkParallelBody(ParallelOp loop) {
    LogicalResult result = success();
    loop.getBodyBlock().walk([&](Operation *op) {
      if (isa<AllocOp>(op)) {
        op->emitError() << "a tile allocated inside a parallel loop is not supported on the GPU: the GPU lowering "
                           "places tiles once per block, not once per iteration; allocate it before the loop";
        result = failure();
        return;
      }
      const char *what = isa<GemmOp>(op)       ? "a gemm"
                         : isa<ReduceOp>(op)   ? "a reduction"
                         : isa<ParallelOp>(op) ? "a parallel loop"
                         : isa<DiscardOp>(op)  ? "a discard"
                                               : nullptr;
      if (!what)
        return;
      op->emitError() << what << " inside a parallel loop is not supported on the GPU: the loop's iterations are "
                      << "spread over the block's threads, and " << what
                      << " needs all of them; move it out of the loop";
      result = failure();
    });
    return result;
  }

  /// A shared or global buffer that the loop's body both writes and reads (element accesses, whole-tile ops,
  /// atomics), the first in program order; null if none. Where several threads run an iteration, only the primary
  /// one writes memory, so what another reads back in the same iteration may predate the write.
  static Value readBackBuffer(ParallelOp loop) {
    llvm::SetVector<Value> reads, writes;
    auto note = [&](Value v, bool written) {
      Value base = gpu::baseBuffer(v);
      if (isIn(base, MemorySpace::Shared) || isIn(base, MemorySpace::Global))
        (written ? writes : reads).insert(base);
    };
    loop.getBodyBlock().walk([&](Operation *op) {
      if (auto load = dyn_cast<memref::LoadOp>(op))
        note(load.getMemRef(), false);
      else if (auto store = dyn_cast<memref::StoreOp>(op))
        note(store.getMemRef(), true);
      else if (auto add = dyn_cast<AtomicAddOp>(op))
        note(add.getDest(), true);
      else if (auto rmw = dyn_cast<AtomicRmwOp>(op))
        note(rmw.getDest(), true);
      if (runsPerIteration(op))
        for (auto [operand, written] : tileOperands(op))
          note(operand, written);
    });
    for (Value w : writes)
      if (reads.contains(w))
        return w;
    return nullptr;
  }

  // Step 5b: how each parallel loop is spread, and a check of every fragment access in it.
  LogicalResult annotateLoops() {
    LogicalResult result = success();
    kernel.walk([&](ParallelOp loop) {
      if (failed(checkParallelBody(loop))) {
        result = failure();
        return;
      }
      SmallVector<Access> accesses = accessesIn(loop);
      auto extents = loop.getExtents();
      std::vector<int64_t> space(extents.begin(), extents.end());
      std::optional<FragmentLayout> driver = drivingLayout(loop, accesses);
      bool writesReplicated = false;
      for (const Access &a : accesses)
        if (a.isStore && layouts.count(a.buffer) && layouts.find(a.buffer)->second.isReplicated())
          writesReplicated = true;
      // A loop that reads back memory it writes is not run by every thread (a replicated loop): its register
      // tiles go through shared copies instead (below), so that only the thread writing memory sees it.
      Value readBack = readBackBuffer(loop);
      if (readBack && driver && driver->isReplicated())
        driver.reset();
      if (!driver)
        driver = writesReplicated && !readBack ? FragmentLayout::replicated(space, threads)
                                               : FragmentLayout::blocked(space, threads, 1);
      // Whether the loop's threads hold the elements an access reaches (registerAccessMap), once per distinct
      // access: a loop body reads the same element of a tile many times.
      std::map<std::tuple<void *, std::vector<int>, std::vector<int64_t>>, bool> heldCache;
      auto held = [&](const Access &a, const FragmentLayout &l) {
        std::vector<int> dims(a.dims.begin(), a.dims.end());
        std::vector<int64_t> constants(a.constants.begin(), a.constants.end());
        auto key = std::make_tuple(a.buffer.getAsOpaquePointer(), dims, constants);
        auto it = heldCache.find(key);
        if (it == heldCache.end())
          it = heldCache.emplace(key, a.simple && layout::registerAccessMap(*driver, l, dims, constants)).first;
        return it->second;
      };
      // Register tiles the loop writes other than in place, each thread its own elements: through shared memory.
      llvm::MapVector<Value, std::string> staged;
      for (const Access &a : accesses) {
        if (!a.isStore || !layouts.count(a.buffer) || staged.count(a.buffer))
          continue;
        const FragmentLayout &l = layouts.find(a.buffer)->second;
        if (l.isReplicated()) {
          if (!driver->isReplicated())
            staged[a.buffer] = "is held whole by every thread, but this loop is spread over the threads and writes it";
          continue;
        }
        std::vector<int> dims(a.dims.begin(), a.dims.end());
        std::vector<int64_t> constants(a.constants.begin(), a.constants.end());
        if (!held(a, l))
          staged[a.buffer] = "is written in this loop at elements that its threads do not hold";
        else if (!layout::writesReachEveryReplica(*driver, l, dims, constants))
          staged[a.buffer] = "is written in this loop by one thread per element, while several threads hold each element";
      }
      // The register tiles that whole-tile ops in the body write, once per iteration (before any is staged).
      llvm::SetVector<Value> writtenPerIteration;
      loop.getBodyBlock().walk([&](Operation *op) {
        if (!runsPerIteration(op))
          return;
        for (auto [operand, written] : tileOperands(op))
          if (Value base = gpu::baseBuffer(operand); written && layouts.count(base))
            writtenPerIteration.insert(base);
      });
      if (!driver->isReplicated())
        for (Value base : writtenPerIteration)
          if (!staged.count(base))
            staged[base] = "is written by a whole-tile op once per iteration of this loop, which one thread runs";
      // Several threads run each iteration of a loop that reads back memory it writes: only the primary one's
      // reads see its writes, and the others' reads would race with them, so only the primary thread runs the
      // body, and it writes registers through shared copies like the memory it writes.
      if (readBack && !driver->replicaTerms().empty()) {
        loop->setAttr(gpu::kPrimaryOnlyAttr, UnitAttr::get(kernel.getContext()));
        loop.emitRemark() << "this loop (" << driver->name() << ") reads back '" << gpu::nameOf(readBack)
                          << "', which it writes; only the primary thread of each iteration runs it";
        std::string why = "is written in this loop, whose iterations each run in several threads while it reads back "
                          "'" + gpu::nameOf(readBack) + "', which it writes; only the primary thread's writes count";
        for (const Access &a : accesses)
          if (a.isStore && layouts.count(a.buffer) && !staged.count(a.buffer))
            staged[a.buffer] = why;
        for (Value base : writtenPerIteration)
          if (!staged.count(base))
            staged[base] = why;
      }
      for (auto &[buffer, why] : staged)
        writeThroughShared(loop, buffer, *driver, why);
      for (const Access &a : accesses) {
        if (!layouts.count(a.buffer) || staged.count(a.buffer))
          continue; // shared or global, or now a shared copy
        const FragmentLayout &l = layouts.find(a.buffer)->second;
        if (l.isReplicated())
          continue;
        if (!held(a, l)) {
          if (readThroughCopy(loop, *driver, a, accesses))
            continue;
          a.op->emitError() << "'" << gpu::nameOf(a.buffer) << "' (" << l.name()
                            << ") is accessed here at elements that the threads of this loop (" << driver->name()
                            << ") do not hold; not supported yet";
          result = failure();
        }
      }
      // Every register tile a per-iteration op touches is now held whole by each thread (markReplicated), in
      // registers for reading or in a shared copy for writing (above), unless the op reaches it through a region
      // made outside the loop, which the copy does not replace.
      loop.getBodyBlock().walk([&](Operation *op) {
        if (!runsPerIteration(op))
          return;
        for (auto [operand, written] : tileOperands(op)) {
          Value base = gpu::baseBuffer(operand);
          if (!layouts.count(base))
            continue;
          const FragmentLayout &l = layouts.find(base)->second;
          if (l.isReplicated() && (!written || driver->isReplicated()))
            continue;
          op->emitError() << "'" << gpu::nameOf(base) << "' (" << l.name() << ") is "
                          << (written ? "written" : "read")
                          << " by this op once per iteration of the enclosing parallel loop, which the GPU lowering "
                             "cannot lower here; not supported yet";
          result = failure();
        }
      });
      loop->setAttr(gpu::kLayoutAttr, layout::toAttr(kernel.getContext(), *driver));
    });
    return result;
  }
};

struct InferLayouts : tilec::impl::InferLayoutsBase<InferLayouts> {
  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](KernelOp kernel) {
      if (mlir::failed(KernelLayouts(kernel).run()))
        failed = true;
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
