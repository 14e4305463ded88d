// Hand-written CUDA C++ kernels used by the runtime's CPU tests (compile only), GPU tests (launched) and the runtime
// benchmark. They exercise every embedded device header: bf16 conversion, predicated 16-byte copies, inline-PTX
// mma.sync and fp32 scalar and vector atomics.
#pragma once

namespace tilec::testing {

// Split-K GEMM through an fp32 workspace, as emitted code for bf16 outputs with atomic accumulation will look:
//   bf16_to_f32:  workspace = f32(dst)
//   splitk_mma:   workspace += A·B, each block one 16x8 tile over a 64-wide K slice, fp32 atomics
//   f32_to_bf16:  dst = bf16(workspace)
// and an f32x4-atomic column sum and a kernel that needs more than 48 KB of dynamic shared memory.
inline const char *const kSplitKGemmSource = R"cuda(
#include "tilec/device/types.cuh"
#include "tilec/device/copy.cuh"
#include "tilec/device/atomics.cuh"
#include "tilec/device/mma_sm80.cuh"

using namespace tilec::device;

#define K_PER_BLOCK 64

// 8 elements per thread, one 16-byte load when the whole chunk is in bounds, element-wise at the tail.
extern "C" __global__ void bf16_to_f32(const bf16 *__restrict__ src, float *__restrict__ dst, long long count) {
  long long base = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * 8;
  if (base >= count)
    return;
  bool full = base + 8 <= count;
  uint4 raw = load16_pred(src + base, full);
  const bf16 *chunk = reinterpret_cast<const bf16 *>(&raw);
  for (int i = 0; i < 8; ++i) {
    if (full)
      dst[base + i] = to_float(chunk[i]);
    else if (base + i < count)
      dst[base + i] = to_float(src[base + i]);
  }
}

extern "C" __global__ void f32_to_bf16(const float *__restrict__ src, bf16 *__restrict__ dst, long long count) {
  long long base = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * 8;
  if (base >= count)
    return;
  bool full = base + 8 <= count;
  unsigned packed[4];
  for (int i = 0; i < 4; ++i) {
    float low = base + 2 * i < count ? src[base + 2 * i] : 0.f;
    float high = base + 2 * i + 1 < count ? src[base + 2 * i + 1] : 0.f;
    packed[i] = pack_bf16x2(low, high);
  }
  store16_pred(dst + base, make_uint4(packed[0], packed[1], packed[2], packed[3]), full);
  if (!full) {
    const bf16 *values = reinterpret_cast<const bf16 *>(packed);
    for (int i = 0; base + i < count; ++i)
      dst[base + i] = values[i];
  }
}

// One warp per block: C[M, N] += A[M, K] · B[K, N] for the 16x8 tile (blockIdx.y, blockIdx.x) over the K slice
// blockIdx.z. Out-of-bounds rows, columns and k are masked, so any M, N, K works.
extern "C" __global__ void splitk_mma(const bf16 *__restrict__ A, const bf16 *__restrict__ B, float *C, int M, int N,
                                      int K) {
  const int lane = threadIdx.x;
  const int row0 = blockIdx.y * 16;
  const int col0 = blockIdx.x * 8;
  const int kBegin = blockIdx.z * K_PER_BLOCK;
  const int kEnd = min(K, kBegin + K_PER_BLOCK);
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int k0 = kBegin; k0 < kEnd; k0 += 16) {
    unsigned a[4];
    unsigned b[2];
    for (int r = 0; r < 4; ++r) {
      float pair[2];
      for (int h = 0; h < 2; ++h) {
        MmaCoord c = mma_m16n8k16_a_coord(lane, 2 * r + h);
        int row = row0 + c.row;
        int k = k0 + c.col;
        pair[h] = (row < M && k < kEnd) ? to_float(A[(long long)row * K + k]) : 0.f;
      }
      a[r] = pack_bf16x2(pair[0], pair[1]);
    }
    for (int r = 0; r < 2; ++r) {
      float pair[2];
      for (int h = 0; h < 2; ++h) {
        MmaCoord c = mma_m16n8k16_b_coord(lane, 2 * r + h);
        int k = k0 + c.row;
        int col = col0 + c.col;
        pair[h] = (k < kEnd && col < N) ? to_float(B[(long long)k * N + col]) : 0.f;
      }
      b[r] = pack_bf16x2(pair[0], pair[1]);
    }
    float d[4];
    mma_m16n8k16_bf16_f32(d, a, b, acc);
    for (int i = 0; i < 4; ++i)
      acc[i] = d[i];
  }
  for (int h = 0; h < 2; ++h) {
    MmaCoord c = mma_m16n8k16_c_coord(lane, 2 * h);
    int row = row0 + c.row;
    int col = col0 + c.col;
    if (row >= M)
      continue;
    float *out = C + (long long)row * N + col;
    if (col + 1 < N && N % 2 == 0) {
      atomic_add_f32x2(out, make_float2(acc[2 * h], acc[2 * h + 1]));
    } else {
      if (col < N)
        atomic_add_f32(out, acc[2 * h]);
      if (col + 1 < N)
        atomic_add_f32(out + 1, acc[2 * h + 1]);
    }
  }
}

