// The device library's building blocks on a real GPU, each against its definition: ldmatrix fragments against the
// PTX ISA's per-lane element mapping, mma.sync (bf16 and f16) against a float64 reference, cp.async zero fill,
// warp reductions against a host simulation of the same butterfly, bf16x2 / f16x2 / i32 / f64 and memory-ordered
// atomics with many threads on the same addresses, predicated 4- and 8-byte copies, f16 / bf16 packing.
// Kernels are compiled with NVRTC for the device's arch and launched directly through the driver. Each test passes
// with "SKIPPED: no CUDA driver" elsewhere.
#include "GpuTestSupport.h"
#include "tilec/runtime/Compiler.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace tilec::runtime;
using namespace tilec::testing;

namespace {

const char *const kDeviceLibraryKernels = R"cuda(
#include "tilec/device/atomic_extrema.cuh"
#include "tilec/device/atomics.cuh"
#include "tilec/device/copy.cuh"
#include "tilec/device/cp_async.cuh"
#include "tilec/device/ldmatrix.cuh"
#include "tilec/device/mma_sm80.cuh"
#include "tilec/device/reduce.cuh"
#include "tilec/device/types.cuh"

using namespace tilec::device;

// One warp. tile[r][c] = 1000 + 16 r + c. Lane l passes row l % 16, column block l / 16, so for x4 the matrices
// are 0: rows 0-7, cols 0-7; 1: rows 8-15, cols 0-7; 2: rows 0-7, cols 8-15; 3: rows 8-15, cols 8-15 (x2 and x1
// use the first two / the first). Per lane: x4, x4.trans, x2, x2.trans, x1, x1.trans = 14 registers.
extern "C" __global__ void ldmatrix_fragments(unsigned *out) {
  __shared__ __align__(16) unsigned short tile[16 * 16];
  const int lane = threadIdx.x;
  for (int i = lane; i < 256; i += 32)
    tile[i] = static_cast<unsigned short>(1000 + i);
  __syncthreads();
  const unsigned short *row = &tile[(lane % 16) * 16 + (lane / 16) * 8];
  unsigned r4[4], t4[4], r2[2], t2[2], r1, t1;
  ldmatrix_x4(r4, row);
  ldmatrix_x4_trans(t4, row);
  ldmatrix_x2(r2, row);
  ldmatrix_x2_trans(t2, row);
  ldmatrix_x1(r1, row);
  ldmatrix_x1_trans(t1, row);
  unsigned *o = out + lane * 14;
  for (int i = 0; i < 4; ++i) {
    o[i] = r4[i];
    o[4 + i] = t4[i];
  }
  o[8] = r2[0];
  o[9] = r2[1];
  o[10] = t2[0];
  o[11] = t2[1];
  o[12] = r1;
  o[13] = t1;
}

// One warp: D = A B + C with A 16x16 and B 16x8 (K x N) row-major 16-bit values, C and D 16x8 fp32. The fragments
// are loaded twice: element-wise through the coordinate maps (D in out[0..128)), and with ldmatrix from shared
// memory, A by x4 and B by x2.trans (D in out[128..256)).
template <bool IsF16>
__device__ void mma_both_ways(const unsigned short *A, const unsigned short *B, const float *C, float *D) {
  __shared__ __align__(16) unsigned short sa[16 * 16];
  __shared__ __align__(16) unsigned short sb[16 * 8];
  const int lane = threadIdx.x;
  for (int i = lane; i < 256; i += 32)
    sa[i] = A[i];
  for (int i = lane; i < 128; i += 32)
    sb[i] = B[i];
  __syncthreads();
  unsigned a[4], b[2];
  float c[4], d[4], d2[4];
  for (int r = 0; r < 4; ++r) {
    MmaCoord lo = mma_m16n8k16_a_coord(lane, 2 * r), hi = mma_m16n8k16_a_coord(lane, 2 * r + 1);
    a[r] = unsigned(A[lo.row * 16 + lo.col]) | (unsigned(A[hi.row * 16 + hi.col]) << 16);
  }
  for (int r = 0; r < 2; ++r) {
    MmaCoord lo = mma_m16n8k16_b_coord(lane, 2 * r), hi = mma_m16n8k16_b_coord(lane, 2 * r + 1);
    b[r] = unsigned(B[lo.row * 8 + lo.col]) | (unsigned(B[hi.row * 8 + hi.col]) << 16);
  }
  for (int e = 0; e < 4; ++e) {
    MmaCoord cc = mma_m16n8k16_c_coord(lane, e);
    c[e] = C[cc.row * 8 + cc.col];
  }
  unsigned la[4], lb[2];
  ldmatrix_x4(la, &sa[(lane % 16) * 16 + (lane / 16) * 8]);
  ldmatrix_x2_trans(lb, &sb[(lane % 16) * 8]);
  if (IsF16) {
    mma_m16n8k16_f16_f32(d, a, b, c);
    mma_m16n8k16_f16_f32(d2, la, lb, c);
  } else {
    mma_m16n8k16_bf16_f32(d, a, b, c);
    mma_m16n8k16_bf16_f32(d2, la, lb, c);
  }
  for (int e = 0; e < 4; ++e) {
    MmaCoord cc = mma_m16n8k16_c_coord(lane, e);
    D[cc.row * 8 + cc.col] = d[e];
    D[128 + cc.row * 8 + cc.col] = d2[e];
  }
}

extern "C" __global__ void mma_bf16(const unsigned short *A, const unsigned short *B, const float *C, float *D) {
  mma_both_ways<false>(A, B, C, D);
}

extern "C" __global__ void mma_f16(const unsigned short *A, const unsigned short *B, const float *C, float *D) {
  mma_both_ways<true>(A, B, C, D);
}

// 64 threads, two copy groups: thread i copies chunk i (group 1) and chunk 64 + i (group 2) of src, or zero-fills
// both when i % 3 == 0 -- then with a source address 64 GiB past the buffer, which must not be read. The shared
// buffers start as garbage. out: [0, 64) group 1 after wait<1>, [64, 128) group 2 after wait_all, [128, 192)
// group 1 as the neighbouring thread copied it (after a barrier).
extern "C" __global__ void cp_async_zero_fill(const uint4 *src, uint4 *out) {
  __shared__ uint4 first[64], second[64];
  const int i = threadIdx.x;
  first[i] = make_uint4(0xdeadbeefu, 0xdeadbeefu, 0xdeadbeefu, 0xdeadbeefu);
  second[i] = first[i];
  const bool copy = i % 3 != 0;
  const char *far = reinterpret_cast<const char *>(src) + (1ull << 36);
  cp_async_16(&first[i], copy ? static_cast<const void *>(src + i) : far, copy);
  cp_async_commit();
  cp_async_16(&second[i], copy ? static_cast<const void *>(src + 64 + i) : far, copy);
  cp_async_commit();
  cp_async_wait<1>();
  out[i] = first[i];
  cp_async_wait_all();
  out[64 + i] = second[i];
  __syncthreads();
  out[128 + i] = first[(i + 1) % 64];
}

// One warp per block; block b reduces row b of the inputs over every width 1..32. Output [b][width k][op][lane]
// with ops sum, max, min.
extern "C" __global__ void warp_reductions(const float *xf, const int *xi, float *of, int *oi) {
  const int lane = threadIdx.x;
  const float v = xf[blockIdx.x * 32 + lane];
  const int w = xi[blockIdx.x * 32 + lane];
  float *f = of + blockIdx.x * 6 * 3 * 32;
  int *n = oi + blockIdx.x * 6 * 3 * 32;
  for (int k = 0; k < 6; ++k) {
    const int width = 1 << k;
    f[(k * 3 + 0) * 32 + lane] = warp_reduce_sum_f32(v, width);
    f[(k * 3 + 1) * 32 + lane] = warp_reduce_max_f32(v, width);
    f[(k * 3 + 2) * 32 + lane] = warp_reduce_min_f32(v, width);
    n[(k * 3 + 0) * 32 + lane] = warp_reduce_sum_i32(w, width);
    n[(k * 3 + 1) * 32 + lane] = warp_reduce_max_i32(w, width);
    n[(k * 3 + 2) * 32 + lane] = warp_reduce_min_i32(w, width);
  }
}

// Thread t adds to slot t % 64, so each of the 64 slots is hit by threads / 64 threads from many blocks. Every
// partial sum is exactly representable, so the results are exact in any order.
extern "C" __global__ void atomics_on_shared_slots(bf16 *b16x2, f16 *h16x2, bf16 *b16, f16 *h16, int *i32,
                                                   int *oldRelaxed, int *oldSeqCst, float *f32, double *f64,
                                                   int threads) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= threads)
    return;
  const int slot = t % 64;
  atomic_add_bf16x2(b16x2 + 2 * slot, 1.f, -0.5f);
  atomic_add_f16x2(h16x2 + 2 * slot, 1.f, -0.5f);
  atomic_add_bf16(b16 + slot, 1.f);
  atomic_add_f16(h16 + slot, -0.25f);
  oldRelaxed[t] = atomic_add_i32(i32 + slot, 1);
  atomic_add_i32(i32 + 64 + slot, slot + 1);
  atomic_add_i32_release(i32 + 128 + slot, 3);
  atomic_add_i32_acq_rel(i32 + 192 + slot, -5);
  oldSeqCst[t] = atomic_add_i32_seq_cst(i32 + 256 + slot, 1);
  atomic_add_f32_release(f32 + slot, 1.f);
  atomic_add_f32_acq_rel(f32 + 64 + slot, 0.5f);
  atomic_add_f32_seq_cst(f32 + 128 + slot, -2.f);
  atomic_add_f64(f64 + slot, 0.125);
}

