// A compiler-lowered launch plan, executed by the runtime on a GPU. The plans of the GQA flash-attention backward
// (groups 2) under --atomics=split and --atomics=fp32 travel as plan text (tests/gpu/data/*.plan, written by
// `tilec --emit=plan` and kept current by tests/lit/Transforms/emit-plan.tile); this binary has no MLIR. The
// kernels are hand-written stand-ins with the exact names and parameter lists the plans launch, whose bodies do
// something simple and checkable:
//   *_to_f32 / *_from_f32   really convert bf16 <-> f32, every element, over whatever grid the plan launches;
//   attn_bwd_main           adds known per-block values: into dQ's f32 workspace with f32 atomics from every
//                           key block m; into dK/dV's slice of the partial buffers (split: plain stores into
//                           partial[h mod 2], then the last of the 2 blocks of a tile to arrive at its counter,
//                           one for dK and dV together, writes dst <- round(f32(dst) + partial[0] + partial[1]),
//                           in that order, for both) or f32
//                           workspaces (fp32: f32 atomics, two heads per element).
// The host owns bf16 tensors and calls the entry once; the workspaces, the launch order and the frees are the
// plan's. Results are checked against the CPU: relative norm against float64 for every output, bitwise (and across
// runs) for the split outputs dK and dV. Without a driver the GPU part is skipped; the plan files are parsed and
// resolved anyway.
#include "GpuTestSupport.h"
#include "tilec/runtime/PlanText.h"
#include "tilec/runtime/Runtime.h"

#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace tilec::runtime;
using namespace tilec::testing;

namespace {

constexpr int kBatch = 2, kSeq = 100, kHeads = 4, kGroups = 2, kKvHeads = kHeads / kGroups, kDim = 128;

// The plan files: $TILEC_PLAN_DATA_DIR, else data/ next to the bundle's bin/, else the source tree.
std::string readPlanFile(const std::string &name) {
  std::vector<std::string> dirs;
  if (const char *env = std::getenv("TILEC_PLAN_DATA_DIR"))
    dirs.push_back(env);
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    std::string path(exe, std::size_t(n));
    dirs.push_back(path.substr(0, path.rfind('/')) + "/../data");
  }
  dirs.push_back(TILEC_GPU_DATA_DIR);
  for (const std::string &dir : dirs) {
    std::ifstream file(dir + "/" + name);
    if (file) {
      std::stringstream text;
      text << file.rdbuf();
      return text.str();
    }
  }
  FAIL("plan file " << name << " not found (looked in $TILEC_PLAN_DATA_DIR, <bin>/../data, " TILEC_GPU_DATA_DIR ")");
  return {};
}

EntrySpec loadEntry(const std::string &file) {
  ParsedPlan parsed = parsePlan(readPlanFile(file));
  if (!parsed)
    FAIL(file << ":" << parsed.error->toString());
  REQUIRE(parsed.entries.size() == 1);
  REQUIRE(parsed.entries[0].name == "attn_bwd");
  return parsed.entries[0];
}

const char *kStandInSource = R"(
// Stand-ins for the kernels tilec generates for attn_bwd (GQA, groups 2, dim 128). The plans pass only pointers;
// the problem's seq and groups reach these kernels as -D defines (how dims reach real kernels is the emitter's).
typedef unsigned short bf16_bits;
typedef unsigned long long u64;
__device__ float f32(bf16_bits x) { return __uint_as_float(unsigned(x) << 16); }
__device__ bf16_bits bf16(float x) {
  unsigned bits = __float_as_uint(x);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (bf16_bits)(bits >> 16);
}
// Every element of the destination (dims d0 x d1 x d2 x 128, passed by the plan), whatever grid the plan launches
// (a grid-stride loop: how many rows a generated kernel's block takes is the compiler's choice).
#define EACH_ELEMENT(i, d0, d1, d2)                                                                                \
  for (u64 i = u64(blockIdx.x) * blockDim.x + threadIdx.x, total_ = u64(d0) * d1 * d2 * 128; i < total_;         \
       i += u64(gridDim.x) * blockDim.x)
