#ifndef TILEC_TOOLS_TILEC_RUNCOMMAND_H
#define TILEC_TOOLS_TILEC_RUNCOMMAND_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tilec {

struct RunCommandOptions {
  std::string file, kernel, target = "cpu", outputDir;
  /// tile-legalize-atomics strategy (fp32, split, native), or empty for the default: the atomics as written on the
  /// CPU alone, fp32 wherever the GPU runs.
  std::string atomics;
  bool deterministic = false;
  int64_t maxSplit = 8;
  bool remarks = false;
  /// Run on both targets with the same inputs and compare every tensor.
  bool check = false;
  /// Compare every tensor after the run with DIR/<name>.npy.
  std::string referenceDir;
  /// --check's and --reference's relative-norm tolerance for floats (unset: by dtype; 0: exact).
  std::optional<double> tolerance;
  std::string arch; // SM and WGMMA of the source, and NVRTC's target; empty: TILEC_CUDA_ARCH, the device's, sm_90a
  std::vector<std::string> defines, inputs, dims, zeros;
  uint64_t seed = 0;
  bool shuffle = false;
};

/// Returns the process exit status.
int runCommand(const RunCommandOptions &options);

} // namespace tilec

#endif
