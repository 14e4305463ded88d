// Compiled modules on disk (.tcm): the CUBINs and every entry's signature and launch plan in one file, written by
// `tilec compile K.tile -o K.tcm` and loaded by hosts without MLIR or a compiler.
//
//   tilec-module 1\n
//   cubin <arch> <byte count> <sha256 hex>\n <bytes>\n        one per CUBIN, in index order
//   plan <byte count> <sha256 hex>\n <plan text>\n            the entries (PlanText.h)
//
// Every section is checked (sizes within the file, checksums, the plan text, the plans against the CUBINs) before a
// Module is built; a damaged file is an error naming what is wrong, never a launch of something else.
#pragma once

#include "tilec/runtime/Module.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tilec::runtime {

inline constexpr int kModuleFileVersion = 1;

struct ModuleFileContents {
  std::vector<std::shared_ptr<const Cubin>> cubins;
  std::vector<EntrySpec> entries;
};

// The bytes of a .tcm file.
std::string writeModuleFile(const ModuleFileContents &contents);

// Parses and checks `bytes` (`name` is used in messages). Throws Error.
ModuleFileContents readModuleFile(std::string_view bytes, const std::string &name = "module");

// Reads the file at `path`, checks it, and builds a Module (nothing is loaded on a GPU until a launch). Throws Error.
std::shared_ptr<Module> loadModuleFile(const std::string &path, std::string driverLibrary = Driver::defaultLibraryPath());

} // namespace tilec::runtime
