// tile-infer-layouts' gemm decisions (compiler/Transforms/InferLayouts.cpp, steps 2 and 6): the warp partition of a
// tensor-core gemm, and which of those gemms also fit Hopper's wgmma. Kept apart from the layout inference proper,
// which owns the layouts these read and write.
#ifndef TILEC_TRANSFORMS_GEMMPLANS_H
#define TILEC_TRANSFORMS_GEMMPLANS_H

#include "tilec/Dialect/Tile/IR/TileOps.h"
#include "tilec/Lowering/Layout.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <utility>

namespace tilec {

/// The mma.sync warp partition (warps along M, warps along N) of a bf16/f16 gemm, or nullopt when it cannot run on
/// tensor cores. Remembers, per M, the rows split it chose, which the `square` policy prefers for a later gemm
/// with the same M.
class WarpPartitioner {
public:
  explicit WarpPartitioner(int64_t threads) : threads(threads) {}
  /// For the `square` policy it prefers, in order: warps holding whole rows (one warp across N) when some accumulator in the kernel becomes a
  /// register A operand and can be laid out so (`preferRows`); the rows split of an earlier gemm with the same M, so that row
  /// vectors (reductions over N) line up between accumulators; the smallest warp tile perimeter (shared-memory
  /// traffic per warp), ties going to more warps along M. `full_row` / `full_col` take the most warps along M / N.
  std::optional<std::pair<int64_t, int64_t>> partition(tile::GemmOp gemm, bool preferRows);

private:
  int64_t threads;
  llvm::DenseMap<int64_t, int64_t> rowsSplitByM;
};

/// Marks the tensor-core gemms that also fit Hopper's warpgroup mma, wgmma.mma_async m64nNk16 (the emitter then
/// emits it for sm_90a beside mma.sync for other archs). The accumulator layout is the same for both when every
/// warp holds 16 rows of its warp tile ("m16n8k16 warps AxB", M = 16 A, A a multiple of 4): the 4 warps of a
/// warpgroup then hold the 64 rows of one M block (warp w at 16 (w % 4)) and the same N columns, which is where
/// wgmma m64nNk16 puts them for N = the warp tile's width, and a warp's n8 atoms are its registers in order. B is
/// read from shared memory through a descriptor, A from shared memory too or from registers (in mma.sync's A
/// layout, which is wgmma's). The descriptors describe the 128-byte swizzle: each shared operand's rows (its K
/// extent when K-major, its M or N extent when transposed) must be a multiple of 128 bytes.
/// `layoutOf` gives a fragment's layout (every fragment has one by then).
void markWgmmaGemms(tile::KernelOp kernel,
                    llvm::function_ref<const layout::FragmentLayout *(mlir::Value)> layoutOf);

} // namespace tilec

#endif
