// Atomic adds on global memory: fp32 scalar and vector, bf16 / f16 scalar and pairs, i32, f64, and fp32 / i32 adds
// with explicit memory orders.
//
// On sm_90 and later the fp32 vector forms are single instructions (RED.E.ADD.F32x2/x4), which halve or quarter
// the atomic traffic of split-K and flash-attention backward (dQ); so are the bf16x2 and f16x2 forms (f16x2 from
// sm_60 on; bf16x2 before sm_90 is a compare-and-swap loop). The scalar bf16 / f16 adds are compare-and-swap loops
// in SASS on every arch, sm_90 included: prefer the pairs where the layout allows. Vector forms need their address
// aligned to the vector size (8 bytes for f32x2, 16 for f32x4, 4 for bf16x2 / f16x2).
//
// The accumulating float adds return nothing (they lower to RED); the i32 and memory-ordered adds return the old
// value, which synchronisation (tickets, last-block detection) needs.
#pragma once

#include "tilec/device/types.cuh"

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

// tile.arrive_last's count: counter += 1 at GPU scope with acquire-release semantics, the old value returned.
__device__ __forceinline__ int arrive_acq_rel(int *counter) {
  int old;
  asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;" : "=r"(old) : "l"(counter) : "memory");
  return old;
}

// A write-once add (the split strategy's partial slices, `write_once`: the only update of each element, whose prior
// contents do not matter): one vector store of 0 + value. Adding to +0.0f maps -0.0 to +0.0 exactly as a
// read-modify-write of zero would.
__device__ __forceinline__ void store_zero_plus_f32x2(float *address, float2 value) {
  *reinterpret_cast<float2 *>(address) = make_float2(0.0f + value.x, 0.0f + value.y);
}

__device__ __forceinline__ void store_zero_plus_f32x4(float *address, float4 value) {
  *reinterpret_cast<float4 *>(address) =
      make_float4(0.0f + value.x, 0.0f + value.y, 0.0f + value.z, 0.0f + value.w);
}

// The 16-bit adds are written as red.global in PTX: CUDA's atomicAdd overloads for them use generic addresses,
// which costs a shared-memory emulation path next to every atomic. `value` is rounded to the element type
// (nearest even) first; the add itself rounds the sum. Pairs are (low, high) at a 4-byte aligned `address`.
__device__ __forceinline__ void atomic_add_bf16(bf16 *address, float value) {
#if __CUDA_ARCH__ >= 900
  asm volatile("red.global.add.noftz.bf16 [%0], %1;\n" ::"l"(address), "h"(__bfloat16_as_ushort(to_bf16(value)))
               : "memory");
#else
  atomicAdd(address, to_bf16(value));
#endif
}

__device__ __forceinline__ void atomic_add_bf16x2(bf16 *address, float low, float high) {
#if __CUDA_ARCH__ >= 900
  asm volatile("red.global.add.noftz.bf16x2 [%0], %1;\n" ::"l"(address), "r"(pack_bf16x2(low, high)) : "memory");
#else
  atomicAdd(reinterpret_cast<bf16x2 *>(address), __floats2bfloat162_rn(low, high));
#endif
}

__device__ __forceinline__ void atomic_add_f16(f16 *address, float value) {
  asm volatile("red.global.add.noftz.f16 [%0], %1;\n" ::"l"(address), "h"(__half_as_ushort(to_f16(value)))
               : "memory");
}

__device__ __forceinline__ void atomic_add_f16x2(f16 *address, float low, float high) {
  asm volatile("red.global.add.noftz.f16x2 [%0], %1;\n" ::"l"(address), "r"(pack_f16x2(low, high)) : "memory");
}

// Into shared memory (a block's own accumulator): the red.global forms above take global addresses only, so these
// use CUDA's generic-address atomicAdd.
__device__ __forceinline__ void atomic_add_bf16_shared(bf16 *address, float value) {
  atomicAdd(address, to_bf16(value));
}

