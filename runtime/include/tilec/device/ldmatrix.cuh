// ldmatrix: a warp loads 8x8 tiles of 16-bit elements from shared memory straight into mma.sync fragments
// (sm_75 and later).
//
// Each participating lane passes the address of one 16-byte row: lanes 0-7 the rows of matrix 0, lanes 8-15 those
// of matrix 1, and so on (x1 reads lanes 0-7, x2 lanes 0-15, x4 all 32; the other lanes' addresses are ignored).
// Register r[i] receives matrix i: lane t holds row t/4, columns 2*(t%4) (low half) and 2*(t%4)+1 (high half);
// with .trans it holds column t/4, rows 2*(t%4) and 2*(t%4)+1 instead. Which rows go where (and so which operand
// the result is) is the caller's decision. All 32 lanes must execute the call (.aligned).
//
// Each also takes the row address as a 32-bit shared-window address (tilec::device::shared_address, or the
// emitter's `smem_addr + offset`): the generated code computes addresses that way so that NVRTC keeps them in one
// register instead of a 64-bit generic pointer.
//
// The "memory" clobbers keep the compiler from moving plain C++ shared-memory stores past the load.
#pragma once

#include "tilec/device/types.cuh"

namespace tilec::device {

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned smem_row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_row_address)
               : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void *smem_row_address) {
  ldmatrix_x4(r, shared_address(smem_row_address));
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned smem_row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_row_address)
               : "memory");
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const void *smem_row_address) {
  ldmatrix_x4_trans(r, shared_address(smem_row_address));
}

__device__ __forceinline__ void ldmatrix_x2(unsigned (&r)[2], unsigned smem_row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_row_address)
               : "memory");
}

__device__ __forceinline__ void ldmatrix_x2(unsigned (&r)[2], const void *smem_row_address) {
  ldmatrix_x2(r, shared_address(smem_row_address));
}

__device__ __forceinline__ void ldmatrix_x2_trans(unsigned (&r)[2], unsigned smem_row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_row_address)
               : "memory");
}

__device__ __forceinline__ void ldmatrix_x2_trans(unsigned (&r)[2], const void *smem_row_address) {
  ldmatrix_x2_trans(r, shared_address(smem_row_address));
}

__device__ __forceinline__ void ldmatrix_x1(unsigned &r, unsigned smem_row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n"
               : "=r"(r)
               : "r"(smem_row_address)
               : "memory");
}

__device__ __forceinline__ void ldmatrix_x1(unsigned &r, const void *smem_row_address) {
  ldmatrix_x1(r, shared_address(smem_row_address));
}

__device__ __forceinline__ void ldmatrix_x1_trans(unsigned &r, unsigned smem_row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
               : "=r"(r)
               : "r"(smem_row_address)
               : "memory");
}

__device__ __forceinline__ void ldmatrix_x1_trans(unsigned &r, const void *smem_row_address) {
  ldmatrix_x1_trans(r, shared_address(smem_row_address));
}

} // namespace tilec::device