#define CONVERT(name)                                                                                              \
  extern "C" __global__ void attn_bwd_##name##_to_f32(const bf16_bits *dst, long long d0, long long d1, long long d2, float *ws, long long, long long, long long) { \
    EACH_ELEMENT(i, d0, d1, d2) ws[i] = f32(dst[i]);                                                             \
  }                                                                                                              \
  extern "C" __global__ void attn_bwd_##name##_from_f32(const float *ws, long long d0, long long d1, long long d2, bf16_bits *dst, long long, long long, long long) { \
    EACH_ELEMENT(i, d0, d1, d2) dst[i] = bf16(ws[i]);                                                            \
  }
CONVERT(dQ)
CONVERT(dK)
CONVERT(dV)

#if SPLIT
// tile.arrive_last's contract, written the CUDA guide's way (every thread's writes fenced; the generated kernel
// uses one acq_rel atomic by thread 0 between barriers instead): one count per block, the verdict shared by the
// barrier.
__device__ bool arrive_last(int *counter, int count) {
  __threadfence();
  __syncthreads();
  int mine = 0;
  if (threadIdx.x == 0)
    mine = atomicAdd(counter, 1) == count - 1;
  const bool last = __syncthreads_or(mine) != 0;
  if (last)
    __threadfence();
  return last;
}
// Rows m*64 .. m*64+63 of dst[b, :, kvh, :] <- round(f32(dst) + partial[0] + ... + partial[GROUPS-1]), in order.
__device__ void sum_tile(bf16_bits *dst, const float *partial, u64 slice, int b, int m, int kvh, int KVH) {
  for (int e = threadIdx.x; e < 64 * 128; e += blockDim.x) {
    int r = m * 64 + e / 128, d = e % 128;
    if (r >= SEQ)
      break;
    u64 kv = ((u64(b) * SEQ + r) * KVH + kvh) * 128 + d;
    float s = f32(dst[kv]);
    for (int p = 0; p < GROUPS; ++p)
      s = __fadd_rn(s, partial[p * slice + kv]);
    dst[kv] = bf16(s);
  }
}
#endif

extern "C" __global__ void attn_bwd_main(const bf16_bits *Q, long long, long long, long long, const bf16_bits *K, long long, long long, long long, const bf16_bits *V, long long, long long, long long,
                                         const bf16_bits *dO, long long, long long, long long, const float *lse, long long, long long, long long, const float *delta, long long, long long, long long, float *dQ, long long, long long, long long,
                                         float *dK, long long, long long, long long, float *dV, long long, long long, long long
#if SPLIT
                                         , bf16_bits *dK_out, long long, long long, long long, int *arrivals, long long,
                                         bf16_bits *dV_out, long long, long long, long long
#endif
                                         ) {
  const int h = blockIdx.x, m = blockIdx.y, b = blockIdx.z, H = gridDim.x, B = gridDim.z, KVH = H / GROUPS;
  // dQ[b, :, h, :] += Q * (m + 1) / 8 from every key block m: colliding f32 atomics.
  const float w = (m + 1) * 0.125f;
  for (int e = threadIdx.x; e < SEQ * 128; e += blockDim.x) {
    int r = e / 128, d = e % 128;
    u64 q = ((u64(b) * SEQ + r) * H + h) * 128 + d;
    atomicAdd(&dQ[q], __fmul_rn(f32(Q[q]), w));
  }
  // Rows m*64 .. m*64+63 of dK/dV[b, :, h / GROUPS, :].
  const int kvh = h / GROUPS, split = h % GROUPS;
  for (int e = threadIdx.x; e < 64 * 128; e += blockDim.x) {
    int r = m * 64 + e / 128, d = e % 128;
    if (r >= SEQ)
      break;
    u64 kv = ((u64(b) * SEQ + r) * KVH + kvh) * 128 + d;
    u64 qh = ((u64(b) * SEQ + r) * H + h) * 128 + d;
    u64 row = (u64(b) * H + h) * SEQ + r;
    float dk = __fmul_rn(f32(K[kv]), f32(dO[qh]));
    float dv = __fadd_rn(__fmul_rn(f32(V[kv]), lse[row]), delta[row]);
#if SPLIT
    u64 slice = u64(B) * SEQ * KVH * 128;
    // Each (split, element) has one block, which writes it once: the plan does not zero the partial slices (the
    // compiler proved that its kernel writes each element, tile.atomic_add write_once), so neither may this
    // stand-in read them; it stores 0 + value as the generated kernel does.
    dK[split * slice + kv] = __fadd_rn(0.0f, dk);
    dV[split * slice + kv] = __fadd_rn(0.0f, dv);
#else
    (void)split; (void)B;
    atomicAdd(&dK[kv], dk);
    atomicAdd(&dV[kv], dv);
#endif
  }
#if SPLIT
  // The last of the GROUPS blocks that wrote these rows of dK and dV (heads kvh * GROUPS ..) adds the slices of
  // both, in order: the same blocks write both, so one counter serves both.
  const int tile = (b * gridDim.y + m) * KVH + kvh;
  const u64 slice = u64(B) * SEQ * KVH * 128;
  if (arrive_last(&arrivals[tile], GROUPS)) {
    sum_tile(dK_out, dK, slice, b, m, kvh, KVH);
    sum_tile(dV_out, dV, slice, b, m, kvh, KVH);
  }
#endif
}
)";