__device__ __forceinline__ void atomic_add_f16_shared(f16 *address, float value) { atomicAdd(address, to_f16(value)); }

__device__ __forceinline__ int atomic_add_i32(int *address, int value) { return atomicAdd(address, value); }

__device__ __forceinline__ void atomic_add_f64(double *address, double value) { atomicAdd(address, value); }

// Memory-ordered adds at GPU scope, on generic addresses (global or shared). seq_cst follows NVIDIA's PTX atomics ABI for C++ read-modify-writes,
// `fence.sc; atom.<acquire or acq_rel>`: the fence orders everything before it, acq_rel (the stronger of the two
// documented choices) orders what follows.
__device__ __forceinline__ float atomic_add_f32_release(float *address, float value) {
  float old;
  asm volatile("atom.release.gpu.add.f32 %0, [%1], %2;\n" : "=f"(old) : "l"(address), "f"(value) : "memory");
  return old;
}

__device__ __forceinline__ float atomic_add_f32_acq_rel(float *address, float value) {
  float old;
  asm volatile("atom.acq_rel.gpu.add.f32 %0, [%1], %2;\n" : "=f"(old) : "l"(address), "f"(value) : "memory");
  return old;
}

__device__ __forceinline__ float atomic_add_f32_seq_cst(float *address, float value) {
  float old;
  asm volatile("fence.sc.gpu;\n"
               "atom.acq_rel.gpu.add.f32 %0, [%1], %2;\n"
               : "=f"(old)
               : "l"(address), "f"(value)
               : "memory");
  return old;
}

__device__ __forceinline__ int atomic_add_i32_release(int *address, int value) {
  int old;
  asm volatile("atom.release.gpu.add.s32 %0, [%1], %2;\n" : "=r"(old) : "l"(address), "r"(value) : "memory");
  return old;
}

__device__ __forceinline__ int atomic_add_i32_acq_rel(int *address, int value) {
  int old;
  asm volatile("atom.acq_rel.gpu.add.s32 %0, [%1], %2;\n" : "=r"(old) : "l"(address), "r"(value) : "memory");
  return old;
}

__device__ __forceinline__ int atomic_add_i32_seq_cst(int *address, int value) {
  int old;
  asm volatile("fence.sc.gpu;\n"
               "atom.acq_rel.gpu.add.s32 %0, [%1], %2;\n"
               : "=r"(old)
               : "l"(address), "r"(value)
               : "memory");
  return old;
}

// Memory-ordered adds into bf16 / f16 (generic addresses), built from fences around a relaxed add, which is how the
// PTX memory model defines release and acquire patterns: a release fence before the add makes it a release (every
// earlier access of the thread is ordered before it), an acquire fence after it an acquire. Rather than 16-bit
// atom.<sem> forms, which not every arch has for bf16, the add is the same instruction as the relaxed one.
enum class add_order { release, acq_rel, seq_cst };

template <add_order Order> __device__ __forceinline__ void fence_before_add() {
  if constexpr (Order == add_order::seq_cst)
    asm volatile("fence.sc.gpu;\n" ::: "memory");
  else
    asm volatile("fence.acq_rel.gpu;\n" ::: "memory");
}

template <add_order Order> __device__ __forceinline__ void fence_after_add() {
  if constexpr (Order != add_order::release)
    asm volatile("fence.acq_rel.gpu;\n" ::: "memory");
}

template <add_order Order> __device__ __forceinline__ void atomic_add_bf16_ordered(bf16 *address, float value) {
  fence_before_add<Order>();
  atomicAdd(address, to_bf16(value));
  fence_after_add<Order>();
}

template <add_order Order> __device__ __forceinline__ void atomic_add_f16_ordered(f16 *address, float value) {
  fence_before_add<Order>();
  atomicAdd(address, to_f16(value));
  fence_after_add<Order>();
}

} // namespace tilec::device
