// The .tile abstract syntax tree. Nodes own their children; every node keeps
// the source range it came from, for diagnostics and for MLIR locations.
#ifndef TILEC_FRONTEND_AST_H
#define TILEC_FRONTEND_AST_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

namespace tilec::frontend {

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

class Expr {
public:
  enum class Kind { Int, Float, Bool, Name, Unary, Binary, Ternary, Call,
                    Index, Alloc };
  Expr(Kind kind, llvm::SMRange range) : kind(kind), range(range) {}
  virtual ~Expr() = default;
  Kind getKind() const { return kind; }
  llvm::SMRange getRange() const { return range; }
  llvm::SMLoc getLoc() const { return range.Start; }
  /// Longest path to a leaf (1 for a leaf): the parser bounds it, so code that
  /// walks the tree recursively cannot run out of stack.
  unsigned height = 1;

private:
  Kind kind;
  llvm::SMRange range;
};
using ExprPtr = std::unique_ptr<Expr>;

struct IntExpr : Expr {
  IntExpr(llvm::SMRange r, int64_t v) : Expr(Kind::Int, r), value(v) {}
  int64_t value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Int; }
};

struct FloatExpr : Expr {
  FloatExpr(llvm::SMRange r, double v) : Expr(Kind::Float, r), value(v) {}
  double value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Float; }
};

struct BoolExpr : Expr {
  BoolExpr(llvm::SMRange r, bool v) : Expr(Kind::Bool, r), value(v) {}
  bool value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Bool; }
};

struct NameExpr : Expr {
  NameExpr(llvm::SMRange r, std::string n) : Expr(Kind::Name, r), name(std::move(n)) {}
  std::string name;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Name; }
};

enum class UnaryOp { Neg, Plus, Not };
struct UnaryExpr : Expr {
  UnaryExpr(llvm::SMRange r, UnaryOp op, ExprPtr operand)
      : Expr(Kind::Unary, r), op(op), operand(std::move(operand)) {}
  UnaryOp op;
  ExprPtr operand;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Unary; }
};

enum class BinaryOp { Add, Sub, Mul, Div, Rem, Lt, Le, Gt, Ge, Eq, Ne, And, Or };
const char *binaryOpSpelling(BinaryOp op);
struct BinaryExpr : Expr {
  BinaryExpr(llvm::SMRange r, BinaryOp op, ExprPtr lhs, ExprPtr rhs)
      : Expr(Kind::Binary, r), op(op), lhs(std::move(lhs)), rhs(std::move(rhs)) {}
  BinaryOp op;
  ExprPtr lhs, rhs;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Binary; }
};

struct TernaryExpr : Expr {
  TernaryExpr(llvm::SMRange r, ExprPtr c, ExprPtr t, ExprPtr f)
      : Expr(Kind::Ternary, r), cond(std::move(c)), thenValue(std::move(t)),
        elseValue(std::move(f)) {}
  ExprPtr cond, thenValue, elseValue;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Ternary; }
};

/// `name = value` inside a call's argument list.
struct KeywordArg {
  std::string name;
  llvm::SMRange nameRange;
  ExprPtr value;
};

struct CallExpr : Expr {
  CallExpr(llvm::SMRange r, std::string callee, llvm::SMRange calleeRange)
      : Expr(Kind::Call, r), callee(std::move(callee)), calleeRange(calleeRange) {}
  std::string callee;
  llvm::SMRange calleeRange;
  std::vector<ExprPtr> args;
  std::vector<KeywordArg> kwargs;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Call; }
};

/// One subscript of `x[...]`: an index (drops the dim), `start :+ length`, or
/// `:` (the whole dim).
struct Subscript {
  enum class Kind { Index, Slice, Full };
  Kind kind = Kind::Index;
  llvm::SMRange range;
  ExprPtr start;  // Index, Slice
  ExprPtr length; // Slice
};

struct IndexExpr : Expr {
  IndexExpr(llvm::SMRange r, std::string base, llvm::SMRange baseRange)
      : Expr(Kind::Index, r), base(std::move(base)), baseRange(baseRange) {}
  std::string base;
  llvm::SMRange baseRange;
  std::vector<Subscript> subscripts;
  bool hasSlices() const {
    for (auto &s : subscripts)
      if (s.kind != Subscript::Kind::Index)
        return true;
    return false;
  }
  static bool classof(const Expr *e) { return e->getKind() == Kind::Index; }
};

