// The device library compiles with NVRTC, without a GPU: two kernels call every function of every header, for
// sm_90a and sm_80 (where the bf16 atomics and f32 vector atomics take their pre-Hopper paths), with no spills.
// What the functions compute is checked on a GPU, in tests/gpu/DeviceLibraryGpuTest.cpp.
#include "tilec/runtime/Compiler.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <string>

using namespace tilec::runtime;

namespace {

const char *const kEveryDeviceFunction = R"cuda(
#include "tilec/device/atomic_extrema.cuh"
#include "tilec/device/atomics.cuh"
#include "tilec/device/copy.cuh"
#include "tilec/device/cp_async.cuh"
#include "tilec/device/ldmatrix.cuh"
#include "tilec/device/mma_sm80.cuh"
#include "tilec/device/reduce.cuh"
#include "tilec/device/types.cuh"

using namespace tilec::device;

// Every result reaches memory, so nothing is dead code.
extern "C" __global__ void __launch_bounds__(128) every_function(const unsigned *__restrict__ in, unsigned *out,
                                                                 float *f32, int *i32, double *f64, bf16 *b16,
                                                                 f16 *h16, int n) {
  __shared__ __align__(16) unsigned short tile[2][16 * 16];
  const int lane = threadIdx.x & 31;
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const bool inside = t < n;

  // types.cuh
  float x = __uint_as_float(in[t]);
  unsigned packed = pack_bf16x2(to_bf16(x), to_bf16(-x)) ^ pack_bf16x2(x, 2.f * x) ^ pack_f16x2(x, -x) ^
                    pack_f16x2(to_f16(x), to_f16(x + 1.f)) ^ pack2(to_bf16(x), to_bf16(x)) ^
                    pack2(to_f16(x), to_f16(x));
  float2 unpacked = unpack_bf16x2(packed);
  float2 unpacked16 = unpack_f16x2(packed);
  x += unpacked.x + unpacked.y + unpacked16.x + unpacked16.y + to_float(to_f16(x)) + to_float(to_bf16(x));

  // copy.cuh
  uint4 v16 = load16_pred(in + 4 * t, inside);
  uint2 v8 = load8_pred(in + 2 * t, inside);
  unsigned v4 = load4_pred(in + t, inside);
  store16_pred(out + 4 * t, v16, inside);
  store8_pred(out + 2 * t, v8, inside);
  store4_pred(out + t, v4, inside);
  store16(out + 4 * t + 64, load16(in + 4 * t + 64));
  copy_bf16x8_pred(b16 + 8 * t, reinterpret_cast<const bf16 *>(in) + 8 * t, inside);

  // cp_async.cuh: two groups into the two tiles.
  cp_async_16(&tile[0][8 * (threadIdx.x % 32)], in + 4 * t, inside);
  cp_async_commit();
  cp_async_16(&tile[1][8 * (threadIdx.x % 32)], in + 4 * t + 128, !inside);
  cp_async_commit();
  cp_async_wait<1>();
  cp_async_wait<0>();
  cp_async_wait_all();
  __syncthreads();
  uint4 s = load16_shared(&tile[0][8 * ((threadIdx.x + 1) % 32)]);
  __syncthreads();
  store16_shared(&tile[1][8 * (threadIdx.x % 32)], s);
  __syncthreads();

  // ldmatrix.cuh: lane l addresses row l % 16 of tile 0, column block l / 16.
  const unsigned short *row = &tile[0][(lane % 16) * 16 + (lane / 16) * 8];
  unsigned a[4], at[4], b[2], bt[2], c1, c1t;
  ldmatrix_x4(a, row);
  ldmatrix_x4_trans(at, row);
  ldmatrix_x2(b, row);
  ldmatrix_x2_trans(bt, row);
  ldmatrix_x1(c1, row);
  ldmatrix_x1_trans(c1t, row);

  // mma_sm80.cuh
  float acc[4] = {x, x, x, x};
  float d[4], e[4];
  mma_m16n8k16_bf16_f32(d, a, b, acc);
  mma_m16n8k16_f16_f32(e, at, bt, d);
  MmaCoord ca = mma_m16n8k16_a_coord(lane, 3), cb = mma_m16n8k16_b_coord(lane, 1),
           cc = mma_m16n8k16_c_coord(lane, 2);

  // reduce.cuh
  float r = warp_reduce_sum_f32(e[0], 32) + warp_reduce_max_f32(e[1], 16) + warp_reduce_min_f32(e[2], 8) +
            reduce_sum(e[3], x) + reduce_max(e[3], x) + reduce_min(e[3], x) + shfl_xor(x, 1);
  int ri = warp_reduce_sum_i32(int(c1), 32) + warp_reduce_max_i32(int(c1t), 4) + warp_reduce_min_i32(int(v4), 2) +
           reduce_sum(ca.row, cb.col) + reduce_max(ca.col, cc.row) + reduce_min(cb.row, cc.col) +
           shfl_xor(int(packed), 2);

  // atomics.cuh
  atomic_add_f32(f32, r);
  atomic_add_f32x2(f32 + 2, make_float2(r, x));
  atomic_add_f32x4(f32 + 4, make_float4(r, x, e[0], e[1]));
  atomic_add_bf16(b16, r);
  atomic_add_bf16x2(b16 + 2, r, x);
  atomic_add_f16(h16, r);
  atomic_add_f16x2(h16 + 2, r, x);
  atomic_add_f64(f64, double(r));
  int old = atomic_add_i32(i32, ri);
  old += atomic_add_i32_release(i32 + 1, ri);
  old += atomic_add_i32_acq_rel(i32 + 2, ri);
  old += atomic_add_i32_seq_cst(i32 + 3, ri);
  float oldf = atomic_add_f32_release(f32 + 8, r) + atomic_add_f32_acq_rel(f32 + 9, r) +
               atomic_add_f32_seq_cst(f32 + 10, r);
  out[t + 1024] = unsigned(old) ^ __float_as_uint(oldf) ^ a[0] ^ a[1] ^ a[2] ^ a[3] ^ at[3] ^ b[1] ^ bt[0];
}

// atomic_extrema.cuh: every element type, both combiners, the orders. A kernel of its own: next to everything above,
// ptxas keeps every_function at 32 registers and spills a few bytes around the compare-and-swap loops.
extern "C" __global__ void __launch_bounds__(128) every_extremum(const float *in, float *f32, int *i32, double *f64,
                                                                 bf16 *b16, f16 *h16) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const float r = in[t], x = in[t + 128];
  atomic_max(f32, r);
  atomic_min<rmw_order::seq_cst>(f32 + 1, x);
  atomic_max<rmw_order::release>(f64, double(r));
  atomic_min(b16, r);
  atomic_max<rmw_order::acq_rel>(h16, x);
  atomic_max(i32, t);
  atomic_min<rmw_order::release>(i32 + 1, -t);
}
)cuda";

