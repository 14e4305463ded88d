// The state of one MLIRGen run, shared by MLIRGen.cpp (kernels, statements,
// tile ops) and MLIRGenExpr.cpp (scalar expressions). Private to the front end.
#ifndef TILEC_FRONTEND_MLIRGENIMPL_H
#define TILEC_FRONTEND_MLIRGENIMPL_H

#include "tilec/Dialect/Tile/IR/TileOps.h"
#include "tilec/Frontend/MLIRGen.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

#include <deque>
#include <optional>

namespace tilec::frontend {

/// What a name or an expression stands for while generating IR. Compile-time
/// values are folded and never materialized unless an op needs them.
struct Val {
  enum class Kind {
    Poison,     // an error was reported already; uses stay silent
    ConstInt, ConstFloat, ConstBool,
    Int,        // dynamic, `index`
    Float,      // dynamic, `f32`
    Bool,       // dynamic, `i1`
    Tensor,     // a kernel parameter (global memref)
    Tile,       // a shared / fragment / local tile (memref)
  };
  Kind kind = Kind::Poison;
  int64_t intValue = 0;
  double floatValue = 0;
  bool boolValue = false;
  mlir::Value value;
  std::string name; // tensors and tiles: for messages

  static Val poison() { return {}; }
  static Val constInt(int64_t v) { Val r; r.kind = Kind::ConstInt; r.intValue = v; return r; }
  static Val constFloat(double v) { Val r; r.kind = Kind::ConstFloat; r.floatValue = v; return r; }
  static Val constBool(bool v) { Val r; r.kind = Kind::ConstBool; r.boolValue = v; return r; }
  static Val dynamic(Kind k, mlir::Value v) { Val r; r.kind = k; r.value = v; return r; }

  bool isPoison() const { return kind == Kind::Poison; }
  bool isConst() const {
    return kind == Kind::ConstInt || kind == Kind::ConstFloat || kind == Kind::ConstBool;
  }
  bool isIntLike() const { return kind == Kind::ConstInt || kind == Kind::Int; }
  bool isFloatLike() const { return kind == Kind::ConstFloat || kind == Kind::Float; }
  bool isBoolLike() const { return kind == Kind::ConstBool || kind == Kind::Bool; }
  bool isScalar() const { return isIntLike() || isFloatLike() || isBoolLike(); }
  bool isBuffer() const { return kind == Kind::Tensor || kind == Kind::Tile; }
};

/// "int", "float", "bool", "tensor 'Q'", "tile 'k_s'".
std::string describeVal(const Val &v);

struct Binding {
  Val val;
  llvm::SMRange definedAt;
};

/// Whether `name` is a builtin function with a value (exp2, min, sigmoid, pow, ...), as opposed to a tile
/// statement or an unknown name. One list for expressions and for the "result is unused" diagnostic.
bool isValueBuiltin(llvm::StringRef name);

class MLIRGen {
public:
  MLIRGen(mlir::MLIRContext &context, Diagnostics &diag,
          const GenOptions &options, llvm::StringRef filename)
      : context(context), builder(&context), diag(diag), options(options),
        filename(filename) {}

  mlir::OwningOpRef<mlir::ModuleOp> generate(const Program &program);

  // --- MLIRGen.cpp: kernels and statements ---
  void generateKernel(const Kernel &kernel);
  bool bindConstants(const Kernel &kernel,
                     llvm::SmallVectorImpl<mlir::NamedAttribute> &attrs);
  void generateBlock(const Block &block);
  void generateStmt(const Stmt &stmt);
  void generateAssign(const AssignStmt &stmt);
  void generateStore(const StoreStmt &stmt);
  void generateCallStmt(const CallExpr &call);
  void generateFor(const ForStmt &stmt);
  void generateIf(const IfStmt &stmt);
  Val generateAlloc(const AllocExpr &alloc, llvm::StringRef name);

