// The CUDA driver API, loaded lazily from libcuda.so.1.
//
// tilec never links -lcuda: a process without a GPU must start, compile CUDA C++ and fail only when it actually
// needs the driver. The driver types below are declared here (layout-compatible with <cuda.h>, which a host may
// include alongside: the opaque struct names are the same) so that hosts need no CUDA headers at all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
struct CUmemPoolHandle_st;

namespace tilec::runtime {

namespace cu {
using Result = int; // CUresult; 0 is CUDA_SUCCESS
using Device = int;
using Context = CUctx_st *;
using ModuleHandle = CUmod_st *;
using Function = CUfunc_st *;
using Stream = CUstream_st *; // also cudaStream_t
using Event = CUevent_st *;
using DevicePtr = unsigned long long;
using MemoryPool = CUmemPoolHandle_st *;

// CUmemPoolProps (88 bytes in CUDA 12 and 13): a pinned device-memory pool; the reserved tail stays zero.
struct MemPoolProps {
  int allocType = 1;   // CU_MEM_ALLOCATION_TYPE_PINNED
  int handleTypes = 0; // CU_MEM_HANDLE_TYPE_NONE
  int locationType = 1; // CU_MEM_LOCATION_TYPE_DEVICE
  int locationId = 0;   // the device ordinal
  void *win32SecurityAttributes = nullptr;
  unsigned char reserved[64] = {}; // maxSize (0: the driver's default), usage, reserved
};
static_assert(sizeof(MemPoolProps) == 88, "CUmemPoolProps is 88 bytes");
constexpr int kMemPoolAttributeReleaseThreshold = 4; // CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, a cuuint64_t

constexpr int kDeviceAttributeMaxSharedMemoryPerBlockOptin = 97;
constexpr int kDeviceAttributeComputeCapabilityMajor = 75;
constexpr int kDeviceAttributeComputeCapabilityMinor = 76;
constexpr int kFuncAttributeMaxThreadsPerBlock = 0;
constexpr int kFuncAttributeSharedSizeBytes = 1; // static shared memory
constexpr int kFuncAttributeLocalSizeBytes = 3;  // local memory per thread: spills and stack
constexpr int kFuncAttributeNumRegs = 4;
constexpr int kFuncAttributeMaxDynamicSharedSizeBytes = 8;
constexpr unsigned kEventDefault = 0;
constexpr Result kErrorNotReady = 600;
} // namespace cu

// The driver entry points tilec uses, resolved through cuGetProcAddress. Every member is non-null once a Driver
// exists. Use check() (or DRIVER_CALL-style wrappers in the library) to turn a result code into a DriverError.
struct DriverApi {
  cu::Result (*cuInit)(unsigned flags);
  cu::Result (*cuDriverGetVersion)(int *version);
  cu::Result (*cuGetErrorName)(cu::Result, const char **);
  cu::Result (*cuGetErrorString)(cu::Result, const char **);
  cu::Result (*cuDeviceGet)(cu::Device *, int ordinal);
  cu::Result (*cuDeviceGetCount)(int *);
  cu::Result (*cuDeviceGetAttribute)(int *, int attribute, cu::Device);
  cu::Result (*cuDevicePrimaryCtxRetain)(cu::Context *, cu::Device);
  cu::Result (*cuDevicePrimaryCtxRelease)(cu::Device);
  cu::Result (*cuCtxGetCurrent)(cu::Context *);
  cu::Result (*cuCtxSetCurrent)(cu::Context);
  cu::Result (*cuCtxGetDevice)(cu::Device *);
  cu::Result (*cuCtxSynchronize)();
  cu::Result (*cuModuleLoadData)(cu::ModuleHandle *, const void *image);
  cu::Result (*cuModuleUnload)(cu::ModuleHandle);
  cu::Result (*cuModuleGetFunction)(cu::Function *, cu::ModuleHandle, const char *name);
  cu::Result (*cuFuncSetAttribute)(cu::Function, int attribute, int value);
  cu::Result (*cuFuncGetAttribute)(int *value, int attribute, cu::Function);
  cu::Result (*cuLaunchKernel)(cu::Function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned sharedBytes, cu::Stream, void **params, void **extra);
  cu::Result (*cuMemAlloc)(cu::DevicePtr *, size_t bytes);
  cu::Result (*cuMemFree)(cu::DevicePtr);
  cu::Result (*cuMemAllocAsync)(cu::DevicePtr *, size_t bytes, cu::Stream);
  cu::Result (*cuMemFreeAsync)(cu::DevicePtr, cu::Stream);
  cu::Result (*cuMemsetD8Async)(cu::DevicePtr, unsigned char value, size_t count, cu::Stream);
  cu::Result (*cuMemPoolCreate)(cu::MemoryPool *, const cu::MemPoolProps *);
  cu::Result (*cuMemPoolDestroy)(cu::MemoryPool);
  cu::Result (*cuMemPoolSetAttribute)(cu::MemoryPool, int attribute, void *value);
  cu::Result (*cuMemPoolTrimTo)(cu::MemoryPool, size_t minBytesToKeep);
  cu::Result (*cuMemAllocFromPoolAsync)(cu::DevicePtr *, size_t bytes, cu::MemoryPool, cu::Stream);
  cu::Result (*cuMemcpyHtoD)(cu::DevicePtr dst, const void *src, size_t bytes);
  cu::Result (*cuMemcpyDtoH)(void *dst, cu::DevicePtr src, size_t bytes);
  cu::Result (*cuStreamCreate)(cu::Stream *, unsigned flags);
  cu::Result (*cuStreamDestroy)(cu::Stream);
  cu::Result (*cuStreamSynchronize)(cu::Stream);
  cu::Result (*cuEventCreate)(cu::Event *, unsigned flags);
  cu::Result (*cuEventDestroy)(cu::Event);
  cu::Result (*cuEventRecord)(cu::Event, cu::Stream);
  cu::Result (*cuEventSynchronize)(cu::Event);
  cu::Result (*cuEventElapsedTime)(float *ms, cu::Event start, cu::Event end);
};

class Driver {
public:
  // The library loaded when no path is given: $TILEC_CUDA_DRIVER_LIBRARY if set, else "libcuda.so.1".
  static std::string defaultLibraryPath();

