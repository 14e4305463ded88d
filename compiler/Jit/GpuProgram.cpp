#include "tilec/Jit/GpuProgram.h"
#include "tilec/Driver/Driver.h"
#include "tilec/Target/CUDA/CudaEmitter.h"
#include "tilec/Target/Plan/EntryToPlan.h"
#include "tilec/runtime/Runtime.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

namespace tilec {

GpuProgram compileForGpu(const std::string &source, const std::string &bufferName,
                         const GpuCompileOptions &options) {
  GpuProgram program;
  llvm::raw_string_ostream diag(program.diagnostics);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source, bufferName), llvm::SMLoc());
  // The target decides the source's SM and WGMMA (target-dependent defaults): the host must build the CUDA for it.
  program.arch = options.arch;
  if (program.arch.empty()) {
    std::string error;
    program.arch = runtime::defaultTargetArch(error);
    if (!error.empty()) {
      diag << "error: " << error << "\n";
      return program;
    }
  }
  std::optional<frontend::GpuTarget> target = frontend::parseGpuTarget(program.arch);
  if (!target) {
    diag << "error: arch must name a real GPU such as sm_90a, got '" << program.arch << "'\n";
    return program;
  }
  CompileOptions compile;
  compile.gen.target = *target;
  compile.gen.kernel = options.kernel;
  for (const auto &[name, value] : options.defines)
    compile.gen.defines[name] = value;
  std::string atomicsError;
  compile.atomics = resolveAtomicsStrategy(options.atomics, options.deterministic, AtomicsStrategy::FP32, atomicsError);
  if (!compile.atomics) {
    diag << "error: " << atomicsError << "\n";
    return program;
  }
  compile.deterministic = options.deterministic;
  compile.maxSplit = options.maxSplit;
  compile.lowerForGpu = true;
  mlir::MLIRContext context;
  auto module = compileToTileIR(context, sourceMgr, compile, diag);
  if (!module)
    return program;
  {
    llvm::raw_string_ostream cuda(program.cuda);
    // The emitter's errors at their source line, clang-style (file:line:col: error: ...), as the front end's.
    mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context, diag);
    if (mlir::failed(emitCuda(*module, cuda)))
      return program;
  }
  auto entries = lowerEntries(*module);
  if (!entries) {
    diag << llvm::toString(entries.takeError()) << "\n";
    return program;
  }
  program.entries = std::move(*entries);
  program.ok = true;
  return program;
}

} // namespace tilec
