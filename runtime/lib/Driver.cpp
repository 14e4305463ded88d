#include "tilec/runtime/Driver.h"

#include "DynamicLibrary.h"
#include "tilec/runtime/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <type_traits>

namespace tilec::runtime {

namespace {

// cuGetProcAddress changed signature in CUDA 12 (a fifth, out-parameter argument); both are tried.
using GetProcAddressV2 = cu::Result (*)(const char *, void **, int, unsigned long long, int *);
using GetProcAddressV1 = cu::Result (*)(const char *, void **, int, unsigned long long);

// The ABI version requested from cuGetProcAddress. 12.0 fixes the signatures declared in DriverApi (the "_v2"
// variants of cuMemAlloc, cuMemcpyHtoD, cuStreamDestroy, ...).
constexpr int kRequestedApiVersion = 12000;

} // namespace

std::string Driver::defaultLibraryPath() {
  const char *overridden = std::getenv("TILEC_CUDA_DRIVER_LIBRARY");
  return overridden && *overridden ? overridden : "libcuda.so.1";
}

std::shared_ptr<Driver> Driver::load(const std::string &libraryPath) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<Driver>> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto found = loaded.find(libraryPath); found != loaded.end())
    return found->second;

  std::string dlError;
  detail::DynamicLibrary library = detail::DynamicLibrary::open(libraryPath, dlError);
  if (!library.loaded())
    throw NoDriverError(fmt::format("no CUDA driver: {} could not be loaded ({}); a GPU and the NVIDIA driver are "
                                    "needed to launch kernels (compiling with an explicit arch works without them)",
                                    libraryPath, dlError));

  auto getVersion = reinterpret_cast<cu::Result (*)(int *)>(library.symbol("cuDriverGetVersion"));
  auto getProcV2 = reinterpret_cast<GetProcAddressV2>(library.symbol("cuGetProcAddress_v2"));
  auto getProcV1 = reinterpret_cast<GetProcAddressV1>(library.symbol("cuGetProcAddress"));
  if (!getVersion || (!getProcV2 && !getProcV1))
    throw NoDriverError(fmt::format("no CUDA driver: {} was loaded but does not export cuDriverGetVersion and "
                                    "cuGetProcAddress (is it really libcuda?)",
                                    libraryPath));
  int version = 0;
  if (getVersion(&version) != 0)
    throw NoDriverError(fmt::format("no CUDA driver: cuDriverGetVersion failed in {}", libraryPath));
  const int requested = std::min(version, kRequestedApiVersion);

  std::shared_ptr<Driver> driver(new Driver());
  driver->libraryPath_ = libraryPath;
  driver->version_ = version;
  auto resolve = [&](const char *name, auto &slot) {
    void *function = nullptr;
    cu::Result result = getProcV2 ? getProcV2(name, &function, requested, 0, nullptr)
                                  : getProcV1(name, &function, requested, 0);
    if (result != 0 || !function)
      throw NoDriverError(fmt::format("no CUDA driver: {} (driver version {}) has no entry point {} (error {})",
                                      libraryPath, version, name, result));
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(function);
  };
  DriverApi &api = driver->api_;
#define TILEC_RESOLVE(name) resolve(#name, api.name)
  TILEC_RESOLVE(cuInit);
  TILEC_RESOLVE(cuDriverGetVersion);
  TILEC_RESOLVE(cuGetErrorName);
  TILEC_RESOLVE(cuGetErrorString);
  TILEC_RESOLVE(cuDeviceGet);
  TILEC_RESOLVE(cuDeviceGetCount);
  TILEC_RESOLVE(cuDeviceGetAttribute);
  TILEC_RESOLVE(cuDevicePrimaryCtxRetain);
  TILEC_RESOLVE(cuDevicePrimaryCtxRelease);
  TILEC_RESOLVE(cuCtxGetCurrent);
  TILEC_RESOLVE(cuCtxSetCurrent);
  TILEC_RESOLVE(cuCtxGetDevice);
  TILEC_RESOLVE(cuCtxSynchronize);
  TILEC_RESOLVE(cuModuleLoadData);
  TILEC_RESOLVE(cuModuleUnload);
  TILEC_RESOLVE(cuModuleGetFunction);
  TILEC_RESOLVE(cuFuncSetAttribute);
  TILEC_RESOLVE(cuFuncGetAttribute);
  TILEC_RESOLVE(cuLaunchKernel);
  TILEC_RESOLVE(cuMemAlloc);
  TILEC_RESOLVE(cuMemFree);
  TILEC_RESOLVE(cuMemAllocAsync);
  TILEC_RESOLVE(cuMemFreeAsync);
  TILEC_RESOLVE(cuMemsetD8Async);
  TILEC_RESOLVE(cuMemPoolCreate);
  TILEC_RESOLVE(cuMemPoolDestroy);
  TILEC_RESOLVE(cuMemPoolSetAttribute);
  TILEC_RESOLVE(cuMemPoolTrimTo);
  TILEC_RESOLVE(cuMemAllocFromPoolAsync);
  TILEC_RESOLVE(cuMemcpyHtoD);
  TILEC_RESOLVE(cuMemcpyDtoH);
  TILEC_RESOLVE(cuStreamCreate);
  TILEC_RESOLVE(cuStreamDestroy);
  TILEC_RESOLVE(cuStreamSynchronize);
  TILEC_RESOLVE(cuEventCreate);
  TILEC_RESOLVE(cuEventDestroy);
  TILEC_RESOLVE(cuEventRecord);
  TILEC_RESOLVE(cuEventSynchronize);
  TILEC_RESOLVE(cuEventElapsedTime);
