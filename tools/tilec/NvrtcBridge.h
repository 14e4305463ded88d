// tilec's door to NVRTC for --emit=ptx|cubin. The runtime reports failures with exceptions and tilec is built
// without them (LLVM's flags), so this file is compiled as its own library with exceptions and returns results.
#pragma once

#include "tilec/runtime/Module.h"

#include <string>
#include <vector>

namespace tilec::cli {

struct NvrtcOutput {
  bool ok = false;
  std::string error;       // NVRTC's message and log when !ok
  std::string ptx;         // --emit=ptx
  std::vector<char> cubin; // --emit=cubin
};

NvrtcOutput compileWithNvrtc(const std::string &cuda, const std::string &arch, bool ptx);

/// A .tcm module file (runtime/ModuleFile.h): `cuda` compiled to one CUBIN for `arch`, with `entries`.
/// On success the file's bytes are in `ptx` (reused as the text output).
NvrtcOutput buildModuleFile(const std::string &cuda, const std::string &arch,
                            std::vector<runtime::EntrySpec> entries);


} // namespace tilec::cli
