// Warp-level tensor-core MMA for sm_80 and later: mma.sync.m16n8k16 with bf16 or f16 inputs and fp32 accumulators.
//
// Fragment layouts follow the PTX ISA ("Matrix Fragments for mma.m16n8k16 with floating point type"); the
// *_coord helpers give, for a lane and a fragment element, the (row, col) it holds, so callers load fragments
// without repeating the table.
#pragma once

#include "tilec/device/types.cuh"

namespace tilec::device {

struct MmaCoord {
  int row;
  int col;
};

// A is 16x16 (row-major operand), 8 bf16 elements per lane in 4 registers; element e is in register e / 2.
__device__ __forceinline__ MmaCoord mma_m16n8k16_a_coord(int lane, int element) {
  const int group = lane >> 2;
  const int thread = lane & 3;
  return {group + ((element >> 1) & 1) * 8, thread * 2 + (element & 1) + (element >> 2) * 8};
}

// B is 16x8 (K x N, column operand), 4 bf16 elements per lane in 2 registers.
__device__ __forceinline__ MmaCoord mma_m16n8k16_b_coord(int lane, int element) {
  const int group = lane >> 2;
  const int thread = lane & 3;
  return {thread * 2 + (element & 1) + (element >> 1) * 8, group};
}

// C and D are 16x8 fp32, 4 elements per lane; elements 0,1 (and 2,3) are adjacent columns.
__device__ __forceinline__ MmaCoord mma_m16n8k16_c_coord(int lane, int element) {
  const int group = lane >> 2;
  const int thread = lane & 3;
  return {group + (element >> 1) * 8, thread * 2 + (element & 1)};
}

// d = a * b + c for the warp. All 32 lanes must execute it together (.aligned).
__device__ __forceinline__ void mma_m16n8k16_bf16_f32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2],
                                                      const float (&c)[4]) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
                 "f"(c[3]));
}

// The same with f16 inputs; the fragment layouts are identical.
__device__ __forceinline__ void mma_m16n8k16_f16_f32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2],
                                                     const float (&c)[4]) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
                 "f"(c[3]));
}

} // namespace tilec::device