// atomic_extrema.cuh: thread t combines values[t] into slot t % 16 of every destination, from many blocks at once,
// and into a block-shared slot (written out at the end: shared-memory addresses take the same path). Slot 3's values
// hold a NaN, slot 5's are only +0.0 and -0.0. The integers are a fixed function of t.
extern "C" __global__ void extrema_under_contention(const float *values, float *f32max, float *f32min,
                                                    double *f64max, bf16 *b16max, f16 *h16min, int *i32max,
                                                    int *i32min, float *sharedMax, int threads) {
  __shared__ float slots[16];
  if (threadIdx.x < 16)
    slots[threadIdx.x] = __int_as_float(0xff800000); // -inf
  __syncthreads();
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < threads) {
    const int slot = t % 16;
    const float v = values[t];
    const int k = (t * 7919) % 10007 - 5000;
    atomic_max(f32max + slot, v);
    atomic_min<rmw_order::seq_cst>(f32min + slot, v);
    atomic_max<rmw_order::release>(f64max + slot, double(v));
    atomic_max(b16max + slot, v);
    atomic_min<rmw_order::acq_rel>(h16min + slot, v);
    atomic_max(i32max + slot, k);
    atomic_min(i32min + slot, k);
    atomic_max(&slots[slot], v);
  }
  __syncthreads();
  if (threadIdx.x < 16)
    atomic_max(sharedMax + threadIdx.x, slots[threadIdx.x]);
}

