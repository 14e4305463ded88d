// tile-plan-shared-memory: places every shared tile of a kernel in one dynamic shared-memory buffer.
//
// A tile is live from the first to the last top-level op of the kernel body that uses it (a use inside a loop makes
// the whole loop a use). Tiles whose live ranges do not overlap may share bytes; the largest tiles are placed first,
// each at the lowest 128-byte aligned offset that overlaps no live tile (128 bytes: a swizzle repeats every 8 rows of
// 16-byte chunks, so a tile must start on a 128-byte boundary for its bank pattern to hold). Rows of 64 bytes or of a
// multiple of 128 bytes get an XOR swizzle (Layout.h). Cross-warp reductions get one scratch area after the tiles.
//
// A tile with `tile.stages` (tile-multi-buffer) gets that many 128-byte aligned buffers, `tile.stage_bytes` apart.
//
// Operands of gemms planned for wgmma (`tile.wgmma`) are read by the hardware through descriptors of the 128-byte
// swizzle, which is defined on address bits: they start (each stage too) on 1024-byte boundaries, rows wider than
// 128 bytes are stored as 128-byte column panels (Swizzle::panelled), and the kernel reserves 1024 bytes more so
// that the emitted kernel can align the dynamic buffer's base at run time.
//
// Records on each shared alloc `tile.offset` and `tile.swizzle`, on the kernel `tile.shared_bytes` (the planned size)
// and `tile.scratch_offset`, and fails naming the kernel when the plan exceeds `limit`.
#include "tilec/Lowering/GpuLoweringUtils.h"
#include "tilec/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace tilec {
#define GEN_PASS_DEF_PLANSHAREDMEMORY
#include "tilec/Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;
using namespace tilec::tile;

