#include "tilec/Jit/GpuCompile.h"
#include "tilec/Target/CUDA/CudaEmitter.h"
#include "tilec/Target/Plan/EntryToPlan.h"

#include "mlir/IR/Diagnostics.h"

namespace tilec {

std::optional<GpuCode> compileToGpuCode(mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr,
                                        CompileOptions options, llvm::raw_ostream &diagOS) {
  if (!options.atomics) {
    diagOS << "error: the GPU runs atomics legalized: choose a strategy (resolveAtomicsStrategy)\n";
    return std::nullopt;
  }
  options.lowerForGpu = true;
  GpuCode code;
  code.module = compileToTileIR(context, sourceMgr, options, diagOS);
  if (!code.module)
    return std::nullopt;
  // What fails after the front end (the CUDA emitter's refusals) at its source line, clang-style, as the front
  // end's errors.
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagOS);
  {
    llvm::raw_string_ostream cuda(code.cuda);
    if (mlir::failed(emitCuda(*code.module, cuda)))
      return std::nullopt;
  }
  auto entries = lowerEntries(*code.module);
  if (!entries) {
    diagOS << "error: " << llvm::toString(entries.takeError()) << "\n";
    return std::nullopt;
  }
  code.entries = std::move(*entries);
  return code;
}

} // namespace tilec
