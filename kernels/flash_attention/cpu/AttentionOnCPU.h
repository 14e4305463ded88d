// Runs the flash-attention kernels (forward, backward preprocess, backward)
// on the CPU backend at a given shape, for the numerics tests and the demo.
#ifndef TILEC_KERNELS_ATTENTION_ON_CPU_H
#define TILEC_KERNELS_ATTENTION_ON_CPU_H

#include "AttentionReference.h"
#include "tilec/Target/CPU/CPURunner.h"

#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>

namespace tilec::reference {

struct AttentionConfig {
  AttentionShape shape;
  int64_t blockM = 64, blockN = 64;
  bool shuffleBlocks = false;
  uint64_t seed = 1;
  /// Atomic legalization of the kernels (docs/atomics.md): empty runs the
  /// atomics as written (a plain read-add-round per block); "fp32", "split"
  /// or "native" compile with tile-legalize-atomics and run the launch plans.
  std::string atomics;
  /// Seed of the block order when shuffling, if it should differ from `seed`
  /// (which also seeds the inputs): same inputs, another order.
  std::optional<uint64_t> blockOrderSeed;
};

struct AttentionRun {
  std::vector<double> O, lse, dQ, dK, dV; // kernel outputs, as doubles
  AttentionResult reference;
  double compileSeconds = 0, runSeconds = 0;
};

/// Compiles the three kernels from `kernelDir` with the config's constants,
/// runs forward then backward on fresh random bf16 inputs (seeded), and
/// computes the float64 reference on the same (bf16-rounded) inputs.
llvm::Expected<AttentionRun> runAttentionOnCPU(const std::string &kernelDir,
                                               const AttentionConfig &config);

} // namespace tilec::reference

#endif
