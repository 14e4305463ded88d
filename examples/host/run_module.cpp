// The ahead-of-time path for hosts: load a module file written by `tilec compile K.tile -o K.tcm` (no compiler, no
// MLIR here), list its entries and their signatures, and optionally run one entry on random inputs.
//
//   tilec-run-module K.tcm [ENTRY [--dim name=N]... [--zero param]... [--seed S]]
//
// Loading and checking the file needs no driver; running does (without one it says so and exits 0).
#include "RunEntry.h"

#include <tilec/runtime/Error.h>
#include <tilec/runtime/ModuleFile.h>

#include <cstdio>
#include <string>

namespace rt = tilec::runtime;

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s K.tcm [ENTRY [--dim name=N]... [--zero param]... [--seed S]]\n", argv[0]);
    return 2;
  }
  try {
    auto module = rt::loadModuleFile(argv[1]);
    std::printf("%s: %zu CUBIN(s) for %s\n", argv[1], module->cubins().size(), module->cubins()[0]->arch.c_str());
    for (const auto &entry : module->entries()) {
      std::printf("entry %s\n", entry->name().c_str());
      for (const auto &param : entry->signature().params())
        std::printf("  %s\n", param.toString().c_str());
    }
    if (argc == 2)
      return 0;
    return example::runEntry(*module, argc, argv, 2);
  } catch (const rt::NoDriverError &e) {
    std::printf("%s\n", e.what());
    return 0;
  } catch (const rt::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