// out[64] += column sums of x[R, 64]; each thread adds one float4 of one row with a single vector atomic.
extern "C" __global__ void column_sum_f32x4(const float *__restrict__ x, float *out, long long rows) {
  long long index = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  long long row = index / 16;
  int quad = static_cast<int>(index % 16);
  if (row >= rows)
    return;
  float4 value = *reinterpret_cast<const float4 *>(x + row * 64 + quad * 4);
  atomic_add_f32x4(out + quad * 4, value);
}

// out = reverse(x) through dynamic shared memory: one block, n floats of shared memory (more than 48 KB when
// n > 12288, which needs the runtime's opt-in).
extern "C" __global__ void reverse_through_shared(const float *__restrict__ x, float *__restrict__ out, int n) {
  extern __shared__ float buffer[];
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    buffer[i] = x[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    out[i] = buffer[n - 1 - i];
}
)cuda";

} // namespace tilec::testing

#include "tilec/runtime/Module.h"

namespace tilec::testing {

// The launch plan of the split-K GEMM: c (bf16, in/out) += a · b through an fp32 workspace.
inline runtime::EntrySpec splitKGemmEntry(int cubin = 0) {
  using namespace tilec::runtime;
  EntrySpec spec;
  spec.name = "splitk_gemm";
  spec.signature = Signature({{"a", DType::BF16, {"M", "K"}, 2},
                              {"b", DType::BF16, {"K", "N"}, 2},
                              {"c", DType::BF16, {"M", "N"}, 16}});
  const Expr elements = Expr::parse("M * N");
  const Expr chunks = ceildiv(elements, 8 * 256);
  int workspace = spec.plan.alloc(elements * 4);
  spec.plan.launch({cubin, "bf16_to_f32", {chunks, 1, 1}, {256, 1, 1}, 0,
                    {KernelArg::tensor(2), KernelArg::workspace(workspace), KernelArg::i64(elements)}});
  spec.plan.launch({cubin, "splitk_mma",
                    {Expr::parse("ceildiv(N, 8)"), Expr::parse("ceildiv(M, 16)"), Expr::parse("ceildiv(K, 64)")},
                    {32, 1, 1}, 0,
                    {KernelArg::tensor(0), KernelArg::tensor(1), KernelArg::workspace(workspace),
                     KernelArg::i32(Expr::symbol("M")), KernelArg::i32(Expr::symbol("N")),
                     KernelArg::i32(Expr::symbol("K"))}});
  spec.plan.launch({cubin, "f32_to_bf16", {chunks, 1, 1}, {256, 1, 1}, 0,
                    {KernelArg::workspace(workspace), KernelArg::tensor(2), KernelArg::i64(elements)}});
  spec.plan.free(workspace);
  return spec;
}

} // namespace tilec::testing
