// Flash attention from kernels/flash_attention/*.tile, compiled by tilec (layouts, tensor-core gemms, shared-memory
// plan, barriers, CUDA emission) and NVRTC, run on the GPU, against a float64 reference: forward (O, lse), the
// backward preprocess (delta) and the backward (dQ, dK, dV) under each atomics strategy, at tail shapes (seq not a
// multiple of the block), GQA and causal masking. Without a driver the GPU cases skip.
#include "AttentionReference.h"
#include "CompilerTestSupport.h"
#include "GpuTestSupport.h"

using namespace tilec;
using namespace tilec::runtime;
using namespace tilec::testing;
using tilec::reference::AttentionShape;

namespace {

struct AttentionRun {
  std::vector<float> O, lse, delta, dQ, dK, dV;
};

std::vector<float> widenBf16(const std::vector<std::uint16_t> &v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = fromBf16(v[i]);
  return out;
}

std::vector<double> toDouble(const std::vector<float> &v) { return {v.begin(), v.end()}; }

AttentionRun runAttention(Runtime &runtime, Driver &driver, const AttentionShape &s, const std::string &atomics,
                          const std::vector<std::uint16_t> &q, const std::vector<std::uint16_t> &k,
                          const std::vector<std::uint16_t> &v, const std::vector<std::uint16_t> &dO) {
  std::string arch = runtime.targetArch();
  GpuCompileOptions options;
  options.defines = {{"dim", std::to_string(s.dim)},
                     {"groups", std::to_string(s.groups)},
                     {"causal", s.causal ? "true" : "false"}};
  GpuCompileOptions pre;
  pre.defines = {{"dim", std::to_string(s.dim)}};
  GpuCompileOptions bwdOptions = options;
  bwdOptions.atomics = atomics;
  CompiledKernel fwd = compileKernel(runtime, "flash_attention/fwd.tile", options, arch);
  CompiledKernel prep = compileKernel(runtime, "flash_attention/bwd_preprocess.tile", pre, arch);
  CompiledKernel bwd = compileKernel(runtime, "flash_attention/bwd.tile", bwdOptions, arch);

  const int64_t B = s.batch, S = s.seq, H = s.heads, KH = s.kvHeads(), D = s.dim;
  const size_t nQ = B * S * H * D, nK = B * S * KH * D, nL = B * H * S;
  DeviceBuffer Q(driver, nQ * 2), K(driver, nK * 2), V(driver, nK * 2), dOb(driver, nQ * 2), O(driver, nQ * 2),
      lse(driver, nL * 4), delta(driver, nL * 4), dQ(driver, nQ * 2), dK(driver, nK * 2), dV(driver, nK * 2);
  Q.upload(q);
  K.upload(k);
  V.upload(v);
  dOb.upload(dO);
  std::vector<std::uint16_t> zerosQ(nQ, 0), zerosK(nK, 0);
  dQ.upload(zerosQ);
  dK.upload(zerosK);
  dV.upload(zerosK);
  TensorView tQ(Q.data(), DType::BF16, {B, S, H, D}), tK(K.data(), DType::BF16, {B, S, KH, D}),
      tV(V.data(), DType::BF16, {B, S, KH, D}), tdO(dOb.data(), DType::BF16, {B, S, H, D}),
      tO(O.data(), DType::BF16, {B, S, H, D}), tlse(lse.data(), DType::F32, {B, H, S}),
      tdelta(delta.data(), DType::F32, {B, H, S}), tdQ(dQ.data(), DType::BF16, {B, S, H, D}),
      tdK(dK.data(), DType::BF16, {B, S, KH, D}), tdV(dV.data(), DType::BF16, {B, S, KH, D});
  cu::Stream stream = nullptr;
  fwd.module->entry("attn_fwd").launch(stream, {tQ, tK, tV, tO, tlse});
  prep.module->entry("attn_bwd_preprocess").launch(stream, {tO, tdO, tdelta});
  bwd.module->entry("attn_bwd").launch(stream, {tQ, tK, tV, tdO, tlse, tdelta, tdQ, tdK, tdV});
  driver.check(driver.api().cuCtxSynchronize(), "cuCtxSynchronize");
  return {widenBf16(O.download<std::uint16_t>()), lse.download<float>(), delta.download<float>(),
          widenBf16(dQ.download<std::uint16_t>()), widenBf16(dK.download<std::uint16_t>()),
          widenBf16(dV.download<std::uint16_t>())};
}

void checkAttention(const AttentionShape &s, const std::vector<std::string> &strategies, uint64_t seed) {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  Runtime runtime(uncachedOptions());
  const size_t nQ = s.batch * s.seq * s.heads * s.dim, nK = s.batch * s.seq * s.kvHeads() * s.dim;
  auto bf16Input = [&](size_t n, uint64_t sd, std::vector<double> &asDouble) {
    std::vector<double> r = reference::randomNormal(n, sd);
    std::vector<std::uint16_t> out(n);
    asDouble.resize(n);
    for (size_t i = 0; i < n; ++i) {
      out[i] = toBf16(static_cast<float>(r[i]));
      asDouble[i] = fromBf16(out[i]);
    }
    return out;
  };
  std::vector<double> qd, kd, vd, dod;
  auto q = bf16Input(nQ, seed, qd), k = bf16Input(nK, seed + 1, kd), v = bf16Input(nK, seed + 2, vd),
       dO = bf16Input(nQ, seed + 3, dod);
  reference::AttentionResult ref = reference::attention(s, qd, kd, vd, dod);
  // delta = rowsum(O * dO) from the float64 O.
  std::vector<double> refDelta(s.batch * s.heads * s.seq, 0.0);
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t t = 0; t < s.seq; ++t)
      for (int64_t h = 0; h < s.heads; ++h) {
        double sum = 0;
        for (int64_t d = 0; d < s.dim; ++d) {
          size_t i = ((b * s.seq + t) * s.heads + h) * s.dim + d;
          sum += ref.O[i] * dod[i];
        }
        refDelta[(b * s.heads + h) * s.seq + t] = sum;
      }
  for (const std::string &atomics : strategies) {
    AttentionRun run = runAttention(runtime, *driver, s, atomics, q, k, v, dO);
    double eO = reference::relativeError(toDouble(run.O), ref.O);
    double eL = reference::relativeError(toDouble(run.lse), ref.lse);
    double eD = reference::relativeError(toDouble(run.delta), refDelta);
    double eQ = reference::relativeError(toDouble(run.dQ), ref.dQ);
    double eK = reference::relativeError(toDouble(run.dK), ref.dK);
    double eV = reference::relativeError(toDouble(run.dV), ref.dV);
    WARN("GPU " << s.str() << " atomics " << atomics << ": rel. error O " << eO << " lse " << eL << " delta " << eD
                << " dQ " << eQ << " dK " << eK << " dV " << eV);
    CHECK(eO < 1e-2);
    CHECK(eL < 1e-3);
    CHECK(eD < 2e-2);
    CHECK(eQ < 1e-2);
    CHECK(eK < 1e-2);
    CHECK(eV < 1e-2);
  }
}