bool isElf(const std::vector<char> &image) {
  return image.size() > 64 && std::memcmp(image.data(), "\x7f" "ELF", 4) == 0;
}

void checkCompiles(const std::string &arch) {
  Compiler compiler;
  Cubin cubin = compiler.compile(kEveryDeviceFunction, {arch, {}, "device_library.cu"});
  INFO("NVRTC log for " << arch << ":\n" << cubin.log);
  if (cubin.log.find("served from the CUDA compute cache") != std::string::npos)
    FAIL("NVRTC skipped ptxas (CUDA compute cache): run this test with CUDA_CACHE_DISABLE=1, as ctest does");
  CHECK(cubin.arch == arch);
  REQUIRE(isElf(cubin.image));
  for (const char *function : {"every_function", "every_extremum"}) {
    INFO("function " << function);
    auto info = cubin.ptxasInfo(function);
    REQUIRE(info);
    CHECK(info->registers > 0);
    CHECK(info->spillStoreBytes == 0);
    CHECK(info->spillLoadBytes == 0);
    CHECK(info->stackFrameBytes == 0);
  }
}

} // namespace

TEST_CASE("every device library function compiles for sm_90a without spills", "[compiler][device]") {
  checkCompiles("sm_90a");
}

TEST_CASE("every device library function compiles for sm_80 without spills", "[compiler][device]") {
  checkCompiles("sm_80");
}

TEST_CASE("the new device headers are embedded with the PTX they promise", "[compiler][device]") {
  auto contents = [](std::string_view name) -> std::string_view {
    for (const DeviceHeader &header : Compiler::deviceHeaders())
      if (header.includeName == name)
        return header.contents;
    return {};
  };
  CHECK(contents("tilec/device/ldmatrix.cuh").find("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") !=
        std::string_view::npos);
  CHECK(contents("tilec/device/cp_async.cuh").find("cp.async.cg.shared.global") != std::string_view::npos);
  CHECK(contents("tilec/device/reduce.cuh").find("max.NaN.f32") != std::string_view::npos);
  CHECK(contents("tilec/device/mma_sm80.cuh").find("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") !=
        std::string_view::npos);
  // seq_cst read-modify-writes: a full fence.sc before the atom (the PTX atomics ABI).
  CHECK(contents("tilec/device/atomics.cuh").find("fence.sc.gpu;") != std::string_view::npos);
  CHECK(contents("tilec/device/atomic_extrema.cuh").find("atomicCAS") != std::string_view::npos);
}
