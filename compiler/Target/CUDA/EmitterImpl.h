// The CUDA C++ emitter's internals: one KernelEmitter per tile.kernel, with the op families in separate files:
// EmitKernel.cpp (the kernel frame, buffers, slot loops), EmitScalar.cpp (scalar code), EmitElementwise.cpp
// (parallel loops, element accesses, fill, atomics), EmitCopy.cpp (copies, vector widths, discard), EmitGemm.cpp
// (mma.sync and per-element gemms), EmitWgmma.cpp (the sm_90a wgmma branch), EmitReduce.cpp (reductions) and
// EmitAsync.cpp (stage views and cp.async groups). The layouts, gemm plans and swizzles it executes were decided by
// passes and recorded as typed attributes (tilec/Lowering/GpuLoweringUtils.h reads them); the wgmma waits are
// tile.wgmma_wait ops (tile-schedule-wgmma-waits) and the software pipelines are explicit asynchronous copies,
// commits, waits and stage views (tile-expand-pipelines).
#ifndef TILEC_TARGET_CUDA_EMITTERIMPL_H
#define TILEC_TARGET_CUDA_EMITTERIMPL_H

#include "tilec/Lowering/GpuLoweringUtils.h"
#include "tilec/Lowering/Layout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Support/IndentedOstream.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilec::cuda {

// The layout algebra the emitter prints from (tilec/Lowering/Layout.h, shared with the passes that decide layouts).
using layout::crossWarpReduceScratchBytes;
using layout::FragmentLayout;
using layout::LayoutTerm;
using layout::registerAccessMap;
using layout::SlotMap;
using layout::Swizzle;
using layout::writesReachEveryReplica;

/// A buffer the kernel touches: a global tensor, a shared tile, a fragment or a local tile.
struct Buffer {
  tile::MemorySpace space;
  std::string var;                // the C name
  mlir::Type element;
  std::vector<int64_t> shape;     // static extents (kDynamic for a tensor's dynamic dims)
  std::vector<std::string> dims;  // C expression of every extent
  std::optional<FragmentLayout> layout; // fragment / local
  Swizzle swizzle;                      // shared
  // A multi-buffered shared tile (tile-multi-buffer): the buffers start at `stagesVar`, `stageElements` apart; each
  // tile.stage_view of it is a Buffer of its own (one stage) with `var` pointing at its buffer.
  int64_t stages = 1, stageElements = 0;
  std::string stagesVar;
  // Shared tiles: C expressions of the tile's (and its first stage's) 32-bit shared-window byte address. ldmatrix,
  // cp.async and 16-byte stores take these rather than generic pointers: NVRTC computes shared pointers in 64 bits
  // (nvcc does not), which costs a second register per hoisted address and, at 255 registers, spills.
  std::string addrVar, stagesAddrVar;
};

/// The operands of a tile.copy or a tile.async_copy, which the copy paths share.
struct CopyOperands {
  mlir::Operation *op;
  mlir::Value source, target;
  CopyOperands(tile::CopyOp copy) : op(copy), source(copy.getSource()), target(copy.getTarget()) {}
  CopyOperands(tile::AsyncCopyOp copy) : op(copy), source(copy.getSource()), target(copy.getTarget()) {}
  mlir::Value getSource() const { return source; }
  mlir::Value getTarget() const { return target; }
  mlir::InFlightDiagnostic emitError(const llvm::Twine &message) const { return op->emitError(message); }
};

/// A tile operand seen through an optional region: base coordinates of the element at window coordinates.
struct TileRef {
  const Buffer *buffer;
  std::vector<std::string> offsets; // per base dim (empty: the whole buffer)
  std::vector<int64_t> window;      // per base dim: window extent (the buffer's own shape when no region)
  double pad = 0.0;
  std::vector<int64_t> squeezed() const;
  /// Base coordinates (C expressions) for the squeezed window coordinates `coords`.
  std::vector<std::string> baseCoords(const std::vector<std::string> &coords) const;
};

