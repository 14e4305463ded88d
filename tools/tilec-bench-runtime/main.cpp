// tilec-bench-runtime: what the runtime itself costs.
//
//   cold compile       NVRTC compile of a realistic kernel source (split-K GEMM: mma.sync, atomics, vector copies)
//   disk cache load    the same key read back from a warm disk cache (new in-memory cache each time)
//   memory cache hit   Runtime::compile of a key already in memory (hashing the source included)
//   launch overhead    host time per Entry::launch of an empty kernel vs a bare cuLaunchKernel of it, and per
//                      launch of a plan with a workspace (pool alloc + launch + cuMemFreeAsync); device time
//                      per launch from CUDA events around a batch
//
// Every figure is the median of many repetitions. The compile figures need no GPU; the launch figures are skipped
// (with a message) when there is no CUDA driver. Usage: tilec-bench-runtime [--arch sm_90a] [--repeat N]
#include "TestKernels.h"
#include "tilec/runtime/DeviceBuffer.h"
#include "tilec/runtime/Error.h"
#include "tilec/runtime/Runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

using namespace tilec::runtime;
using Clock = std::chrono::steady_clock;

namespace {

const char *const kEmptyKernel = R"cuda(
extern "C" __global__ void empty_kernel(float *x, int n) {
  if (n < 0)
    x[0] = 0.f; // never true: keeps the parameters alive without doing work
}
// Keeps the GPU busy for about `cycles` clock cycles, so that launches queued
// behind it cost the host only their enqueue.
extern "C" __global__ void spin_kernel(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
}
)cuda";

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

template <typename Body> double medianSeconds(int repeat, Body body) {
  std::vector<double> samples;
  for (int i = 0; i < repeat; ++i) {
    auto start = Clock::now();
    body();
    samples.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return median(samples);
}

void report(const char *what, double seconds, const char *note = "") {
  if (seconds >= 1e-3)
    std::printf("%-34s %12.3f ms   %s\n", what, seconds * 1e3, note);
  else
    std::printf("%-34s %12.3f us   %s\n", what, seconds * 1e6, note);
}

std::string makeTempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "tilec-bench-XXXXXX").string();
  if (!mkdtemp(pattern.data()))
    throw Error("cannot create a temporary cache directory");
  return pattern;
}

void benchCompile(const std::string &arch, int repeat) {
  std::printf("== compile (arch %s)\n", arch.c_str());
  Compiler compiler;
  std::printf("NVRTC %s, CUDA include dir %s\n", compiler.nvrtcVersion().c_str(), compiler.cudaIncludeDir().c_str());
  // The first compile also loads NVRTC and its builtins: reported on its own.
  auto start = Clock::now();
  Cubin cubin = compiler.compile(tilec::testing::kSplitKGemmSource, {arch});
  report("first compile (loads NVRTC)", std::chrono::duration<double>(Clock::now() - start).count());
  report("cold compile, split-K GEMM source",
         medianSeconds(repeat, [&] { compiler.compile(tilec::testing::kSplitKGemmSource, {arch}); }),
         "(median, NVRTC only, no cache)");
  std::printf("CUBIN %zu bytes; splitk_mma uses %d registers\n", cubin.image.size(),
              cubin.ptxasInfo("splitk_mma") ? cubin.ptxasInfo("splitk_mma")->registers : -1);

  std::string directory = makeTempDir();
  RuntimeOptions options;
  options.cacheDirectory = directory;
  {
    Runtime warmer(options);
    warmer.compile(tilec::testing::kSplitKGemmSource, {arch});
  }
  Runtime runtime(options);
  report("warm disk cache load", medianSeconds(repeat * 4, [&] {
           runtime.cache().clearMemory();
           if (runtime.compile(tilec::testing::kSplitKGemmSource, {arch}).source != CacheSource::Disk)
             throw Error("expected a disk cache hit");
         }),
         "(median; read + checksum + parse)");
  report("in-memory cache hit", medianSeconds(repeat * 100, [&] {
           if (runtime.compile(tilec::testing::kSplitKGemmSource, {arch}).source != CacheSource::Memory)
             throw Error("expected a memory cache hit");
         }),
         "(median; includes XXH3-128 of source + options)");
  std::filesystem::remove_all(directory);
}

