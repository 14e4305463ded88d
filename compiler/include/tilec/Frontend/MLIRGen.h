// Turns a checked .tile AST into tile-dialect IR. Type, name and shape errors
// the language can see (undeclared names, wrong arity, non-constant static
// lengths, dtype mismatches) are reported here, with source locations,
// before any op is built; the dialect's verifiers then check the result.
#ifndef TILEC_FRONTEND_MLIRGEN_H
#define TILEC_FRONTEND_MLIRGEN_H

#include "tilec/Frontend/AST.h"
#include "tilec/Frontend/Diagnostics.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <string>

namespace tilec::frontend {

struct GenOptions {
  /// -D name=value overrides of compile-time constants, with the text of the
  /// value as given on the command line.
  std::map<std::string, std::string> defines;
  /// Only generate this kernel (all when empty).
  std::string kernel;
};

/// Returns null when any error was reported.
mlir::OwningOpRef<mlir::ModuleOp>
generateMLIR(mlir::MLIRContext &context, const Program &program,
             Diagnostics &diag, const GenOptions &options,
             llvm::StringRef filename);

/// Loads every dialect that generated IR uses.
void loadFrontendDialects(mlir::MLIRContext &context);

} // namespace tilec::frontend

#endif
