// tilec --emit=ast: the parsed tree as indented S-expressions.
#include "tilec/Frontend/AST.h"

#include "llvm/Support/Format.h"

using namespace tilec::frontend;

const char *tilec::frontend::binaryOpSpelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add: return "+";
  case BinaryOp::Sub: return "-";
  case BinaryOp::Mul: return "*";
  case BinaryOp::Div: return "/";
  case BinaryOp::Rem: return "%";
  case BinaryOp::Lt: return "<";
  case BinaryOp::Le: return "<=";
  case BinaryOp::Gt: return ">";
  case BinaryOp::Ge: return ">=";
  case BinaryOp::Eq: return "==";
  case BinaryOp::Ne: return "!=";
  case BinaryOp::And: return "and";
  case BinaryOp::Or: return "or";
  }
  return "?";
}

namespace {

class Dumper {
public:
  explicit Dumper(llvm::raw_ostream &os) : os(os) {}

  void expr(const Expr *e) {
    if (!e) {
      os << "<null>";
      return;
    }
    if (auto *i = llvm::dyn_cast<IntExpr>(e)) {
      os << i->value;
    } else if (auto *f = llvm::dyn_cast<FloatExpr>(e)) {
      os << llvm::format("%g", f->value);
      if (f->value == static_cast<int64_t>(f->value))
        os << ".0";
    } else if (auto *b = llvm::dyn_cast<BoolExpr>(e)) {
      os << (b->value ? "true" : "false");
    } else if (auto *n = llvm::dyn_cast<NameExpr>(e)) {
      os << n->name;
    } else if (auto *u = llvm::dyn_cast<UnaryExpr>(e)) {
      os << '(' << (u->op == UnaryOp::Neg    ? "neg "
                    : u->op == UnaryOp::Plus ? "pos "
                                             : "not ");
      expr(u->operand.get());
      os << ')';
    } else if (auto *bin = llvm::dyn_cast<BinaryExpr>(e)) {
      os << '(' << binaryOpSpelling(bin->op) << ' ';
      expr(bin->lhs.get());
      os << ' ';
      expr(bin->rhs.get());
      os << ')';
    } else if (auto *t = llvm::dyn_cast<TernaryExpr>(e)) {
      os << "(? ";
      expr(t->cond.get());
      os << ' ';
      expr(t->thenValue.get());
      os << ' ';
      expr(t->elseValue.get());
      os << ')';
    } else if (auto *c = llvm::dyn_cast<CallExpr>(e)) {
      os << "(call " << c->callee;
      for (auto &a : c->args) {
        os << ' ';
        expr(a.get());
      }
      for (auto &kw : c->kwargs) {
        os << ' ' << kw.name << '=';
        expr(kw.value.get());
      }
      os << ')';
    } else if (auto *idx = llvm::dyn_cast<IndexExpr>(e)) {
      os << "(index " << idx->base;
      for (auto &s : idx->subscripts) {
        os << ' ';
        switch (s.kind) {
        case Subscript::Kind::Index:
          expr(s.start.get());
          break;
        case Subscript::Kind::Full:
          os << ':';
          break;
        case Subscript::Kind::Slice:
          os << "(slice ";
          expr(s.start.get());
          os << ' ';
          expr(s.length.get());
          os << ')';
          break;
        }
      }
      os << ')';
    } else if (auto *a = llvm::dyn_cast<AllocExpr>(e)) {
      os << '(' << a->space << ' ' << a->dtype;
      for (auto &d : a->dims) {
        os << ' ';
        expr(d.get());
      }
      os << ')';
    }
  }

  void block(const Block &b, unsigned indent) {
    for (auto &s : b)
      stmt(s.get(), indent);
  }

  void stmt(const Stmt *s, unsigned indent) {
    os.indent(indent);
    if (auto *a = llvm::dyn_cast<AssignStmt>(s)) {
      os << "(assign " << a->name << ' ';
      expr(a->value.get());
      os << ")\n";
    } else if (auto *st = llvm::dyn_cast<StoreStmt>(s)) {
      os << "(store";
      if (st->compound)
        os << binaryOpSpelling(*st->compound);
      os << ' ';
      expr(st->target.get());
      os << ' ';
      expr(st->value.get());
      os << ")\n";
    } else if (auto *e = llvm::dyn_cast<ExprStmt>(s)) {
      expr(e->expr.get());
      os << '\n';
    } else if (auto *f = llvm::dyn_cast<ForStmt>(s)) {
      os << "(for";
      for (auto &v : f->vars)
        os << ' ' << v.first;
      os << " in ";
      expr(f->iter.get());
      os << '\n';
      block(f->body, indent + 2);
      os.indent(indent) << ")\n";
    } else if (auto *i = llvm::dyn_cast<IfStmt>(s)) {
      os << "(if ";
      expr(i->cond.get());
      os << '\n';
      block(i->thenBody, indent + 2);
      if (!i->elseBody.empty()) {
        os.indent(indent) << " else\n";
        block(i->elseBody, indent + 2);
      }
      os.indent(indent) << ")\n";
    } else if (llvm::isa<PassStmt>(s)) {
      os << "(pass)\n";
    }
  }

  void kernel(const Kernel &k) {
    os << "(kernel " << k.name << '\n';
    for (auto &c : k.constParams) {
      os << "  (const " << c.name << ' ' << c.type;
      if (c.defaultValue) {
        os << ' ';
        expr(c.defaultValue.get());
      }
      os << ")\n";
    }
    for (auto &p : k.params) {
      os << "  (param " << p.name << ' ' << p.dtype;
      for (auto &d : p.dims) {
        os << ' ';
        expr(d.get());
      }
      os << ")\n";
    }
    os << "  (grid";
    for (auto &g : k.grid) {
      os << ' ';
      expr(g.get());
    }
    os << ")\n  (threads ";
    expr(k.threads.get());
    os << ")\n  (as";
    for (auto &b : k.blockIndices)
      os << ' ' << b.first;
    os << ")\n";
    block(k.body, 2);
    os << ")\n";
  }

private:
  llvm::raw_ostream &os;
};

} // namespace

void tilec::frontend::dumpAST(const Program &program, llvm::raw_ostream &os) {
  Dumper dumper(os);
  for (auto &k : program.kernels)
    dumper.kernel(*k);
}
