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

#endif