struct PlanKernels {
  Runtime runtime{[] {
    RuntimeOptions options;
    options.cacheDirectory = "";
    return options;
  }()};
  std::shared_ptr<Module> split, fp32;
  PlanKernels() {
    std::vector<std::string> common = {"-DSEQ=" + std::to_string(kSeq), "-DGROUPS=" + std::to_string(kGroups)};
    std::vector<std::string> splitFlags = common, fp32Flags = common;
    splitFlags.push_back("-DSPLIT=1");
    fp32Flags.push_back("-DSPLIT=0");
    auto splitCubin = runtime.compile(kStandInSource, {"", splitFlags}).cubin;
    auto fp32Cubin = runtime.compile(kStandInSource, {"", fp32Flags}).cubin;
    split = runtime.loadModule({splitCubin}, {loadEntry("attn_bwd_gqa2_split.plan")});
    fp32 = runtime.loadModule({fp32Cubin}, {loadEntry("attn_bwd_gqa2_fp32.plan")});
  }
};

PlanKernels &planKernels() {
  static PlanKernels instance;
  return instance;
}

std::size_t q(int b, int r, int h, int d) { return ((std::size_t(b) * kSeq + r) * kHeads + h) * kDim + d; }
std::size_t kv(int b, int r, int g, int d) { return ((std::size_t(b) * kSeq + r) * kKvHeads + g) * kDim + d; }
std::size_t row(int b, int h, int r) { return (std::size_t(b) * kHeads + h) * kSeq + r; }

struct Problem {
  std::vector<std::uint16_t> Q, K, V, dO, dQ, dK, dV;
  std::vector<float> lse, delta;
  explicit Problem(unsigned seed) {
    std::mt19937 rng(seed);
    std::size_t nq = std::size_t(kBatch) * kSeq * kHeads * kDim, nkv = nq / kGroups;
    Q = randomBf16(nq, rng);
    K = randomBf16(nkv, rng);
    V = randomBf16(nkv, rng);
    dO = randomBf16(nq, rng);
    dQ = randomBf16(nq, rng); // the caller's contents are part of the result: dst += ...
    dK = randomBf16(nkv, rng);
    dV = randomBf16(nkv, rng);
    std::uniform_real_distribution<float> uniform(-1.f, 1.f);
    lse.resize(std::size_t(kBatch) * kHeads * kSeq);
    delta.resize(lse.size());
    for (float &x : lse)
      x = uniform(rng);
    for (float &x : delta)
      x = uniform(rng);
  }
};

// The entry's arguments: Q K V dO lse delta dQ dK dV.
std::vector<TensorView> attnArgs(const std::array<void *, 9> &data) {
  return {TensorView(data[0], DType::BF16, {kBatch, kSeq, kHeads, kDim}),
          TensorView(data[1], DType::BF16, {kBatch, kSeq, kKvHeads, kDim}),
          TensorView(data[2], DType::BF16, {kBatch, kSeq, kKvHeads, kDim}),
          TensorView(data[3], DType::BF16, {kBatch, kSeq, kHeads, kDim}),
          TensorView(data[4], DType::F32, {kBatch, kHeads, kSeq}),
          TensorView(data[5], DType::F32, {kBatch, kHeads, kSeq}),
          TensorView(data[6], DType::BF16, {kBatch, kSeq, kHeads, kDim}),
          TensorView(data[7], DType::BF16, {kBatch, kSeq, kKvHeads, kDim}),
          TensorView(data[8], DType::BF16, {kBatch, kSeq, kKvHeads, kDim})};
}

