// Conversions out of the tile dialect.
#ifndef TILEC_CONVERSION_PASSES
#define TILEC_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def TileToLoops : Pass<"tile-to-loops", "::mlir::ModuleOp"> {
  let summary = "Lower tile-level kernels to sequential loops for the CPU";
  let description = [{
    Rewrites every `tile.kernel @k` into two functions on plain memrefs:
    `@k_block(args..., block indices...)`, which runs one block, and `@k(args...)`,
    which runs every block of the grid in order. Whole-tile ops become loop
    nests (`scf`/`memref`/`arith`/`math`): a gemm is a triple loop accumulating
    in f32, a reduce a loop with an accumulator (f32 for a sum of 16-bit floats,
    rounded once; the old target added after the loop), a copy converts element types,
    accesses through regions are masked against the buffer's bounds (reads
    yield the pad value, writes are dropped), and `atomic_add` is a plain
    read-add-write (blocks run one at a time). Shared tiles and fragments are
    allocated per block call. This is the reference semantics of tile IR that
    the CPU backend runs. A conversion: no op of the tile dialect is legal
    after it, and one left over is an error at that op.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

#endif
