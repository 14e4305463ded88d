// CUDA C++ → CUBIN with NVRTC, loaded lazily (dlopen) so the runtime has no link-time CUDA dependency.
//
// The device template headers (runtime/include/tilec/device/*.cuh) are embedded in the library at build time and
// handed to NVRTC in memory: `#include "tilec/device/mma_sm80.cuh"` works in any source without files on disk.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilec::runtime {

struct CompileOptions {
  // The exact target, e.g. "sm_90a". Compiler::compile requires it; Runtime::compile fills in the current device's.
  std::string arch;
  // Extra NVRTC options, passed after tilec's own (-std=c++17, include path, --ptxas-options=-v).
  std::vector<std::string> flags;
  // The name NVRTC reports in diagnostics.
  std::string programName = "tilec_kernel.cu";
};

// One function's resource usage as reported by `ptxas -v`.
struct PtxasFunctionInfo {
  std::string function;
  int registers = 0;
  int spillStoreBytes = 0;
  int spillLoadBytes = 0;
  int stackFrameBytes = 0;
  int sharedBytes = 0;
};

// Extracts per-function register/spill/stack/shared-memory figures from an NVRTC log that contains ptxas -v output.
std::vector<PtxasFunctionInfo> parsePtxasInfo(std::string_view log);

struct Cubin {
  std::vector<char> image;          // the ELF image, ready for cuModuleLoadData
  std::string arch;                 // what it was compiled for
  std::string log;                  // NVRTC's full log, including ptxas -v output
  std::vector<std::string> options; // the exact options NVRTC was given
  std::string toolchain;            // Compiler::toolchain() of the compiler that made it (disk-cache validation)

  std::vector<PtxasFunctionInfo> ptxasInfo() const { return parsePtxasInfo(log); }
  // The info for one kernel (by its mangled or extern "C" name), or nullopt.
  std::optional<PtxasFunctionInfo> ptxasInfo(std::string_view function) const;
};

// An embedded device header: the name it is included by and its contents.
struct DeviceHeader {
  std::string_view includeName; // e.g. "tilec/device/atomics.cuh"
  std::string_view contents;
};

struct CompilerConfig {
  // NVRTC shared library to load; empty: $TILEC_NVRTC_LIBRARY, else $CUDA_HOME/lib64, $CUDA_PATH/lib64,
  // /usr/local/cuda/lib64, else the sonames libnvrtc.so.13, .12, libnvrtc.so via the loader's search path.
  std::string nvrtcLibrary;
  // Directory holding cuda_bf16.h & co.; empty: $TILEC_CUDA_INCLUDE_DIR, else $CUDA_HOME/include,
  // $CUDA_PATH/include, /usr/local/cuda/include (the first that exists).
  std::string cudaIncludeDir;
};

class Compiler {
public:
  explicit Compiler(CompilerConfig config = {});
  ~Compiler();
  Compiler(const Compiler &) = delete;
  Compiler &operator=(const Compiler &) = delete;

  // Compiles `source` to a CUBIN for options.arch. Throws CompileError with NVRTC's log and the options on failure.
  Cubin compile(const std::string &source, const CompileOptions &options) const;
  // Compiles `source` to PTX for the virtual architecture of options.arch (sm_90a -> compute_90a), or for
  // options.arch itself when it is one (compute_90a): what `tilec --emit=ptx` prints. Throws CompileError like
  // compile().
  std::string compilePtx(const std::string &source, const CompileOptions &options) const;

  // The exact option list compile() would hand to NVRTC.
  std::vector<std::string> nvrtcOptions(const CompileOptions &options) const;

  // "major.minor" of the loaded NVRTC; loads it if needed.
  std::string nvrtcVersion() const;
  // What made a CUBIN besides its source and options, known without loading NVRTC: the NVRTC library file the
  // configured candidates name (a soname is looked up in $LD_LIBRARY_PATH, /etc/ld.so.conf's directories and the
  // system's, as the loader does; that file is then the one loaded) by canonical path, size and modification time,
  // and the CUDA include directory. NVRTC is loaded only when no candidate is found that way; nullopt when it
  // cannot be loaded either (no toolkit: only cached binaries can be served). Computed once per Compiler.
  std::optional<std::string> toolchain() const;
  // The CUDA include directory in use ("" when none was found; sources including CUDA headers will then fail).
  const std::string &cudaIncludeDir() const { return cudaIncludeDir_; }

  static const std::vector<DeviceHeader> &deviceHeaders();

  struct Nvrtc; // the loaded NVRTC entry points (Compiler.cpp)

private:
  const Nvrtc &nvrtc() const;
  const Nvrtc &nvrtcLocked() const;           // nvrtcMutex_ held
  const std::string &nvrtcFileLocked() const; // nvrtcMutex_ held

  CompilerConfig config_;
  std::string cudaIncludeDir_;
  mutable std::unique_ptr<Nvrtc> nvrtc_;
  mutable std::optional<std::string> nvrtcFile_; // located once: "" when no candidate is found without dlopen
  mutable std::optional<std::optional<std::string>> toolchain_; // computed once
  // A mutex rather than std::call_once: call_once runs on pthread_once, which a load failure (an exception) must
  // not unwind through.
  mutable std::mutex nvrtcMutex_;
};

} // namespace tilec::runtime
