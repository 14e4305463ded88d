// Atomic max and min (tile.atomic_rmw) on global or shared memory: f32, f64, bf16, f16 and i32.
//
// Integers use the hardware's atomicMax / atomicMin (signed). Floats are compare-and-swap loops on the element's
// bits, with IEEE maximum / minimum semantics so that the GPU agrees with the CPU backend (arith.maximumf): a NaN on
// either side gives a NaN, and -0.0 is below +0.0. CUDA's fmaxf drops NaNs instead, and the usual sign-split trick
// (atomicMax on the int bits of non-negative values, atomicMin on the unsigned bits of negative ones) loses NaNs of
// one sign, so neither is used. The 16-bit loops use the 16-bit atomicCAS (sm_70 and later).
//
// The value comes as float (double for f64) and is rounded to the element type first; rounding preserves order, so
// the result is the rounded extremum. A relaxed update that would not change the element does not write it.
//
// Memory orders other than relaxed are a relaxed update between fences at GPU scope: `release` puts
// fence.acq_rel.gpu before it, `acq_rel` one before and one after, `seq_cst` fence.sc.gpu before and fence.acq_rel.gpu
// after (the fence-plus-relaxed patterns of the PTX memory model); ordered updates always write.
#pragma once

#include "tilec/device/types.cuh"

namespace tilec::device {

enum class rmw_order { relaxed, release, acq_rel, seq_cst };

template <rmw_order Order> __device__ __forceinline__ void fence_before_rmw() {
  if constexpr (Order == rmw_order::seq_cst)
    asm volatile("fence.sc.gpu;\n" ::: "memory");
  else if constexpr (Order != rmw_order::relaxed)
    asm volatile("fence.acq_rel.gpu;\n" ::: "memory");
}

template <rmw_order Order> __device__ __forceinline__ void fence_after_rmw() {
  if constexpr (Order == rmw_order::acq_rel || Order == rmw_order::seq_cst)
    asm volatile("fence.acq_rel.gpu;\n" ::: "memory");
}

// IEEE 754-2019 maximum / minimum: NaN-propagating, -0.0 < +0.0.
template <typename T> __device__ __forceinline__ T ieee_maximum(T a, T b) {
  if (a != a)
    return a;
  if (b != b)
    return b;
  if (a == b) // equal, or +0.0 and -0.0: the one without the sign bit
    return signbit(a) ? b : a;
  return a > b ? a : b;
}

template <typename T> __device__ __forceinline__ T ieee_minimum(T a, T b) {
  if (a != a)
    return a;
  if (b != b)
    return b;
  if (a == b)
    return signbit(a) ? a : b;
  return a < b ? a : b;
}

struct combine_max {
  static constexpr bool is_max = true;
  template <typename T> __device__ __forceinline__ static T apply(T a, T b) { return ieee_maximum(a, b); }
};
struct combine_min {
  static constexpr bool is_max = false;
  template <typename T> __device__ __forceinline__ static T apply(T a, T b) { return ieee_minimum(a, b); }
};

// The compare-and-swap loop shared by the float types. `Bits` is the element's integer image, `decode` / `encode`
// convert between it and `Compute` (float or double), in which the combiner compares.
template <typename Combine, rmw_order Order, typename Bits, typename Compute, typename Decode, typename Encode>
__device__ __forceinline__ void cas_combine(Bits *address, Compute value, Decode decode, Encode encode) {
  fence_before_rmw<Order>();
  Bits old = *reinterpret_cast<volatile Bits *>(address);
  Bits assumed;
  do {
    assumed = old;
    Bits next = encode(Combine::apply(decode(assumed), value));
    if (Order == rmw_order::relaxed && next == assumed)
      break;
    old = atomicCAS(address, assumed, next);
  } while (old != assumed);
  fence_after_rmw<Order>();
}

template <typename Combine, rmw_order Order = rmw_order::relaxed>
__device__ __forceinline__ void atomic_combine(float *address, float value) {
  cas_combine<Combine, Order>(
      reinterpret_cast<unsigned *>(address), value, [](unsigned b) { return __uint_as_float(b); },
      [](float f) { return __float_as_uint(f); });
}

template <typename Combine, rmw_order Order = rmw_order::relaxed>
__device__ __forceinline__ void atomic_combine(double *address, double value) {
  cas_combine<Combine, Order>(
      reinterpret_cast<unsigned long long *>(address), value,
      [](unsigned long long b) { return __longlong_as_double(static_cast<long long>(b)); },
      [](double d) { return static_cast<unsigned long long>(__double_as_longlong(d)); });
}

// bf16 and f16 compare in float, where both are exact; the rounded value is the operand, so the loop only ever
// writes one of the two inputs.
template <typename Combine, rmw_order Order = rmw_order::relaxed>
__device__ __forceinline__ void atomic_combine(bf16 *address, float value) {
  cas_combine<Combine, Order>(
      reinterpret_cast<unsigned short *>(address), to_float(to_bf16(value)),
      [](unsigned short b) { return to_float(__ushort_as_bfloat16(b)); },
      [](float f) { return __bfloat16_as_ushort(to_bf16(f)); });
}

template <typename Combine, rmw_order Order = rmw_order::relaxed>
__device__ __forceinline__ void atomic_combine(f16 *address, float value) {
  cas_combine<Combine, Order>(
      reinterpret_cast<unsigned short *>(address), to_float(to_f16(value)),
      [](unsigned short b) { return to_float(__ushort_as_half(b)); },
      [](float f) { return __half_as_ushort(to_f16(f)); });
}

template <typename Combine, rmw_order Order = rmw_order::relaxed>
__device__ __forceinline__ void atomic_combine(int *address, int value) {
  fence_before_rmw<Order>();
  if constexpr (Combine::is_max)
    atomicMax(address, value);
  else
    atomicMin(address, value);
  fence_after_rmw<Order>();
}

template <rmw_order Order = rmw_order::relaxed, typename T, typename V>
__device__ __forceinline__ void atomic_max(T *address, V value) {
  atomic_combine<combine_max, Order>(address, value);
}

template <rmw_order Order = rmw_order::relaxed, typename T, typename V>
__device__ __forceinline__ void atomic_min(T *address, V value) {
  atomic_combine<combine_min, Order>(address, value);
}

} // namespace tilec::device
