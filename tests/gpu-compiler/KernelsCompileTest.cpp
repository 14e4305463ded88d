// Every shipped kernel, and every kernel the atomic legalization generates for it, compiles through the whole GPU
// pipeline and NVRTC to an sm_90a CUBIN with ptxas figures for every kernel. Needs NVRTC, not a GPU. The figures
// (registers, spills) are printed (WARN) so that docs/gpu-lowering.md can record them; spills are a performance
// matter (issue 10), not a failure here.
#include "CompilerTestSupport.h"

using namespace tilec;
using namespace tilec::testing;

namespace {

void checkCompiles(const std::string &file, const GpuCompileOptions &options, const std::string &label) {
  runtime::Runtime runtime(uncachedOptions());
  CompiledKernel k = compileKernel(runtime, file, options, "sm_90a");
  const auto info = k.compiled.cubin->ptxasInfo();
  REQUIRE(!info.empty());
  std::ostringstream figures;
  for (const auto &ptxas : info) {
    CHECK(ptxas.registers > 0);
    figures << " " << ptxas.function << " " << ptxas.registers << " regs";
    if (ptxas.spillStoreBytes || ptxas.spillLoadBytes)
      figures << " (spills: " << ptxas.spillStoreBytes << " B stored, " << ptxas.spillLoadBytes << " B loaded)";
  }
  WARN("ptxas sm_90a " << label << ":" << figures.str());
}

} // namespace

TEST_CASE("flash-attention forward and preprocess compile to sm_90a without spills", "[nvrtc]") {
  for (const char *dim : {"64", "128"})
    for (const char *groups : {"1", "4"})
      for (const char *causal : {"false", "true"}) {
        GpuCompileOptions o;
        o.defines = {{"dim", dim}, {"groups", groups}, {"causal", causal}};
        checkCompiles("flash_attention/fwd.tile", o,
                      std::string("fwd dim ") + dim + " groups " + groups + " causal " + causal);
      }
  for (const char *dim : {"64", "128"}) {
    GpuCompileOptions o;
    o.defines = {{"dim", dim}};
    checkCompiles("flash_attention/bwd_preprocess.tile", o, std::string("bwd_preprocess dim ") + dim);
  }
}

TEST_CASE("flash-attention backward compiles to sm_90a under every atomics strategy", "[nvrtc]") {
  for (const char *atomics : {"fp32", "split", "native"})
    for (const char *dim : {"64", "128"})
      for (const char *groups : {"1", "4"})
        for (const char *causal : {"false", "true"}) {
          GpuCompileOptions o;
          o.atomics = atomics;
          o.defines = {{"dim", dim}, {"groups", groups}, {"causal", causal}};
          checkCompiles("flash_attention/bwd.tile", o,
                        std::string("bwd ") + atomics + " dim " + dim + " groups " + groups + " causal " + causal);
        }
}

TEST_CASE("the histogram kernel compiles to sm_90a under every atomics strategy", "[nvrtc]") {
  for (const char *atomics : {"fp32", "split", "native"}) {
    GpuCompileOptions o;
    o.atomics = atomics;
    checkCompiles("histogram.tile", o, std::string("histogram ") + atomics);
  }
}

TEST_CASE("the feature kernels in kernels/examples compile to sm_90a", "[nvrtc]") {
  for (const char *file : {"examples/gemm.tile", "examples/softmax.tile", "examples/reductions.tile"})
    for (const char *atomics : {"fp32", "split", "native"}) {
      GpuCompileOptions o;
      o.atomics = atomics;
      checkCompiles(file, o, std::string(file) + " " + atomics);
    }
}