AttentionShape shape(int64_t batch, int64_t seq, int64_t heads, int64_t groups, int64_t dim, bool causal) {
  AttentionShape s;
  s.batch = batch;
  s.seq = seq;
  s.heads = heads;
  s.groups = groups;
  s.dim = dim;
  s.causal = causal;
  return s;
}

} // namespace

TEST_CASE("GPU flash attention, MHA d128, seq 1000 (tail), every atomics strategy", "[gpu][attention]") {
  checkAttention(shape(2, 1000, 2, 1, 128, false), {"fp32", "split", "native"}, 11);
}

TEST_CASE("GPU flash attention, MHA d64 causal, seq 77", "[gpu][attention][sanitize]") {
  checkAttention(shape(1, 77, 3, 1, 64, true), {"fp32"}, 21);
}

TEST_CASE("GPU flash attention, GQA 4 d64 causal, seq 1000", "[gpu][attention]") {
  checkAttention(shape(1, 1000, 8, 4, 64, true), {"fp32", "split"}, 31);
}

TEST_CASE("GPU flash attention, GQA 4 d128, seq 1000", "[gpu][attention]") {
  checkAttention(shape(1, 1000, 4, 4, 128, false), {"fp32", "split", "native"}, 41);
}

TEST_CASE("GPU flash attention, MHA d128 causal, seq 4096", "[gpu][attention]") {
  checkAttention(shape(1, 4096, 2, 1, 128, true), {"fp32"}, 51);
}

TEST_CASE("GPU flash attention, GQA 4 d64, seq 4096", "[gpu][attention]") {
  checkAttention(shape(1, 4096, 4, 4, 64, false), {"fp32"}, 61);
}
