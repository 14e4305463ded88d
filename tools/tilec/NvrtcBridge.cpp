#include "NvrtcBridge.h"

#include "tilec/runtime/Compiler.h"
#include "tilec/runtime/Error.h"
#include "tilec/runtime/Runtime.h"

namespace tilec::cli {

NvrtcOutput compileWithNvrtc(const std::string &cuda, const std::string &arch, bool ptx) {
  NvrtcOutput out;
  try {
    runtime::Compiler compiler;
    runtime::CompileOptions options{arch, {}, "tilec_kernels.cu"};
    if (ptx)
      out.ptx = compiler.compilePtx(cuda, options);
    else
      out.cubin = compiler.compile(cuda, options).image;
    out.ok = true;
  } catch (const runtime::CompileError &e) {
    out.error = std::string(e.what()) + "\n" + e.log();
  } catch (const std::exception &e) {
    out.error = e.what();
  }
  return out;
}

std::string currentDeviceArch() {
  try {
    runtime::Runtime rt;
    return rt.deviceArch();
  } catch (const std::exception &) {
    return "";
  }
}

} // namespace tilec::cli
