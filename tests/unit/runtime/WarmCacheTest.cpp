// A warm disk cache needs no NVRTC: the key is computed without loading it, a disk hit does not load it,
// and entries record the toolkit that made them, so that a new or another toolkit recompiles instead of serving
// a binary it did not make.
#include "CacheRaceSource.h"
#include "TempDir.h"
#include "TestArtifacts.h"
#include "tilec/runtime/Cache.h"
#include "tilec/runtime/Error.h"
#include "tilec/runtime/Runtime.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace tilec::runtime;
using tilec::testing::TempDir;

namespace {

const char *const kMissingNvrtc = "/nonexistent/tilec-test/libnvrtc.so";

const char *const kTinyKernel = "extern \"C\" __global__ void tiny(float *x) { x[threadIdx.x] += 1.0f; }\n";

RuntimeOptions cachedIn(const std::string &directory, const std::string &nvrtcLibrary = "") {
  RuntimeOptions options;
  options.cacheDirectory = directory;
  options.compiler.nvrtcLibrary = nvrtcLibrary;
  return options;
}

std::string helperPath() {
  return tilec::testing::testArtifactPath("TILEC_CACHE_RACE_HELPER", TILEC_CACHE_RACE_HELPER, "tilec_cache_race_helper");
}

// Runs the helper in a fresh process (with `environment` prepended to its command line); returns its first output
// line, or "exit N: <line>" when it fails.
std::string runHelper(const std::string &environment, const std::string &directory, const std::string &tag) {
  std::string command = environment + " '" + helperPath() + "' '" + directory + "' " + tag + " --report 2>&1";
  FILE *pipe = popen(command.c_str(), "r");
  REQUIRE(pipe);
  char line[4096] = {};
  std::string output = std::fgets(line, sizeof line, pipe) ? line : "";
  int status = pclose(pipe);
  if (!output.empty() && output.back() == '\n')
    output.pop_back();
  return status == 0 ? output : "exit " + std::to_string(status) + ": " + output;
}

} // namespace

TEST_CASE("the toolchain is known without loading NVRTC and names the library file", "[cache][warm]") {
  Compiler compiler;
  std::optional<std::string> toolchain = compiler.toolchain();
  REQUIRE(toolchain);
  CHECK(toolchain->find("nvrtc=/") == 0);
  CHECK(toolchain->find("libnvrtc") != std::string::npos);
  CHECK(toolchain->find(" size=") != std::string::npos);
  CHECK(toolchain->find(" mtime=") != std::string::npos);
  CHECK(toolchain->find("include=" + compiler.cudaIncludeDir()) != std::string::npos);
  // Another NVRTC file (here a copy of the name with other contents) is another toolchain.
  TempDir other;
  std::ofstream(other.path() + "/libnvrtc.so.13") << "not really NVRTC";
  CompilerConfig config;
  config.nvrtcLibrary = other.path() + "/libnvrtc.so.13";
  std::optional<std::string> otherToolchain = Compiler(config).toolchain();
  REQUIRE(otherToolchain);
  CHECK(*otherToolchain != *toolchain);
  CHECK(otherToolchain->find(other.path() + "/libnvrtc.so.13 size=16 ") != std::string::npos);
  // Without any NVRTC there is no toolchain (and compiling says why).
  config.nvrtcLibrary = kMissingNvrtc;
  CHECK_FALSE(Compiler(config).toolchain());
}

TEST_CASE("a disk-cache hit works with NVRTC unloadable, and compiling then says NVRTC is missing", "[cache][warm]") {
  TempDir directory;
  CompileResult warmed = Runtime(cachedIn(directory.path())).compile(kTinyKernel, {"sm_90a"});
  REQUIRE(warmed.source == CacheSource::Compiled);

  Runtime withoutNvrtc(cachedIn(directory.path(), kMissingNvrtc));
  CompileResult hit = withoutNvrtc.compile(kTinyKernel, {"sm_90a"});
  CHECK(hit.source == CacheSource::Disk);
  CHECK(hit.key == warmed.key);
  CHECK(hit.cubin->image == warmed.cubin->image);
  CHECK(hit.cubin->toolchain == warmed.cubin->toolchain);
  CHECK_THROWS_WITH(withoutNvrtc.compile(kTinyKernel, {"sm_80"}), Catch::Contains("NVRTC could not be loaded"));
}

