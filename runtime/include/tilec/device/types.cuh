// Scalar and packed bf16 / f16 helpers shared by the other device headers and by emitted kernels.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace tilec::device {

using bf16 = __nv_bfloat16;
using bf16x2 = __nv_bfloat162;
using f16 = __half;
using f16x2 = __half2;

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

__device__ __forceinline__ float to_float(f16 value) { return __half2float(value); }

__device__ __forceinline__ f16 to_f16(float value) { return __float2half_rn(value); }

// Same register layout as pack_bf16x2: `low` in bits 0..15.
__device__ __forceinline__ unsigned pack_f16x2(f16 low, f16 high) {
  return static_cast<unsigned>(__half_as_ushort(low)) | (static_cast<unsigned>(__half_as_ushort(high)) << 16);
}

__device__ __forceinline__ unsigned pack_f16x2(float low, float high) {
  return pack_f16x2(to_f16(low), to_f16(high));
}

__device__ __forceinline__ float2 unpack_f16x2(unsigned packed) {
  return make_float2(__half2float(__ushort_as_half(static_cast<unsigned short>(packed & 0xffffu))),
                     __half2float(__ushort_as_half(static_cast<unsigned short>(packed >> 16))));
}

// Type-generic spelling of the two packers, for emitted code that is written once for both 16-bit float types.
__device__ __forceinline__ unsigned pack2(bf16 low, bf16 high) {
  return static_cast<unsigned>(__bfloat16_as_ushort(low)) | (static_cast<unsigned>(__bfloat16_as_ushort(high)) << 16);
}

__device__ __forceinline__ unsigned pack2(f16 low, f16 high) { return pack_f16x2(low, high); }

// The 32-bit .shared window address of a generic pointer into shared memory: the operand form of ldmatrix and
// cp.async.
__device__ __forceinline__ unsigned shared_address(const void *pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

} // namespace tilec::device
