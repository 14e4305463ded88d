// The compiler for hosts: .tile source + constants -> CUDA C++ and the runtime's entry specs (signature and launch
// plan of every entry), ready for runtime::Compiler (NVRTC) and runtime::Module. Linked with MLIR statically; the
// result holds no MLIR type, and nothing here throws (the runtime, which does, is called by the host).
#ifndef TILEC_JIT_GPUPROGRAM_H
#define TILEC_JIT_GPUPROGRAM_H

#include "tilec/runtime/Module.h"

#include <map>
#include <string>
#include <vector>

// Exported from libtilec_compiler.so (tilec::compiler), whose other symbols are hidden.
#define TILEC_COMPILER_API __attribute__((visibility("default")))

namespace tilec {

struct GpuCompileOptions {
  std::map<std::string, std::string> defines; // -D name=value
  std::string kernel;                          // only this kernel (empty: all)
  std::string atomics;                         // fp32 | split | native; empty: fp32, or split with deterministic
  bool deterministic = false;
  int64_t maxSplit = 8;
  // The GPU the kernels are for: the source's SM and WGMMA (target-dependent defaults such as tile sizes). Empty:
  // TILEC_CUDA_ARCH, else the current device's, else sm_90a; GpuProgram::arch says which.
  std::string arch;
};

struct GpuProgram {
  bool ok = false;
  std::string diagnostics; // compiler errors as file:line:col text when !ok (remarks are not included)
  std::string arch;        // the target the source was compiled for: build `cuda` for exactly this arch
  std::string cuda;        // one translation unit: every kernel of every entry
  std::vector<runtime::EntrySpec> entries; // each launch refers to CUBIN 0, compiled from `cuda`
};

/// Compiles `source` (named `bufferName` in diagnostics).
TILEC_COMPILER_API GpuProgram compileForGpu(const std::string &source, const std::string &bufferName,
                         const GpuCompileOptions &options = {});

} // namespace tilec

#endif
