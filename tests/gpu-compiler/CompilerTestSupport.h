// Compiling shipped .tile kernels through the compiler library and NVRTC, for the tests in this directory.
#pragma once

#include "tilec/Jit/GpuProgram.h"
#include "tilec/runtime/Runtime.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace tilec::testing {

// The kernels directory: $TILEC_KERNELS_DIR, else <binary>/../kernels (the GPU bundle), else the source tree.
inline std::string kernelsDir() {
  if (const char *env = std::getenv("TILEC_KERNELS_DIR"))
    return env;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    std::string path(exe, n);
    std::string bundled = path.substr(0, path.rfind('/')) + "/../kernels";
    if (std::ifstream(bundled + "/flash_attention/bwd.tile"))
      return bundled;
  }
  return TILEC_KERNELS_ROOT;
}

inline std::string readKernel(const std::string &relative) {
  std::ifstream in(kernelsDir() + "/" + relative);
  REQUIRE(in);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline runtime::RuntimeOptions uncachedOptions() {
  runtime::RuntimeOptions options;
  options.cacheDirectory = "";
  return options;
}

struct CompiledKernel {
  GpuProgram program;
  runtime::CompileResult compiled;
  std::shared_ptr<runtime::Module> module;
};

// .tile -> CUDA + plans -> CUBIN for `arch` -> Module. Fails the test with the compiler's or NVRTC's message.
inline CompiledKernel compileKernel(runtime::Runtime &rt, const std::string &relative,
                                    const GpuCompileOptions &options, const std::string &arch) {
  CompiledKernel k;
  k.program = compileForGpu(readKernel(relative), relative, options);
  INFO(k.program.diagnostics);
  REQUIRE(k.program.ok);
  try {
    k.compiled = rt.compile(k.program.cuda, {arch, {}});
  } catch (const std::exception &error) {
    FAIL("NVRTC: " << error.what());
  }
  k.module = rt.loadModule({k.compiled.cubin}, k.program.entries);
  return k;
}

} // namespace tilec::testing
