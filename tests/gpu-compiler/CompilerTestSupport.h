// Compiling shipped .tile kernels through the compiler library and NVRTC, for the tests in this directory.
#pragma once

#include "tilec/Jit/GpuProgram.h"
#include "tilec/runtime/Runtime.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

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

// Every .tile file under kernelsDir()/`under` (recursively), as paths relative to kernelsDir(), sorted: lists of
// kernels to test are derived from the tree, so a kernel added to kernels/ cannot be left out.
inline std::vector<std::string> tileFiles(const std::string &under = "") {
  namespace fs = std::filesystem;
  fs::path root(kernelsDir());
  std::vector<std::string> files;
  for (const auto &e : fs::recursive_directory_iterator(root / under))
    if (e.is_regular_file() && e.path().extension() == ".tile")
      files.push_back(fs::relative(e.path(), root).generic_string());
  std::sort(files.begin(), files.end());
  return files;
}

// The names of the kernels a .tile file defines (`kernel NAME` at the start of a line).
inline std::vector<std::string> kernelNames(const std::string &source) {
  static const std::regex kernel("^kernel[ \\t]+([A-Za-z_][A-Za-z0-9_]*)", std::regex::multiline);
  std::vector<std::string> names;
  for (std::sregex_iterator it(source.begin(), source.end(), kernel), end; it != end; ++it)
    names.push_back((*it)[1]);
  return names;
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

// .tile -> CUDA + plans -> CUBIN for `arch` -> Module. Fails the test with the compiler's or NVRTC's message. The
// source is compiled for `arch` too (its SM and WGMMA), unless `options` names a target; "" for both: the runtime's.
inline CompiledKernel compileKernel(runtime::Runtime &rt, const std::string &relative,
                                    GpuCompileOptions options, const std::string &arch) {
  CompiledKernel k;
  if (options.arch.empty())
    options.arch = arch;
  k.program = compileForGpu(readKernel(relative), relative, options);
  INFO(k.program.diagnostics);
  REQUIRE(k.program.ok);
  try {
    k.compiled = rt.compile(k.program.cuda, {k.program.arch, {}});
  } catch (const std::exception &error) {
    FAIL("NVRTC: " << error.what());
  }
  k.module = rt.loadModule({k.compiled.cubin}, k.program.entries);
  return k;
}

} // namespace tilec::testing
