#ifndef TILEC_TOOLS_TILEC_RUNCOMMAND_H
#define TILEC_TOOLS_TILEC_RUNCOMMAND_H

#include <cstdint>
#include <string>
#include <vector>

namespace tilec {

struct RunCommandOptions {
  std::string file, kernel, target = "cpu", outputDir;
  /// tile-legalize-atomics strategy (fp32, split, native), or empty for the
  /// atomics as written.
  std::string atomics;
  std::vector<std::string> defines, inputs, dims, zeros;
  uint64_t seed = 0;
  bool shuffle = false;
};

/// Returns the process exit status.
int runCommand(const RunCommandOptions &options);

} // namespace tilec

#endif