  // Tile operands: a tile, a tensor, or a slice of either (a region).
  mlir::Value tileOperand(const Expr &expr, llvm::StringRef role);
  mlir::Value regionOf(const IndexExpr &index, const Val &base);

  // --- MLIRGenExpr.cpp: scalar expressions ---
  Val expr(const Expr &e);
  Val name(const NameExpr &e);
  Val unary(const UnaryExpr &e);
  Val binary(const BinaryExpr &e);
  Val binaryValues(BinaryOp op, Val lhs, Val rhs, const Expr &at);
  Val ternary(const TernaryExpr &e);
  Val call(const CallExpr &e);
  Val load(const IndexExpr &e);

  /// Compile-time evaluation where the language requires a constant.
  std::optional<int64_t> constInt(const Expr &e, llvm::StringRef what);
  std::optional<bool> constBool(const Expr &e, llvm::StringRef what);

  // Materialization of scalars as SSA values.
  mlir::Value toIndex(const Val &v, llvm::SMLoc at);
  /// The subscripts' starts as index values (element indices); nullopt after an error ("<what> must be an integer")
  /// or a poisoned operand.
  std::optional<llvm::SmallVector<mlir::Value>> integerIndices(llvm::ArrayRef<Subscript> subscripts,
                                                               llvm::StringRef what);
  mlir::Value toF32(const Val &v, llvm::SMLoc at);
  mlir::Value toI1(const Val &v, llvm::SMLoc at);
  /// Converts a scalar into `type` (a tile's element type) for stores/fills.
  mlir::Value toElement(const Val &v, mlir::Type type, const Expr &at);
  /// Reads a tile element of `type` back as a language scalar.
  Val fromElement(mlir::Value v, llvm::SMLoc at);

  /// Generates into a detached block that is then thrown away: a branch a
  /// compile-time condition does not take is still checked for errors.
  template <typename Fn>
  void checkOnly(Fn &&fn) {
    mlir::Block scratch;
    mlir::OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&scratch);
    pushScope();
    fn();
    popScope();
    scratch.dropAllReferences();
    scratch.dropAllDefinedValueUses();
  }

  // Names.
  const Binding *lookup(llvm::StringRef name) const;
  bool define(llvm::StringRef name, Val val, llvm::SMRange at);
  void pushScope() { scopes.emplace_back(); }
  void popScope() { scopes.pop_back(); }

  mlir::Location loc(llvm::SMLoc at);
  mlir::Type dtype(llvm::StringRef name, llvm::SMRange at);
  /// The compile target for `SM` / `WGMMA` at `at`; reports there (once) and returns nullopt when it cannot be told.
  std::optional<GpuTarget> target(llvm::SMRange at);
  void error(llvm::SMRange at, const llvm::Twine &message) {
    diag.error(at, message);
  }
  /// Arity and keyword checks of a builtin call; reports and returns false.
  bool checkArgs(const CallExpr &call, unsigned minArgs, unsigned maxArgs,
                 llvm::ArrayRef<llvm::StringRef> keywords,
                 llvm::StringRef signature);
  const KeywordArg *keyword(const CallExpr &call, llvm::StringRef name);

  mlir::MLIRContext &context;
  mlir::OpBuilder builder;
  Diagnostics &diag;
  const GenOptions &options;
  /// `SM` and `WGMMA`: options.target, or options.resolveTarget's answer once asked (target()).
  std::optional<GpuTarget> resolvedTarget;
  bool targetFailed = false;
  llvm::StringRef filename;
  mlir::ModuleOp module;
  // A deque, not a vector: pushing a scope must not move the others, since callers hold `const Binding *` from
  // lookup() across expression evaluation, which may push scopes (checkOnly). With a vector the reallocation copied
  // the maps and left those pointers dangling (a use-after-free the ASan fuzzer found). StringMap
  // entries themselves never move when a map grows.
  std::deque<llvm::StringMap<Binding>> scopes;
  unsigned loopDepth = 0;
};

} // namespace tilec::frontend

#endif
