// libFuzzer target for the .tile front end (not part of CI; see
// scripts/fuzz-parser.sh). Two builds of this one file:
//
//  * parser-only (default): bytes -> Lexer -> Parser -> AST dump. Links only
//    LLVM Support; compile the front end's Diagnostics, Lexer, Parser and
//    ASTDump sources alongside.
//  * TILEC_FUZZ_FULL: bytes -> tilec::compileToTileIR (lexer, parser,
//    MLIRGen, dialect verifier, canonicalize + cse), in-process, as a host
//    that compiles kernels at run time would.
//  * TILEC_FUZZ_GPU (with TILEC_FUZZ_FULL): further through atomic
//    legalization (fp32), the GPU lowering pipeline and the CUDA emitter,
//    what `tilec --emit=cuda` runs: every input the front end accepts
//    exercises layout inference, thread lowering and emission.
//
// Besides the sanitizers, one invariant is checked: a run that rejects the
// input must say so with an "error:" diagnostic.
#include "tilec/Frontend/AST.h"
#include "tilec/Frontend/Diagnostics.h"
#include "tilec/Frontend/Parser.h"

#ifdef TILEC_FUZZ_FULL
#include "tilec/Driver/Driver.h"
#include "mlir/IR/MLIRContext.h"
#endif
#ifdef TILEC_FUZZ_GPU
#include "tilec/Target/CUDA/CudaEmitter.h"
#include "mlir/IR/Diagnostics.h"
#endif

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <string>

static void checkDiagnosed(bool failed, const std::string &diagText) {
  if (failed && diagText.find("error:") == std::string::npos) {
    std::fprintf(stderr, "input rejected without an 'error:' diagnostic; "
                         "diagnostics were:\n%s\n",
                 diagText.c_str());
    std::abort();
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(bytes, "fuzz.tile"), llvm::SMLoc());
  std::string diagText;
  llvm::raw_string_ostream diagOS(diagText);

#ifdef TILEC_FUZZ_FULL
  // One context for the whole run, as a long-lived host would keep one.
  static mlir::MLIRContext *context = [] {
    auto *c = new mlir::MLIRContext(mlir::MLIRContext::Threading::DISABLED);
    return c;
  }();
  tilec::CompileOptions options;
#ifdef TILEC_FUZZ_GPU
  options.atomics = tilec::AtomicsStrategy::FP32;
  options.lowerForGpu = true;
#endif
  auto module = tilec::compileToTileIR(*context, sourceMgr, options, diagOS);
  bool failed = !module;
#ifdef TILEC_FUZZ_GPU
  if (module) {
    // The emitter reports through the context's diagnostics, as tilec does.
    mlir::SourceMgrDiagnosticHandler handler(sourceMgr, context, diagOS);
    std::string cuda;
    llvm::raw_string_ostream cudaOS(cuda);
    failed = mlir::failed(tilec::emitCuda(*module, cudaOS));
  }
#endif
  diagOS.flush();
  checkDiagnosed(failed, diagText);
#else
  tilec::frontend::Diagnostics diag(sourceMgr, diagOS);
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  tilec::frontend::Program program =
      tilec::frontend::parseSource(buffer->getBuffer(), diag);
  // Walk the whole tree (and every source range) the parser built.
  std::string dump;
  llvm::raw_string_ostream dumpOS(dump);
  tilec::frontend::dumpAST(program, dumpOS);
  diagOS.flush();
  checkDiagnosed(diag.hasErrors(), diagText);
#endif
  return 0;
}
