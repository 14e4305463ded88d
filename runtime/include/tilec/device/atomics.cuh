// fp32 atomic adds, scalar and vector. On sm_90 and later the vector forms are single instructions
// (RED.E.ADD.F32x2/x4), which halve or quarter the atomic traffic of split-K and flash-attention backward (dQ).
//
// Vector forms need their address aligned to the vector size (8 bytes for x2, 16 for x4) and work on global memory
// only.
#pragma once

namespace tilec::device {

__device__ __forceinline__ void atomic_add_f32(float *address, float value) { atomicAdd(address, value); }

__device__ __forceinline__ void atomic_add_f32x2(float *address, float2 value) {
#if __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float2 *>(address), value);
#else
  atomicAdd(address, value.x);
  atomicAdd(address + 1, value.y);
#endif
}

__device__ __forceinline__ void atomic_add_f32x4(float *address, float4 value) {
#if __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float4 *>(address), value);
#else
  atomicAdd(address, value.x);
  atomicAdd(address + 1, value.y);
  atomicAdd(address + 2, value.z);
  atomicAdd(address + 3, value.w);
#endif
}

} // namespace tilec::device