/// What a loop over a layout's slots provides to the code inside it.
struct SlotLoop {
  const FragmentLayout *layout = nullptr;
  std::string slot;                 // the C slot variable
  std::vector<std::string> coords;  // C expressions of the coordinates
  std::string primary;              // C condition: this thread is the primary replica ("" when always)
};

/// An operand that is a whole buffer, not a region of one.
inline bool isWhole(mlir::Value operand) { return !operand.getDefiningOp<tile::RegionOp>(); }

/// A fragment spread over the threads (not replicated in every thread).
inline bool isDistributed(const Buffer &b) { return b.layout && !b.layout->isReplicated(); }

/// `s` without its extents of 1.
inline std::vector<int64_t> squeeze(const std::vector<int64_t> &s) {
  std::vector<int64_t> out;
  for (int64_t e : s)
    if (e != 1)
      out.push_back(e);
  return out;
}

/// Squeezed coordinates of a driver that iterates a buffer's full shape.
inline std::vector<std::string> squeezeCoords(const std::vector<int64_t> &shape, const std::vector<std::string> &c) {
  std::vector<std::string> out;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1)
      out.push_back(c[d]);
  return out;
}

/// The layout an op over a tile of `shape` (squeezed) runs by when no distributed fragment drives it: every thread
/// takes part, one element at a time; a replicated target needs every thread to produce every element.
inline FragmentLayout plainDriver(const std::vector<int64_t> &shape, int64_t threads, bool everyThread) {
  std::vector<int64_t> s = shape.empty() ? std::vector<int64_t>{1} : shape;
  return everyThread ? FragmentLayout::replicated(s, threads) : FragmentLayout::blocked(s, threads, 1);
}

/// Inside a parallel loop's body, a whole-tile op (copy, fill, region atomic) runs once per iteration, in the threads
/// that run the iteration: each of them walks the op's whole tile, element by element, and the loop's primary one
/// performs the side effects. The slot loop over a layout of `shape` held whole by every thread.
inline FragmentLayout perIterationDriver(const std::vector<int64_t> &shape, int64_t threads) {
  return FragmentLayout::replicated(shape.empty() ? std::vector<int64_t>{1} : shape, threads);
}

/// A C literal for `v` as a value of float type `t`: exact (9 significant digits for f32), and inf/NaN as bit
/// patterns (NVRTC has no INFINITY without math headers).
std::string floatLiteral(double v, mlir::Type t);

class KernelEmitter;

/// tile.atomic_add and tile.atomic_rmw as the emitter sees them: the same two forms and operands, with the combiner
/// ("add", "max" or "min") and the add's `exclusive` promise.
struct AtomicUpdate {
  mlir::Operation *op;
  mlir::Value value, dest;
  mlir::OperandRange indices;
  tile::MemoryOrder order;
  bool exclusive;
  std::string combiner;
  bool elementForm;
  bool writeOnce = false; // the add's `write_once` promise: a store of 0 + value

  static AtomicUpdate of(tile::AtomicAddOp add) {
    return {add, add.getValue(), add.getDest(), add.getIndices(), add.getOrder(), add.getExclusive(), "add",
            add.isElementForm(), add.getWriteOnce()};
  }
  static AtomicUpdate of(tile::AtomicRmwOp rmw) {
    return {rmw, rmw.getValue(), rmw.getDest(), rmw.getIndices(), rmw.getOrder(), /*exclusive=*/false,
            tile::stringifyAtomicRmwKind(rmw.getKind()).str(), rmw.isElementForm(), /*writeOnce=*/false};
  }
};

/// Emits `body()` as is when `runtimeCheck` is empty, else `if (runtimeCheck) { body } else { fallback }`. The
/// fallback (element by element, rarely taken) reads the thread index afresh: NVVM would otherwise hoist its
/// per-slot indices and addresses out of an enclosing loop into registers held across the whole loop, although
/// the branch is taken on neither or every iteration (the default gemm: 244 registers, 128 with this).
template <typename Body, typename Fallback>
mlir::LogicalResult withRuntimeCheck(KernelEmitter &e, const std::string &runtimeCheck, Body body,
                                     Fallback fallback);

