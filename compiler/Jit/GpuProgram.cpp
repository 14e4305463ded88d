#include "tilec/Jit/GpuProgram.h"
#include "tilec/Jit/GpuCompile.h"
#include "tilec/Jit/TargetArch.h"
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
  if (!options.arch.empty() && !frontend::parseGpuTarget(options.arch)) {
    diag << "error: arch must name a real GPU such as sm_90a, got '" << options.arch << "'\n";
    return program;
  }
  TargetArch targetArch(options.arch);
  std::string error;
  std::optional<frontend::GpuTarget> target = targetArch.gpuTarget(error);
  if (!target) {
    diag << "error: " << error << "\n";
    return program;
  }
  program.arch = targetArch.arch(error);
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
  mlir::MLIRContext context;
  std::optional<GpuCode> code = compileToGpuCode(context, sourceMgr, std::move(compile), diag);
  if (!code)
    return program;
  program.cuda = std::move(code->cuda);
  program.entries = std::move(code->entries);
  program.ok = true;
  return program;
}

} // namespace tilec
