// The one path from a .tile source to GPU code: `tilec --emit=plan|cuda|ptx|cubin|module`, `tilec compile`,
// `tilec run --target cuda` and the compiler library's compileForGpu (GpuProgram.h) all go through compileToGpuCode.
// Internal to the compiler (MLIR types); hosts use GpuProgram.h.
#ifndef TILEC_JIT_GPUCOMPILE_H
#define TILEC_JIT_GPUCOMPILE_H

#include "tilec/Driver/Driver.h"
#include "tilec/runtime/Module.h"

#include <optional>
#include <string>
#include <vector>

namespace tilec {

/// A source compiled for the GPU.
struct GpuCode {
  mlir::OwningOpRef<mlir::ModuleOp> module;  // after the GPU lowering (what --emit=lowered prints)
  std::string cuda;                          // the CUDA C++ of every kernel (NVRTC input)
  std::vector<runtime::EntrySpec> entries;   // each entry's signature and launch plan, launches on CUBIN 0
};

/// compileToTileIR with the GPU lowering (`options.lowerForGpu` is set here), then the CUDA emitter and the launch
/// plans. Every error goes to `diagOS` as file:line:col text, the emitter's at the source line of its op; nothing
/// is returned then. `options.atomics` must be set (resolveAtomicsStrategy): the GPU runs atomics legalized.
std::optional<GpuCode> compileToGpuCode(mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr,
                                        CompileOptions options, llvm::raw_ostream &diagOS);

} // namespace tilec

#endif
