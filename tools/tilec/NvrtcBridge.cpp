#include "NvrtcBridge.h"

#include "tilec/runtime/Compiler.h"
#include "tilec/runtime/Error.h"
#include "tilec/runtime/ModuleFile.h"
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

NvrtcOutput buildModuleFile(const std::string &cuda, const std::string &arch,
                            std::vector<runtime::EntrySpec> entries) {
  NvrtcOutput out;
  try {
    runtime::Compiler compiler;
    runtime::ModuleFileContents contents;
    contents.cubins.push_back(
        std::make_shared<runtime::Cubin>(compiler.compile(cuda, {arch, {}, "tilec_kernels.cu"})));
    contents.entries = std::move(entries);
    // Validates the plans against the CUBIN, as a host loading the file would.
    runtime::Module check(contents.cubins, contents.entries);
    out.ptx = runtime::writeModuleFile(contents);
    out.ok = true;
  } catch (const runtime::CompileError &e) {
    out.error = std::string(e.what()) + "\n" + e.log();
  } catch (const std::exception &e) {
    out.error = e.what();
  }
  return out;
}

} // namespace tilec::cli
