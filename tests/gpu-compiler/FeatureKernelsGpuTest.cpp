// Small kernels that exercise one feature each (kernels/examples/, kernels/histogram.tile), compiled by tilec and
// run on the GPU against plain host references: gemm in every transpose combination with M/N/K tails, row softmax
// with row and column tails, row/column reductions, integer element and region atomics (exact), and the histogram's
// bf16 atomics under every strategy (split bitwise stable across runs). Without a driver the cases skip.
#include "CompilerTestSupport.h"
#include "GpuTestSupport.h"

#include <cmath>
#include <limits>

using namespace tilec;
using namespace tilec::runtime;
using namespace tilec::testing;

namespace {

std::vector<float> randomFloats(size_t n, std::mt19937 &rng) {
  std::normal_distribution<float> normal;
  std::vector<float> v(n);
  for (auto &x : v)
    x = normal(rng);
  return v;
}

double relErr(const std::vector<float> &out, const std::vector<double> &ref) {
  double d = 0, n = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(out[i]))
      return std::numeric_limits<double>::infinity();
    d += (out[i] - ref[i]) * (out[i] - ref[i]);
    n += ref[i] * ref[i];
  }
  return n == 0 ? std::numeric_limits<double>::infinity() : std::sqrt(d / n);
}

CompiledKernel compileOn(Runtime &runtime, const std::string &file, const std::string &kernel,
                         const std::string &atomics = "fp32") {
  GpuCompileOptions o;
  o.kernel = kernel;
  o.atomics = atomics;
  return compileKernel(runtime, file, o, runtime.targetArch());
}

void sync(Driver &driver) { driver.check(driver.api().cuCtxSynchronize(), "cuCtxSynchronize"); }

} // namespace

TEST_CASE("GPU gemm: every transpose combination, M/N/K tails", "[gpu][features]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  Runtime runtime(uncachedOptions());
  std::mt19937 rng(5);
  for (const char *variant : {"gemm_nn", "gemm_nt", "gemm_tn", "gemm_tt"}) {
    CompiledKernel k = compileOn(runtime, "examples/gemm.tile", variant);
    bool ta = variant[5] == 't', tb = variant[6] == 't';
    for (auto [m, n, kk] : std::vector<std::array<int64_t, 3>>{{77, 130, 45}, {128, 64, 64}, {1000, 33, 96}}) {
      std::vector<std::uint16_t> a = randomBf16(m * kk, rng), b = randomBf16(kk * n, rng);
      std::vector<double> ref(m * n, 0.0);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          for (int64_t p = 0; p < kk; ++p)
            s += double(fromBf16(ta ? a[p * m + i] : a[i * kk + p])) * fromBf16(tb ? b[j * kk + p] : b[p * n + j]);
          ref[i * n + j] = s;
        }
      DeviceBuffer A(*driver, a.size() * 2), B(*driver, b.size() * 2), C(*driver, m * n * 4);
      A.upload(a);
      B.upload(b);
      TensorView tA = ta ? TensorView(A.data(), DType::BF16, {kk, m}) : TensorView(A.data(), DType::BF16, {m, kk});
      TensorView tB = tb ? TensorView(B.data(), DType::BF16, {n, kk}) : TensorView(B.data(), DType::BF16, {kk, n});
      k.module->entry(variant).launch(nullptr, {tA, tB, TensorView(C.data(), DType::F32, {m, n})});
      sync(*driver);
      double e = relErr(C.download<float>(), ref);
      INFO(variant << " m " << m << " n " << n << " k " << kk << ": rel. error " << e);
      CHECK(e < 1e-5);
    }
  }
}

TEST_CASE("GPU row softmax with row and column tails", "[gpu][features]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  Runtime runtime(uncachedOptions());
  CompiledKernel k = compileOn(runtime, "examples/softmax.tile", "softmax");
  std::mt19937 rng(6);
  for (auto [rows, cols] : std::vector<std::array<int64_t, 2>>{{1000, 100}, {77, 128}, {5, 1}}) {
    std::vector<float> x = randomFloats(rows * cols, rng);
    std::vector<double> ref(x.size());
    for (int64_t r = 0; r < rows; ++r) {
      double mx = -INFINITY, sum = 0;
      for (int64_t c = 0; c < cols; ++c)
        mx = std::max(mx, double(x[r * cols + c]));
      for (int64_t c = 0; c < cols; ++c)
        sum += std::exp(x[r * cols + c] - mx);
      for (int64_t c = 0; c < cols; ++c)
        ref[r * cols + c] = std::exp(x[r * cols + c] - mx) / sum;
    }
    DeviceBuffer X(*driver, x.size() * 4), Y(*driver, x.size() * 4);
    X.upload(x);
    k.module->entry("softmax").launch(nullptr, {TensorView(X.data(), DType::F32, {rows, cols}),
                                               TensorView(Y.data(), DType::F32, {rows, cols})});
    sync(*driver);
    double e = relErr(Y.download<float>(), ref);
    INFO("rows " << rows << " cols " << cols << ": rel. error " << e);
    CHECK(e < 1e-5);
  }
}

