// Files the runtime tests run or load besides themselves (the cache race helper, the stand-in driver): where to
// find them in a build tree and in a GPU bundle.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace tilec::testing {

/// $`environmentVariable` when set, else `buildTreePath` (CMake's path of the target) when it exists, else
/// `fileName` beside this test binary (a GPU bundle moves the binaries into one bin/ directory).
inline std::string testArtifactPath(const char *environmentVariable, const char *buildTreePath,
                                    const char *fileName) {
  if (const char *overridden = std::getenv(environmentVariable); overridden && *overridden)
    return overridden;
  if (std::filesystem::exists(buildTreePath))
    return buildTreePath;
  return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / fileName).string();
}

} // namespace tilec::testing