namespace {

constexpr int64_t kAlignment = 128, kWgmmaAlignment = 1024;

int64_t alignUp(int64_t x, int64_t alignment = kAlignment) { return (x + alignment - 1) / alignment * alignment; }

struct Placed {
  AllocOp alloc;
  int64_t bytes, first, last, offset = 0;
  int64_t alignment = kAlignment;
};

struct PlanSharedMemory : tilec::impl::PlanSharedMemoryBase<PlanSharedMemory> {
  using PlanSharedMemoryBase::PlanSharedMemoryBase;

  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](KernelOp kernel) { failed |= mlir::failed(plan(kernel)); });
    if (failed)
      signalPassFailure();
  }

  LogicalResult plan(KernelOp kernel) {
    Block &body = kernel.getBodyBlock();
    llvm::DenseMap<Operation *, int64_t> position;
    int64_t i = 0;
    for (Operation &op : body)
      position[&op] = i++;
    auto topLevel = [&](Operation *op) {
      while (op->getBlock() != &body)
        op = op->getParentOp();
      return position[op];
    };
    llvm::DenseSet<Operation *> wgmmaOperands;
    kernel.walk([&](GemmOp gemm) {
      if (!gemm->hasAttr(gpu::kWgmmaAttr))
        return;
      for (Value v : {gemm.getA(), gemm.getB()})
        if (auto alloc = v.getDefiningOp<AllocOp>(); alloc && gpu::isIn(v, MemorySpace::Shared))
          wgmmaOperands.insert(alloc);
    });
    std::vector<Placed> tiles;
    kernel.walk([&](AllocOp alloc) {
      if (getMemorySpaceOf(alloc.getType()) != MemorySpace::Shared)
        return;
      MemRefType type = alloc.getType();
      int64_t alignment = wgmmaOperands.count(alloc) ? kWgmmaAlignment : kAlignment;
      // In the emitted code's element type: a bool is one byte (gpu::elementBytes), not one bit.
      int64_t bytes = type.getNumElements() * gpu::elementBytes(type.getElementType());
      // A multi-buffered tile (tile-multi-buffer) holds one aligned buffer per stage.
      if (auto stages = alloc->getAttrOfType<IntegerAttr>(gpu::kStagesAttr))
        bytes = alignUp(bytes, alignment) * stages.getInt();
      Placed p{alloc, bytes, i, -1, 0, alignment};
      SmallVector<Value> uses = {alloc.getResult()};
      while (!uses.empty()) {
        Value v = uses.pop_back_val();
        for (Operation *user : v.getUsers()) {
          if (auto region = dyn_cast<RegionOp>(user))
            uses.push_back(region.getResult());
          int64_t at = topLevel(user);
          p.first = std::min(p.first, at);
          p.last = std::max(p.last, at);
        }
      }
      if (p.last < 0)
        p.first = p.last = topLevel(alloc);
      tiles.push_back(p);
    });
    std::vector<size_t> order(tiles.size());
    for (size_t k = 0; k < order.size(); ++k)
      order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return tiles[a].bytes > tiles[b].bytes; });
    std::vector<size_t> done;
    int64_t total = 0;
    for (size_t k : order) {
      Placed &p = tiles[k];
      int64_t offset = 0;
      for (bool moved = true; moved;) {
        moved = false;
        for (size_t other : done) {
          const Placed &q = tiles[other];
          bool liveTogether = p.first <= q.last && q.first <= p.last;
          bool overlap = offset < q.offset + q.bytes && q.offset < offset + p.bytes;
          if (liveTogether && overlap) {
            offset = alignUp(q.offset + q.bytes, p.alignment);
            moved = true;
          }
        }
      }
      p.offset = offset;
      total = std::max(total, offset + p.bytes);
      done.push_back(k);
    }
    Builder b(kernel.getContext());
    for (Placed &p : tiles) {
      MemRefType type = p.alloc.getType();
      layout::Swizzle swizzle;
      int64_t elementBytes = gpu::elementBytes(type.getElementType());
      if (type.getRank() >= 2)
        swizzle = layout::Swizzle::forRow(type.getShape().back() * elementBytes);
      if (p.alignment == kWgmmaAlignment)
        swizzle = layout::Swizzle::panelled(type.getShape()[0], type.getShape().back() * elementBytes, elementBytes);
      p.alloc->setAttr(gpu::kOffsetAttr, b.getI64IntegerAttr(p.offset));
      if (p.alloc->hasAttr(gpu::kStagesAttr))
        p.alloc->setAttr(gpu::kStageBytesAttr,
                         b.getI64IntegerAttr(alignUp(type.getNumElements() * gpu::elementBytes(type.getElementType()),
                                                     p.alignment)));
      p.alloc->setAttr(gpu::kSwizzleAttr, layout::swizzleAttr(kernel.getContext(), swizzle));
    }
    // Scratch for reductions whose source spreads the reduced dim over warps.
    int64_t scratch = 0;
    kernel.walk([&](ReduceOp reduce) {
      auto layout = gpu::layoutOf(reduce.getSource(), kernel.getThreads());
      if (layout && gpu::baseBuffer(reduce.getSource()) == reduce.getSource())
        scratch = std::max(scratch, layout::crossWarpReduceScratchBytes(*layout, reduce.getDim()));
    });
    int64_t scratchOffset = alignUp(total);
    if (scratch)
      total = scratchOffset + scratch;
    if (!wgmmaOperands.empty())
      total += kWgmmaAlignment; // the emitted kernel aligns the buffer's base up to 1024 bytes

    kernel->setAttr(gpu::kScratchAttr, b.getI64IntegerAttr(scratch ? scratchOffset : -1));
    kernel->setAttr(gpu::kSharedBytesAttr, b.getI64IntegerAttr(total));
    if (total > int64_t(limit)) {
      auto diag = kernel.emitError() << "kernel '" << kernel.getSymName() << "' needs " << total
                                     << " bytes of shared memory after planning, more than the " << int64_t(limit)
                                     << " one block may use";
      for (Placed &p : tiles)
        diag.attachNote(p.alloc.getLoc()) << "shared tile of " << p.bytes << " bytes at offset " << p.offset;
      return failure();
    }
    return success();
  }
};

} // namespace
