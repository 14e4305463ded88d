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

def TileToLoops : Pass<"tile-to-loops", "::mlir::ModuleOp"> {
  let summary = "Lower tile-level kernels to sequential loops for the CPU";
  let description = [{
    Rewrites every `tile.kernel @k` into two functions on plain memrefs:
    `@k_block(args..., block indices...)`, which runs one block, and `@k(args...)`,
    which runs every block of the grid in order. Whole-tile ops become loop
    nests (`scf`/`memref`/`arith`/`math`): a gemm is a triple loop accumulating
    in f32, a reduce a loop with an accumulator, a copy converts element types,
    accesses through regions are masked against the buffer's bounds (reads
    yield the pad value, writes are dropped), and `atomic_add` is a plain
    read-add-write (blocks run one at a time). Shared tiles and fragments are
    allocated per block call. This is the reference semantics of tile IR that
    the CPU backend runs.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

#endif
