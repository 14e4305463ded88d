// Asynchronous global -> shared copies (cp.async, sm_80 and later), the building block of pipelined loops.
//
// Copies are grouped: cp_async_commit() closes the group of every cp_async_16 issued since the last commit, and
// cp_async_wait<N>() blocks until at most N of this thread's groups are still in flight. Completion is per thread:
// other threads see the data only after a barrier that follows the wait.
#pragma once

#include "tilec/device/types.cuh"

namespace tilec::device {

// 16 bytes, both addresses 16-byte aligned; .cg caches in L2 only (the data goes to shared memory, not L1).
// When !predicate the source size is 0: nothing is read from `gmem_src` (which may then point out of bounds) and
// the 16 destination bytes are zero-filled, which is what masked tile loads at a tensor's edge need.
__device__ __forceinline__ void cp_async_16(void *smem_dst, const void *gmem_src, bool predicate) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
               :
               : "r"(shared_address(smem_dst)), "l"(gmem_src), "r"(predicate ? 16 : 0)
               : "memory");
}

// The same with the destination as a 32-bit shared-window address.
__device__ __forceinline__ void cp_async_16(unsigned smem_dst, const void *gmem_src, bool predicate) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" : : "r"(smem_dst), "l"(gmem_src), "r"(predicate ? 16 : 0) : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// The "memory" clobber stops the compiler from hoisting shared-memory reads of the copied data above the wait.
template <int N> __device__ __forceinline__ void cp_async_wait() {
  static_assert(N >= 0, "cp.async.wait_group needs a non-negative group count");
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

} // namespace tilec::device