struct Outputs {
  std::vector<std::uint16_t> dQ, dK, dV;
};

Outputs runOnGpu(Driver &driver, const Entry &entry, const Problem &p) {
  DeviceBuffer Q(driver, p.Q.size() * 2), K(driver, p.K.size() * 2), V(driver, p.V.size() * 2),
      dO(driver, p.dO.size() * 2), lse(driver, p.lse.size() * 4), delta(driver, p.delta.size() * 4),
      dQ(driver, p.dQ.size() * 2), dK(driver, p.dK.size() * 2), dV(driver, p.dV.size() * 2);
  Q.upload(p.Q);
  K.upload(p.K);
  V.upload(p.V);
  dO.upload(p.dO);
  lse.upload(p.lse);
  delta.upload(p.delta);
  dQ.upload(p.dQ);
  dK.upload(p.dK);
  dV.upload(p.dV);
  std::vector<TensorView> args =
      attnArgs({Q.data(), K.data(), V.data(), dO.data(), lse.data(), delta.data(), dQ.data(), dK.data(), dV.data()});
  cu::Stream stream = nullptr;
  driver.check(driver.api().cuStreamCreate(&stream, 0), "cuStreamCreate");
  entry.launch(stream, args.data(), args.size());
  driver.check(driver.api().cuStreamSynchronize(stream), "cuStreamSynchronize");
  driver.check(driver.api().cuStreamDestroy(stream), "cuStreamDestroy");
  return {dQ.download<std::uint16_t>(), dK.download<std::uint16_t>(), dV.download<std::uint16_t>()};
}

// float64 references of the stand-ins' arithmetic.
struct Reference {
  std::vector<double> dQ, dK, dV;
};

Reference reference(const Problem &p) {
  Reference ref;
  ref.dQ.resize(p.dQ.size());
  ref.dK.resize(p.dK.size());
  ref.dV.resize(p.dV.size());
  const int keyBlocks = (kSeq + 63) / 64;
  double weights = 0;
  for (int m = 0; m < keyBlocks; ++m)
    weights += (m + 1) * 0.125;
  for (int b = 0; b < kBatch; ++b)
    for (int r = 0; r < kSeq; ++r) {
      for (int h = 0; h < kHeads; ++h)
        for (int d = 0; d < kDim; ++d)
          ref.dQ[q(b, r, h, d)] = fromBf16(p.dQ[q(b, r, h, d)]) + double(fromBf16(p.Q[q(b, r, h, d)])) * weights;
      for (int g = 0; g < kKvHeads; ++g)
        for (int d = 0; d < kDim; ++d) {
          double k = fromBf16(p.dK[kv(b, r, g, d)]), v = fromBf16(p.dV[kv(b, r, g, d)]);
          for (int s = 0; s < kGroups; ++s) {
            int h = g * kGroups + s;
            k += double(fromBf16(p.K[kv(b, r, g, d)])) * fromBf16(p.dO[q(b, r, h, d)]);
            v += double(fromBf16(p.V[kv(b, r, g, d)])) * p.lse[row(b, h, r)] + p.delta[row(b, h, r)];
          }
          ref.dK[kv(b, r, g, d)] = k;
          ref.dV[kv(b, r, g, d)] = v;
        }
    }
  return ref;
}

