// tile-plan-copies: how the threads of a block carry out each tile.copy, recorded as `tile.copy_plan` (#tile.copy<...>)
// for the CUDA emitter, which prints the form it is given.
//
// The forms, in the order they are tried (the first that applies wins):
//   - inside a tile.parallel body: elementwise (once per iteration, by the iteration's threads);
//   - global -> whole shared tile, same dtype, in 16-byte chunks (gpu::vectorCopyElements): row_chunks where the
//     block's threads cover whole rows of a 2-d tile in every step and the swizzle moves each thread's chunk by the
//     same constant from one step to the next (each thread then keeps one column and steps its addresses by
//     constants; NVVM does not strength-reduce the 64-bit index arithmetic of the general form), else chunks;
//   - global <-> a whole distributed fragment: fragment_vectors where G consecutive slots of every thread hold G
//     consecutive elements of the tensor's last dim, aligned (4, 8 or 16 bytes);
//   - a whole distributed fragment -> a whole 2-d shared tile of 16-bit floats: packed_pairs where every slot pair
//     holds (r, c), (r, c + 1) with c even, with lane_index where the swizzled index of each pair is the thread's
//     index XOR the pair's column offset plus its row offset, for every thread and slot (checked by enumeration);
//   - elementwise otherwise.
// `checked` marks a vector form whose tensor has a dynamic last extent: the kernel tests at run time that the extent
// is a multiple of the vector and copies element by element otherwise. Vector forms rely on what the runtime's
// signature check guarantees every tensor argument: a 16-byte aligned data pointer and a contiguous row-major layout.
// Run after tile-plan-shared-memory (the swizzles) and before tile-expand-pipelines (which moves the plan of a
// prefetched copy to its tile.async_copy).
#include "VectorAccess.h"
#include "tilec/Lowering/GpuLoweringUtils.h"
#include "tilec/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace tilec {
#define GEN_PASS_DEF_PLANCOPIES
#include "tilec/Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;
using namespace tilec::tile;
using layout::FragmentLayout;
using layout::LayoutTerm;
using layout::Swizzle;

namespace {

/// The row_chunks form of a chunked global -> shared copy of `vec` elements per chunk: see the file comment.
bool rowChunksApply(Value source, Value target, int64_t vec, int64_t threads) {
  auto type = cast<MemRefType>(target.getType());
  std::optional<Swizzle> swizzle = gpu::plannedSwizzle(target);
  if (!swizzle ||
      !gpu::rowChunkSteps(type.getShape(), gpu::elementBytes(type.getElementType()), *swizzle, threads, vec))
    return false;
  // The global dim the tile's rows run along.
  return llvm::any_of(gpu::windowOf(source), [](int64_t e) { return e != 1; });
}

/// Whether a copy from the whole distributed fragment `source` (in `l`) into the whole shared tile `target` can store
/// pairs of 16-bit floats, and whether the pairs' indices separate into the thread's index and the slot's offsets.
bool packedPairsApply(const FragmentLayout &l, Value source, Value target, bool *laneIndex) {
  auto s = cast<MemRefType>(target.getType());
  auto f = cast<MemRefType>(source.getType());
  if (!gpu::isIn(target, MemorySpace::Shared) || !(s.getElementType().isBF16() || s.getElementType().isF16()) ||
      s.getRank() != 2 || f.getShape() != s.getShape())
    return false;
  if (l.rank() != 2 || l.hasPadding() || !l.replicaTerms().empty() || l.numSlots() % 2)
    return false;
  std::optional<Swizzle> swizzle = gpu::plannedSwizzle(target);
  if (!swizzle)
    return false;
  int64_t cols = s.getShape()[1], bytes = gpu::elementBytes(s.getElementType());
  auto swizzled = [&](int64_t r, int64_t c) { return swizzle->apply(r, c, cols, bytes); };
  bool separable = true;
  for (int64_t t = 0; t < l.threads(); ++t) {
    std::vector<int64_t> base = l.coords(t, 0);
    for (int64_t slot = 0; slot < l.numSlots(); slot += 2) {
      std::vector<int64_t> c = l.coords(t, slot), next = l.coords(t, slot + 1), offset = l.coords(0, slot);
      if (c[1] % 2 || next[0] != c[0] || next[1] != c[1] + 1)
        return false;
      if (separable && swizzled(c[0], c[1]) != ((swizzled(base[0], base[1]) ^ offset[1]) + offset[0] * cols))
        separable = false;
    }
  }
  *laneIndex = separable;
  return true;
}

CopyPlanAttr planCopy(CopyOp copy, int64_t threads) {
  MLIRContext *ctx = copy.getContext();
  auto plan = [&](CopyKind kind, int64_t vector = 1, bool checked = false, bool laneIndex = false) {
    return CopyPlanAttr::get(ctx, kind, vector, checked, laneIndex);
  };
  if (copy->getParentOfType<ParallelOp>())
    return plan(CopyKind::Elementwise);
  Value source = copy.getSource(), target = copy.getTarget();
  bool dynamicLast = false;
  if (int64_t vec = gpu::vectorCopyElements(source, target, &dynamicLast))
    return plan(rowChunksApply(source, target, vec, threads) ? CopyKind::RowChunks : CopyKind::Chunks, vec,
                dynamicLast);
  std::optional<FragmentLayout> targetLayout = gpu::distributedLayout(target, threads);
  std::optional<FragmentLayout> sourceLayout = gpu::distributedLayout(source, threads);
  bool load = targetLayout && gpu::isWholeOperand(target) && gpu::isIn(gpu::baseBuffer(source), MemorySpace::Global);
  bool store = !load && sourceLayout && gpu::isWholeOperand(source) && gpu::isIn(gpu::baseBuffer(target), MemorySpace::Global);
  if (load || store) {
    bool checked = false;
    if (int64_t width = gpu::fragmentVectorElements(load ? *targetLayout : *sourceLayout, load ? target : source,
                                               load ? source : target, load, &checked))
      return plan(CopyKind::FragmentVectors, width, checked);
  }
  bool laneIndex = false;
  if (sourceLayout && gpu::isWholeOperand(source) && gpu::isWholeOperand(target) && packedPairsApply(*sourceLayout, source, target, &laneIndex))
    return plan(CopyKind::PackedPairs, 2, false, laneIndex);
  return plan(CopyKind::Elementwise);
}

struct PlanCopies : tilec::impl::PlanCopiesBase<PlanCopies> {
  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      int64_t threads = kernel.getThreads();
      kernel.walk([&](CopyOp copy) { copy->setAttr(gpu::kCopyPlanAttr, planCopy(copy, threads)); });
    });
  }
};

} // namespace