void benchLaunch(Runtime &runtime, Driver &driver) {
  const DriverApi &api = driver.api();
  std::printf("== launch overhead (device %s, driver %d)\n", runtime.deviceArch().c_str(), driver.version());
  CompileResult compiled = runtime.compile(kEmptyKernel);

  EntrySpec plain;
  plain.name = "empty";
  plain.signature = Signature({{"x", DType::F32, {"N"}, 4}});
  plain.plan.launch({0, "empty_kernel", {1, 1, 1}, {32, 1, 1}, 0,
                     {KernelArg::tensor(0), KernelArg::i32(Expr::symbol("N"))}});
  EntrySpec withWorkspace;
  withWorkspace.name = "empty_with_workspace";
  withWorkspace.signature = Signature({{"x", DType::F32, {"N"}, 4}});
  int workspace = withWorkspace.plan.alloc(Expr::parse("N * 4"));
  withWorkspace.plan.launch({0, "empty_kernel", {1, 1, 1}, {32, 1, 1}, 0,
                             {KernelArg::workspace(workspace), KernelArg::i32(Expr::symbol("N"))}});
  withWorkspace.plan.free(workspace);
  std::vector<EntrySpec> entries;
  entries.push_back(std::move(plain));
  entries.push_back(std::move(withWorkspace));
  auto module = runtime.loadModule({compiled.cubin}, std::move(entries));

  cu::ModuleHandle bareModule = nullptr;
  cu::Function bareFunction = nullptr;
  driver.check(api.cuModuleLoadData(&bareModule, compiled.cubin->image.data()), "cuModuleLoadData");
  driver.check(api.cuModuleGetFunction(&bareFunction, bareModule, "empty_kernel"), "cuModuleGetFunction");

  const int n = 1024;
  DeviceBuffer buffer(driver, n * 4);
  cu::Stream stream = nullptr;
  driver.check(api.cuStreamCreate(&stream, 1 /* non-blocking */), "cuStreamCreate");
  cu::Event start = nullptr, stop = nullptr;
  driver.check(api.cuEventCreate(&start, cu::kEventDefault), "cuEventCreate");
  driver.check(api.cuEventCreate(&stop, cu::kEventDefault), "cuEventCreate");

  TensorView x = buffer.view(DType::F32, {n});
  void *xPointer = buffer.data();
  int nValue = n;
  void *params[] = {&xPointer, &nValue};
  const Entry &empty = module->entry("empty");
  const Entry &emptyWithWorkspace = module->entry("empty_with_workspace");

  auto bare = [&] {
    driver.check(api.cuLaunchKernel(bareFunction, 1, 1, 1, 32, 1, 1, 0, stream, params, nullptr), "cuLaunchKernel");
  };
  auto viaEntry = [&] { empty.launch(stream, x); };
  auto viaWorkspacePlan = [&] { emptyWithWorkspace.launch(stream, x); };
  auto checkOnly = [&] { empty.check({x}); };

  // Batches small enough not to fill the launch queue (which would measure the GPU, not the host).
  const int batch = 200;
  const int batches = 50;
  auto measure = [&](const char *what, auto launch) {
    for (int i = 0; i < batch; ++i) // warm-up: loads the module into the context, opts in, fills caches
      launch();
    driver.check(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
    std::vector<double> host, device;
    for (int b = 0; b < batches; ++b) {
      driver.check(api.cuEventRecord(start, stream), "cuEventRecord");
      auto begin = Clock::now();
      for (int i = 0; i < batch; ++i)
        launch();
      host.push_back(std::chrono::duration<double>(Clock::now() - begin).count() / batch);
      driver.check(api.cuEventRecord(stop, stream), "cuEventRecord");
      driver.check(api.cuEventSynchronize(stop), "cuEventSynchronize");
      float ms = 0;
      driver.check(api.cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
      device.push_back(ms * 1e-3 / batch);
    }
    std::printf("%-34s host %8.3f us/launch   device %8.3f us/launch   (median of %d batches of %d)\n", what,
                median(host) * 1e6, median(device) * 1e6, batches, batch);
    return median(host);
  };
  double bareHost = measure("bare cuLaunchKernel", bare);
  double entryHost = measure("Entry::launch (1 kernel)", viaEntry);
  measure("Entry::launch (alloc+kernel+free)", viaWorkspacePlan);
  std::printf("%-34s %8.3f us/launch\n", "Entry::launch overhead vs bare", (entryHost - bareHost) * 1e6);

  // Host-bound variant: each batch is queued behind a kernel that keeps the
  // GPU busy longer than the host needs to enqueue the batch, so host time is
  // enqueue cost only (not paced by the GPU draining the queue).
  cu::Function spinFunction = nullptr;
  driver.check(api.cuModuleGetFunction(&spinFunction, bareModule, "spin_kernel"), "cuModuleGetFunction");
  long long spinCycles = 20'000'000; // ~10 ms at 2 GHz: far longer than 200 enqueues
  void *spinParams[] = {&spinCycles};
  auto enqueueOnly = [&](const char *what, auto launch) {
    for (int i = 0; i < batch; ++i)
      launch();
    driver.check(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
    std::vector<double> host;
    for (int b = 0; b < batches / 2; ++b) {
      driver.check(api.cuLaunchKernel(spinFunction, 1, 1, 1, 1, 1, 1, 0, stream, spinParams, nullptr),
                   "cuLaunchKernel");
      auto begin = Clock::now();
      for (int i = 0; i < batch; ++i)
        launch();
      host.push_back(std::chrono::duration<double>(Clock::now() - begin).count() / batch);
      driver.check(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
    }
    std::printf("%-34s host %8.3f us/launch   (enqueue behind a busy GPU; median of %d batches of %d)\n", what,
                median(host) * 1e6, batches / 2, batch);
    return median(host);
  };
  double bareEnqueue = enqueueOnly("bare cuLaunchKernel, enqueue", bare);
  double entryEnqueue = enqueueOnly("Entry::launch, enqueue", viaEntry);
  enqueueOnly("Entry::launch plan, enqueue", viaWorkspacePlan);
  std::printf("%-34s %8.3f us/launch\n", "Entry::launch enqueue overhead", (entryEnqueue - bareEnqueue) * 1e6);
  report("Entry::check alone", medianSeconds(10000, checkOnly), "(median)");

  api.cuEventDestroy(start);
  api.cuEventDestroy(stop);
  api.cuStreamDestroy(stream);
  api.cuModuleUnload(bareModule);
}

} // namespace

int main(int argc, char **argv) {
  // Cold compiles must be cold: NVRTC >= 12.9 otherwise answers repeats from the CUDA compute cache. Set before
  // NVRTC or the driver are loaded.
  setenv("CUDA_CACHE_DISABLE", "1", 1);
  std::string arch;
  int repeat = 10;
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i];
    if (argument == "--arch" && i + 1 < argc)
      arch = argv[++i];
    else if (argument == "--repeat" && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: %s [--arch sm_90a] [--repeat N]\n", argv[0]);
      return 2;
    }
  }
  try {
    RuntimeOptions options;
    options.cacheDirectory = "";
    Runtime runtime(options);
    std::shared_ptr<Driver> driver;
    try {
      driver = Driver::load(options.driverLibrary);
      if (arch.empty())
        arch = runtime.deviceArch();
    } catch (const NoDriverError &error) {
      std::printf("note: %s\n", error.what());
    }
    if (arch.empty())
      arch = "sm_90a";
    benchCompile(arch, repeat);
    if (driver)
      benchLaunch(runtime, *driver);
    else
      std::printf("== launch overhead: SKIPPED (no CUDA driver)\n");
    return 0;
  } catch (const std::exception &error) {
    std::fprintf(stderr, "tilec-bench-runtime: %s\n", error.what());
    return 1;
  }
}