  // Loads (once per path, process-wide) and initializes the driver. Throws NoDriverError with the message
  // "no CUDA driver: <path> could not be loaded (<dlerror>)" when the library is absent, or a DriverError when
  // cuInit fails.
  static std::shared_ptr<Driver> load(const std::string &libraryPath = defaultLibraryPath());

  const DriverApi &api() const { return api_; }
  const std::string &libraryPath() const { return libraryPath_; }
  int version() const { return version_; }

  // Throws DriverError naming `call`, with cuGetErrorName/cuGetErrorString, when result != CUDA_SUCCESS.
  void check(cu::Result result, const char *call) const;

  // The context current on this thread; if there is none, retains device 0's primary context (as the CUDA runtime
  // does) and makes it current.
  cu::Context currentContext();
  // The device of the current context.
  cu::Device currentDevice();
  // The device's compute capability: {9, 0} on an H100 or H200.
  std::pair<int, int> computeCapability(cu::Device device);
  // "sm_90a" for a compute capability 9.0 device; architectures from 9.0 on get the "a" suffix so that arch-specific
  // instructions (wgmma, setmaxnreg) are available.
  std::string deviceArch(cu::Device device);

  // The stream-ordered pool that launch plans allocate their workspaces from (f32 accumulators, split partials):
  // one per device, created on first use, owned by tilec (the device's default pool, which other libraries share,
  // is left alone). Freed workspaces stay reserved in it for the next launch, as PyTorch's caching allocator keeps
  // its blocks: with the driver's default release threshold (0) every synchronization returned them, and the next
  // launch mapped hundreds of MB again (0.1-0.5 ms per flash-attention backward on an H200). The threshold is
  // workspaceCacheBytes(); releaseCachedWorkspaces() hands back what no launch is using.
  cu::MemoryPool workspacePool(cu::Device device);
  // Bytes of freed workspace memory a pool keeps across synchronizations: $TILEC_WORKSPACE_CACHE_BYTES (a decimal
  // byte count; 0 returns everything at each synchronization), else unlimited.
  static std::uint64_t workspaceCacheBytes();
  // Returns the unused memory of every workspace pool to the driver (cuMemPoolTrimTo 0).
  void releaseCachedWorkspaces();

  Driver(const Driver &) = delete;
  Driver &operator=(const Driver &) = delete;
  ~Driver();

private:
  Driver() = default;
  std::string libraryPath_;
  void *handle_ = nullptr;
  DriverApi api_{};
  int version_ = 0;
  std::mutex poolMutex_;
  std::map<cu::Device, cu::MemoryPool> pools_;
};

} // namespace tilec::runtime
