// The ahead-of-time path: flash attention forward, preprocess and backward loaded from .tcm files that
// `tilec compile` wrote (scripts/gpu-bundle.sh puts them in the bundle's data/), launched by this binary, which has
// no compiler and no MLIR, and checked against float64. Without a driver, or without the files (a source-tree build
// has none), the test skips.
#include "AttentionReference.h"
#include "GpuTestSupport.h"
#include "tilec/runtime/ModuleFile.h"

#include <fstream>
#include <unistd.h>

using namespace tilec::runtime;
using namespace tilec::testing;
namespace ref = tilec::reference;

namespace {

std::string bundleData() {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0)
    return "";
  std::string path(exe, std::size_t(n));
  return path.substr(0, path.rfind('/')) + "/../data";
}

} // namespace

TEST_CASE("flash attention from .tcm module files: fwd, preprocess, bwd vs float64", "[gpu][modulefile]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  const std::string dir = bundleData();
  if (!std::ifstream(dir + "/attn_bwd.tcm")) {
    WARN("SKIPPED: no .tcm files in " << dir << " (scripts/gpu-bundle.sh writes them with `tilec compile`)");
    return;
  }
  auto fwd = loadModuleFile(dir + "/attn_fwd.tcm");
  auto pre = loadModuleFile(dir + "/attn_bwd_preprocess.tcm");
  auto bwd = loadModuleFile(dir + "/attn_bwd.tcm");
  ref::AttentionShape s; // the kernels' defaults: d128, MHA, not causal
  s.batch = 2;
  s.seq = 1000;
  s.heads = 2;
  s.dim = 128;
  const int64_t B = s.batch, S = s.seq, H = s.heads, D = s.dim;
  const size_t nQ = B * S * H * D, nL = B * H * S;
  auto input = [&](uint64_t seed, std::vector<double> &asDouble) {
    std::vector<double> r = ref::randomNormal(nQ, seed);
    std::vector<std::uint16_t> bits(nQ);
    asDouble.resize(nQ);
    for (size_t i = 0; i < nQ; ++i) {
      bits[i] = toBf16(static_cast<float>(r[i]));
      asDouble[i] = fromBf16(bits[i]);
    }
    return bits;
  };
  std::vector<double> qd, kd, vd, dod;
  auto q = input(101, qd), k = input(102, kd), v = input(103, vd), dO = input(104, dod);
  ref::AttentionResult expect = ref::attention(s, qd, kd, vd, dod);

  DeviceBuffer Q(*driver, nQ * 2), K(*driver, nQ * 2), V(*driver, nQ * 2), dOb(*driver, nQ * 2), O(*driver, nQ * 2),
      lse(*driver, nL * 4), delta(*driver, nL * 4), dQ(*driver, nQ * 2), dK(*driver, nQ * 2), dV(*driver, nQ * 2);
  Q.upload(q);
  K.upload(k);
  V.upload(v);
  dOb.upload(dO);
  std::vector<std::uint16_t> zeros(nQ, 0);
  dQ.upload(zeros);
  dK.upload(zeros);
  dV.upload(zeros);
  auto t4 = [&](DeviceBuffer &b) { return TensorView(b.data(), DType::BF16, {B, S, H, D}); };
  auto t3 = [&](DeviceBuffer &b) { return TensorView(b.data(), DType::F32, {B, H, S}); };
  fwd->entry("attn_fwd").launch(nullptr, {t4(Q), t4(K), t4(V), t4(O), t3(lse)});
  pre->entry("attn_bwd_preprocess").launch(nullptr, {t4(O), t4(dOb), t3(delta)});
  bwd->entry("attn_bwd").launch(nullptr, {t4(Q), t4(K), t4(V), t4(dOb), t3(lse), t3(delta), t4(dQ), t4(dK), t4(dV)});
  driver->check(driver->api().cuCtxSynchronize(), "cuCtxSynchronize");
  auto widen = [](const std::vector<std::uint16_t> &bits) {
    std::vector<double> out(bits.size());
    for (size_t i = 0; i < bits.size(); ++i)
      out[i] = fromBf16(bits[i]);
    return out;
  };
  double eO = ref::relativeError(widen(O.download<std::uint16_t>()), expect.O);
  double eQ = ref::relativeError(widen(dQ.download<std::uint16_t>()), expect.dQ);
  double eK = ref::relativeError(widen(dK.download<std::uint16_t>()), expect.dK);
  double eV = ref::relativeError(widen(dV.download<std::uint16_t>()), expect.dV);
  WARN(".tcm flash attention " << s.str() << ": rel. error O " << eO << " dQ " << eQ << " dK " << eK << " dV "
                               << eV);
  CHECK(eO < 1e-2);
  CHECK(eQ < 1e-2);
  CHECK(eK < 1e-2);
  CHECK(eV < 1e-2);
}
