// Hopper's warpgroup mma (wgmma.mma_async, sm_90a): the pieces emitted gemms share. The mma instructions themselves
// are emitted per shape by the compiler (their operand lists are as long as the accumulator).
//
// A warpgroup (4 consecutive warps) issues each wgmma together; operands in shared memory are described by 64-bit
// descriptors of the canonical 128-byte-swizzle layout: 8 rows of 128 bytes per 1024-byte atom, the 16-byte chunk
// index XORed with the row within the atom, atoms 1024-byte aligned (tile-plan-shared-memory places the tiles so).
#pragma once

#include "tilec/device/types.cuh"

namespace tilec::device {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// A shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start address, leading and stride byte
// offsets (each in 16-byte units, 14 bits), base offset 0 (atoms are aligned), layout "128-byte swizzle" (1 << 62).
// K-major operands: `stride_bytes` is the distance between 8-row groups (1024 for dense atoms), `leading_bytes` is
// unused. MN-major operands: `leading_bytes` is the distance between 128-byte column panels along M or N,
// `stride_bytes` the distance between groups of 8 rows along K.
__device__ __forceinline__ unsigned long long wgmma_descriptor(unsigned address, unsigned leading_bytes,
                                                                unsigned stride_bytes) {
  return static_cast<unsigned long long>((address & 0x3FFFFu) >> 4) |
         (static_cast<unsigned long long>((leading_bytes >> 4) & 0x3FFFu) << 16) |
         (static_cast<unsigned long long>((stride_bytes >> 4) & 0x3FFFu) << 32) | (1ull << 62);
}

// Orders this thread's earlier register accesses (accumulators zeroed or rescaled, A fragments written) before the
// wgmma that follows.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

__device__ __forceinline__ void wgmma_commit_group() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }

template <int N>
__device__ __forceinline__ void wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// An empty asm that claims to read and write `r`: after wgmma_wait_group, the compiler may not move reads of an
// accumulator register above the wait (the hardware writes them asynchronously; the compiler cannot know).
__device__ __forceinline__ void wgmma_fence_operand(float &r) { asm volatile("" : "+f"(r)::"memory"); }

// Makes this thread's generic-proxy writes to shared memory (stores, cp.async) visible to later async-proxy reads
// (wgmma's operands); emitted before every barrier of a kernel that uses wgmma.
__device__ __forceinline__ void fence_shared_for_wgmma() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

#else

// Other archs run the mma.sync branch of the same kernels; the waits and fences around it are no-ops there.
template <int N>
__device__ __forceinline__ void wgmma_wait_group() {}
__device__ __forceinline__ void wgmma_fence_operand(float &) {}
__device__ __forceinline__ void fence_shared_for_wgmma() {}

#endif

} // namespace tilec::device
