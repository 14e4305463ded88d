// Reduction combiners and warp-level reductions by xor-butterfly shuffles.
//
// The float max/min propagate NaN (a NaN operand gives NaN), matching arith.maximumf / arith.minimumf, unlike
// fmaxf/fminf, which drop a NaN operand.
#pragma once

namespace tilec::device {

__device__ __forceinline__ float reduce_sum(float a, float b) { return a + b; }

__device__ __forceinline__ float reduce_max(float a, float b) {
#if __CUDA_ARCH__ >= 800
  float result;
  asm("max.NaN.f32 %0, %1, %2;\n" : "=f"(result) : "f"(a), "f"(b));
  return result;
#else
  return (a != a || b != b) ? __int_as_float(0x7fffffff) : fmaxf(a, b);
#endif
}

__device__ __forceinline__ float reduce_min(float a, float b) {
#if __CUDA_ARCH__ >= 800
  float result;
  asm("min.NaN.f32 %0, %1, %2;\n" : "=f"(result) : "f"(a), "f"(b));
  return result;
#else
  return (a != a || b != b) ? __int_as_float(0x7fffffff) : fminf(a, b);
#endif
}

// Wraps on overflow, as arith.addi does (signed overflow would be undefined in C++).
__device__ __forceinline__ int reduce_sum(int a, int b) {
  return static_cast<int>(static_cast<unsigned>(a) + static_cast<unsigned>(b));
}
__device__ __forceinline__ int reduce_max(int a, int b) { return max(a, b); }
__device__ __forceinline__ int reduce_min(int a, int b) { return min(a, b); }

// All 32 lanes must take part (full mask).
template <typename T> __device__ __forceinline__ T shfl_xor(T value, int lane_mask) {
  return __shfl_xor_sync(0xffffffffu, value, lane_mask);
}

// Reduces over aligned groups of `width` consecutive lanes (a power of two, 1..32); every lane of a group gets the
// group's result, bit-identical across the group (each step combines the same two values in either order, and
// the combiners are commutative). The butterfly order (lane masks 1, 2, ..., width/2) is fixed, so float sums are
// deterministic.
__device__ __forceinline__ float warp_reduce_sum_f32(float value, int width) {
  for (int mask = 1; mask < width; mask <<= 1)
    value = reduce_sum(value, shfl_xor(value, mask));
  return value;
}

__device__ __forceinline__ float warp_reduce_max_f32(float value, int width) {
  for (int mask = 1; mask < width; mask <<= 1)
    value = reduce_max(value, shfl_xor(value, mask));
  return value;
}

__device__ __forceinline__ float warp_reduce_min_f32(float value, int width) {
  for (int mask = 1; mask < width; mask <<= 1)
    value = reduce_min(value, shfl_xor(value, mask));
  return value;
}

__device__ __forceinline__ int warp_reduce_sum_i32(int value, int width) {
  for (int mask = 1; mask < width; mask <<= 1)
    value = reduce_sum(value, shfl_xor(value, mask));
  return value;
}

__device__ __forceinline__ int warp_reduce_max_i32(int value, int width) {
  for (int mask = 1; mask < width; mask <<= 1)
    value = reduce_max(value, shfl_xor(value, mask));
  return value;
}

__device__ __forceinline__ int warp_reduce_min_i32(int value, int width) {
  for (int mask = 1; mask < width; mask <<= 1)
    value = reduce_min(value, shfl_xor(value, mask));
  return value;
}

} // namespace tilec::device