TEST_CASE("GPU row sums/maxima/minima and column sums (atomic f32) with a row tail", "[gpu][features]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  Runtime runtime(uncachedOptions());
  CompiledKernel k = compileOn(runtime, "examples/reductions.tile", "row_stats");
  std::mt19937 rng(7);
  const int64_t rows = 77;
  std::vector<float> x = randomFloats(rows * 64, rng);
  std::vector<double> sum(rows), col(64, 0.0);
  std::vector<float> mx(rows), mn(rows);
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    float a = -INFINITY, b = INFINITY;
    for (int64_t c = 0; c < 64; ++c) {
      float v = x[r * 64 + c];
      s += v;
      a = std::max(a, v);
      b = std::min(b, v);
      col[c] += v;
    }
    sum[r] = s;
    mx[r] = a;
    mn[r] = b;
  }
  DeviceBuffer X(*driver, x.size() * 4), S(*driver, rows * 4), M(*driver, rows * 4), N(*driver, rows * 4),
      C(*driver, 64 * 4);
  X.upload(x);
  C.upload(std::vector<float>(64, 0.f));
  k.module->entry("row_stats").launch(
      nullptr, {TensorView(X.data(), DType::F32, {rows, 64}), TensorView(S.data(), DType::F32, {rows}),
                TensorView(M.data(), DType::F32, {rows}), TensorView(N.data(), DType::F32, {rows}),
                TensorView(C.data(), DType::F32, {64})});
  sync(*driver);
  CHECK(relErr(S.download<float>(), sum) < 1e-6);
  CHECK(M.download<float>() == mx);
  CHECK(N.download<float>() == mn);
  CHECK(relErr(C.download<float>(), col) < 1e-6);
}

TEST_CASE("GPU integer atomics, element and region form, are exact", "[gpu][features][sanitize]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  Runtime runtime(uncachedOptions());
  CompiledKernel k = compileOn(runtime, "examples/reductions.tile", "count_labels");
  std::mt19937 rng(8);
  const int64_t n = 1000;
  std::uniform_int_distribution<int> label(-2, 17); // outside [0, 16) is dropped
  std::vector<int> l(n);
  for (auto &v : l)
    v = label(rng);
  std::vector<int> counts(16, 0), totals(64, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (l[i] >= 0 && l[i] < 16)
      counts[l[i]]++;
    totals[i % 64] += l[i];
  }
  DeviceBuffer L(*driver, n * 4), Cn(*driver, 16 * 4), T(*driver, 64 * 4);
  L.upload(l);
  Cn.upload(std::vector<int>(16, 0));
  T.upload(std::vector<int>(64, 0));
  k.module->entry("count_labels").launch(nullptr, {TensorView(L.data(), DType::I32, {n}),
                                                   TensorView(Cn.data(), DType::I32, {16}),
                                                   TensorView(T.data(), DType::I32, {64})});
  sync(*driver);
  CHECK(Cn.download<int>() == counts);
  CHECK(T.download<int>() == totals);
}

TEST_CASE("GPU histogram: bf16 element atomics under each strategy, split bitwise stable", "[gpu][features][sanitize]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  Runtime runtime(uncachedOptions());
  std::mt19937 rng(9);
  const int64_t rows = 103, cols = 77, bins = 8, groups = 4;
  std::vector<float> x = randomFloats(rows * cols, rng);
  std::uniform_int_distribution<int> label(-1, 8);
  std::vector<int> l(rows * cols);
  for (auto &v : l)
    v = label(rng);
  std::vector<double> h((rows / groups) * bins, 0.0), t(bins, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      int b = l[r * cols + c];
      if (b < 0 || b >= bins)
        continue;
      if (r / groups < rows / groups)
        h[(r / groups) * bins + b] += x[r * cols + c];
      t[b] += x[r * cols + c];
    }
  for (const char *atomics : {"fp32", "split", "native"}) {
    CompiledKernel k = compileOn(runtime, "histogram.tile", "histogram", atomics);
    std::vector<std::uint16_t> first;
    for (int run = 0; run < 5; ++run) {
      DeviceBuffer X(*driver, x.size() * 4), L(*driver, l.size() * 4), H(*driver, h.size() * 2), T(*driver, bins * 2);
      X.upload(x);
      L.upload(l);
      H.upload(std::vector<std::uint16_t>(h.size(), 0));
      T.upload(std::vector<std::uint16_t>(bins, 0));
      k.module->entry("histogram").launch(nullptr, {TensorView(X.data(), DType::F32, {rows, cols}),
                                                    TensorView(L.data(), DType::I32, {rows, cols}),
                                                    TensorView(H.data(), DType::BF16, {rows / groups, bins}),
                                                    TensorView(T.data(), DType::BF16, {bins})});
      sync(*driver);
      std::vector<std::uint16_t> hb = H.download<std::uint16_t>(), tb = T.download<std::uint16_t>();
      std::vector<float> hf(hb.size()), tf(tb.size());
      for (size_t i = 0; i < hb.size(); ++i)
        hf[i] = fromBf16(hb[i]);
      for (size_t i = 0; i < tb.size(); ++i)
        tf[i] = fromBf16(tb[i]);
      double eh = relErr(hf, h), et = relErr(tf, t);
      INFO(atomics << " run " << run << ": H rel. error " << eh << ", T rel. error " << et);
      // Native keeps each of T's ~900 updates per bin in bf16, rounding every partial sum (8-bit mantissa against
      // a running sum ~30x the increments), in an order that changes from run to run: 0.028 to 0.060 was seen on
      // the H200. That error is the strategy's, not a bug (fp32 and split round once); lost or duplicated updates
      // would still be far above the bound.
      bool native = std::string(atomics) == "native";
      CHECK(eh < (native ? 2e-2 : 1e-2));
      CHECK(et < (native ? 0.15 : 1e-2));
      if (run == 0) {
        first = hb;
        WARN("GPU histogram " << atomics << ": H rel. error " << eh << ", T rel. error " << et);
      } else if (std::string(atomics) == "split") {
        CHECK(hb == first); // H is split over blocks, summed in a fixed order
      }
    }
  }
}
