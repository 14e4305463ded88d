// The compiler as a library: .tile source in, verified tile IR out. Used by
// the `tilec` tool and by hosts that compile kernels from source at run time.
#ifndef TILEC_DRIVER_DRIVER_H
#define TILEC_DRIVER_DRIVER_H

#include "tilec/Frontend/AST.h"
#include "tilec/Frontend/MLIRGen.h"
#include "tilec/Transforms/AtomicsStrategy.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

namespace tilec {

struct CompileOptions {
  frontend::GenOptions gen;
  /// Run canonicalize + cse on the generated IR (what --emit=mlir shows).
  bool cleanup = true;
  /// Atomic legalization (tile-legalize-atomics, docs/atomics.md) after
  /// generation: none (atomics as written, what --emit=mlir shows), or the
  /// strategy (what --emit=legalized shows); resolveAtomicsStrategy says what
  /// a user's options ask for.
  std::optional<AtomicsStrategy> atomics;
  /// With atomics == split: fail at any float atomic that split cannot make
  /// deterministic.
  bool deterministic = false;
  /// Largest number of partial slices the split strategy allocates.
  int64_t maxSplit = 8;
  /// Print the legalization's and GPU lowering's remarks to diagOS.
  bool remarks = false;
  /// After legalization, run the GPU lowering pipeline (Pipelines.h): what --emit=lowered shows and the CUDA
  /// emitter needs.
  bool lowerForGpu = false;
};

/// Parses the main buffer of `sourceMgr`; diagnostics go to `diagOS`.
/// Returns the AST, or nothing if there were syntax errors.
std::optional<frontend::Program> parse(llvm::SourceMgr &sourceMgr,
                                       llvm::raw_ostream &diagOS);

/// Parses, checks and generates tile IR, then verifies it. Every error
/// (front end and dialect verifier alike) is printed to `diagOS` as
/// `file:line:col: error: ...` with the source line; returns null if any.
mlir::OwningOpRef<mlir::ModuleOp> compileToTileIR(mlir::MLIRContext &context,
                                                  llvm::SourceMgr &sourceMgr,
                                                  const CompileOptions &options,
                                                  llvm::raw_ostream &diagOS);

} // namespace tilec

#endif