// 32 threads. out starts as 0xaaaaaaaa: [0, 64) 8-byte copies, [64, 96) 4-byte copies, loads masked for
// i % 4 == 1, stores masked for i % 4 == 2; [96, 104) packing and rounding results.
extern "C" __global__ void small_copies_and_types(const unsigned *in, unsigned *out) {
  const int i = threadIdx.x;
  const bool load = i % 4 != 1, store = i % 4 != 2;
  store8_pred(out + 2 * i, load8_pred(in + 2 * i, load), store);
  store4_pred(out + 64 + i, load4_pred(in + 64 + i, load), store);
  if (i == 0) {
    out[96] = pack_f16x2(1.0f, -2.0f);
    out[97] = pack2(to_f16(0.5f), to_f16(3.0f));
    out[98] = pack2(to_bf16(1.0f), to_bf16(-2.0f));
    out[99] = __half_as_ushort(to_f16(1.f + 1.f / 2048));
    out[100] = __half_as_ushort(to_f16(1.f + 3.f / 2048));
    float2 unpacked = unpack_f16x2(0xc0003c00u);
    out[101] = __float_as_uint(unpacked.x);
    out[102] = __float_as_uint(unpacked.y);
    out[103] = __float_as_uint(to_float(__ushort_as_half(0x3555)));
  }
}
)cuda";

// The compiled kernels, loaded once for the whole binary.
class DeviceLibraryKernels {
public:
  explicit DeviceLibraryKernels(std::shared_ptr<Driver> driver) : driver_(std::move(driver)) {
    Compiler compiler;
    cubin_ = compiler.compile(kDeviceLibraryKernels,
                              {driver_->deviceArch(driver_->currentDevice()), {}, "device_library_gpu.cu"});
    driver_->check(driver_->api().cuModuleLoadData(&module_, cubin_.image.data()), "cuModuleLoadData");
  }
  ~DeviceLibraryKernels() { driver_->api().cuModuleUnload(module_); }