// What the split plan must produce bit for bit: partial[s] = 0 + x (one block each), then
// round(((f32(dst) + partial[0]) + partial[1])).
void splitExpected(const Problem &p, std::vector<std::uint16_t> &dK, std::vector<std::uint16_t> &dV) {
  dK.resize(p.dK.size());
  dV.resize(p.dV.size());
  for (int b = 0; b < kBatch; ++b)
    for (int r = 0; r < kSeq; ++r)
      for (int g = 0; g < kKvHeads; ++g)
        for (int d = 0; d < kDim; ++d) {
          volatile float k = fromBf16(p.dK[kv(b, r, g, d)]), v = fromBf16(p.dV[kv(b, r, g, d)]);
          for (int s = 0; s < kGroups; ++s) {
            int h = g * kGroups + s;
            volatile float pk = fromBf16(p.K[kv(b, r, g, d)]) * fromBf16(p.dO[q(b, r, h, d)]);
            pk = 0.0f + pk;
            volatile float pv = fromBf16(p.V[kv(b, r, g, d)]) * p.lse[row(b, h, r)];
            pv = pv + p.delta[row(b, h, r)];
            pv = 0.0f + pv;
            k = k + pk;
            v = v + pv;
          }
          dK[kv(b, r, g, d)] = toBf16(k);
          dV[kv(b, r, g, d)] = toBf16(v);
        }
}

std::vector<double> widen(const std::vector<std::uint16_t> &bf16) {
  std::vector<double> out(bf16.size());
  for (std::size_t i = 0; i < bf16.size(); ++i)
    out[i] = fromBf16(bf16[i]);
  return out;
}

std::size_t mismatches(const std::vector<std::uint16_t> &a, const std::vector<std::uint16_t> &b) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    count += a[i] != b[i];
  return count;
}

// The step sequence of a resolved plan, e.g. "alloc 0 409600", "launch attn_bwd_main 4x2x2", "free 0".
std::vector<std::string> trace(const Entry &entry) {
  alignas(16) static char dummy[16];
  std::array<void *, 9> data;
  data.fill(dummy);
  std::vector<TensorView> args = attnArgs(data);
  std::vector<std::string> out;
  for (const ResolvedStep &step : entry.resolve(args.data(), args.size())) {
    if (step.kind == ResolvedStep::Kind::Alloc)
      out.push_back("alloc " + std::to_string(step.workspace) + " " + std::to_string(step.bytes) +
                    (step.zeroFill ? " zeroed" : ""));
    else if (step.kind == ResolvedStep::Kind::Launch)
      out.push_back("launch " + step.launch->function + " " + std::to_string(step.grid[0]) + "x" +
                    std::to_string(step.grid[1]) + "x" + std::to_string(step.grid[2]));
    else
      out.push_back("free " + std::to_string(step.workspace));
  }
  return out;
}

} // namespace

TEST_CASE("the committed plan files parse and resolve to the expected steps", "[plan]") {
  // No GPU needed: the Module is built with a placeholder CUBIN only to resolve the plans.
  auto cubin = std::make_shared<const Cubin>(Cubin{{'x'}, "sm_90a", "", {}});
  Module split({cubin}, {loadEntry("attn_bwd_gqa2_split.plan")});
  Module fp32({cubin}, {loadEntry("attn_bwd_gqa2_fp32.plan")});
  const std::int64_t f32Q = 4LL * kBatch * kSeq * kHeads * kDim, f32KV = f32Q / kGroups;
  // The generated conversion kernels take 16 heads of one (batch, seq) row per block at d = 128.
  constexpr int kHeadsPerBlock = 16;
  const std::string rowsQ = std::to_string(kBatch * kSeq * ((kHeads + kHeadsPerBlock - 1) / kHeadsPerBlock)) + "x1x1",
                    rowsKV = std::to_string(kBatch * kSeq * ((kKvHeads + kHeadsPerBlock - 1) / kHeadsPerBlock)) + "x1x1";
  CHECK(trace(split.entry("attn_bwd")) ==
        std::vector<std::string>{"alloc 0 " + std::to_string(f32Q), "launch attn_bwd_dQ_to_f32 " + rowsQ,
                                 "alloc 1 " + std::to_string(2 * f32KV),
                                 "alloc 2 " + std::to_string(2 * f32KV),
                                 // The arrival counters (dK and dV share them): one i32 per block of the 4x2x2 grid.
                                 "alloc 3 64 zeroed",
                                 "launch attn_bwd_main 4x2x2", "launch attn_bwd_dQ_from_f32 " + rowsQ, "free 0",
                                 "free 1", "free 2", "free 3"});
  CHECK(trace(fp32.entry("attn_bwd")) ==
        std::vector<std::string>{"alloc 0 " + std::to_string(f32Q), "launch attn_bwd_dQ_to_f32 " + rowsQ,
                                 "alloc 1 " + std::to_string(f32KV), "launch attn_bwd_dK_to_f32 " + rowsKV,
                                 "alloc 2 " + std::to_string(f32KV), "launch attn_bwd_dV_to_f32 " + rowsKV,
                                 "launch attn_bwd_main 4x2x2", "launch attn_bwd_dQ_from_f32 " + rowsQ, "free 0",
                                 "launch attn_bwd_dK_from_f32 " + rowsKV, "free 1",
                                 "launch attn_bwd_dV_from_f32 " + rowsKV, "free 2"});
}