/// `shared<bf16>[64, dim]`, `fragment<f32>[...]`, `local<f32>[...]`.
struct AllocExpr : Expr {
  AllocExpr(llvm::SMRange r) : Expr(Kind::Alloc, r) {}
  std::string space;   // shared | fragment | local
  std::string dtype;
  llvm::SMRange dtypeRange;
  std::vector<ExprPtr> dims;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Alloc; }
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class Stmt {
public:
  enum class Kind { Assign, Store, ExprStmt, For, If, Pass };
  Stmt(Kind kind, llvm::SMRange range) : kind(kind), range(range) {}
  virtual ~Stmt() = default;
  Kind getKind() const { return kind; }
  llvm::SMRange getRange() const { return range; }
  llvm::SMLoc getLoc() const { return range.Start; }

private:
  Kind kind;
  llvm::SMRange range;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

/// `name = value`: binds a scalar or a new tile to a name.
struct AssignStmt : Stmt {
  AssignStmt(llvm::SMRange r) : Stmt(Kind::Assign, r) {}
  std::string name;
  llvm::SMRange nameRange;
  ExprPtr value;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Assign; }
};

/// `t[i, j] = v`, `t[i, j] += v` (also -=, *=): writes one tile element.
struct StoreStmt : Stmt {
  StoreStmt(llvm::SMRange r) : Stmt(Kind::Store, r) {}
  std::unique_ptr<IndexExpr> target;
  std::optional<BinaryOp> compound; // the op of +=, -=, *=
  ExprPtr value;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Store; }
};

/// A call used as a statement: copy(...), gemm(...), atomic_add(...).
struct ExprStmt : Stmt {
  ExprStmt(llvm::SMRange r, ExprPtr e) : Stmt(Kind::ExprStmt, r), expr(std::move(e)) {}
  ExprPtr expr;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::ExprStmt; }
};

/// `for i, j in parallel(...)`, `for n in pipelined(lo, hi, stages=s)`,
/// `for k in range(...)`.
struct ForStmt : Stmt {
  ForStmt(llvm::SMRange r) : Stmt(Kind::For, r) {}
  std::vector<std::pair<std::string, llvm::SMRange>> vars;
  std::unique_ptr<CallExpr> iter;
  Block body;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::For; }
};

/// `if c: ... elif d: ... else: ...` (elif parsed as a nested if).
struct IfStmt : Stmt {
  IfStmt(llvm::SMRange r) : Stmt(Kind::If, r) {}
  ExprPtr cond;
  Block thenBody, elseBody;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::If; }
};

struct PassStmt : Stmt {
  PassStmt(llvm::SMRange r) : Stmt(Kind::Pass, r) {}
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Pass; }
};

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// `<name: int = 64>`: a compile-time constant of the kernel.
struct ConstParam {
  std::string name;
  llvm::SMRange range;
  std::string type; // int | float | bool
  llvm::SMRange typeRange;
  ExprPtr defaultValue; // may be null
};

/// `Q: bf16[batch, seq, heads, dim]`.
struct TensorParam {
  std::string name;
  llvm::SMRange range;
  std::string dtype;
  llvm::SMRange dtypeRange;
  std::vector<ExprPtr> dims;
};

struct Kernel {
  std::string name;
  llvm::SMRange nameRange;
  llvm::SMRange range;
  std::vector<ConstParam> constParams;
  std::vector<TensorParam> params;
  std::vector<ExprPtr> grid;
  llvm::SMRange gridRange;
  ExprPtr threads;
  std::vector<std::pair<std::string, llvm::SMRange>> blockIndices;
  Block body;
};

struct Program {
  std::vector<std::unique_ptr<Kernel>> kernels;
};

/// Prints the tree as indented S-expressions (`tilec --emit=ast`).
void dumpAST(const Program &program, llvm::raw_ostream &os);

} // namespace tilec::frontend

#endif
