// A complete host program using the tilec runtime: compile a kernel with NVRTC (through the caches), describe its
// launch with a signature and a plan, and launch it on the host's own device memory and stream.
//
//   tilec-host-example [--arch sm_90a]
//
// Without a GPU it still compiles (for --arch, default sm_90a), reports the kernel's registers, and explains that
// launching needs a CUDA driver; it exits 0 in that case so that it can be built and run in CI.
#include <tilec/runtime/DeviceBuffer.h>
#include <tilec/runtime/Error.h>
#include <tilec/runtime/Runtime.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace rt = tilec::runtime;

// y = alpha * x + y, alpha a compile-time constant passed with -D; any n.
static const char *const kSource = R"cuda(
#include "tilec/device/types.cuh"
extern "C" __global__ void axpy_bf16(const tilec::device::bf16 *x, float *y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n)
    y[i] += ALPHA * tilec::device::to_float(x[i]);
}
)cuda";

int main(int argc, char **argv) {
  std::string arch;
  if (argc == 3 && std::string(argv[1]) == "--arch")
    arch = argv[2];
  try {
    rt::Runtime runtime; // disk cache per TILEC_CACHE_DIR / XDG_CACHE_HOME / ~/.cache/tilec
    bool haveGpu = true;
    if (arch.empty()) {
      try {
        arch = runtime.deviceArch();
      } catch (const rt::NoDriverError &error) {
        std::printf("%s\n", error.what());
        haveGpu = false;
        arch = "sm_90a";
      }
    }
    rt::CompileResult compiled = runtime.compile(kSource, {arch, {"-DALPHA=2.0f"}, "axpy.cu"});
    auto info = compiled.cubin->ptxasInfo("axpy_bf16");
    std::printf("compiled axpy_bf16 for %s: %zu-byte CUBIN, %d registers (%s)\n", arch.c_str(),
                compiled.cubin->image.size(), info ? info->registers : -1,
                compiled.source == rt::CacheSource::Compiled ? "NVRTC" : "from cache");

    rt::EntrySpec axpy;
    axpy.name = "axpy";
    axpy.signature = rt::Signature({{"x", rt::DType::BF16, {"N"}, 2}, {"y", rt::DType::F32, {"N"}, 4}});
    axpy.plan.launch({0, "axpy_bf16", {rt::Expr::parse("ceildiv(N, 256)"), 1, 1}, {256, 1, 1}, 0,
                      {rt::KernelArg::tensor(0), rt::KernelArg::tensor(1), rt::KernelArg::i64(rt::Expr::symbol("N"))}});
    std::vector<rt::EntrySpec> entries;
    entries.push_back(std::move(axpy));
    auto module = runtime.loadModule({compiled.cubin}, std::move(entries));
    if (!haveGpu) {
      std::printf("no GPU: compiled only\n");
      return 0;
    }

    // The driver's figures for the loaded kernel: there even when the CUBIN came from a cache without a ptxas log.
    rt::FunctionAttributes attributes = module->functionAttributes("axpy_bf16");
    std::printf("loaded axpy_bf16: %d registers, %d bytes of local memory per thread\n", attributes.registers,
                attributes.localBytesPerThread);

    // The host owns its memory and stream; tilec only launches on them. DeviceBuffer frees its memory when it goes
    // out of scope; a host with its own allocator passes its pointers instead.
    rt::Driver &driver = runtime.driver();
    const long long n = 1000;
    rt::DeviceBuffer x(driver, n * 2), y(driver, n * 4);
    x.upload(std::vector<std::uint16_t>(n, 0x3f80)); // bf16 1.0
    y.upload(std::vector<float>(n, 1.0f));
    module->entry("axpy").launch(nullptr, x.view(rt::DType::BF16, {n}), y.view(rt::DType::F32, {n}));
    for (float value : y.download<float>())
      if (std::fabs(value - 3.0f) > 0.f) {
        std::fprintf(stderr, "wrong result %f (expected 3)\n", value);
        return 1;
      }
    std::printf("launched on the GPU: y = 2 * x + y is correct for all %lld elements\n", n);
    return 0;
  } catch (const rt::Error &error) {
    std::fprintf(stderr, "tilec error: %s\n", error.what());
    return 1;
  }
}
