// Scalar helpers emitted code calls: integer division as arith defines it, NaN-propagating min/max, swizzled
// shared-memory indexing.
#pragma once

#include "tilec/device/reduce.cuh"
#include "tilec/device/types.cuh"

namespace tilec::device {

__device__ __forceinline__ long long ceildiv(long long a, long long b) {
  long long q = a / b;
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}

__device__ __forceinline__ long long floordiv(long long a, long long b) {
  long long q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// arith.maximumf / minimumf: NaN if either operand is NaN.
__device__ __forceinline__ float maximumf(float a, float b) { return reduce_max(a, b); }
__device__ __forceinline__ float minimumf(float a, float b) { return reduce_min(a, b); }

// The tile language's exp2 on the GPU: one MUFU.EX2 (ex2.approx.ftz.f32, at most 2 ulp off, as exp2f), with results
// below 2^-126 flushed to zero. CUDA's exp2f keeps those subnormal results at the cost of a compare and two
// predicated multiplies around every MUFU.EX2, which in a softmax is a third of the element-wise instructions.
__device__ __forceinline__ float exp2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float to_float_any(float v) { return v; }
__device__ __forceinline__ float to_float_any(double v) { return static_cast<float>(v); }
__device__ __forceinline__ float to_float_any(bf16 v) { return to_float(v); }
__device__ __forceinline__ float to_float_any(f16 v) { return to_float(v); }

// Element index of (row, col) in a row-major shared tile of `Cols` columns whose 16-byte chunks (`PerChunk`
// elements) are XOR-swizzled within each row by (row / RowDivisor) % (Mask + 1). The compiler picks the swizzle
// (tile-plan-shared-memory); this only computes it.
template <int Mask, int RowDivisor, int PerChunk, int Cols>
__device__ __forceinline__ int swizzled_index(int row, int col) {
  const int chunk = col / PerChunk;
  const int swizzled = chunk ^ ((row / RowDivisor) % (Mask + 1));
  return row * Cols + swizzled * PerChunk + col % PerChunk;
}

// The same for a tile stored as column panels of `PanelCols` columns (128 bytes), each `Rows` rows high and
// swizzled as above: the layout Hopper's wgmma reads (tile-plan-shared-memory picks it for wgmma operands).
template <int Mask, int PerChunk, int PanelCols, int Rows>
__device__ __forceinline__ int panelled_swizzled_index(int row, int col) {
  const int chunk = (col % PanelCols) / PerChunk;
  const int swizzled = chunk ^ (row % (Mask + 1));
  return (col / PanelCols) * (Rows * PanelCols) + row * PanelCols + swizzled * PerChunk + col % PerChunk;
}

} // namespace tilec::device
