// NVRTC compilation without a GPU: CUBINs for sm_90a, ptxas info in the log, errors with log and options.
#include "TestKernels.h"
#include "tilec/runtime/Compiler.h"
#include "tilec/runtime/Error.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace tilec::runtime;

namespace {

bool isElf(const std::vector<char> &image) {
  return image.size() > 64 && std::memcmp(image.data(), "\x7f" "ELF", 4) == 0;
}

} // namespace

TEST_CASE("test binaries run with CUDA_CACHE_DISABLE=1, so NVRTC runs ptxas for every compile", "[compiler]") {
  // tests/catch_main.cpp sets it (ctest's ENVIRONMENT list never delivered it: catch_discover_tests split it).
  const char *value = std::getenv("CUDA_CACHE_DISABLE");
  REQUIRE(value != nullptr);
  CHECK(std::string(value) == "1");
}

TEST_CASE("bf16, mma.sync and fp32 atomics compile to an sm_90a CUBIN without a GPU", "[compiler]") {
  Compiler compiler;
  auto start = std::chrono::steady_clock::now();
  Cubin cubin = compiler.compile(tilec::testing::kSplitKGemmSource, {"sm_90a"});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  WARN("cold NVRTC compile of the split-K GEMM source for sm_90a took " << seconds << " s (NVRTC "
                                                                         << compiler.nvrtcVersion() << ")");
  INFO("NVRTC log:\n" << cubin.log);
  if (cubin.log.find("served from the CUDA compute cache") != std::string::npos)
    FAIL("NVRTC skipped ptxas (CUDA compute cache): run this test with CUDA_CACHE_DISABLE=1, as ctest does");
  CHECK(cubin.arch == "sm_90a");
  REQUIRE(isElf(cubin.image));
  // ptxas -v output is kept: every kernel has register figures.
  CHECK(cubin.log.find("Used ") != std::string::npos);
  CHECK(cubin.log.find("registers") != std::string::npos);
  auto mma = cubin.ptxasInfo("splitk_mma");
  REQUIRE(mma);
  CHECK(mma->registers > 0);
  CHECK(mma->spillStoreBytes == 0);
  auto reverse = cubin.ptxasInfo("reverse_through_shared");
  REQUIRE(reverse);
  CHECK(reverse->registers > 0);
  CHECK(cubin.ptxasInfo().size() >= 5);
  CHECK(!cubin.ptxasInfo("no_such_kernel"));
  // The options are recorded as given to NVRTC.
  CHECK(std::find(cubin.options.begin(), cubin.options.end(), "--gpu-architecture=sm_90a") != cubin.options.end());
}

TEST_CASE("the same source compiles for sm_80 (pre-Hopper atomics fall back to scalar ones)", "[compiler]") {
  Compiler compiler;
  Cubin cubin = compiler.compile(tilec::testing::kSplitKGemmSource, {"sm_80"});
  CHECK(isElf(cubin.image));
  CHECK(cubin.arch == "sm_80");
}

TEST_CASE("an NVRTC error carries the full log and the options", "[compiler]") {
  Compiler compiler;
  CompileOptions options{"sm_90a", {"-DTILEC_TEST_FLAG=1"}, "broken_kernel.cu"};
  const char *source = "extern \"C\" __global__ void k(float *x) { x[0] = undeclared_name; }\n";
  try {
    compiler.compile(source, options);
    FAIL("compiling a broken source did not throw");
  } catch (const CompileError &error) {
    CHECK(error.log().find("undeclared_name") != std::string::npos);
    CHECK(error.log().find("broken_kernel.cu") != std::string::npos);
    std::string message = error.what();
    CHECK(message.find("failed to compile broken_kernel.cu for sm_90a") != std::string::npos);
    CHECK(message.find("-DTILEC_TEST_FLAG=1") != std::string::npos);
    CHECK(message.find("undeclared_name") != std::string::npos);
    CHECK(std::find(error.options().begin(), error.options().end(), "-DTILEC_TEST_FLAG=1") != error.options().end());
  }
}

TEST_CASE("a virtual or missing arch is rejected before NVRTC runs", "[compiler]") {
  Compiler compiler;
  CHECK_THROWS_WITH(compiler.compile("", {"compute_90"}),
                    Catch::Contains("arch must name a real GPU such as sm_90a, got 'compute_90'"));
  CHECK_THROWS_AS(compiler.compile("", {""}), CompileError);
}

TEST_CASE("a malformed arch is rejected before NVRTC runs", "[compiler]") {
  Compiler compiler;
  for (const char *arch : {"sm_", "sm_9", "sm_90ab", "sm_x90", "sm_90 "})
    CHECK_THROWS_WITH(compiler.compile("", {arch}), Catch::Contains("arch must name a real GPU such as sm_90a"));
  CHECK_THROWS_WITH(compiler.compilePtx("", {"compute_9a"}), Catch::Contains("arch must name a real GPU"));
}