TEST_CASE("an entry made by another toolchain is recompiled and replaced", "[cache][warm]") {
  TempDir directory;
  CompileResult warmed = Runtime(cachedIn(directory.path())).compile(kTinyKernel, {"sm_90a"});
  REQUIRE(warmed.source == CacheSource::Compiled);
  DiskCache disk(directory.path());
  Cubin forged = *warmed.cubin;
  forged.toolchain = "nvrtc=/usr/local/cuda-12.4/lib64/libnvrtc.so.12.4.131 size=1 mtime=1.0 include=/elsewhere";
  forged.image = {'o', 'l', 'd'};
  REQUIRE(disk.store(warmed.key, forged));

  Runtime runtime(cachedIn(directory.path()));
  CompileResult recompiled = runtime.compile(kTinyKernel, {"sm_90a"});
  CHECK(recompiled.source == CacheSource::Compiled);
  CHECK(recompiled.cubin->image == warmed.cubin->image);
  CHECK(runtime.cache().disk()->staleEntries() == 1);
  CHECK(runtime.cache().disk()->corruptEntries() == 0);
  // The entry now holds this toolchain's binary.
  CompileResult again = Runtime(cachedIn(directory.path())).compile(kTinyKernel, {"sm_90a"});
  CHECK(again.source == CacheSource::Disk);
  CHECK(again.cubin->image == warmed.cubin->image);
  // Without NVRTC the other toolchain's entry is the best there is: served.
  REQUIRE(disk.store(warmed.key, forged));
  CHECK(Runtime(cachedIn(directory.path(), kMissingNvrtc)).compile(kTinyKernel, {"sm_90a"}).cubin->image ==
        forged.image);
}

TEST_CASE("the first disk hit of a fresh process does not map NVRTC", "[cache][warm]") {
  TempDir directory;
  CHECK(runHelper("", directory.path(), "warm").rfind("compiled nvrtc=mapped", 0) == 0);
  CHECK(runHelper("", directory.path(), "warm").rfind("disk nvrtc=unmapped", 0) == 0);
  const std::string withoutNvrtc = std::string("TILEC_NVRTC_LIBRARY=") + kMissingNvrtc;
  CHECK(runHelper(withoutNvrtc, directory.path(), "warm").rfind("disk nvrtc=unmapped", 0) == 0);
  CHECK_THAT(runHelper(withoutNvrtc, directory.path(), "cold"), Catch::Contains("NVRTC could not be loaded"));
}

TEST_CASE("TILEC_CUDA_ARCH picks the arch when the caller gives none, and must name a real GPU", "[runtime]") {
  // No driver is loaded: the override is used instead of asking the device (the mma.sync branch of wgmma kernels
  // is run on a Hopper GPU with TILEC_CUDA_ARCH=sm_90).
  RuntimeOptions options;
  options.cacheDirectory = "";
  options.driverLibrary = "/nonexistent/tilec-test/libcuda.so.1";
  Runtime runtime(options);
  // A value that is not a real arch is refused before NVRTC sees it (it would report only an unknown option).
  for (const char *bad : {"sm_9", "sm_90ab", "sm_hopper", "sm_"}) {
    ::setenv("TILEC_CUDA_ARCH", bad, 1);
    CHECK_THROWS_WITH(runtime.compile(kTinyKernel, {}),
                      Catch::Contains(std::string("TILEC_CUDA_ARCH must name a real GPU such as sm_90 or sm_90a, got '") +
                                      bad + "'"));
  }
  ::setenv("TILEC_CUDA_ARCH", "sm_90", 1);
  CompileResult compiled;
  try {
    compiled = runtime.compile(kTinyKernel, {});
  } catch (const CompileError &error) {
    ::unsetenv("TILEC_CUDA_ARCH");
    if (std::string(error.what()).find("could not be loaded") != std::string::npos) {
      WARN("SKIPPED: no NVRTC (" << error.what() << ")");
      return;
    }
    FAIL(error.what());
  }
  CHECK(compiled.cubin->arch == "sm_90");
  // The caller's arch wins over the variable.
  CHECK(runtime.compile(kTinyKernel, {"sm_90a"}).cubin->arch == "sm_90a");
  ::setenv("TILEC_CUDA_ARCH", "compute_90", 1);
  CHECK_THROWS_WITH(runtime.compile(kTinyKernel, {}),
                    Catch::Contains("TILEC_CUDA_ARCH must name a real GPU such as sm_90 or sm_90a, got 'compute_90'"));
  ::unsetenv("TILEC_CUDA_ARCH");
  // Without it, a compile that must ask the (missing) driver fails saying so.
  CHECK_THROWS_AS(runtime.compile(kTinyKernel, {}), NoDriverError);
}
