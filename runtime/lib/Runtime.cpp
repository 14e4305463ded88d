#include "tilec/runtime/Runtime.h"

#include "tilec/runtime/Arch.h"
#include "tilec/runtime/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

namespace tilec::runtime {

const char *version() { return TILEC_VERSION; }

static std::unique_ptr<DiskCache> makeDiskCache(const RuntimeOptions &options) {
  std::optional<std::string> directory = options.cacheDirectory ? options.cacheDirectory : defaultCacheDirectory();
  if (!directory || directory->empty())
    return nullptr;
  return std::make_unique<DiskCache>(*directory, options.cacheMaxBytes.value_or(defaultCacheMaxBytes()));
}

Runtime::Runtime(RuntimeOptions options)
    : options_(std::move(options)), compiler_(options_.compiler), cache_(makeDiskCache(options_)) {}

Runtime::~Runtime() = default;

Driver &Runtime::driver() {
  std::lock_guard<std::mutex> lock(driverMutex_);
  if (!driver_)
    driver_ = Driver::load(options_.driverLibrary);
  return *driver_;
}

std::string Runtime::deviceArch() {
  Driver &driver = this->driver();
  return driver.deviceArch(driver.currentDevice());
}

std::string Runtime::targetArch() {
  // TILEC_CUDA_ARCH overrides the device's arch: sm_90 (no "a") on a Hopper GPU builds the kernels without wgmma, so
  // the mma.sync branch of the emitted code can be run and checked there.
  if (const char *forced = std::getenv("TILEC_CUDA_ARCH"); forced && *forced) {
    std::string arch = forced;
    if (!parseArch(arch, "sm_"))
      throw CompileError(fmt::format("TILEC_CUDA_ARCH must name a real GPU such as sm_90 or sm_90a, got '{}'", arch),
                         "", {});
    return arch;
  }
  return deviceArch();
}

std::string defaultTargetArch(std::string &error) noexcept {
  try {
    Runtime runtime;
    return runtime.targetArch();
  } catch (const CompileError &e) {
    std::string message = e.what(); // its first line: the options and log it lists are empty here
    error = message.substr(0, message.find('\n'));
    return "";
  } catch (const std::exception &) { // no driver or no device: compile-only
  }
  return "sm_90a";
}

CompileResult Runtime::compile(const std::string &source, CompileOptions options) {
  if (options.arch.empty()) {
    try {
      options.arch = targetArch();
    } catch (const NoDriverError &error) {
      throw NoDriverError(fmt::format("{}; to compile without a GPU, give CompileOptions::arch (e.g. sm_90a)",
                                      error.what()));
    }
  }
  // A compile that reads headers from the host's disk (an include path or a pre-included file) depends on files the
  // key cannot cover without preprocessing: it bypasses both caches (key "") rather than return a stale CUBIN.
  for (const std::string &flag : options.flags)
    if (flag.rfind("-I", 0) == 0 || flag.rfind("--include-path", 0) == 0 || flag.rfind("-include", 0) == 0 ||
        flag.rfind("--pre-include", 0) == 0)
      return {std::make_shared<const Cubin>(compiler_.compile(source, options)), CacheSource::Compiled, ""};
  // Neither the key nor a disk hit loads NVRTC (a ~100 MB library): the key leaves out the local CUDA include
  // directory, and the toolchain an entry must match is found by looking at files only.
  std::vector<std::string> keyOptions = compiler_.nvrtcOptions(options);
  keyOptions.erase(std::remove(keyOptions.begin(), keyOptions.end(), "--include-path=" + compiler_.cudaIncludeDir()),
                   keyOptions.end());
  std::string key = cacheKey(source, keyOptions, options.arch);
  KernelCache::Lookup lookup =
      cache_.getOrCompile(key, [&] { return compiler_.compile(source, options); }, compiler_.toolchain());
  return {std::move(lookup.cubin), lookup.source, std::move(key)};
}

std::shared_ptr<Module> Runtime::loadModule(std::vector<std::shared_ptr<const Cubin>> cubins,
                                            std::vector<EntrySpec> entries) const {
  return std::make_shared<Module>(std::move(cubins), std::move(entries), options_.driverLibrary);
}

} // namespace tilec::runtime