  // Launches a 1-D grid and waits for it.
  template <typename... Args> void launch(const char *name, unsigned grid, unsigned block, Args... args) {
    cu::Function function = nullptr;
    driver_->check(driver_->api().cuModuleGetFunction(&function, module_, name), "cuModuleGetFunction");
    void *params[] = {static_cast<void *>(&args)...};
    driver_->check(driver_->api().cuLaunchKernel(function, grid, 1, 1, block, 1, 1, 0, nullptr, params, nullptr),
                   "cuLaunchKernel");
    driver_->check(driver_->api().cuCtxSynchronize(), name);
  }

  const Cubin &cubin() const { return cubin_; }

private:
  std::shared_ptr<Driver> driver_;
  Cubin cubin_;
  cu::ModuleHandle module_ = nullptr;
};

DeviceLibraryKernels &kernels(const std::shared_ptr<Driver> &driver) {
  static DeviceLibraryKernels instance(driver);
  return instance;
}

float fromF16(std::uint16_t bits) {
  const int exponent = (bits >> 10) & 31, mantissa = bits & 1023;
  float magnitude = exponent == 0    ? std::ldexp(float(mantissa), -24)
                    : exponent == 31 ? (mantissa ? std::numeric_limits<float>::quiet_NaN()
                                                 : std::numeric_limits<float>::infinity())
                                     : std::ldexp(float(1024 + mantissa), exponent - 25);
  return (bits & 0x8000) ? -magnitude : magnitude;
}

