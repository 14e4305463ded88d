#ifndef TILEC_TRANSFORMS_PASSES_TD
#define TILEC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def SharedMemoryBudget : Pass<"tile-shared-memory-budget", "::mlir::ModuleOp"> {
  let summary = "Account each kernel's shared memory and reject kernels over budget";
  let description = [{
    Adds up the shared tiles (`tile.alloc` in `#tile.space<shared>`) of every
    `tile.kernel`, records the total in bytes as the kernel attribute
    `tile.shared_bytes`, and reports an error naming the kernel and its largest
    tiles when the total exceeds `limit` bytes (227 KiB, the opt-in maximum of
    one block on sm_90, by default). This is the budget before liveness-based
    reuse: the GPU lowering can only do better.
  }];
  let options = [
    Option<"limit", "limit", "int64_t", /*default=*/"232448",
           "Shared memory available to one block, in bytes">
  ];
}

def LegalizeAtomics : Pass<"tile-legalize-atomics", "::mlir::ModuleOp"> {
  let summary = "Decide how each tile.atomic_add is realised; build launch plans";
  let description = [{
    `tile.atomic_add(dst, v)` means `dst += v`, atomically with respect to
    every other block of the launch; the caller's contents of `dst` are part
    of the result. For every user kernel `@k` this pass analyses which blocks
    can update the same destination element (see AtomicConflictAnalysis.h),
    chooses per destination how its atomics are realised, renames the kernel
    to `@k_main`, and adds a `tile.entry @k` with the user's signature whose
    launch plan allocates workspaces, runs the generated kernels around
    `@k_main` and frees the workspaces:

    - exclusive (each element updated by one block only): the atomic is
      marked `exclusive`, a plain read-modify-write, under every strategy;
    - `fp32` (default): a bf16/f16 destination is replaced by an f32
      workspace (`@k_<dst>_to_f32` before, `@k_<dst>_from_f32` after), with
      f32 atomics into it;
    - `split`: where blocks collide only over grid dimensions with a constant
      split extent whose product is at most `max-split`, each split updates
      its own slice of a zeroed f32 partial buffer `[splits, ...]` with plain
      read-modify-writes, and `@k_<dst>_sum` adds the slices into the
      destination in a fixed order (bitwise reproducible); other sites get
      the fp32 treatment, and the remark says why;
    - `native`: atomics stay in the destination's dtype.

    Every atomic site gets a remark naming the destination, the outcome of
    the analysis and the strategy chosen. With `deterministic` (needs
    `strategy=split`), a float destination that is neither exclusive nor
    split is an error naming the site.
  }];
  let options = [
    Option<"strategy", "strategy", "::tilec::AtomicsStrategy", /*default=*/"::tilec::AtomicsStrategy::FP32",
           "How colliding atomics are realised: fp32, split or native", [{::llvm::cl::values(
             clEnumValN(::tilec::AtomicsStrategy::FP32, "fp32", "an f32 workspace for 16-bit destinations"),
             clEnumValN(::tilec::AtomicsStrategy::Split, "split", "deterministic split + sum where legal"),
             clEnumValN(::tilec::AtomicsStrategy::Native, "native", "atomics in the destination's dtype"))}]>,
    Option<"maxSplit", "max-split", "int64_t", /*default=*/"8",
           "Largest number of partial slices the split strategy allocates">,
    Option<"deterministic", "deterministic", "bool", /*default=*/"false",
           "Fail at any float atomic that split cannot make deterministic">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def UnswitchParallel : Pass<"tile-unswitch-parallel", "::mlir::ModuleOp"> {
  let summary = "Version tile.parallel loops on index comparisons that hold on their whole iteration space (GPU lowering)";
  let description = [{
    For every `arith.cmpi` (slt, sle, sgt, sge on index or i64) in a
    `tile.parallel` body whose operands are affine in the induction variables
    with constant coefficients, evaluates the comparison before the loop at
    the corner of the iteration box that decides it. A comparison true at
    its corner is true everywhere and becomes the constant true; where the
    corner check is only known at run time, the loop is versioned:
    `scf.if (every such check) { the loop with them true } else { the loop }`.
    Per-element masks (sequence tails, causal masks) then cost nothing in the
    blocks where every element passes.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect"];
}

def InferLayouts : Pass<"tile-infer-layouts", "::mlir::ModuleOp"> {
  let summary = "Give every fragment a thread layout and every gemm a tensor-core plan (GPU lowering)";
  let description = [{
    Records on every fragment and local `tile.alloc` the layout that says
    which thread holds which element (`tile.layout`, see
    `tilec/Target/CUDA/Layout.h`), on every `tile.gemm` whether it runs on
    mma.sync m16n8k16 and with which warp partition (`tile.mma`), and on every
    `tile.parallel` the layout its iterations are spread by. Gemm accumulators
    start the inference; layouts flow through copies, reductions (slices) and
    parallel loops; local tiles and fragments indexed from scalar code are
    replicated. Where uses disagree, a conversion through a new shared tile is
    inserted with a remark; an access no conversion can serve is an error at
    the op.
  }];
}

def MultiBuffer : Pass<"tile-multi-buffer", "::mlir::ModuleOp"> {
  let summary = "Choose the copies of tile.pipelined loops to prefetch into multi-buffered shared tiles (GPU lowering)";
  let description = [{
    For each `tile.pipelined` loop with `stages` > 1, marks with
    `tile.prefetch` the copies at the top of its body that move a global
    region into a whole shared tile and can run `stages - 1` iterations ahead
    (cp.async-sized chunks, offsets recomputable from the induction variable,
    the tile read only after the copy and only in the loop), and records
    `tile.stages` on those tiles' allocs. Copies that do not qualify get a
    remark saying why. The CUDA emitter issues marked copies as cp.async
    groups; `tile-plan-shared-memory` reserves one buffer per stage. Run after
    `tile-infer-layouts`.
  }];
}

def PlanSharedMemory : Pass<"tile-plan-shared-memory", "::mlir::ModuleOp"> {
  let summary = "Place shared tiles in one dynamic buffer, reusing bytes by liveness (GPU lowering)";
  let description = [{
    Records `tile.offset` (bytes) and `tile.swizzle` on every shared alloc,
    and `tile.shared_bytes` and `tile.scratch_offset` (cross-warp reduction
    scratch, -1 if none) on each kernel. Tiles live over disjoint ranges of
    top-level ops share bytes. Fails when a kernel needs more than `limit`.
  }];
  let options = [
    Option<"limit", "limit", "int64_t", /*default=*/"232448",
           "Shared memory available to one block, in bytes">
  ];
}

def PlaceBarriers : Pass<"tile-place-barriers", "::mlir::ModuleOp"> {
  let summary = "Insert tile.barrier between ops whose threads share memory (GPU lowering)";
  let description = [{
    Walks each kernel in order with the shared bytes (and global tensors)
    read and written since the last barrier, and inserts `tile.barrier`
    before the first op that reads what was written or overwrites what was
    read or written. Loop bodies are checked across iterations. Run after
    `tile-plan-shared-memory`, whose offsets tell which tiles share bytes.
  }];
}

def ScheduleWgmmaWaits : Pass<"tile-schedule-wgmma-waits", "::mlir::ModuleOp"> {
  let summary = "Insert tile.wgmma_wait where a kernel needs its asynchronous wgmma groups done (GPU lowering)";
  let description = [{
    A `tile.gemm` marked `tile.wgmma` leaves its wgmmas in flight as one
    commit group. Walking each kernel in order with the groups in flight, the
    pass inserts `tile.wgmma_wait` before the first op that touches a group's
    accumulator or register A operand (keeping the groups committed after it
    in flight), before every block barrier and every pipelined loop that
    prefetches, and at the end of each block that issued a group still in
    flight. Run after `tile-place-barriers`.
  }];
}

def PlanCopies : Pass<"tile-plan-copies", "::mlir::ModuleOp"> {
  let summary = "Decide how the block's threads carry out each tile.copy (GPU lowering)";
  let description = [{
    Records `tile.copy_plan` = `#tile.copy<...>` on every `tile.copy`:
    16-byte chunks from global into shared memory (`chunks`, or
    `row_chunks` where each thread can keep one column and step by
    constants), vectors of a thread's consecutive fragment slots to or
    from global memory (`fragment_vectors`), pairs of 16-bit floats per
    store from a fragment into shared memory (`packed_pairs`), or one
    element at a time (`elementwise`), with the elements per access and
    whether a dynamic last extent is checked at run time. Run after
    `tile-plan-shared-memory` (the swizzles decide `row_chunks` and
    `packed_pairs`) and before `tile-expand-pipelines`.
  }];
}

def PlanAtomics : Pass<"tile-plan-atomics", "::mlir::ModuleOp"> {
  let summary = "Decide how the block's threads carry out each tile-valued atomic (GPU lowering)";
  let description = [{
    Records `tile.atomic_plan` = `#tile.atomic<...>` on every
    `tile.atomic_add` and `tile.atomic_rmw` of a whole tile or region: a
    read-modify-write of an exclusive add (`exclusive_rmw`), vector
    reductions of relaxed f32 adds (`vectors`), or one atomic per element
    (`elementwise`), with the elements per access and whether a dynamic last
    extent is checked at run time.
  }];
}

def ExpandPipelines : Pass<"tile-expand-pipelines", "::mlir::ModuleOp"> {
  let summary = "Expand tile.pipelined loops into a software pipeline of asynchronous copies (GPU lowering)";
  let description = [{
    A `tile.pipelined` loop whose copies `tile-multi-buffer` marked
    `tile.prefetch` (with S = `stages` buffers for each target tile) becomes:
    a prologue issuing the copies of iterations lo .. lo+S-2 as
    `tile.async_copy` into buffers 0 .. S-2 (one `tile.async_commit` group
    each, guarded by the trip count); an `scf.for` whose iteration n waits
    for its own group (`tile.async_wait pending S-2`), has a `tile.barrier`,
    views its buffer (n - lo) mod S of each tile (`tile.stage_view`), issues
    the copies of iteration n+S-1 into the buffer iteration n-1 read, commits,
    then runs the body; and a `tile.async_wait pending 0` after the loop. The
    copies' source offsets are recomputed for the prefetched iteration from
    the body's index arithmetic (cloned with the induction variable
    replaced). Every other `tile.pipelined` loop becomes a plain `scf.for`.
    Run last: `tile-place-barriers` and `tile-schedule-wgmma-waits` reason
    about the loop before expansion.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect"];
}

#endif
