// The runtime on a real GPU: compile hand-written kernels, load them, launch them through launch plans with
// workspaces, and compare with float64 CPU references. Each test passes with "SKIPPED: no CUDA driver" elsewhere.
#include "GpuTestSupport.h"
#include "TestKernels.h"
#include "tilec/runtime/Runtime.h"

using namespace tilec::runtime;
using namespace tilec::testing;

namespace {

// One runtime and one module for the whole binary: the split-K GEMM, the f32x4 column sum and the shared-memory
// reversal, compiled once for the device's arch.
RuntimeOptions withoutDiskCache() {
  RuntimeOptions options;
  options.cacheDirectory = ""; // compile for real: a stale entry must not hide a compiler problem
  return options;
}

struct Kernels {
  Runtime runtime{withoutDiskCache()};
  CompileResult compiled;
  std::shared_ptr<Module> module;

  Kernels() {
    compiled = runtime.compile(kSplitKGemmSource, {});
    std::vector<EntrySpec> entries;
    entries.push_back(splitKGemmEntry());

    EntrySpec columnSum;
    columnSum.name = "column_sum";
    columnSum.signature = Signature({{"x", DType::F32, {"R", 64}, 16}, {"out", DType::F32, {64}, 16}});
    columnSum.plan.launch({0, "column_sum_f32x4", {Expr::parse("ceildiv(R * 16, 256)"), 1, 1}, {256, 1, 1}, 0,
                           {KernelArg::tensor(0), KernelArg::tensor(1), KernelArg::i64(Expr::symbol("R"))}});
    entries.push_back(std::move(columnSum));

    EntrySpec reverse;
    reverse.name = "reverse";
    reverse.signature = Signature({{"x", DType::F32, {"N"}, 4}, {"out", DType::F32, {"N"}, 4}});
    reverse.plan.launch({0, "reverse_through_shared", {1, 1, 1}, {1024, 1, 1}, Expr::parse("N * 4"),
                         {KernelArg::tensor(0), KernelArg::tensor(1), KernelArg::i32(Expr::symbol("N"))}});
    entries.push_back(std::move(reverse));
    module = runtime.loadModule({compiled.cubin}, std::move(entries));
  }
};

Kernels &kernels() {
  static Kernels instance;
  return instance;
}

void checkSplitKGemm(Driver &driver, int M, int N, int K, bool viaDLPack) {
  std::mt19937 rng(M * 1000003 + N * 1009 + K);
  std::vector<std::uint16_t> a = randomBf16(std::size_t(M) * K, rng);
  std::vector<std::uint16_t> b = randomBf16(std::size_t(K) * N, rng);
  std::vector<std::uint16_t> c = randomBf16(std::size_t(M) * N, rng);
  DeviceBuffer deviceA(driver, a.size() * 2), deviceB(driver, b.size() * 2), deviceC(driver, c.size() * 2);
  deviceA.upload(a);
  deviceB.upload(b);
  deviceC.upload(c);

  std::vector<double> expected(c.size());
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double sum = fromBf16(c[std::size_t(i) * N + j]);
      for (int k = 0; k < K; ++k)
        sum += double(fromBf16(a[std::size_t(i) * K + k])) * double(fromBf16(b[std::size_t(k) * N + j]));
      expected[std::size_t(i) * N + j] = sum;
    }

  cu::Stream stream = nullptr;
  driver.check(driver.api().cuStreamCreate(&stream, 0), "cuStreamCreate");
  const Entry &gemm = kernels().module->entry("splitk_gemm");
  TensorView viewA(deviceA.data(), DType::BF16, {M, K});
  TensorView viewB(deviceB.data(), DType::BF16, {K, N});
  TensorView viewC(deviceC.data(), DType::BF16, {M, N});
  if (viaDLPack) {
    DLTensor tensorA{}, tensorB{}, tensorC{};
    viewA.toDLPack(tensorA);
    viewB.toDLPack(tensorB);
    viewC.toDLPack(tensorC);
    gemm.launch(stream, tensorA, &tensorB, tensorC);
  } else {
    gemm.launch(stream, viewA, viewB, viewC);
  }
  driver.check(driver.api().cuStreamSynchronize(stream), "cuStreamSynchronize");
  driver.check(driver.api().cuStreamDestroy(stream), "cuStreamDestroy");

  std::vector<std::uint16_t> result = deviceC.download<std::uint16_t>();
  std::vector<double> actual(result.size());
  for (std::size_t i = 0; i < result.size(); ++i)
    actual[i] = fromBf16(result[i]);
  double error = relativeError(actual, expected);
  INFO("M=" << M << " N=" << N << " K=" << K << " relative error " << error);
  // bf16 output rounding alone is up to 2^-9 relative per element.
  CHECK(error < 8e-3);
}

} // namespace

