#include "tilec/Driver/Driver.h"
#include "tilec/Pipeline/Pipelines.h"
#include "tilec/Frontend/Parser.h"
#include "tilec/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;

namespace tilec {

std::optional<frontend::Program> parse(llvm::SourceMgr &sourceMgr,
                                       llvm::raw_ostream &diagOS) {
  frontend::Diagnostics diag(sourceMgr, diagOS);
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  frontend::Program program = frontend::parseSource(buffer->getBuffer(), diag);
  if (diag.hasErrors())
    return std::nullopt;
  return program;
}

OwningOpRef<ModuleOp> compileToTileIR(MLIRContext &context,
                                      llvm::SourceMgr &sourceMgr,
                                      const CompileOptions &options,
                                      llvm::raw_ostream &diagOS) {
  frontend::loadFrontendDialects(context);
  // Dialect verifier errors carry FileLineColLocs into this buffer and are
  // printed like the front end's own: with the source line and a caret.
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagOS);
  frontend::Diagnostics diag(sourceMgr, diagOS);
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  frontend::Program program = frontend::parseSource(buffer->getBuffer(), diag);
  if (diag.hasErrors())
    return nullptr;
  OwningOpRef<ModuleOp> module = frontend::generateMLIR(
      context, program, diag, options.gen, buffer->getBufferIdentifier());
  if (!module || diag.hasErrors())
    return nullptr;
  {
    // A verifier error points at the .tile statement the op came from; the
    // op in generic form would only add noise for a kernel author.
    bool printOp = context.shouldPrintOpOnDiagnostic();
    context.printOpOnDiagnostic(false);
    llvm::scope_exit restore(
        [&] { context.printOpOnDiagnostic(printOp); });
    if (failed(verify(*module)))
      return nullptr;
  }
  if (options.cleanup) {
    PassManager pm(&context);
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    if (failed(pm.run(*module)))
      return nullptr;
  }
  if (options.atomics) {
    // Remarks reach diagOS only when asked for; errors always do.
    // A remark or error names its source line; the op itself adds nothing.
    bool printOp = context.shouldPrintOpOnDiagnostic();
    context.printOpOnDiagnostic(false);
    llvm::scope_exit restore(
        [&] { context.printOpOnDiagnostic(printOp); });
    ScopedDiagnosticHandler quiet(&context, [&](Diagnostic &d) {
      return success(d.getSeverity() == DiagnosticSeverity::Remark &&
                     !options.remarks);
    });
    PassManager pm(&context);
    LegalizeAtomicsOptions legalize;
    legalize.strategy = *options.atomics;
    legalize.deterministic = options.deterministic;
    legalize.maxSplit = options.maxSplit;
    pm.addPass(createLegalizeAtomics(legalize));
    if (options.cleanup) {
      pm.addPass(createCanonicalizerPass());
      pm.addPass(createCSEPass());
    }
    if (options.lowerForGpu)
      buildGpuLoweringPipeline(pm);
    if (failed(pm.run(*module)))
      return nullptr;
  }
  return module;
}

} // namespace tilec
