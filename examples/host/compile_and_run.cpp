// The just-in-time path for hosts: compile .tile source at run time with tilec::compiler (libtilec_compiler.so:
// MLIR inside, nothing of it in the host), build the CUBIN with NVRTC through the runtime's caches, load the module
// and run one entry on random inputs made from its signature.
//
//   tilec-compile-and-run K.tile [-D name=value]... [--atomics fp32|split|native] [--arch sm_XX]
//                         ENTRY [--dim name=N]... [--zero param]... [--seed S]
//
// Without a GPU it compiles for --arch (default sm_90a), prints each kernel's registers, and says it cannot run.
#include "RunEntry.h"

#include <tilec/Jit/GpuProgram.h>
#include <tilec/runtime/Error.h>
#include <tilec/runtime/Runtime.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace rt = tilec::runtime;

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s K.tile [-D name=value]... [--atomics S] [--arch sm_XX] ENTRY [--dim name=N]... "
                         "[--zero param]... [--seed S]\n", argv[0]);
    return 2;
  }
  std::ifstream file(argv[1]);
  if (!file) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 1;
  }
  std::stringstream source;
  source << file.rdbuf();
  tilec::GpuCompileOptions options;
  int next = 2;
  for (; next + 1 < argc && argv[next][0] == '-'; next += 2) {
    std::string flag = argv[next], value = argv[next + 1];
    if (flag == "-D" && value.find('=') != std::string::npos)
      options.defines[value.substr(0, value.find('='))] = value.substr(value.find('=') + 1);
    else if (flag == "--atomics")
      options.atomics = value;
    else if (flag == "--arch")
      options.arch = value;
    else {
      std::fprintf(stderr, "unknown option %s\n", flag.c_str());
      return 2;
    }
  }
  tilec::GpuProgram program = tilec::compileForGpu(source.str(), argv[1], options);
  if (!program.ok) {
    std::fprintf(stderr, "%s", program.diagnostics.c_str());
    return 1;
  }
  // The program was compiled for one target (--arch, else TILEC_CUDA_ARCH, the device's or sm_90a: its SM and
  // WGMMA picked the tile sizes); the CUBIN is built for the same.
  const std::string &arch = program.arch;
  try {
    rt::Runtime runtime;
    rt::CompileResult compiled = runtime.compile(program.cuda, {arch, {}, "compile_and_run.cu"});
    std::printf("%s: %zu entries, CUBIN for %s (%s)\n", argv[1], program.entries.size(), arch.c_str(),
                compiled.source == rt::CacheSource::Compiled ? "compiled" : "from the cache");
    for (const rt::PtxasFunctionInfo &info : compiled.cubin->ptxasInfo())
      std::printf("  %s: %d registers, %d bytes spilled\n", info.function.c_str(), info.registers,
                  info.spillStoreBytes);
    auto module = runtime.loadModule({compiled.cubin}, program.entries);
    if (next >= argc)
      return 0;
    return example::runEntry(*module, argc, argv, next);
  } catch (const rt::Error &error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
}
