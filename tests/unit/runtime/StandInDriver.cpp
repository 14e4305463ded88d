// A stand-in for libcuda.so.1, loaded by the runtime through Driver::load(path) in tests that need a driver but no
// GPU. It exports what Driver::load looks up (cuDriverGetVersion, cuGetProcAddress[_v2]) and answers every entry
// point the runtime resolves. Kernels do nothing; what it models faithfully is the dynamic shared memory attribute:
// a launch asking for more than 48 KB succeeds only up to the value last set with cuFuncSetAttribute, as on a GPU.
//
// The tests read what it saw through the tilecStandIn* functions (dlsym on the same path).
#include "tilec/runtime/Driver.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <thread>

namespace {

// Every entry point has exactly the type DriverApi declares (cu:: handles, not void *): UBSan's function check
// (the sanitizer build) rejects a call through a pointer of another type.
namespace cu = tilec::runtime::cu;
using Result = cu::Result;
constexpr Result kSuccess = 0;
constexpr Result kErrorInvalidValue = 1;
constexpr Result kErrorNotFound = 500;
constexpr int kDefaultDynamicSharedLimit = 48 * 1024;
constexpr int kSharedOptinLimit = 227 * 1024; // an H100/H200's MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
constexpr int kAttributeMaxDynamicSharedSizeBytes = 8;
constexpr int kDeviceAttributeMaxSharedMemoryPerBlockOptin = 97;

// One per cuModuleGetFunction call.
struct StandInFunction {
  std::atomic<int> maxDynamicShared{kDefaultDynamicSharedLimit};
};

std::atomic<long> gRejectedLaunches{0};  // launches asking for more dynamic shared memory than the attribute allows
std::atomic<long> gLoweredAttributes{0}; // cuFuncSetAttribute calls that lowered the attribute
std::atomic<long> gSetAttributeCalls{0};
std::atomic<long> gLaunches{0};
std::atomic<int> gSetAttributeDelayMicros{0};

char gContext;  // the one context's address
char gModule;   // every module's address

Result cuInit(unsigned) { return kSuccess; }
Result reportVersion(int *version) {
  *version = 12080;
  return kSuccess;
}
Result cuGetErrorName(Result result, const char **name) {
  *name = result == kErrorInvalidValue ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR_STAND_IN";
  return kSuccess;
}
Result cuGetErrorString(Result, const char **text) {
  *text = "error from the tests' stand-in driver";
  return kSuccess;
}
Result cuDeviceGet(int *device, int) {
  *device = 0;
  return kSuccess;
}
Result cuDeviceGetCount(int *count) {
  *count = 1;
  return kSuccess;
}
Result cuDeviceGetAttribute(int *value, int attribute, int) {
  switch (attribute) {
  case kDeviceAttributeMaxSharedMemoryPerBlockOptin: *value = kSharedOptinLimit; return kSuccess;
  case 75: *value = 9; return kSuccess; // compute capability 9.0
  case 76: *value = 0; return kSuccess;
  default: *value = 0; return kSuccess;
  }
}
Result cuDevicePrimaryCtxRetain(cu::Context *context, cu::Device) {
  *context = reinterpret_cast<cu::Context>(&gContext);
  return kSuccess;
}
Result cuDevicePrimaryCtxRelease(int) { return kSuccess; }
Result cuCtxGetCurrent(cu::Context *context) {
  *context = reinterpret_cast<cu::Context>(&gContext);
  return kSuccess;
}
Result cuCtxSetCurrent(cu::Context) { return kSuccess; }
Result cuCtxGetDevice(int *device) {
  *device = 0;
  return kSuccess;
}
Result cuSuccess0() { return kSuccess; }
Result cuModuleLoadData(cu::ModuleHandle *module, const void *) {
  *module = reinterpret_cast<cu::ModuleHandle>(&gModule);
  return kSuccess;
}
Result cuModuleUnload(cu::ModuleHandle) { return kSuccess; }
// Kept for the life of the library (a test creates a few hundred): reachable, so LeakSanitizer does not count them,
// and at stable addresses (std::deque), which are the handles.
std::mutex gFunctionsMutex;
std::deque<StandInFunction> gFunctions;

Result cuModuleGetFunction(cu::Function *function, cu::ModuleHandle, const char *) {
  std::lock_guard<std::mutex> lock(gFunctionsMutex);
  *function = reinterpret_cast<cu::Function>(&gFunctions.emplace_back());
  return kSuccess;
}
Result cuFuncSetAttribute(cu::Function function, int attribute, int value) {
  if (attribute != kAttributeMaxDynamicSharedSizeBytes)
    return kSuccess;
  if (value < 0 || value > kSharedOptinLimit)
    return kErrorInvalidValue;
  gSetAttributeCalls.fetch_add(1);
  int previous = reinterpret_cast<StandInFunction *>(function)->maxDynamicShared.exchange(value);
  if (value < previous)
    gLoweredAttributes.fetch_add(1);
  // A random delay after the attribute is set and before the caller gets control back, so that callers racing to
  // record what they set interleave in every order (the real driver takes microseconds here too).
  if (int delay = gSetAttributeDelayMicros.load()) {
    thread_local std::minstd_rand random(std::hash<std::thread::id>()(std::this_thread::get_id()));
    std::this_thread::sleep_for(std::chrono::microseconds(random() % delay));
  }
  return kSuccess;
}
// Fixed figures, so that tests can tell they came from here.
Result cuFuncGetAttribute(int *value, int attribute, cu::Function) {
  switch (attribute) {
  case 0: *value = 768; return kSuccess;  // MAX_THREADS_PER_BLOCK
  case 1: *value = 4096; return kSuccess; // SHARED_SIZE_BYTES
  case 3: *value = 24; return kSuccess;   // LOCAL_SIZE_BYTES
  case 4: *value = 80; return kSuccess;   // NUM_REGS
  default: *value = 0; return kSuccess;
  }
}
Result cuModuleGetFunctionByName(cu::Function *function, cu::ModuleHandle module, const char *name) {
  // "missing_kernel" is absent from every module, as a real lookup of an unknown name would be.
  if (std::strcmp(name, "missing_kernel") == 0)
    return kErrorNotFound;
  return cuModuleGetFunction(function, module, name);
}
Result cuLaunchKernel(cu::Function function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                      unsigned sharedBytes, cu::Stream, void **, void **) {
  gLaunches.fetch_add(1);
  if (static_cast<int>(sharedBytes) > reinterpret_cast<StandInFunction *>(function)->maxDynamicShared.load()) {
    gRejectedLaunches.fetch_add(1);
    return kErrorInvalidValue;
  }
  return kSuccess;
}
// Device memory is host memory here, so that copies round-trip; live allocations are counted.
std::atomic<long> gLiveAllocations{0};
Result cuMemAlloc(unsigned long long *pointer, size_t bytes) {
  if (bytes == 0)
    return kErrorInvalidValue; // as the real driver
  *pointer = reinterpret_cast<unsigned long long>(std::malloc(bytes));
  gLiveAllocations.fetch_add(1);
  return kSuccess;
}
Result cuMemFree(unsigned long long pointer) {
  std::free(reinterpret_cast<void *>(pointer));
  gLiveAllocations.fetch_sub(1);
  return kSuccess;
}
Result cuMemAllocAsync(cu::DevicePtr *pointer, size_t, cu::Stream) {
  *pointer = 0x1000;
  return kSuccess;
}
Result cuMemFreeAsync(cu::DevicePtr, cu::Stream) { return kSuccess; }

// Workspace pools: what the runtime asked for is recorded for the tests.
char gPool; // every pool's address
std::atomic<long> gPoolsCreated{0};
std::atomic<long> gPoolAllocations{0};
std::atomic<long> gPoolTrims{0};
std::atomic<unsigned long long> gPoolReleaseThreshold{0};
Result cuMemPoolCreate(cu::MemoryPool *pool, const cu::MemPoolProps *props) {
  if (props->allocType != 1 || props->locationType != 1)
    return kErrorInvalidValue;
  *pool = reinterpret_cast<cu::MemoryPool>(&gPool);
  gPoolsCreated.fetch_add(1);
  return kSuccess;
}
Result cuMemPoolDestroy(cu::MemoryPool) { return kSuccess; }
Result cuMemPoolSetAttribute(cu::MemoryPool, int attribute, void *value) {
  if (attribute != cu::kMemPoolAttributeReleaseThreshold)
    return kErrorInvalidValue;
  gPoolReleaseThreshold.store(*static_cast<unsigned long long *>(value));
  return kSuccess;
}
Result cuMemPoolTrimTo(cu::MemoryPool, size_t) {
  gPoolTrims.fetch_add(1);
  return kSuccess;
}
Result cuMemAllocFromPoolAsync(cu::DevicePtr *pointer, size_t bytes, cu::MemoryPool pool, cu::Stream) {
  if (bytes == 0 || pool != reinterpret_cast<cu::MemoryPool>(&gPool))
    return kErrorInvalidValue;
  *pointer = 0x1000;
  gPoolAllocations.fetch_add(1);
  return kSuccess;
}
Result cuMemsetD8Async(cu::DevicePtr, unsigned char, size_t, cu::Stream) { return kSuccess; }
Result cuMemcpyHtoD(unsigned long long device, const void *host, size_t bytes) {
  std::memcpy(reinterpret_cast<void *>(device), host, bytes);
  return kSuccess;
}
Result cuMemcpyDtoH(void *host, unsigned long long device, size_t bytes) {
  std::memcpy(host, reinterpret_cast<const void *>(device), bytes);
  return kSuccess;
}
Result cuStreamCreate(cu::Stream *stream, unsigned) {
  *stream = nullptr;
  return kSuccess;
}
Result cuStreamDestroy(cu::Stream) { return kSuccess; }
Result cuStreamSynchronize(cu::Stream) { return kSuccess; }
Result cuEventCreate(cu::Event *event, unsigned) {
  *event = nullptr;
  return kSuccess;
}
Result cuEventDestroy(cu::Event) { return kSuccess; }
Result cuEventRecord(cu::Event, cu::Stream) { return kSuccess; }
Result cuEventSynchronize(cu::Event) { return kSuccess; }
Result cuEventElapsedTime(float *ms, cu::Event, cu::Event) {
  *ms = 0;
  return kSuccess;
}

struct EntryPoint {
  const char *name;
  void *function;
};

#define TILEC_ENTRY(name) {#name, reinterpret_cast<void *>(&name)}
const EntryPoint kEntryPoints[] = {
    {"cuDriverGetVersion", reinterpret_cast<void *>(&reportVersion)},
    {"cuCtxSynchronize", reinterpret_cast<void *>(&cuSuccess0)},
    {"cuModuleGetFunction", reinterpret_cast<void *>(&cuModuleGetFunctionByName)},
    TILEC_ENTRY(cuInit),
    TILEC_ENTRY(cuGetErrorName),
    TILEC_ENTRY(cuGetErrorString),
    TILEC_ENTRY(cuDeviceGet),
    TILEC_ENTRY(cuDeviceGetCount),
    TILEC_ENTRY(cuDeviceGetAttribute),
    TILEC_ENTRY(cuDevicePrimaryCtxRetain),
    TILEC_ENTRY(cuDevicePrimaryCtxRelease),
    TILEC_ENTRY(cuCtxGetCurrent),
    TILEC_ENTRY(cuCtxSetCurrent),
    TILEC_ENTRY(cuCtxGetDevice),
    TILEC_ENTRY(cuModuleLoadData),
    TILEC_ENTRY(cuModuleUnload),
    TILEC_ENTRY(cuFuncSetAttribute),
    TILEC_ENTRY(cuFuncGetAttribute),
    TILEC_ENTRY(cuLaunchKernel),
    TILEC_ENTRY(cuMemAlloc),
    TILEC_ENTRY(cuMemFree),
    TILEC_ENTRY(cuMemAllocAsync),
    TILEC_ENTRY(cuMemFreeAsync),
    TILEC_ENTRY(cuMemsetD8Async),
    TILEC_ENTRY(cuMemPoolCreate),
    TILEC_ENTRY(cuMemPoolDestroy),
    TILEC_ENTRY(cuMemPoolSetAttribute),
    TILEC_ENTRY(cuMemPoolTrimTo),
    TILEC_ENTRY(cuMemAllocFromPoolAsync),
    TILEC_ENTRY(cuMemcpyHtoD),
    TILEC_ENTRY(cuMemcpyDtoH),
    TILEC_ENTRY(cuStreamCreate),
    TILEC_ENTRY(cuStreamDestroy),
    TILEC_ENTRY(cuStreamSynchronize),
    TILEC_ENTRY(cuEventCreate),
    TILEC_ENTRY(cuEventDestroy),
    TILEC_ENTRY(cuEventRecord),
    TILEC_ENTRY(cuEventSynchronize),
    TILEC_ENTRY(cuEventElapsedTime),
};
#undef TILEC_ENTRY

Result lookUp(const char *name, void **function) {
  for (const EntryPoint &entry : kEntryPoints)
    if (std::strcmp(entry.name, name) == 0) {
      *function = entry.function;
      return kSuccess;
    }
  *function = nullptr;
  return kErrorNotFound;
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) int cuDriverGetVersion(int *version) { return reportVersion(version); }
__attribute__((visibility("default"))) int cuGetProcAddress_v2(const char *name, void **function, int,
                                                               unsigned long long, int *) {
  return lookUp(name, function);
}
__attribute__((visibility("default"))) int cuGetProcAddress(const char *name, void **function, int,
                                                            unsigned long long) {
  return lookUp(name, function);
}

// What the tests observe.
__attribute__((visibility("default"))) long tilecStandInRejectedLaunches() { return gRejectedLaunches.load(); }
__attribute__((visibility("default"))) long tilecStandInLoweredAttributes() { return gLoweredAttributes.load(); }
__attribute__((visibility("default"))) long tilecStandInSetAttributeCalls() { return gSetAttributeCalls.load(); }
__attribute__((visibility("default"))) long tilecStandInLaunches() { return gLaunches.load(); }
__attribute__((visibility("default"))) long tilecStandInLiveAllocations() { return gLiveAllocations.load(); }
__attribute__((visibility("default"))) long tilecStandInPoolsCreated() { return gPoolsCreated.load(); }
__attribute__((visibility("default"))) long tilecStandInPoolAllocations() { return gPoolAllocations.load(); }
__attribute__((visibility("default"))) long tilecStandInPoolTrims() { return gPoolTrims.load(); }
__attribute__((visibility("default"))) unsigned long long tilecStandInPoolReleaseThreshold() {
  return gPoolReleaseThreshold.load();
}
__attribute__((visibility("default"))) void tilecStandInSetAttributeDelay(int maxMicros) {
  gSetAttributeDelayMicros.store(maxMicros);
}
}
