// tilec-bench-attention: times tilec's flash-attention forward and backward (kernels/flash_attention/*.tile,
// compiled at start-up with the compiler library and NVRTC) on the GPU at the standard shapes: 16k tokens, hidden
// 2048 (d 64: 32 heads, d 128: 16 heads), causal and not. CUDA events around each entry launch, 5 warm-ups, median
// of 20; inputs of 16k tokens x 2048 bf16 per tensor, far larger than L2 together. FLOPs: forward 4·B·H·S²·d (half
// when causal), backward 2.5x forward. Prints one line per (shape, pass).
//
//   tilec-bench-attention [KERNELS_DIR] [options]      default dir: <binary>/../kernels, else the source tree
//     --pass fwd|bwd      time one pass only              --dim N, --seq N, --causal yes|no   one shape only
//     -D name=value       override a constant of fwd.tile and bwd.tile (tile sizes, threads, stages)
//     --bwd-cuda FILE     launch bwd.tile's entries with the CUDA C++ of FILE instead of the emitted code (a
//                         hand-edited copy of `tilec --emit=cuda`: how a lowering change is tried before it is built)
//     --bwd-smem BYTES    with --bwd-cuda: the dynamic shared memory of the main kernel's launch (a variant may need more)
//     --fwd-cuda FILE     the same for fwd.tile's kernel
//     --compile-times     instead of timing kernels: NVRTC compile of bwd.tile's CUDA (d 64 and 128) with an empty
//                         disk cache, then loads of it from the warm disk cache by fresh Runtime objects (no memory
//                         cache), medians; CUDA's own compute cache should be off (CUDA_CACHE_DISABLE=1)
//     --label TEXT        printed in a last column, to tell runs apart in one log
#include "tilec/Jit/GpuProgram.h"
#include "tilec/runtime/DeviceBuffer.h"
#include "tilec/runtime/Error.h"
#include "tilec/runtime/Runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <tuple>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace tilec;
using namespace tilec::runtime;

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw Error("cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::shared_ptr<Module> build(Runtime &rt, const std::string &dir, const std::string &file,
                              const std::map<std::string, std::string> &defines, const std::string &cudaOverride = "",
                              long long sharedOverride = 0) {
  GpuCompileOptions o;
  o.defines = defines;
  GpuProgram p = compileForGpu(readFile(dir + "/" + file), file, o);
  if (!p.ok)
    throw Error(p.diagnostics);
  auto compiled = rt.compile(cudaOverride.empty() ? p.cuda : readFile(cudaOverride), {p.arch});
  for (const PtxasFunctionInfo &f : compiled.cubin->ptxasInfo()) // empty when CUDA's compute cache answered
    std::fprintf(stderr, "# %s %s: %d registers, %d bytes spilled\n", file.c_str(), f.function.c_str(),
                 f.registers, f.spillStoreBytes);
  if (sharedOverride > 0)
    for (EntrySpec &entry : p.entries)
      for (PlanStep &step : entry.plan.steps())
        if (auto *launch = std::get_if<LaunchStep>(&step); launch && launch->function.find("_main") != std::string::npos)
          launch->dynamicSharedBytes = Expr(static_cast<int64_t>(sharedOverride));
  return rt.loadModule({compiled.cubin}, p.entries);
}

double millisecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Cold NVRTC compiles of the backward kernel (a new empty disk cache each time) and warm loads from the disk cache
// (a new Runtime each time, so its memory cache is empty).
int timeCompiles(const std::string &dir, const std::map<std::string, std::string> &overrides) {
  try {
    for (int dim : {64, 128}) {
      std::map<std::string, std::string> defs = {{"dim", std::to_string(dim)}};
      for (const auto &[name, value] : overrides)
        defs[name] = value;
      GpuCompileOptions o;
      o.defines = defs;
      GpuProgram p = compileForGpu(readFile(dir + "/flash_attention/bwd.tile"), "bwd.tile", o);
      if (!p.ok)
        throw Error(p.diagnostics);
      std::vector<double> cold, warm;
      std::string arch;
      for (int i = 0; i < 3; ++i) {
        std::string cache = std::filesystem::temp_directory_path() / ("tilec-bench-cold-" + std::to_string(getpid()) +
                                                                       "-" + std::to_string(i));
        std::filesystem::remove_all(cache);
        RuntimeOptions options;
        options.cacheDirectory = cache;
        {
          Runtime rt(options);
          arch = rt.deviceArch();
          auto t = std::chrono::steady_clock::now();
          auto r = rt.compile(p.cuda);
          cold.push_back(millisecondsSince(t));
          if (r.source != CacheSource::Compiled)
            throw Error("expected a cold compile");
        }
        for (int j = 0; j < 7; ++j) {
          Runtime rt(options);
          rt.deviceArch();
          auto t = std::chrono::steady_clock::now();
          auto r = rt.compile(p.cuda);
          warm.push_back(millisecondsSince(t));
          if (r.source != CacheSource::Disk)
            throw Error("expected a disk-cache hit");
        }
        std::filesystem::remove_all(cache);
      }
      std::printf("bwd.tile d%d (%s, %zu bytes of CUDA): cold NVRTC compile median %.1f ms (%.1f-%.1f, %zu runs); "
                  "warm disk-cache load median %.3f ms (%.3f-%.3f, %zu runs)\n",
                  dim, arch.c_str(), p.cuda.size(), median(cold), *std::min_element(cold.begin(), cold.end()),
                  *std::max_element(cold.begin(), cold.end()), cold.size(), median(warm),
                  *std::min_element(warm.begin(), warm.end()), *std::max_element(warm.begin(), warm.end()),
                  warm.size());
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tilec-bench-attention: %s\n", e.what());
    return 1;
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string dir, pass, bwdCuda, fwdCuda, label;
  int onlyDim = 0, onlySeq = 0, onlyCausal = -1;
  long long bwdSmem = 0;
  bool compileTimes = false;
  std::map<std::string, std::string> overrides;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tilec-bench-attention: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--pass")
      pass = value();
    else if (a == "--dim")
      onlyDim = std::stoi(value());
    else if (a == "--seq")
      onlySeq = std::stoi(value());
    else if (a == "--causal")
      onlyCausal = value() == "yes";
    else if (a == "--bwd-cuda")
      bwdCuda = value();
    else if (a == "--fwd-cuda")
      fwdCuda = value();
    else if (a == "--bwd-smem")
      bwdSmem = std::stoll(value());
    else if (a == "--compile-times")
      compileTimes = true;
    else if (a == "--label")
      label = value();
    else if (a == "-D") {
      std::string d = value();
      size_t eq = d.find('=');
      if (eq == std::string::npos) {
        std::fprintf(stderr, "tilec-bench-attention: -D wants name=value, got '%s'\n", d.c_str());
        return 2;
      }
      overrides[d.substr(0, eq)] = d.substr(eq + 1);
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "tilec-bench-attention: unknown option '%s'\n", a.c_str());
      return 2;
    } else
      dir = a;
  }
  if (!pass.empty() && pass != "fwd" && pass != "bwd") {
    std::fprintf(stderr, "tilec-bench-attention: --pass is fwd or bwd, got '%s'\n", pass.c_str());
    return 2;
  }
  if (dir.empty()) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    std::string path = n > 0 ? std::string(exe, n) : "";
    dir = path.substr(0, path.rfind('/')) + "/../kernels";
    if (!std::ifstream(dir + "/flash_attention/bwd.tile"))
      dir = TILEC_KERNELS_ROOT;
  }
  if (compileTimes)
    return timeCompiles(dir, overrides);
  try {
    Runtime rt;
    Driver &driver = rt.driver();
    driver.currentContext();
    std::printf("# tilec-bench-attention on %s; median of 20 after 5 warm-ups (CUDA events)\n",
                rt.deviceArch().c_str());
    std::printf("%-6s %-5s %-4s %-5s %-6s %-4s %10s %10s\n", "pass", "batch", "seq", "heads", "dim", "causal",
                "ms", "TFLOP/s");
    for (int dim : {64, 128})
      for (int seq : {1024, 2048, 4096, 8192})
        for (bool causal : {false, true}) {
          if ((onlyDim && dim != onlyDim) || (onlySeq && seq != onlySeq) || (onlyCausal >= 0 && causal != onlyCausal))
            continue;
          const int64_t B = 16384 / seq, H = 2048 / dim, S = seq, D = dim;
          std::map<std::string, std::string> defs = {{"dim", std::to_string(dim)},
                                                     {"causal", causal ? "true" : "false"}};
          for (const auto &[name, value] : overrides)
            defs[name] = value;
          auto fwd = build(rt, dir, "flash_attention/fwd.tile", defs, fwdCuda);
          auto pre = build(rt, dir, "flash_attention/bwd_preprocess.tile", {{"dim", std::to_string(dim)}});
          auto bwd = build(rt, dir, "flash_attention/bwd.tile", defs, bwdCuda, bwdSmem);
          const size_t nQ = B * S * H * D, nL = B * H * S;
          DeviceBuffer Q(driver, nQ * 2), K(driver, nQ * 2), V(driver, nQ * 2), dO(driver, nQ * 2), O(driver, nQ * 2),
              lse(driver, nL * 4), delta(driver, nL * 4), dQ(driver, nQ * 2), dK(driver, nQ * 2), dV(driver, nQ * 2);
          // Small values (bytes 0x3c: bf16 0x3c3c, about 0.0115, everywhere): the timing does not depend on them.
          for (DeviceBuffer *b : {&Q, &K, &V, &dO})
            driver.check(driver.api().cuMemsetD8Async(b->pointer(), 0x3c, nQ * 2, nullptr), "cuMemsetD8Async");
          auto t4 = [&](DeviceBuffer &b) { return b.view(DType::BF16, {B, S, H, D}); };
          auto t3 = [&](DeviceBuffer &b) { return b.view(DType::F32, {B, H, S}); };
          auto runFwd = [&] { fwd->entry("attn_fwd").launch(nullptr, {t4(Q), t4(K), t4(V), t4(O), t3(lse)}); };
          auto runBwd = [&] {
            pre->entry("attn_bwd_preprocess").launch(nullptr, {t4(O), t4(dO), t3(delta)});
            bwd->entry("attn_bwd").launch(nullptr, {t4(Q), t4(K), t4(V), t4(dO), t3(lse), t3(delta), t4(dQ),
                                                     t4(dK), t4(dV)});
          };
          double flops = 4.0 * B * H * double(S) * S * D * (causal ? 0.5 : 1.0);
          for (auto [name, run, scale] : {std::tuple<const char *, std::function<void()>, double>{"fwd", runFwd, 1.0},
                                          {"bwd", runBwd, 2.5}}) {
            if (!pass.empty() && pass != name)
              continue;
            cu::Event start, stop;
            driver.check(driver.api().cuEventCreate(&start, 0), "cuEventCreate");
            driver.check(driver.api().cuEventCreate(&stop, 0), "cuEventCreate");
            for (int i = 0; i < 5; ++i)
              run();
            std::vector<float> ms;
            for (int i = 0; i < 20; ++i) {
              driver.check(driver.api().cuEventRecord(start, nullptr), "cuEventRecord");
              run();
              driver.check(driver.api().cuEventRecord(stop, nullptr), "cuEventRecord");
              driver.check(driver.api().cuEventSynchronize(stop), "cuEventSynchronize");
              float t = 0;
              driver.check(driver.api().cuEventElapsedTime(&t, start, stop), "cuEventElapsedTime");
              ms.push_back(t);
            }
            std::sort(ms.begin(), ms.end());
            double median = (ms[9] + ms[10]) / 2;
            std::printf("%-6s %-5lld %-4lld %-5lld %-6lld %-4s %10.3f %10.1f %s\n", name, (long long)B, (long long)S,
                        (long long)H, (long long)D, causal ? "yes" : "no", median,
                        flops * scale / (median * 1e-3) / 1e12, label.c_str());
            std::fflush(stdout);
            driver.api().cuEventDestroy(start);
            driver.api().cuEventDestroy(stop);
          }
        }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tilec-bench-attention: %s\n", e.what());
    return 1;
  }
  return 0;
}
