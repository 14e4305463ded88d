// Scalar and packed bf16 helpers shared by the other device headers and by emitted kernels.
#pragma once

#include <cuda_bf16.h>

namespace tilec::device {

using bf16 = __nv_bfloat16;
using bf16x2 = __nv_bfloat162;

__device__ __forceinline__ float to_float(bf16 value) { return __bfloat162float(value); }

// Round-to-nearest-even, as the reference implementations (PyTorch, NumPy ml_dtypes) do.
__device__ __forceinline__ bf16 to_bf16(float value) { return __float2bfloat16_rn(value); }

// Two bf16 values in one 32-bit register, `low` in bits 0..15: the operand layout of mma.sync and of 32-bit loads
// of consecutive bf16 elements.
__device__ __forceinline__ unsigned pack_bf16x2(bf16 low, bf16 high) {
  bf16x2 pair(low, high);
  return *reinterpret_cast<unsigned *>(&pair);
}

__device__ __forceinline__ unsigned pack_bf16x2(float low, float high) {
  bf16x2 pair = __floats2bfloat162_rn(low, high);
  return *reinterpret_cast<unsigned *>(&pair);
}

__device__ __forceinline__ float2 unpack_bf16x2(unsigned packed) {
  bf16x2 pair = *reinterpret_cast<bf16x2 *>(&packed);
  return __bfloat1622float2(pair);
}

} // namespace tilec::device