/// A statement writing `valueExpr` (of the buffer's element type) into element `coords` of `r`, guarded by the
/// loop's primary condition and the tensor bounds where they apply.
std::string writeElement(KernelEmitter &e, const TileRef &r, const std::vector<std::string> &coords,
                         const SlotLoop &loop, const std::string &valueExpr);

class KernelEmitter {
public:
  /// `functions`: the device functions the kernels of one file share (name -> definition), emitted before the
  /// first kernel.
  KernelEmitter(tile::KernelOp kernel, llvm::raw_ostream &os, std::map<std::string, std::string> &functions)
      : kernel(kernel), os(os), out(os), threads(kernel.getThreads()), functions(&functions) {}
  mlir::LogicalResult emit();

  int64_t blockThreads() const { return threads; }
  /// Global -> shared copies are being issued as cp.async (a tile.async_copy).
  bool issuesAsyncCopies() const { return asyncCopies; }

  // Shared by the op families.
  llvm::raw_ostream &line();          // the kernel body's stream, which indents each line it starts
  void open(const std::string &head); // "head {" and indent
  void close();
  std::string value(mlir::Value v);   // the C expression of an SSA value
  std::string fresh(const std::string &hint);
  /// Shadows `tid` in the current scope by the thread index read through an opaque asm, so that NVVM cannot
  /// hoist the index arithmetic built on it out of enclosing loops (recomputed where used instead).
  void shadowThreadIndex(const std::string &why);
  static std::string cType(mlir::Type t);
  const Buffer &buffer(mlir::Value v); // of the base buffer
  TileRef ref(mlir::Value operand);
  std::string threadPart(const FragmentLayout &l, int dim) const;
  std::string slotPart(const FragmentLayout &l, int dim, const std::string &slot) const;
  std::string primaryCondition(const FragmentLayout &l) const;
  std::string slotMapExpr(const SlotMap &map, const std::string &slot) const;
  /// Opens `for (slot ...)` over `l`, binding coordinates; the caller emits the body, then calls closeSlotLoop.
  /// With `step` > 1 the loop visits every step-th slot (vector accesses cover the slots in between).
  /// Slots [first, end) only, where given (end -1: every slot).
  /// Without `declarePrimary` the caller sets the loop's primary condition itself.
  SlotLoop openSlotLoop(const FragmentLayout &l, const std::string &what, int64_t step = 1, int64_t first = 0,
                        int64_t end = -1, bool declarePrimary = true);
  /// The slot loop of a whole-tile op over a tile of `shape` (squeezed): spread over the block's threads by
  /// `blockDriver`, or, inside a parallel loop, once per iteration (perIterationDriver) with the enclosing loop's
  /// primary condition. `driver` receives the layout, which closeSlotLoop needs.
  SlotLoop openTileOpLoop(std::optional<FragmentLayout> &driver, const FragmentLayout &blockDriver,
                          const std::vector<int64_t> &shape, const std::string &what);
  void closeSlotLoop(const FragmentLayout &l);
  /// C expression for reading / a statement writing element `coords` (squeezed window coordinates) of `r`, inside
  /// `loop` (the loop that drives the op; coordinates in its terms). `converted` reads convert to `to`.
  /// An access it cannot express sets `unsupportedAccess`, which emitOp turns into an error at the op.
  std::string readElement(const TileRef &r, const std::vector<std::string> &coords, const SlotLoop &loop);
  /// What readElement / writeElement could not express in the op being emitted (empty: nothing). Layout inference
  /// stages such accesses through shared memory, so this is a compiler defect, reported rather than emitted.
  std::string unsupportedAccess;
  /// The C condition that tensor coordinates `baseCoords` of `r` lie inside its tensor (empty when no dim needs a
  /// test); dim `skipDim`, where given, is left out (a caller that bounds it another way).
  std::string boundsCheck(const TileRef &r, const std::vector<std::string> &baseCoords, int skipDim = -1) const;
  std::string linearIndex(const Buffer &b, const std::vector<std::string> &coords) const;
  std::string sharedIndex(const Buffer &b, const std::vector<std::string> &coords) const;
  /// The 32-bit shared-window address of element `index` (an element index such as sharedIndex gives) of `b`.
  std::string sharedAddress(const Buffer &b, const std::string &index) const;
  std::string convert(const std::string &expr, mlir::Type from, mlir::Type to) const;
  int64_t knownDivisor(mlir::Value v) const;