#undef TILEC_RESOLVE

  cu::Result initResult = api.cuInit(0);
  if (initResult != 0) {
    // A driver library without a usable GPU (e.g. in a container without devices) is reported as "no CUDA driver"
    // too, but with the driver's own reason.
    const char *name = "?";
    const char *text = "?";
    api.cuGetErrorName(initResult, &name);
    api.cuGetErrorString(initResult, &text);
    throw NoDriverError(fmt::format("no CUDA driver: cuInit failed in {}: {} ({}): {}", libraryPath,
                                    name ? name : "?", initResult, text ? text : "?"));
  }
  driver->handle_ = library.release();
  loaded.emplace(libraryPath, driver);
  return driver;
}

Driver::~Driver() = default; // the library stays loaded: see DynamicLibrary::release

void Driver::check(cu::Result result, const char *call) const {
  if (result == 0)
    return;
  const char *name = nullptr;
  const char *text = nullptr;
  if (api_.cuGetErrorName(result, &name) != 0 || !name)
    name = "CUDA_ERROR_UNKNOWN_CODE";
  if (api_.cuGetErrorString(result, &text) != 0 || !text)
    text = "no description from the driver";
  throw DriverError(call, result, name, text);
}

cu::Context Driver::currentContext() {
  cu::Context context = nullptr;
  check(api_.cuCtxGetCurrent(&context), "cuCtxGetCurrent");
  if (context)
    return context;
  cu::Device device = 0;
  check(api_.cuDeviceGet(&device, 0), "cuDeviceGet(0)");
  // The primary context is retained for the life of the process, as the CUDA runtime does.
  check(api_.cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(api_.cuCtxSetCurrent(context), "cuCtxSetCurrent");
  return context;
}

cu::Device Driver::currentDevice() {
  currentContext();
  cu::Device device = 0;
  check(api_.cuCtxGetDevice(&device), "cuCtxGetDevice");
  return device;
}

std::pair<int, int> Driver::computeCapability(cu::Device device) {
  int major = 0;
  int minor = 0;
  check(api_.cuDeviceGetAttribute(&major, cu::kDeviceAttributeComputeCapabilityMajor, device),
        "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)");
  check(api_.cuDeviceGetAttribute(&minor, cu::kDeviceAttributeComputeCapabilityMinor, device),
        "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)");
  return {major, minor};
}

std::string Driver::deviceArch(cu::Device device) {
  auto [major, minor] = computeCapability(device);
  return fmt::format("sm_{}{}{}", major, minor, major >= 9 ? "a" : "");
}

cu::MemoryPool Driver::workspacePool(cu::Device device) {
  std::lock_guard<std::mutex> lock(poolMutex_);
  if (auto found = pools_.find(device); found != pools_.end())
    return found->second;
  cu::MemPoolProps props;
  props.locationId = device;
  cu::MemoryPool pool = nullptr;
  check(api_.cuMemPoolCreate(&pool, &props), "cuMemPoolCreate");
  std::uint64_t threshold = workspaceCacheBytes();
  cu::Result result = api_.cuMemPoolSetAttribute(pool, cu::kMemPoolAttributeReleaseThreshold, &threshold);
  if (result != 0) {
    api_.cuMemPoolDestroy(pool);
    check(result, "cuMemPoolSetAttribute(RELEASE_THRESHOLD)");
  }
  // The pools live as long as the Driver, i.e. the process (the driver reclaims them at exit).
  pools_.emplace(device, pool);
  return pool;
}

std::uint64_t Driver::workspaceCacheBytes() {
  const char *text = std::getenv("TILEC_WORKSPACE_CACHE_BYTES");
  if (!text || !*text)
    return UINT64_MAX;
  char *end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || text[0] == '-')
    throw Error(fmt::format("TILEC_WORKSPACE_CACHE_BYTES='{}' is not a byte count (a non-negative decimal integer)",
                            text));
  return value;
}

void Driver::releaseCachedWorkspaces() {
  std::lock_guard<std::mutex> lock(poolMutex_);
  for (auto &[device, pool] : pools_)
    check(api_.cuMemPoolTrimTo(pool, 0), "cuMemPoolTrimTo");
}

} // namespace tilec::runtime