// NVRTC itself answers only NVRTC_ERROR_INVALID_OPTION for these (tilec --arch=sm_12, before this check).
TEST_CASE("an arch NVRTC does not build for is named with the ones it does", "[compiler]") {
  Compiler compiler;
  const std::string source = "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] = 1.0f; }\n";
  for (const char *arch : {"sm_12", "sm_999"}) {
    INFO(arch);
    try {
      compiler.compile(source, {arch});
      FAIL("compiling for an arch NVRTC does not support did not throw");
    } catch (const CompileError &error) {
      std::string message = error.what();
      CHECK(message.find(std::string("cannot compile tilec_kernel.cu for ") + arch + ": it builds for ") !=
            std::string::npos);
      CHECK(message.find("sm_90") != std::string::npos);
    }
  }
  CHECK_THROWS_WITH(compiler.compilePtx(source, {"compute_12"}), Catch::Contains("it builds for "));
  CHECK_THROWS_WITH(compiler.compilePtx(source, {"sm_12"}), Catch::Contains("it builds for "));
}

TEST_CASE("PTX comes for a real arch's virtual one or for a virtual arch itself", "[compiler]") {
  Compiler compiler;
  const std::string source = "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] = 1.0f; }\n";
  std::string fromReal = compiler.compilePtx(source, {"sm_90a"});
  std::string fromVirtual = compiler.compilePtx(source, {"compute_90a"});
  CHECK(fromReal.find(".target sm_90a") != std::string::npos);
  CHECK(fromVirtual == fromReal);
  CHECK(compiler.compilePtx(source, {"compute_80"}).find(".target sm_80") != std::string::npos);
  CHECK_THROWS_WITH(compiler.compilePtx(source, {"compute_"}), Catch::Contains("arch must name a real GPU"));
}

TEST_CASE("the device headers are embedded in the library", "[compiler]") {
  const auto &headers = Compiler::deviceHeaders();
  std::vector<std::string> names;
  for (const DeviceHeader &header : headers) {
    names.emplace_back(header.includeName);
    CHECK(!header.contents.empty());
  }
  for (const char *expected : {"tilec/device/atomics.cuh", "tilec/device/copy.cuh", "tilec/device/mma_sm80.cuh",
                               "tilec/device/types.cuh"})
    CHECK(std::find(names.begin(), names.end(), expected) != names.end());
  // Contents, not just names: the mma wrapper's PTX is in there.
  for (const DeviceHeader &header : headers)
    if (header.includeName == "tilec/device/mma_sm80.cuh")
      CHECK(header.contents.find("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32") != std::string::npos);
}

TEST_CASE("a missing NVRTC library is reported with every path tried", "[compiler]") {
  CompilerConfig config;
  config.nvrtcLibrary = "/nonexistent/libnvrtc.so";
  Compiler compiler(config);
  CHECK_THROWS_WITH(compiler.compile("", {"sm_90a"}),
                    Catch::Contains("NVRTC could not be loaded") && Catch::Contains("/nonexistent/libnvrtc.so"));
}

TEST_CASE("the CUDA include directory is configurable", "[compiler]") {
  CompilerConfig config;
  config.cudaIncludeDir = "/opt/somewhere/include";
  Compiler compiler(config);
  CHECK(compiler.cudaIncludeDir() == "/opt/somewhere/include");
  auto options = compiler.nvrtcOptions({"sm_90a", {"-lineinfo"}});
  CHECK(std::find(options.begin(), options.end(), "--include-path=/opt/somewhere/include") != options.end());
  CHECK(options.back() == "-lineinfo");
}

TEST_CASE("ptxas -v output is parsed per function", "[compiler]") {
  const char *log = "ptxas info    : 0 bytes gmem\n"
                    "ptxas info    : Compiling entry function 'alpha' for 'sm_90a'\n"
                    "ptxas info    : Function properties for alpha\n"
                    "    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
                    "ptxas info    : Used 40 registers, used 1 barriers, 1024 bytes smem, 380 bytes cmem[0]\n"
                    "ptxas info    : Compiling entry function 'beta' for 'sm_90a'\n"
                    "ptxas info    : Function properties for beta\n"
                    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                    "ptxas info    : Used 8 registers, used 0 barriers, 360 bytes cmem[0]\n";
  auto info = parsePtxasInfo(log);
  REQUIRE(info.size() == 2);
  CHECK(info[0].function == "alpha");
  CHECK(info[0].registers == 40);
  CHECK(info[0].stackFrameBytes == 16);
  CHECK(info[0].spillStoreBytes == 8);
  CHECK(info[0].spillLoadBytes == 4);
  CHECK(info[0].sharedBytes == 1024);
  CHECK(info[1].function == "beta");
  CHECK(info[1].registers == 8);
  CHECK(info[1].sharedBytes == 0);
}
