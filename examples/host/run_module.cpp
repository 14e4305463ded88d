// The ahead-of-time path for hosts: load a module file written by `tilec compile K.tile -o K.tcm` (no compiler, no
// MLIR here), list its entries, and - for the flash-attention forward module - run it on random inputs.
//
//   tilec-run-module K.tcm [--run]
//
// Without --run, or without a GPU, it only loads and checks the file and prints each entry's signature and plan
// (runtime/ModuleFile.h); that part needs no driver.
#include <tilec/runtime/Error.h>
#include <tilec/runtime/ModuleFile.h>
#include <tilec/runtime/PlanText.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace rt = tilec::runtime;

static std::uint16_t toBf16(float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<std::uint16_t>(bits >> 16);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s K.tcm [--run]\n", argv[0]);
    return 2;
  }
  bool run = argc == 3 && std::string(argv[2]) == "--run";
  try {
    auto module = rt::loadModuleFile(argv[1]);
    std::printf("%s: %zu CUBIN(s) for %s\n", argv[1], module->cubins().size(), module->cubins()[0]->arch.c_str());
    for (const auto &entry : module->entries()) {
      std::printf("entry %s\n", entry->name().c_str());
      for (const auto &param : entry->signature().params())
        std::printf("  %s\n", param.toString().c_str());
    }
    if (!run)
      return 0;
    const rt::Entry &fwd = module->entry("attn_fwd");
    rt::Driver &driver = module->driver();
    driver.currentContext();
    // Q, K, V [1, 256, 2, 128] bf16 -> O (bf16), lse (f32).
    const std::int64_t B = 1, S = 256, H = 2, D = 128;
    std::mt19937 rng(1);
    std::normal_distribution<float> normal;
    std::vector<std::uint16_t> host(B * S * H * D);
    rt::cu::DevicePtr buf[5];
    std::size_t bytes[5] = {host.size() * 2, host.size() * 2, host.size() * 2, host.size() * 2,
                            std::size_t(B * H * S * 4)};
    for (int i = 0; i < 5; ++i)
      driver.check(driver.api().cuMemAlloc(&buf[i], bytes[i]), "cuMemAlloc");
    for (int i = 0; i < 3; ++i) {
      for (auto &x : host)
        x = toBf16(normal(rng));
      driver.check(driver.api().cuMemcpyHtoD(buf[i], host.data(), bytes[i]), "cuMemcpyHtoD");
    }
    auto view = [&](int i, rt::DType t, std::initializer_list<std::int64_t> shape) {
      return rt::TensorView(reinterpret_cast<void *>(buf[i]), t, shape);
    };
    fwd.launch(nullptr, {view(0, rt::DType::BF16, {B, S, H, D}), view(1, rt::DType::BF16, {B, S, H, D}),
                         view(2, rt::DType::BF16, {B, S, H, D}), view(3, rt::DType::BF16, {B, S, H, D}),
                         view(4, rt::DType::F32, {B, H, S})});
    std::vector<float> lse(B * H * S);
    driver.check(driver.api().cuMemcpyDtoH(lse.data(), buf[4], bytes[4]), "cuMemcpyDtoH");
    double sum = 0;
    for (float v : lse)
      sum += v;
    std::printf("attn_fwd ran: mean lse %.4f (finite: %s)\n", sum / lse.size(), std::isfinite(sum) ? "yes" : "no");
    for (auto b : buf)
      driver.api().cuMemFree(b);
    return std::isfinite(sum) ? 0 : 1;
  } catch (const rt::NoDriverError &e) {
    std::printf("%s\n", e.what());
    return 0;
  } catch (const rt::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