  /// Emits the block's ops in order.
  mlir::LogicalResult emitBlock(mlir::Block &block);
  mlir::LogicalResult emitOp(mlir::Operation *op);
  mlir::LogicalResult emitOpBody(mlir::Operation *op);
  mlir::LogicalResult emitScalarOp(mlir::Operation *op);
  mlir::LogicalResult emitParallel(tile::ParallelOp op);
  mlir::LogicalResult emitCopy(CopyOperands op);              // EmitCopy.cpp
  mlir::LogicalResult emitElementwiseCopy(CopyOperands op);   // one element at a time, any operands
  mlir::LogicalResult emitFill(tile::FillOp op);
  mlir::LogicalResult emitDiscard(tile::DiscardOp op);        // EmitCopy.cpp
  mlir::LogicalResult emitAtomic(const AtomicUpdate &op);
  mlir::LogicalResult emitRegionAtomic(const AtomicUpdate &op, int64_t width); // width 1: element by element
  mlir::LogicalResult emitExclusiveRegionAdd(const AtomicUpdate &op, int64_t width);
  mlir::LogicalResult emitGemm(tile::GemmOp op);
  mlir::LogicalResult emitWgmma(tile::GemmOp op);             // EmitWgmma.cpp: the sm_90a branch of emitGemm
  /// __syncthreads(), preceded where the kernel uses wgmma by the proxy fence that makes the block's shared-memory
  /// writes visible to wgmma's operand reads (they go through the async proxy).
  void emitBarrier();
  /// tile.wgmma_wait (placed by tile-schedule-wgmma-waits): wgmma.wait_group, then pins the accumulators of the
  /// groups it waited for, so that no read of them moves above the wait.
  mlir::LogicalResult emitWgmmaWait(tile::WgmmaWaitOp op);
  mlir::LogicalResult emitReduce(tile::ReduceOp op);
  mlir::LogicalResult emitElementAccess(mlir::Operation *op); // memref.load/store
  mlir::LogicalResult emitStageView(tile::StageViewOp op);    // EmitAsync.cpp
  mlir::LogicalResult emitAsyncCopy(tile::AsyncCopyOp op);
  mlir::LogicalResult emitAsyncCommit(tile::AsyncCommitOp op);
  mlir::LogicalResult emitAsyncWait(tile::AsyncWaitOp op);

private:
  tile::KernelOp kernel;
  llvm::raw_ostream &os;          // unindented: the kernel's signature, preprocessor lines
  mlir::raw_indented_ostream out; // over os: the kernel body, two spaces per open scope
  int64_t threads;
  int counter = 0;
  llvm::DenseMap<mlir::Value, std::string> names;
  llvm::DenseMap<mlir::Value, Buffer> buffers;
  std::vector<std::string> usedNames;
  // The parallel loop being emitted (element accesses resolve against it), with its driver's dims per iv.
  const SlotLoop *currentLoop = nullptr;
  tile::ParallelOp currentParallel;
  // Global -> shared copies are issued as cp.async (a tile.async_copy) rather than loaded and stored.
  bool asyncCopies = false;
  // Some gemm of the kernel runs on wgmma (tile.wgmma): shared memory is 1024-byte aligned and barriers fence.
  bool usesWgmma = false;
  std::map<std::string, std::string> *functions;
};

template <typename Body, typename Fallback>
mlir::LogicalResult withRuntimeCheck(KernelEmitter &e, const std::string &runtimeCheck, Body body,
                                     Fallback fallback) {
  if (runtimeCheck.empty())
    return body();
  e.open("if (" + runtimeCheck + ")");
  mlir::LogicalResult r = body();
  e.close();
  if (mlir::failed(r))
    return r;
  e.open("else");
  e.shadowThreadIndex("rarely taken: recompute its indices here instead of holding them");
  r = fallback();
  e.close();
  return r;
}

} // namespace tilec::cuda

#endif
