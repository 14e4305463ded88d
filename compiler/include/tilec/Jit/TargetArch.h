// The GPU a compile is for: what the source's SM and WGMMA are (language.md 6.6) and NVRTC's target. One rule for
// `tilec`, `tilec run` and the compiler library's compileForGpu.
#ifndef TILEC_JIT_TARGETARCH_H
#define TILEC_JIT_TARGETARCH_H

#include "tilec/Frontend/MLIRGen.h"
#include "tilec/runtime/Runtime.h"

#include <optional>
#include <string>

namespace tilec {

/// The arch given (--arch), else TILEC_CUDA_ARCH, else the current GPU's ("sm_90a" on an H200), else sm_90a. Found
/// on first use and kept: finding the GPU loads the CUDA driver, which a compile that never asks (IR of a source
/// that does not read SM or WGMMA) should not pay for.
class TargetArch {
public:
  explicit TargetArch(std::string given) : arch_(std::move(given)), resolved_(!arch_.empty()) {}

  /// The arch, or "" with `error` set (a malformed TILEC_CUDA_ARCH).
  const std::string &arch(std::string &error) {
    if (!resolved_) {
      resolved_ = true;
      arch_ = runtime::defaultTargetArch(error_);
    }
    error = error_;
    return arch_;
  }

  /// What SM and WGMMA are; nullopt with `error` set.
  std::optional<frontend::GpuTarget> gpuTarget(std::string &error) {
    const std::string &name = arch(error);
    if (!error.empty())
      return std::nullopt;
    std::optional<frontend::GpuTarget> target = frontend::parseGpuTarget(name);
    if (!target)
      error = "the target architecture '" + name + "' (TILEC_CUDA_ARCH or the device's) is not a real GPU such as sm_90a";
    return target;
  }

private:
  std::string arch_;
  std::string error_;
  bool resolved_;
};

} // namespace tilec

#endif
