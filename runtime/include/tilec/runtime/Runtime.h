// The runtime's front door: compile CUDA C++ through the caches and build modules from the results.
//
//   tilec::runtime::Runtime runtime;                        // loads nothing yet
//   auto compiled = runtime.compile(source, {"sm_90a"});    // NVRTC, memory cache, disk cache
//   auto module = runtime.loadModule({compiled.cubin}, {entrySpec});
//   module->entry("gemm").launch(stream, a, b, c);          // driver loaded here, arguments checked first
#pragma once

#include "tilec/runtime/Cache.h"
#include "tilec/runtime/Compiler.h"
#include "tilec/runtime/Driver.h"
#include "tilec/runtime/Module.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilec::runtime {

// The tilec version compiled into the library ("0.1.0"); part of every cache key.
const char *version();

struct RuntimeOptions {
  // libcuda to load on first need; default $TILEC_CUDA_DRIVER_LIBRARY, else libcuda.so.1.
  std::string driverLibrary = Driver::defaultLibraryPath();
  CompilerConfig compiler;
  // Disk cache directory. Unset: defaultCacheDirectory() (honours TILEC_CACHE=0); empty string: no disk cache.
  std::optional<std::string> cacheDirectory;
  // Disk cache size bound in bytes; unset: defaultCacheMaxBytes() ($TILEC_CACHE_MAX_BYTES, else 1 GiB).
  std::optional<std::uint64_t> cacheMaxBytes;
};

struct CompileResult {
  std::shared_ptr<const Cubin> cubin;
  CacheSource source;
  std::string key;
};

class Runtime {
public:
  explicit Runtime(RuntimeOptions options = {});
  ~Runtime();

  // Compiles through the caches. An empty options.arch means the current device's (which needs the driver: without
  // one this throws NoDriverError suggesting an explicit arch). Options that read headers from the host's disk
  // (-I / --include-path, -include / --pre-include) bypass both caches: the key covers the source, the options and
  // the embedded device headers, not files on disk. Such results have an empty key. A disk-cache hit does not load
  // NVRTC: entries record the toolkit that made them (Compiler::toolchain), checked when one is installed here.
  CompileResult compile(const std::string &source, CompileOptions options = {});

  std::shared_ptr<Module> loadModule(std::vector<std::shared_ptr<const Cubin>> cubins,
                                     std::vector<EntrySpec> entries) const;

  // Loads the driver on first use; throws NoDriverError.
  Driver &driver();
  // The current device's arch, e.g. "sm_90a".
  std::string deviceArch();
  // The arch compile() builds for when CompileOptions::arch is empty: TILEC_CUDA_ARCH if set (CompileError unless it
  // names a real GPU), else deviceArch() (NoDriverError without a driver).
  std::string targetArch();

  Compiler &compiler() { return compiler_; }
  KernelCache &cache() { return cache_; }
  const RuntimeOptions &options() const { return options_; }

private:
  RuntimeOptions options_;
  Compiler compiler_;
  KernelCache cache_;
  std::mutex driverMutex_;
  std::shared_ptr<Driver> driver_;
};

// The arch the compiler targets when none is given: Runtime::targetArch(), or sm_90a when there is no driver or no
// device; "" with `error` set when TILEC_CUDA_ARCH is malformed. For code built without exceptions (the compiler).
std::string defaultTargetArch(std::string &error) noexcept;

} // namespace tilec::runtime