TEST_CASE("the device arch is reported and used for compiling", "[gpu]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  std::string arch = kernels().runtime.deviceArch();
  INFO("device arch " << arch);
  CHECK(arch.rfind("sm_", 0) == 0);
  CHECK(kernels().compiled.cubin->arch == arch);
  CHECK(kernels().compiled.cubin->ptxasInfo("splitk_mma"));
  // The driver's figures for the loaded CUBIN agree with ptxas's (CUDA_CACHE_DISABLE=1 keeps the log complete).
  FunctionAttributes attributes = kernels().module->functionAttributes("splitk_mma");
  CHECK(attributes.registers > 0);
  CHECK(attributes.maxThreadsPerBlock > 0);
  if (auto info = kernels().compiled.cubin->ptxasInfo("splitk_mma"); info && info->registers > 0) {
    CHECK(attributes.registers == info->registers);
    CHECK(attributes.localBytesPerThread == info->stackFrameBytes);
  }
}

TEST_CASE("split-K GEMM through a workspace plan matches a float64 reference", "[gpu]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  checkSplitKGemm(*driver, 256, 128, 1024, false); // every tile full
  checkSplitKGemm(*driver, 200, 72, 1000, false);  // tails in M and K, N even (vector atomics)
  checkSplitKGemm(*driver, 33, 17, 50, false);     // odd N: scalar atomics and element-wise tails
}

TEST_CASE("DLPack tensors launch the same plan", "[gpu][dlpack]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  checkSplitKGemm(*driver, 96, 40, 300, true);
}

TEST_CASE("f32x4 vector atomics sum columns exactly as the reference", "[gpu]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  const int rows = 4099;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> x(std::size_t(rows) * 64);
  for (float &value : x)
    value = uniform(rng);
  std::vector<double> expected(64, 0.0);
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < 64; ++j)
      expected[j] += x[std::size_t(r) * 64 + j];
  DeviceBuffer deviceX(*driver, x.size() * 4), deviceOut(*driver, 64 * 4);
  deviceX.upload(x);
  deviceOut.upload(std::vector<float>(64, 0.f));
  kernels().module->entry("column_sum").launch(nullptr, TensorView(deviceX.data(), DType::F32, {rows, 64}),
                                               TensorView(deviceOut.data(), DType::F32, {64}));
  driver->check(driver->api().cuCtxSynchronize(), "cuCtxSynchronize");
  double error = relativeError(deviceOut.download<float>(), expected);
  INFO("relative error " << error);
  CHECK(error < 1e-5);
}

TEST_CASE("a kernel needing more than 48 KB of dynamic shared memory is opted in", "[gpu]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  const int n = 25000; // 100 KB of shared memory
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i)
    x[i] = static_cast<float>(i);
  DeviceBuffer deviceX(*driver, n * 4), deviceOut(*driver, n * 4);
  deviceX.upload(x);
  const Entry &reverse = kernels().module->entry("reverse");
  auto steps = reverse.resolve({TensorView(deviceX.data(), DType::F32, {n}), TensorView(deviceOut.data(), DType::F32, {n})});
  REQUIRE(steps.at(0).dynamicSharedBytes == n * 4);
  reverse.launch(nullptr, TensorView(deviceX.data(), DType::F32, {n}), TensorView(deviceOut.data(), DType::F32, {n}));
  driver->check(driver->api().cuCtxSynchronize(), "cuCtxSynchronize");
  std::vector<float> out = deviceOut.download<float>();
  int mismatches = 0;
  for (int i = 0; i < n; ++i)
    mismatches += out[i] != x[n - 1 - i];
  CHECK(mismatches == 0);
  // Beyond the device's opt-in limit the runtime refuses, naming the kernel, instead of a failed launch.
  const int tooMany = 1 << 20;
  DeviceBuffer big(*driver, std::size_t(tooMany) * 4);
  CHECK_THROWS_WITH(reverse.launch(nullptr, TensorView(big.data(), DType::F32, {tooMany}),
                                   TensorView(big.data(), DType::F32, {tooMany})),
                    Catch::Contains("reverse_through_shared") && Catch::Contains("the device allows at most"));
}

TEST_CASE("a rejected argument launches nothing on the GPU", "[gpu]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  DeviceBuffer deviceX(*driver, 64 * 64 * 4), deviceOut(*driver, 64 * 4);
  deviceX.upload(std::vector<float>(64 * 64, 1.f));
  deviceOut.upload(std::vector<float>(64, -5.f));
  const Entry &columnSum = kernels().module->entry("column_sum");
  CHECK_THROWS_AS(columnSum.launch(nullptr, TensorView(deviceX.data(), DType::F32, {64, 64}),
                                   TensorView(deviceOut.data(), DType::F32, {32})),
                  ArgumentError);
  driver->check(driver->api().cuCtxSynchronize(), "cuCtxSynchronize");
  for (float value : deviceOut.download<float>())
    CHECK(value == -5.f);
}

TEST_CASE("driver errors carry the driver's name and description", "[gpu]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  try {
    driver->check(driver->api().cuModuleLoadData(nullptr, "not a cubin"), "cuModuleLoadData(garbage)");
    FAIL("loading garbage as a module did not fail");
  } catch (const DriverError &error) {
    CHECK(error.name().rfind("CUDA_ERROR_", 0) == 0);
    CHECK(!error.description().empty());
    CHECK_THAT(error.what(), Catch::Contains("cuModuleLoadData(garbage)") && Catch::Contains(error.name()));
  }
}
