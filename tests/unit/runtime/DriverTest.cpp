// Without a CUDA driver the runtime starts and compiles, and fails only at launch, saying why.
#include "TestKernels.h"
#include "tilec/runtime/Error.h"
#include "tilec/runtime/Runtime.h"

#include <catch2/catch.hpp>

#include <cstdlib>

using namespace tilec::runtime;

namespace {

// A path that cannot exist, so the test behaves the same on a machine that has a driver.
const char *const kMissingDriver = "/nonexistent/tilec-test/libcuda.so.1";

RuntimeOptions withoutDriver() {
  RuntimeOptions options;
  options.driverLibrary = kMissingDriver;
  options.cacheDirectory = ""; // no disk cache
  return options;
}

} // namespace

TEST_CASE("without a driver, compiling works and launching fails with 'no CUDA driver'", "[driver]") {
  Runtime runtime(withoutDriver());
  CompileResult compiled = runtime.compile(tilec::testing::kSplitKGemmSource, {"sm_90a"});
  REQUIRE(compiled.cubin);
  auto module = runtime.loadModule({compiled.cubin}, {tilec::testing::splitKGemmEntry()});
  const Entry &gemm = module->entry("splitk_gemm");

  // Well-formed arguments (the pointers are never dereferenced): validation passes, the launch needs the driver.
  alignas(16) static char fake[64];
  TensorView a(fake, DType::BF16, {32, 64});
  TensorView b(fake, DType::BF16, {64, 16});
  TensorView c(fake, DType::BF16, {32, 16});
  REQUIRE_NOTHROW(gemm.check({a, b, c}));
  try {
    gemm.launch(nullptr, a, b, c);
    FAIL("launch without a driver did not throw");
  } catch (const NoDriverError &error) {
    std::string message = error.what();
    CHECK(message.rfind(std::string("no CUDA driver: ") + kMissingDriver + " could not be loaded", 0) == 0);
  }
}

TEST_CASE("bad arguments are reported before the missing driver", "[driver]") {
  Runtime runtime(withoutDriver());
  auto module = runtime.loadModule({std::make_shared<const Cubin>(Cubin{{'x'}, "sm_90a", "", {}})},
                                   {tilec::testing::splitKGemmEntry()});
  alignas(16) static char fake[64];
  TensorView a(fake, DType::F32, {32, 64});
  TensorView b(fake, DType::BF16, {64, 16});
  TensorView c(fake, DType::BF16, {32, 16});
  CHECK_THROWS_AS(module->entry("splitk_gemm").launch(nullptr, a, b, c), ArgumentError);
}

TEST_CASE("compiling for 'the device' without a driver asks for an explicit arch", "[driver]") {
  Runtime runtime(withoutDriver());
  CHECK_THROWS_WITH(runtime.compile("extern \"C\" __global__ void k() {}"),
                    Catch::StartsWith("no CUDA driver: ") && Catch::Contains("give CompileOptions::arch"));
  CHECK_THROWS_AS(runtime.deviceArch(), NoDriverError);
}

TEST_CASE("TILEC_CUDA_DRIVER_LIBRARY overrides the driver library", "[driver]") {
  const char *previous = std::getenv("TILEC_CUDA_DRIVER_LIBRARY");
  std::string saved = previous ? previous : "";
  setenv("TILEC_CUDA_DRIVER_LIBRARY", kMissingDriver, 1);
  CHECK(Driver::defaultLibraryPath() == kMissingDriver);
  CHECK(RuntimeOptions().driverLibrary == kMissingDriver);
  CHECK_THROWS_WITH(Driver::load(), Catch::StartsWith(std::string("no CUDA driver: ") + kMissingDriver));
  if (previous)
    setenv("TILEC_CUDA_DRIVER_LIBRARY", saved.c_str(), 1);
  else
    unsetenv("TILEC_CUDA_DRIVER_LIBRARY");
  CHECK(Driver::defaultLibraryPath() == (previous ? saved : std::string("libcuda.so.1")));
}

TEST_CASE("a library that is not libcuda is not mistaken for a driver", "[driver]") {
  CHECK_THROWS_WITH(Driver::load("libm.so.6"), Catch::Contains("does not export cuDriverGetVersion"));
}