TEST_CASE("the stand-in kernels compile for sm_90a (NVRTC, no GPU needed)", "[plan]") {
  Runtime runtime{[] {
    RuntimeOptions options;
    options.cacheDirectory = "";
    return options;
  }()};
  for (const char *split : {"-DSPLIT=1", "-DSPLIT=0"}) {
    CompileResult compiled;
    try {
      compiled = runtime.compile(kStandInSource, {"sm_90a", {"-DSEQ=100", "-DGROUPS=2", split}});
    } catch (const CompileError &error) {
      if (std::string(error.what()).find("could not be loaded") != std::string::npos) {
        WARN("SKIPPED: no NVRTC (" << error.what() << ")");
        return;
      }
      FAIL(error.what());
    }
    for (const char *kernel : {"attn_bwd_main", "attn_bwd_dQ_to_f32", "attn_bwd_dV_from_f32"})
      CHECK(compiled.cubin->ptxasInfo(kernel));
  }
}

TEST_CASE("the runtime executes tilec's split plan for the GQA backward: dK, dV bitwise", "[gpu][plan]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  const Entry &entry = planKernels().split->entry("attn_bwd");
  Problem problem(2024);
  Outputs out = runOnGpu(*driver, entry, problem);
  Reference ref = reference(problem);

  double errQ = relativeError(widen(out.dQ), ref.dQ), errK = relativeError(widen(out.dK), ref.dK),
         errV = relativeError(widen(out.dV), ref.dV);
  INFO("relative error vs float64: dQ " << errQ << ", dK " << errK << ", dV " << errV);
  CHECK(errQ < 5e-3);
  CHECK(errK < 5e-3);
  CHECK(errV < 5e-3);

  std::vector<std::uint16_t> expectK, expectV;
  splitExpected(problem, expectK, expectV);
  std::size_t badK = mismatches(out.dK, expectK), badV = mismatches(out.dV, expectV);
  INFO("bitwise mismatches vs the CPU's fixed-order sum: dK " << badK << ", dV " << badV << " of "
                                                              << expectK.size());
  CHECK(badK == 0);
  CHECK(badV == 0);

  Outputs again = runOnGpu(*driver, entry, problem);
  CHECK(mismatches(again.dK, out.dK) == 0);
  CHECK(mismatches(again.dV, out.dV) == 0);
  WARN("split plan on GPU: dQ rel " << errQ << ", dK rel " << errK << ", dV rel " << errV << "; dK/dV bitwise "
                                    << (badK + badV == 0 ? "equal" : "DIFFERENT") << " to the CPU and across runs");
}

TEST_CASE("the runtime executes tilec's fp32 plan for the GQA backward", "[gpu][plan]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  const Entry &entry = planKernels().fp32->entry("attn_bwd");
  Problem problem(77);
  Outputs out = runOnGpu(*driver, entry, problem);
  Reference ref = reference(problem);
  double errQ = relativeError(widen(out.dQ), ref.dQ), errK = relativeError(widen(out.dK), ref.dK),
         errV = relativeError(widen(out.dV), ref.dV);
  INFO("relative error vs float64: dQ " << errQ << ", dK " << errK << ", dV " << errV);
  CHECK(errQ < 5e-3);
  CHECK(errK < 5e-3);
  CHECK(errV < 5e-3);
  // The inputs were not all zero and every output moved: the conversions and the main kernel all ran.
  CHECK(mismatches(out.dQ, problem.dQ) > out.dQ.size() / 2);
  CHECK(mismatches(out.dK, problem.dK) > out.dK.size() / 2);
  WARN("fp32 plan on GPU: dQ rel " << errQ << ", dK rel " << errK << ", dV rel " << errV);
}
