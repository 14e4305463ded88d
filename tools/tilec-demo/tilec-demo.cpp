// tilec-demo: the README's main job on a machine without a GPU. Compiles the
// flash-attention kernels (forward, backward preprocess, backward) from
// kernels/flash_attention and runs them on the CPU reference backend at small
// shapes, comparing O, lse, dQ, dK and dV with a float64 reference. With a GPU,
// scripts/demo.sh runs tools/tilec-demo/demo_gpu.py instead.
#include "AttentionOnCPU.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace tilec::reference;

static cl::opt<std::string> kernelDir("kernels",
                                      cl::desc("Directory of the flash-attention .tile files"),
                                      cl::init(TILEC_DEFAULT_KERNEL_DIR));
static cl::opt<bool> shuffleBlocks("shuffle", cl::desc("Run blocks in shuffled order"),
                             cl::init(false));
static cl::opt<unsigned> seed("seed", cl::desc("Seed of the random inputs"),
                              cl::init(1));

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "tilec flash-attention demo (CPU backend)\n");

  struct Case {
    AttentionShape shape;
    int64_t blockM, blockN;
  };
  std::vector<Case> cases = {
      {{1, 256, 2, 1, 64, false}, 64, 64},
      {{1, 200, 2, 1, 128, true}, 64, 64},   // tail: 200 is not a multiple of 64
      {{1, 256, 4, 2, 64, true}, 64, 32},    // GQA, causal, unequal blocks
      {{2, 130, 4, 4, 128, false}, 64, 64},  // GQA (4 query heads per kv head), tail
  };
  outs() << "tilec flash-attention demo: CPU reference backend (no GPU lowering yet)\n"
         << "errors are ||out - ref|| / ||ref|| against float64; inputs N(0,1), seed "
         << seed << (shuffleBlocks ? ", blocks shuffled" : "") << "\n\n";
  outs() << formatv("{0,-28} {1,-7} {2,-7} {3,9} {4,9} {5,9} {6,9} {7,9} {8,9} {9,8}\n",
                    "shape", "blocks", "atomics", "O", "lse", "dQ", "dK", "dV",
                    "compile s", "run s");
  bool ok = true;
  // Every atomics strategy of tile-legalize-atomics (docs/atomics.md): the
  // backward kernel is written once; the compiler realises its atomic_adds.
  for (const Case &c : cases)
  for (const char *strategy : {"fp32", "split", "native"}) {
    AttentionConfig config;
    config.atomics = strategy;
    config.shape = c.shape;
    config.blockM = c.blockM;
    config.blockN = c.blockN;
    config.shuffleBlocks = shuffleBlocks;
    config.seed = seed;
    auto run = runAttentionOnCPU(kernelDir, config);
    if (!run) {
      errs() << "error: " << toString(run.takeError()) << "\n";
      return 1;
    }
    double e[5] = {relativeError(run->O, run->reference.O),
                   relativeError(run->lse, run->reference.lse),
                   relativeError(run->dQ, run->reference.dQ),
                   relativeError(run->dK, run->reference.dK),
                   relativeError(run->dV, run->reference.dV)};
    // The same tolerances as the CPU numerics tests.
    ok &= e[0] < 1e-2 && e[1] < 1e-4 && e[2] < 2e-2 && e[3] < 2e-2 && e[4] < 2e-2;
    outs() << formatv("{0,-28} {1,-7} {2,-7} {3,9:e2} {4,9:e2} {5,9:e2} {6,9:e2} {7,9:e2} "
                      "{8,9:f2} {9,8:f3}\n",
                      c.shape.str(), std::to_string(c.blockM) + "x" + std::to_string(c.blockN),
                      strategy, e[0], e[1], e[2], e[3], e[4], run->compileSeconds,
                      run->runSeconds);
  }
  outs() << "\n" << (ok ? "all within tolerance (O 1e-2, lse 1e-4, dQ/dK/dV 2e-2)"
                        : "ERROR: some results are outside tolerance")
         << "\n";
  return ok ? 0 : 1;
}
