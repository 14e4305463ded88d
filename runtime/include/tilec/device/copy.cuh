// 16-, 8- and 4-byte vector loads and stores (one LDG.128 / .64 / .32 per thread), optionally predicated.
//
// Every pointer handed to these functions must be aligned to the access size; the runtime's signature check
// enforces the alignment of kernel arguments that feed them (ParamSpec::alignment).
#pragma once

#include "tilec/device/types.cuh"

namespace tilec::device {

__device__ __forceinline__ uint4 load16(const void *src) { return *reinterpret_cast<const uint4 *>(src); }

__device__ __forceinline__ void store16(void *dst, uint4 value) { *reinterpret_cast<uint4 *>(dst) = value; }

// A masked load: out-of-bounds lanes read zeros instead of touching memory, which is what makes tile copies that
// overhang a tensor's edge safe. Written in PTX so the predicate guards the load itself rather than relying on the
// compiler to if-convert a branch.
__device__ __forceinline__ uint4 load16_pred(const void *src, bool predicate) {
  uint4 value;
  asm volatile("{\n"
               "  .reg .pred p;\n"
               "  setp.ne.b32 p, %5, 0;\n"
               "  mov.b32 %0, 0;\n"
               "  mov.b32 %1, 0;\n"
               "  mov.b32 %2, 0;\n"
               "  mov.b32 %3, 0;\n"
               "  @p ld.global.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               "}\n"
               : "=r"(value.x), "=r"(value.y), "=r"(value.z), "=r"(value.w)
               : "l"(src), "r"(static_cast<int>(predicate)));
  return value;
}

__device__ __forceinline__ void store16_pred(void *dst, uint4 value, bool predicate) {
  asm volatile("{\n"
               "  .reg .pred p;\n"
               "  setp.ne.b32 p, %5, 0;\n"
               "  @p st.global.v4.u32 [%0], {%1, %2, %3, %4};\n"
               "}\n"
               :
               : "l"(dst), "r"(value.x), "r"(value.y), "r"(value.z), "r"(value.w), "r"(static_cast<int>(predicate))
               : "memory");
}

__device__ __forceinline__ uint2 load8_pred(const void *src, bool predicate) {
  uint2 value;
  asm volatile("{\n"
               "  .reg .pred p;\n"
               "  setp.ne.b32 p, %3, 0;\n"
               "  mov.b32 %0, 0;\n"
               "  mov.b32 %1, 0;\n"
               "  @p ld.global.v2.u32 {%0, %1}, [%2];\n"
               "}\n"
               : "=r"(value.x), "=r"(value.y)
               : "l"(src), "r"(static_cast<int>(predicate)));
  return value;
}

__device__ __forceinline__ void store8_pred(void *dst, uint2 value, bool predicate) {
  asm volatile("{\n"
               "  .reg .pred p;\n"
               "  setp.ne.b32 p, %3, 0;\n"
               "  @p st.global.v2.u32 [%0], {%1, %2};\n"
               "}\n"
               :
               : "l"(dst), "r"(value.x), "r"(value.y), "r"(static_cast<int>(predicate))
               : "memory");
}

__device__ __forceinline__ unsigned load4_pred(const void *src, bool predicate) {
  unsigned value;
  asm volatile("{\n"
               "  .reg .pred p;\n"
               "  setp.ne.b32 p, %2, 0;\n"
               "  mov.b32 %0, 0;\n"
               "  @p ld.global.u32 %0, [%1];\n"
               "}\n"
               : "=r"(value)
               : "l"(src), "r"(static_cast<int>(predicate)));
  return value;
}

__device__ __forceinline__ void store4_pred(void *dst, unsigned value, bool predicate) {
  asm volatile("{\n"
               "  .reg .pred p;\n"
               "  setp.ne.b32 p, %2, 0;\n"
               "  @p st.global.u32 [%0], %1;\n"
               "}\n"
               :
               : "l"(dst), "r"(value), "r"(static_cast<int>(predicate))
               : "memory");
}

// Unpredicated 16-byte shared-memory accesses, in plain C++ rather than PTX: the compiler orders them against
// barriers and other accesses itself, and emits LDS.128 / STS.128 once it sees the pointer derive from a
// __shared__ buffer (as emitted kernels' pointers do).
__device__ __forceinline__ uint4 load16_shared(const void *src) { return *reinterpret_cast<const uint4 *>(src); }

__device__ __forceinline__ void store16_shared(void *dst, uint4 value) { *reinterpret_cast<uint4 *>(dst) = value; }

// The same at a 32-bit shared-window address.
__device__ __forceinline__ void store16_shared(unsigned dst, uint4 value) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" : : "r"(dst), "r"(value.x), "r"(value.y), "r"(value.z), "r"(value.w) : "memory");
}

// 4 bytes (two 16-bit elements) at a 32-bit shared-window address.
__device__ __forceinline__ void store4_shared(unsigned dst, unsigned value) {
  asm volatile("st.shared.u32 [%0], %1;\n" : : "r"(dst), "r"(value) : "memory");
}

// Copies 8 consecutive bf16 values (16 bytes), zero-filling when !predicate.
__device__ __forceinline__ void copy_bf16x8_pred(bf16 *dst, const bf16 *src, bool predicate) {
  store16(dst, load16_pred(src, predicate));
}

// tile.discard: the 128-byte L2 line at `line` (128-byte aligned, global memory) holds nothing that is read again
// before it is next written, so L2 may drop it without writing it back. Before sm_80 there is no such hint and
// nothing happens.
__device__ __forceinline__ void discard_l2_line(const void *line) {
#if __CUDA_ARCH__ >= 800
  asm volatile("discard.global.L2 [%0], 128;\n" : : "l"(line) : "memory");
#endif
}

} // namespace tilec::device
