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

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace tilec::frontend {

/// The GPU a kernel is compiled for, as the source sees it: the builtin constants `SM` and `WGMMA` (language.md
/// §6.6), so that defaults such as tile sizes can depend on the target. The IR is otherwise target-independent.
struct GpuTarget {
  /// Compute capability as major * 10 + minor: 90 for sm_90a and sm_90, 80 for sm_80, 120 for sm_120.
  int64_t sm = 90;
  /// Whether the target has Hopper's warpgroup MMA, which the GPU lowering uses for gemms: sm_90a only.
  bool wgmma = true;
};

/// The target of a real architecture name: `sm_` followed by two or three digits and at most one letter
/// (sm_90a, sm_80, sm_100f); nullopt for anything else.
std::optional<GpuTarget> parseGpuTarget(llvm::StringRef arch);

struct GenOptions {
  /// -D name=value overrides of compile-time constants, with the text of the
  /// value as given on the command line.
  std::map<std::string, std::string> defines;
  /// Only generate this kernel (all when empty).
  std::string kernel;
  /// What `SM` and `WGMMA` are (default: sm_90a).
  GpuTarget target;
  /// When set, called instead of reading `target`, once, and only if the source reads `SM` or `WGMMA`: finding the
  /// current GPU loads the CUDA driver, which a source that does not ask should not pay for. Returns nullopt with
  /// `error` set when the target cannot be told (reported at the name that asked).
  std::function<std::optional<GpuTarget>(std::string &error)> resolveTarget;
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