std::uint32_t bitsOf(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

float nanPropagatingMax(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<float>::quiet_NaN();
  if (a == b) // +0 and -0: +0 is the larger
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

float nanPropagatingMin(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<float>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

// The butterfly of warp_reduce_* on the host, in the same order and precision.
template <typename T, typename Combine> std::vector<T> butterfly(std::vector<T> values, int width, Combine combine) {
  for (int mask = 1; mask < width; mask <<= 1) {
    std::vector<T> next(values.size());
    for (int lane = 0; lane < 32; ++lane)
      next[lane] = combine(values[lane], values[lane ^ mask]);
    values = next;
  }
  return values;
}

void checkMma(Driver &driver, DeviceLibraryKernels &kernels, bool isF16) {
  std::mt19937 rng(isF16 ? 16 : 8);
  // Random values in [0.25, 4) of either sign, so products are exact in fp32 and every lane's data matters.
  auto random16 = [&]() -> std::uint16_t {
    std::uint16_t sign = std::uint16_t(rng() & 1) << 15;
    if (isF16)
      return sign | std::uint16_t((13 + rng() % 4) << 10) | std::uint16_t(rng() % 1024);
    return sign | std::uint16_t((125 + rng() % 4) << 7) | std::uint16_t(rng() % 128);
  };
  auto decode = [&](std::uint16_t bits) { return isF16 ? fromF16(bits) : fromBf16(bits); };
  std::vector<std::uint16_t> a(256), b(128);
  std::vector<float> c(128);
  for (auto &value : a)
    value = random16();
  for (auto &value : b)
    value = random16();
  std::uniform_real_distribution<float> uniform(-4.f, 4.f);
  for (float &value : c)
    value = uniform(rng);

  DeviceBuffer deviceA(driver, 512), deviceB(driver, 256), deviceC(driver, 512), deviceD(driver, 1024);
  deviceA.upload(a);
  deviceB.upload(b);
  deviceC.upload(c);
  deviceD.upload(std::vector<float>(256, std::numeric_limits<float>::quiet_NaN()));
  kernels.launch(isF16 ? "mma_f16" : "mma_bf16", 1, 32, deviceA.data(), deviceB.data(), deviceC.data(), deviceD.data());
  std::vector<float> d = deviceD.download<float>();
  for (int way = 0; way < 2; ++way)
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 8; ++j) {
        double expected = c[i * 8 + j], magnitude = std::fabs(c[i * 8 + j]);
        for (int k = 0; k < 16; ++k) {
          double product = double(decode(a[i * 16 + k])) * double(decode(b[k * 8 + j]));
          expected += product;
          magnitude += std::fabs(product);
        }
        float actual = d[way * 128 + i * 8 + j];
        INFO((isF16 ? "f16" : "bf16") << (way ? " via ldmatrix" : " via coordinate maps") << ": D[" << i << "]["
                                      << j << "] = " << actual << ", expected " << expected);
        // A wrong fragment layout is off by O(magnitude); fp32 accumulation by a few ulps of it.
        CHECK(std::fabs(actual - expected) <= 1e-5 * magnitude);
      }
}

} // namespace

TEST_CASE("the device library test kernels compile for sm_90a and sm_80 (NVRTC, no GPU needed)", "[gpu][device]") {
  Compiler compiler;
  for (const char *arch : {"sm_90a", "sm_80"}) {
    Cubin cubin = compiler.compile(kDeviceLibraryKernels, {arch, {}, "device_library_gpu.cu"});
    INFO(arch << " log:\n" << cubin.log);
    for (const char *kernel : {"ldmatrix_fragments", "mma_bf16", "mma_f16", "cp_async_zero_fill", "warp_reductions",
                               "atomics_on_shared_slots", "small_copies_and_types"})
      CHECK(cubin.ptxasInfo(kernel));
  }
}

TEST_CASE("ldmatrix x4/x2/x1 and their .trans forms give the PTX fragment layout", "[gpu][device]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  DeviceBuffer out(*driver, 32 * 14 * 4);
  kernels(driver).launch("ldmatrix_fragments", 1, 32, out.data());
  std::vector<std::uint32_t> registers = out.download<std::uint32_t>();
  auto tile = [](int row, int col) { return std::uint32_t(1000 + row * 16 + col); };
  // Matrix m of x4 covers rows (m % 2) * 8.., cols (m / 2) * 8.. of the tile (see the kernel).
  auto element = [&](int matrix, int row, int col) { return tile((matrix % 2) * 8 + row, (matrix / 2) * 8 + col); };
  // PTX ISA, ldmatrix: lane t holds row t / 4, columns 2 (t % 4) and +1 of each matrix; .trans transposes.
  auto plain = [&](int matrix, int lane) {
    return element(matrix, lane / 4, 2 * (lane % 4)) | element(matrix, lane / 4, 2 * (lane % 4) + 1) << 16;
  };
  auto transposed = [&](int matrix, int lane) {
    return element(matrix, 2 * (lane % 4), lane / 4) | element(matrix, 2 * (lane % 4) + 1, lane / 4) << 16;
  };
  int mismatches = 0;
  for (int lane = 0; lane < 32; ++lane) {
    const std::uint32_t *r = &registers[lane * 14];
    std::uint32_t expected[14] = {plain(0, lane),      plain(1, lane),      plain(2, lane),      plain(3, lane),
                                  transposed(0, lane), transposed(1, lane), transposed(2, lane), transposed(3, lane),
                                  plain(0, lane),      plain(1, lane),      transposed(0, lane), transposed(1, lane),
                                  plain(0, lane),      transposed(0, lane)};
    for (int i = 0; i < 14; ++i) {
      if (r[i] != expected[i]) {
        ++mismatches;
        UNSCOPED_INFO("lane " << lane << " register " << i << ": got 0x" << std::hex << r[i] << ", expected 0x"
                              << expected[i] << std::dec);
      }
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("mma m16n8k16 bf16 and f16 match a float64 reference, fragments loaded either way", "[gpu][device]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  checkMma(*driver, kernels(driver), false);
  checkMma(*driver, kernels(driver), true);
}

TEST_CASE("cp.async with a false predicate zero-fills without reading the source", "[gpu][device]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  std::vector<std::uint32_t> src(128 * 4);
  for (std::size_t i = 0; i < src.size(); ++i)
    src[i] = 0x10000000u + std::uint32_t(i);
  DeviceBuffer deviceSrc(*driver, src.size() * 4), out(*driver, 192 * 16);
  deviceSrc.upload(src);
  out.upload(std::vector<std::uint32_t>(192 * 4, 0x55555555u));
  kernels(driver).launch("cp_async_zero_fill", 1, 64, deviceSrc.data(), out.data());
  std::vector<std::uint32_t> result = out.download<std::uint32_t>();
  int mismatches = 0;
  for (int slot = 0; slot < 192; ++slot) {
    int thread = slot < 128 ? slot % 64 : (slot % 64 + 1) % 64;
    int chunk = slot < 64 ? thread : slot < 128 ? 64 + thread : thread;
    for (int word = 0; word < 4; ++word) {
      std::uint32_t expected = thread % 3 == 0 ? 0u : src[chunk * 4 + word];
      if (result[slot * 4 + word] != expected) {
        ++mismatches;
        UNSCOPED_INFO("out[" << slot << "] word " << word << ": got 0x" << std::hex << result[slot * 4 + word]
                             << ", expected 0x" << expected << std::dec);
      }
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("warp reductions match the same butterfly on the host, NaN propagates", "[gpu][device]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  std::mt19937 rng(32);
  std::uniform_real_distribution<float> uniform(-100.f, 100.f);
  std::uniform_int_distribution<int> integers(-100000, 100000);
  // Row 0: random. Row 1: a NaN in lane 5, signed zeros in lanes 16-23, random elsewhere.
  std::vector<float> xf(64);
  std::vector<int> xi(64);
  for (int i = 0; i < 64; ++i) {
    xf[i] = uniform(rng);
    xi[i] = integers(rng);
  }
  xf[32 + 5] = std::numeric_limits<float>::quiet_NaN();
  for (int lane = 16; lane < 24; ++lane)
    xf[32 + lane] = lane % 3 == 0 ? 0.f : -0.f;
  xi[3] = std::numeric_limits<int>::max(); // the int sum wraps
  DeviceBuffer deviceXf(*driver, 64 * 4), deviceXi(*driver, 64 * 4), of(*driver, 2 * 6 * 3 * 32 * 4),
      oi(*driver, 2 * 6 * 3 * 32 * 4);
  deviceXf.upload(xf);
  deviceXi.upload(xi);
  kernels(driver).launch("warp_reductions", 2, 32, deviceXf.data(), deviceXi.data(), of.data(), oi.data());
  std::vector<float> gotF = of.download<float>();
  std::vector<int> gotI = oi.download<int>();
  int mismatches = 0;
  for (int row = 0; row < 2; ++row) {
    std::vector<float> f(xf.begin() + row * 32, xf.begin() + row * 32 + 32);
    std::vector<int> n(xi.begin() + row * 32, xi.begin() + row * 32 + 32);
    for (int k = 0; k < 6; ++k) {
      const int width = 1 << k;
      std::vector<float> expectedF[3] = {butterfly(f, width, [](float a, float b) { return a + b; }),
                                         butterfly(f, width, nanPropagatingMax),
                                         butterfly(f, width, nanPropagatingMin)};
      std::vector<int> expectedI[3] = {
          butterfly(n, width, [](int a, int b) { return int(std::uint32_t(a) + std::uint32_t(b)); }),
          butterfly(n, width, [](int a, int b) { return std::max(a, b); }),
          butterfly(n, width, [](int a, int b) { return std::min(a, b); })};
      for (int op = 0; op < 3; ++op)
        for (int lane = 0; lane < 32; ++lane) {
          const int at = ((row * 6 + k) * 3 + op) * 32 + lane;
          float want = expectedF[op][lane], got = gotF[at];
          // Bitwise, so the sign of zero counts; any NaN matches any NaN.
          bool same = std::isnan(want) ? std::isnan(got) : bitsOf(want) == bitsOf(got);
          if (!same || gotI[at] != expectedI[op][lane]) {
            ++mismatches;
            UNSCOPED_INFO("row " << row << " width " << width << " op " << op << " lane " << lane << ": float "
                                 << got << " (want " << want << "), int " << gotI[at] << " (want "
                                 << expectedI[op][lane] << ")");
          }
        }
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("bf16x2, f16x2, i32, f64 and memory-ordered atomics are exact under contention", "[gpu][device]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  const int perSlot = 200, threads = 64 * perSlot; // 50 blocks of 256
  DeviceBuffer b16x2(*driver, 128 * 2), h16x2(*driver, 128 * 2), b16(*driver, 64 * 2), h16(*driver, 64 * 2),
      i32(*driver, 320 * 4), oldRelaxed(*driver, threads * 4), oldSeqCst(*driver, threads * 4), f32(*driver, 192 * 4),
      f64(*driver, 64 * 8);
  b16x2.upload(std::vector<std::uint16_t>(128, 0));
  h16x2.upload(std::vector<std::uint16_t>(128, 0));
  b16.upload(std::vector<std::uint16_t>(64, 0));
  h16.upload(std::vector<std::uint16_t>(64, 0));
  i32.upload(std::vector<int>(320, 0));
  f32.upload(std::vector<float>(192, 0.f));
  f64.upload(std::vector<double>(64, 0.0));
  kernels(driver).launch("atomics_on_shared_slots", threads / 256, 256, b16x2.data(), h16x2.data(), b16.data(),
                         h16.data(), i32.data(), oldRelaxed.data(), oldSeqCst.data(), f32.data(), f64.data(), threads);
  auto pairsB = b16x2.download<std::uint16_t>(), pairsH = h16x2.download<std::uint16_t>();
  auto scalarsB = b16.download<std::uint16_t>(), scalarsH = h16.download<std::uint16_t>();
  auto ints = i32.download<int>();
  auto floats = f32.download<float>();
  auto doubles = f64.download<double>();
  for (int slot = 0; slot < 64; ++slot) {
    INFO("slot " << slot);
    CHECK(fromBf16(pairsB[2 * slot]) == perSlot * 1.f);
    CHECK(fromBf16(pairsB[2 * slot + 1]) == perSlot * -0.5f);
    CHECK(fromF16(pairsH[2 * slot]) == perSlot * 1.f);
    CHECK(fromF16(pairsH[2 * slot + 1]) == perSlot * -0.5f);
    CHECK(fromBf16(scalarsB[slot]) == perSlot * 1.f);
    CHECK(fromF16(scalarsH[slot]) == perSlot * -0.25f);
    CHECK(ints[slot] == perSlot);
    CHECK(ints[64 + slot] == perSlot * (slot + 1));
    CHECK(ints[128 + slot] == perSlot * 3);
    CHECK(ints[192 + slot] == perSlot * -5);
    CHECK(ints[256 + slot] == perSlot);
    CHECK(floats[slot] == perSlot * 1.f);
    CHECK(floats[64 + slot] == perSlot * 0.5f);
    CHECK(floats[128 + slot] == perSlot * -2.f);
    CHECK(doubles[slot] == perSlot * 0.125);
  }
  // Each thread saw a distinct old value: per slot, the old values are exactly 0 .. perSlot - 1.
  for (DeviceBuffer *olds : {&oldRelaxed, &oldSeqCst}) {
    std::vector<int> values = olds->download<int>();
    std::vector<std::vector<int>> bySlot(64);
    for (int t = 0; t < threads; ++t)
      bySlot[t % 64].push_back(values[t]);
    int bad = 0;
    for (auto &seen : bySlot) {
      std::sort(seen.begin(), seen.end());
      for (int k = 0; k < perSlot; ++k)
        bad += seen[k] != k;
    }
    CHECK(bad == 0);
  }
}

// IEEE maximum / minimum on the host: NaN in, NaN out; -0.0 below +0.0.
template <typename T> T ieeeMax(T a, T b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<T>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
template <typename T> T ieeeMin(T a, T b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<T>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

// The same float or NaN; +0.0 and -0.0 differ.
bool sameFloat(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

TEST_CASE("atomic max / min: IEEE semantics (NaN, signed zero) and exact results under contention", "[gpu][device]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  const int threads = 16 * 400; // 25 blocks of 256, 400 updates per slot
  std::mt19937 rng(20261203);
  std::uniform_real_distribution<float> uniform(-1000.f, 1000.f);
  std::vector<float> values(threads);
  for (int t = 0; t < threads; ++t)
    values[t] = t % 16 == 5 ? ((t / 16) % 2 ? -0.f : 0.f) : uniform(rng);
  values[16 * 123 + 3] = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  DeviceBuffer in(*driver, threads * 4), f32max(*driver, 64), f32min(*driver, 64), f64max(*driver, 128),
      b16max(*driver, 32), h16min(*driver, 32), i32max(*driver, 64), i32min(*driver, 64), sharedMax(*driver, 64);
  in.upload(values);
  f32max.upload(std::vector<float>(16, -inf));
  f32min.upload(std::vector<float>(16, inf));
  f64max.upload(std::vector<double>(16, -double(inf)));
  b16max.upload(std::vector<std::uint16_t>(16, 0xff80)); // -inf
  h16min.upload(std::vector<std::uint16_t>(16, 0x7c00)); // +inf
  i32max.upload(std::vector<int>(16, std::numeric_limits<int>::min()));
  i32min.upload(std::vector<int>(16, std::numeric_limits<int>::max()));
  sharedMax.upload(std::vector<float>(16, -inf));
  kernels(driver).launch("extrema_under_contention", threads / 256, 256, in.data(), f32max.data(), f32min.data(),
                         f64max.data(), b16max.data(), h16min.data(), i32max.data(), i32min.data(),
                         sharedMax.data(), threads);
  auto gotMax = f32max.download<float>(), gotMin = f32min.download<float>(), gotShared = sharedMax.download<float>();
  auto gotMax64 = f64max.download<double>();
  auto gotB16 = b16max.download<std::uint16_t>(), gotH16 = h16min.download<std::uint16_t>();
  auto gotIMax = i32max.download<int>(), gotIMin = i32min.download<int>();
  for (int slot = 0; slot < 16; ++slot) {
    INFO("slot " << slot);
    float wantMax = -inf, wantMin = inf;
    int wantIMax = std::numeric_limits<int>::min(), wantIMin = std::numeric_limits<int>::max();
    for (int t = slot; t < threads; t += 16) {
      wantMax = ieeeMax(wantMax, values[t]);
      wantMin = ieeeMin(wantMin, values[t]);
      const int k = (t * 7919) % 10007 - 5000;
      wantIMax = std::max(wantIMax, k);
      wantIMin = std::min(wantIMin, k);
    }
    CHECK(sameFloat(gotMax[slot], wantMax));
    CHECK(sameFloat(gotMin[slot], wantMin));
    CHECK(sameFloat(gotShared[slot], wantMax));
    CHECK(sameFloat(gotMax64[slot], wantMax));
    // Rounding preserves order: the 16-bit results are the rounded extrema.
    CHECK(sameFloat(fromBf16(gotB16[slot]), std::isnan(wantMax) ? wantMax : fromBf16(toBf16(wantMax))));
    if (std::isnan(wantMin))
      CHECK(std::isnan(fromF16(gotH16[slot])));
    else
      CHECK(std::fabs(fromF16(gotH16[slot]) - wantMin) <= std::fabs(wantMin) / 1024); // f16's half ulp, roughly
    CHECK(gotIMax[slot] == wantIMax);
    CHECK(gotIMin[slot] == wantIMin);
  }
  CHECK(std::isnan(gotMax[3]));            // the NaN propagates
  CHECK(gotMax[5] == 0.f);                 // +0.0 is above -0.0 ...
  CHECK(!std::signbit(gotMax[5]));
  CHECK(std::signbit(gotMin[5]));          // ... and -0.0 below +0.0
}

TEST_CASE("predicated 8- and 4-byte copies and f16 / bf16 packing", "[gpu][device]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  std::vector<std::uint32_t> in(96);
  for (int i = 0; i < 96; ++i)
    in[i] = 0x01000000u * std::uint32_t(i + 1) + std::uint32_t(i);
  DeviceBuffer deviceIn(*driver, 96 * 4), out(*driver, 104 * 4);
  deviceIn.upload(in);
  out.upload(std::vector<std::uint32_t>(104, 0xaaaaaaaau));
  kernels(driver).launch("small_copies_and_types", 1, 32, deviceIn.data(), out.data());
  std::vector<std::uint32_t> result = out.download<std::uint32_t>();
  for (int i = 0; i < 32; ++i) {
    INFO("thread " << i);
    auto expected = [&](int word) { return i % 4 == 2 ? 0xaaaaaaaau : i % 4 == 1 ? 0u : in[word]; };
    CHECK(result[2 * i] == expected(2 * i));
    CHECK(result[2 * i + 1] == expected(2 * i + 1));
    CHECK(result[64 + i] == expected(64 + i));
  }
  CHECK(result[96] == 0xc0003c00u);  // f16 (1, -2)
  CHECK(result[97] == 0x42003800u);  // f16 (0.5, 3)
  CHECK(result[98] == 0xc0003f80u);  // bf16 (1, -2)
  CHECK(result[99] == 0x3c00u);      // 1 + 2^-11 ties to even: 1
  CHECK(result[100] == 0x3c02u);     // 1 + 3 * 2^-11 ties to even: 1 + 2^-9
  CHECK(result[101] == bitsOf(1.f));
  CHECK(result[102] == bitsOf(-2.f));
  CHECK(result[103] == bitsOf(0.333251953125f));
}
