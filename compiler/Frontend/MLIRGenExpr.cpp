// MLIRGen, part 2: scalar expressions. Compile-time values fold here (so that
// `m * block_m / block_n` with constant block sizes costs nothing and tile
// shapes are known); dynamic ones become arith/math ops on index, f32 and i1.
#include "MLIRGenImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace tilec::frontend;

std::string tilec::frontend::describeVal(const Val &v) {
  switch (v.kind) {
  case Val::Kind::Poison: return "an invalid value";
  case Val::Kind::ConstInt: return "the int constant " + std::to_string(v.intValue);
  case Val::Kind::ConstFloat: return "a float constant";
  case Val::Kind::ConstBool: return v.boolValue ? "the bool constant true" : "the bool constant false";
  case Val::Kind::Int: return "an int";
  case Val::Kind::Float: return "a float";
  case Val::Kind::Bool: return "a bool";
  case Val::Kind::Tensor: return "tensor '" + v.name + "'";
  case Val::Kind::Tile: return "tile '" + v.name + "'";
  }
  return "a value";
}

std::optional<int64_t> MLIRGen::constInt(const Expr &e, llvm::StringRef what) {
  Val v = expr(e);
  if (v.isPoison())
    return std::nullopt;
  if (v.kind != Val::Kind::ConstInt) {
    error(e.getRange(), what + " must be a compile-time int constant, got " +
                            describeVal(v));
    return std::nullopt;
  }
  return v.intValue;
}

std::optional<bool> MLIRGen::constBool(const Expr &e, llvm::StringRef what) {
  Val v = expr(e);
  if (v.isPoison())
    return std::nullopt;
  if (v.kind != Val::Kind::ConstBool) {
    error(e.getRange(), what + " must be a compile-time bool (true or false), "
                            "got " + describeVal(v));
    return std::nullopt;
  }
  return v.boolValue;
}

Value MLIRGen::toIndex(const Val &v, llvm::SMLoc at) {
  if (v.kind == Val::Kind::ConstInt)
    return arith::ConstantIndexOp::create(builder, loc(at), v.intValue);
  assert(v.kind == Val::Kind::Int && "toIndex of a non-integer");
  return v.value;
}

Value MLIRGen::toF32(const Val &v, llvm::SMLoc at) {
  Location l = loc(at);
  switch (v.kind) {
  case Val::Kind::ConstFloat:
    return arith::ConstantOp::create(
        builder, l, builder.getF32FloatAttr(static_cast<float>(v.floatValue)));
  case Val::Kind::ConstInt:
    return arith::ConstantOp::create(
        builder, l, builder.getF32FloatAttr(static_cast<float>(v.intValue)));
  case Val::Kind::Float:
    return v.value;
  case Val::Kind::Int: {
    Value i64 = arith::IndexCastOp::create(builder, l, builder.getI64Type(), v.value);
    return arith::SIToFPOp::create(builder, l, builder.getF32Type(), i64);
  }
  default:
    return {};
  }
}

Value MLIRGen::toI1(const Val &v, llvm::SMLoc at) {
  if (v.kind == Val::Kind::ConstBool)
    return arith::ConstantOp::create(builder, loc(at),
                                     builder.getBoolAttr(v.boolValue));
  return v.value;
}

Value MLIRGen::toElement(const Val &v, Type type, const Expr &at) {
  Location l = loc(at.getLoc());
  if (auto ft = dyn_cast<FloatType>(type)) {
    if (!v.isIntLike() && !v.isFloatLike()) {
      error(at.getRange(), "cannot store " + describeVal(v) + " into a " +
                               llvm::Twine(ft.getWidth() == 16 ? "16" : "32") +
                               "-bit float tile element");
      return {};
    }
    if (v.isConst()) {
      double d = v.kind == Val::Kind::ConstInt ? double(v.intValue) : v.floatValue;
      return arith::ConstantOp::create(builder, l, builder.getFloatAttr(type, d));
    }
    Value f = toF32(v, at.getLoc());
    if (type.isF32())
      return f;
    return arith::TruncFOp::create(builder, l, type, f);
  }
  if (type.isInteger(1)) {
    if (!v.isBoolLike()) {
      error(at.getRange(), "cannot store " + describeVal(v) + " into a bool "
                           "tile element");
      return {};
    }
    return toI1(v, at.getLoc());
  }
  if (auto it = dyn_cast<IntegerType>(type)) {
    if (!v.isIntLike()) {
      error(at.getRange(), "cannot store " + describeVal(v) + " into an i" +
                               llvm::Twine(it.getWidth()) +
                               " element; convert with int(...)");
      return {};
    }
    if (v.kind == Val::Kind::ConstInt) {
      unsigned w = it.getWidth();
      if (w < 64 && (v.intValue < -(int64_t(1) << (w - 1)) ||
                     v.intValue >= (int64_t(1) << (w - 1)))) {
        error(at.getRange(), "constant " + llvm::Twine(v.intValue) +
                                 " does not fit in an i" + llvm::Twine(w) +
                                 " element");
        return {};
      }
      return arith::ConstantOp::create(builder, l,
                                       builder.getIntegerAttr(type, v.intValue));
    }
    return arith::IndexCastOp::create(builder, l, type, v.value);
  }
  error(at.getRange(), "unsupported element type");
  return {};
}

Val MLIRGen::fromElement(Value v, llvm::SMLoc at) {
  Location l = loc(at);
  Type t = v.getType();
  if (t.isF32())
    return Val::dynamic(Val::Kind::Float, v);
  if (isa<FloatType>(t))
    return Val::dynamic(Val::Kind::Float,
                        arith::ExtFOp::create(builder, l, builder.getF32Type(), v));
  if (t.isInteger(1))
    return Val::dynamic(Val::Kind::Bool, v);
  return Val::dynamic(Val::Kind::Int,
                      arith::IndexCastOp::create(builder, l, builder.getIndexType(), v));
}

Val MLIRGen::expr(const Expr &e) {
  switch (e.getKind()) {
  case Expr::Kind::Int:
    return Val::constInt(llvm::cast<IntExpr>(e).value);
  case Expr::Kind::Float:
    return Val::constFloat(llvm::cast<FloatExpr>(e).value);
  case Expr::Kind::Bool:
    return Val::constBool(llvm::cast<BoolExpr>(e).value);
  case Expr::Kind::Name:
    return name(llvm::cast<NameExpr>(e));
  case Expr::Kind::Unary:
    return unary(llvm::cast<UnaryExpr>(e));
  case Expr::Kind::Binary:
    return binary(llvm::cast<BinaryExpr>(e));
  case Expr::Kind::Ternary:
    return ternary(llvm::cast<TernaryExpr>(e));
  case Expr::Kind::Call:
    return call(llvm::cast<CallExpr>(e));
  case Expr::Kind::Index:
    return load(llvm::cast<IndexExpr>(e));
  case Expr::Kind::Alloc:
    error(e.getRange(), "allocate tiles in an assignment: 'name = " +
                            llvm::cast<AllocExpr>(e).space + "<...>[...]'");
    return Val::poison();
  }
  return Val::poison();
}

Val MLIRGen::name(const NameExpr &e) {
  if (const Binding *b = lookup(e.name))
    return b->val;
  if (e.name == "LOG2E")
    return Val::constFloat(1.4426950408889634);
  if (e.name == "LN2")
    return Val::constFloat(0.6931471805599453);
  if (e.name == "PI")
    return Val::constFloat(3.141592653589793);
  if (e.name == "inf")
    return Val::constFloat(std::numeric_limits<double>::infinity());
  // The compile target (tilec --arch), for target-dependent defaults.
  if (e.name == "SM" || e.name == "WGMMA") {
    std::optional<GpuTarget> t = target(e.getRange());
    if (!t)
      return Val::poison();
    return e.name == "SM" ? Val::constInt(t->sm) : Val::constBool(t->wgmma);
  }
  error(e.getRange(), "use of undeclared name '" + e.name + "'");
  return Val::poison();
}

std::optional<GpuTarget> MLIRGen::target(llvm::SMRange at) {
  if (resolvedTarget)
    return resolvedTarget;
  if (!options.resolveTarget) {
    resolvedTarget = options.target;
    return resolvedTarget;
  }
  if (targetFailed)
    return std::nullopt;
  std::string why;
  resolvedTarget = options.resolveTarget(why);
  if (!resolvedTarget) {
    targetFailed = true;
    error(at, "cannot tell the GPU this is compiled for: " + why);
  }
  return resolvedTarget;
}

Val MLIRGen::unary(const UnaryExpr &e) {
  Val v = expr(*e.operand);
  if (v.isPoison())
    return v;
  Location l = loc(e.getLoc());
  if (e.op == UnaryOp::Not) {
    if (!v.isBoolLike()) {
      error(e.getRange(), "'not' needs a bool, got " + describeVal(v));
      return Val::poison();
    }
    if (v.isConst())
      return Val::constBool(!v.boolValue);
    Value one = arith::ConstantOp::create(builder, l, builder.getBoolAttr(true));
    return Val::dynamic(Val::Kind::Bool, arith::XOrIOp::create(builder, l, v.value, one));
  }
  if (e.op == UnaryOp::Plus) {
    if (!v.isIntLike() && !v.isFloatLike()) {
      error(e.getRange(), "'+' needs a number, got " + describeVal(v));
      return Val::poison();
    }
    return v;
  }
  switch (v.kind) {
  case Val::Kind::ConstInt:
    if (v.intValue == INT64_MIN) {
      error(e.getRange(), "integer overflow in constant expression");
      return Val::poison();
    }
    return Val::constInt(-v.intValue);
  case Val::Kind::ConstFloat:
    return Val::constFloat(-v.floatValue);
  case Val::Kind::Float:
    return Val::dynamic(Val::Kind::Float, arith::NegFOp::create(builder, l, v.value));
  case Val::Kind::Int: {
    Value zero = arith::ConstantIndexOp::create(builder, l, 0);
    return Val::dynamic(Val::Kind::Int, arith::SubIOp::create(builder, l, zero, v.value));
  }
  default:
    error(e.getRange(), "'-' needs a number, got " + describeVal(v));
    return Val::poison();
  }
}

Val MLIRGen::binary(const BinaryExpr &e) {
  Val lhs = expr(*e.lhs);
  Val rhs = expr(*e.rhs);
  if (lhs.isPoison() || rhs.isPoison())
    return Val::poison();
  return binaryValues(e.op, lhs, rhs, e);
}

static bool isComparison(BinaryOp op) {
  return op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt ||
         op == BinaryOp::Ge || op == BinaryOp::Eq || op == BinaryOp::Ne;
}

template <typename T>
static bool compare(BinaryOp op, T a, T b) {
  switch (op) {
  case BinaryOp::Lt: return a < b;
  case BinaryOp::Le: return a <= b;
  case BinaryOp::Gt: return a > b;
  case BinaryOp::Ge: return a >= b;
  case BinaryOp::Eq: return a == b;
  default: return a != b;
  }
}

Val MLIRGen::binaryValues(BinaryOp op, Val lhs, Val rhs, const Expr &at) {
  Location l = loc(at.getLoc());
  const char *spelling = binaryOpSpelling(op);
  if (op == BinaryOp::And || op == BinaryOp::Or) {
    if (!lhs.isBoolLike() || !rhs.isBoolLike()) {
      error(at.getRange(), llvm::Twine("'") + spelling + "' needs two bools, got " +
                               describeVal(lhs) + " and " + describeVal(rhs));
      return Val::poison();
    }
    if (lhs.isConst() && rhs.isConst())
      return Val::constBool(op == BinaryOp::And ? lhs.boolValue && rhs.boolValue
                                                : lhs.boolValue || rhs.boolValue);
    // A constant side decides or drops out (keeps `not causal or ...` free).
    if (lhs.isConst() || rhs.isConst()) {
      const Val &c = lhs.isConst() ? lhs : rhs;
      const Val &d = lhs.isConst() ? rhs : lhs;
      if (op == BinaryOp::And)
        return c.boolValue ? d : Val::constBool(false);
      return c.boolValue ? Val::constBool(true) : d;
    }
    Value r = op == BinaryOp::And
                  ? arith::AndIOp::create(builder, l, lhs.value, rhs.value).getResult()
                  : arith::OrIOp::create(builder, l, lhs.value, rhs.value).getResult();
    return Val::dynamic(Val::Kind::Bool, r);
  }
  if (lhs.isBoolLike() || rhs.isBoolLike()) {
    if ((op == BinaryOp::Eq || op == BinaryOp::Ne) && lhs.isBoolLike() &&
        rhs.isBoolLike()) {
      if (lhs.isConst() && rhs.isConst())
        return Val::constBool(compare(op, lhs.boolValue, rhs.boolValue));
      auto pred = op == BinaryOp::Eq ? arith::CmpIPredicate::eq : arith::CmpIPredicate::ne;
      return Val::dynamic(Val::Kind::Bool,
                          arith::CmpIOp::create(builder, l, pred, toI1(lhs, at.getLoc()),
                                                toI1(rhs, at.getLoc())));
    }
    error(at.getRange(), llvm::Twine("'") + spelling + "' needs numbers, got " +
                             describeVal(lhs) + " and " + describeVal(rhs));
    return Val::poison();
  }
  if (!lhs.isScalar() || !rhs.isScalar()) {
    error(at.getRange(), llvm::Twine("'") + spelling + "' needs numbers, got " +
                             describeVal(lhs) + " and " + describeVal(rhs));
    return Val::poison();
  }
  bool isFloat = lhs.isFloatLike() || rhs.isFloatLike();

  // Both known: fold.
  if (lhs.isConst() && rhs.isConst()) {
    if (!isFloat) {
      int64_t a = lhs.intValue, b = rhs.intValue;
      if ((op == BinaryOp::Div || op == BinaryOp::Rem) && b == 0) {
        error(at.getRange(), "division by zero");
        return Val::poison();
      }
      if (isComparison(op))
        return Val::constBool(compare(op, a, b));
      int64_t r = 0;
      bool overflow = false;
      switch (op) {
      case BinaryOp::Add: overflow = __builtin_add_overflow(a, b, &r); break;
      case BinaryOp::Sub: overflow = __builtin_sub_overflow(a, b, &r); break;
      case BinaryOp::Mul: overflow = __builtin_mul_overflow(a, b, &r); break;
      case BinaryOp::Div:
        overflow = a == INT64_MIN && b == -1;
        r = overflow ? 0 : a / b;
        break;
      case BinaryOp::Rem:
        overflow = a == INT64_MIN && b == -1;
        r = overflow ? 0 : a % b;
        break;
      default: break;
      }
      if (overflow) {
        error(at.getRange(), "integer overflow in constant expression");
        return Val::poison();
      }
      return Val::constInt(r);
    }
    double a = lhs.kind == Val::Kind::ConstInt ? double(lhs.intValue) : lhs.floatValue;
    double b = rhs.kind == Val::Kind::ConstInt ? double(rhs.intValue) : rhs.floatValue;
    if (isComparison(op))
      return Val::constBool(compare(op, a, b));
    switch (op) {
    case BinaryOp::Add: return Val::constFloat(a + b);
    case BinaryOp::Sub: return Val::constFloat(a - b);
    case BinaryOp::Mul: return Val::constFloat(a * b);
    case BinaryOp::Div: return Val::constFloat(a / b);
    case BinaryOp::Rem: return Val::constFloat(std::fmod(a, b));
    default: break;
    }
  }

  if (!isFloat) {
    if ((op == BinaryOp::Div || op == BinaryOp::Rem) &&
        rhs.kind == Val::Kind::ConstInt && rhs.intValue == 0) {
      error(at.getRange(), "division by zero");
      return Val::poison();
    }
    Value a = toIndex(lhs, at.getLoc()), b = toIndex(rhs, at.getLoc());
    if (isComparison(op)) {
      arith::CmpIPredicate pred;
      switch (op) {
      case BinaryOp::Lt: pred = arith::CmpIPredicate::slt; break;
      case BinaryOp::Le: pred = arith::CmpIPredicate::sle; break;
      case BinaryOp::Gt: pred = arith::CmpIPredicate::sgt; break;
      case BinaryOp::Ge: pred = arith::CmpIPredicate::sge; break;
      case BinaryOp::Eq: pred = arith::CmpIPredicate::eq; break;
      default: pred = arith::CmpIPredicate::ne; break;
      }
      return Val::dynamic(Val::Kind::Bool, arith::CmpIOp::create(builder, l, pred, a, b));
    }
    Value r;
    switch (op) {
    case BinaryOp::Add: r = arith::AddIOp::create(builder, l, a, b); break;
    case BinaryOp::Sub: r = arith::SubIOp::create(builder, l, a, b); break;
    case BinaryOp::Mul: r = arith::MulIOp::create(builder, l, a, b); break;
    case BinaryOp::Div: r = arith::DivSIOp::create(builder, l, a, b); break;
    case BinaryOp::Rem: r = arith::RemSIOp::create(builder, l, a, b); break;
    default: break;
    }
    return Val::dynamic(Val::Kind::Int, r);
  }

  Value a = toF32(lhs, at.getLoc()), b = toF32(rhs, at.getLoc());
  if (isComparison(op)) {
    arith::CmpFPredicate pred;
    switch (op) {
    case BinaryOp::Lt: pred = arith::CmpFPredicate::OLT; break;
    case BinaryOp::Le: pred = arith::CmpFPredicate::OLE; break;
    case BinaryOp::Gt: pred = arith::CmpFPredicate::OGT; break;
    case BinaryOp::Ge: pred = arith::CmpFPredicate::OGE; break;
    case BinaryOp::Eq: pred = arith::CmpFPredicate::OEQ; break;
    default: pred = arith::CmpFPredicate::UNE; break;
    }
    return Val::dynamic(Val::Kind::Bool, arith::CmpFOp::create(builder, l, pred, a, b));
  }
  Value r;
  switch (op) {
  case BinaryOp::Add: r = arith::AddFOp::create(builder, l, a, b); break;
  case BinaryOp::Sub: r = arith::SubFOp::create(builder, l, a, b); break;
  case BinaryOp::Mul: r = arith::MulFOp::create(builder, l, a, b); break;
  case BinaryOp::Div: r = arith::DivFOp::create(builder, l, a, b); break;
  case BinaryOp::Rem: r = arith::RemFOp::create(builder, l, a, b); break;
  default: break;
  }
  return Val::dynamic(Val::Kind::Float, r);
}

Val MLIRGen::ternary(const TernaryExpr &e) {
  Val cond = expr(*e.cond);
  if (cond.isPoison())
    return cond;
  if (!cond.isBoolLike()) {
    error(e.cond->getRange(), "condition of '?:' must be a bool, got " +
                                  describeVal(cond));
    return Val::poison();
  }
  if (cond.kind == Val::Kind::ConstBool) {
    // Both sides are checked and typed as in the dynamic case; only the taken
    // one is kept.
    Val other;
    checkOnly([&] { other = expr(cond.boolValue ? *e.elseValue : *e.thenValue); });
    Val taken = expr(cond.boolValue ? *e.thenValue : *e.elseValue);
    if (taken.isPoison() || other.isPoison())
      return Val::poison();
    if (taken.isBoolLike() != other.isBoolLike() || !taken.isScalar() ||
        !other.isScalar()) {
      error(e.getRange(), "the two values of '?:' must both be numbers or both "
                          "bools, got " + describeVal(cond.boolValue ? taken : other) +
                              " and " + describeVal(cond.boolValue ? other : taken));
      return Val::poison();
    }
    if (taken.kind == Val::Kind::ConstInt && other.isFloatLike())
      return Val::constFloat(static_cast<double>(taken.intValue));
    if (taken.kind == Val::Kind::Int && other.isFloatLike())
      return Val::dynamic(Val::Kind::Float, toF32(taken, e.getLoc()));
    return taken;
  }
  Val a = expr(*e.thenValue), b = expr(*e.elseValue);
  if (a.isPoison() || b.isPoison())
    return Val::poison();
  Location l = loc(e.getLoc());
  if (a.isBoolLike() && b.isBoolLike())
    return Val::dynamic(Val::Kind::Bool,
                        arith::SelectOp::create(builder, l, cond.value,
                                                toI1(a, e.getLoc()), toI1(b, e.getLoc())));
  if (!a.isScalar() || !b.isScalar() || a.isBoolLike() || b.isBoolLike()) {
    error(e.getRange(), "the two values of '?:' must both be numbers or both "
                        "bools, got " + describeVal(a) + " and " + describeVal(b));
    return Val::poison();
  }
  if (a.isFloatLike() || b.isFloatLike())
    return Val::dynamic(Val::Kind::Float,
                        arith::SelectOp::create(builder, l, cond.value,
                                                toF32(a, e.getLoc()), toF32(b, e.getLoc())));
  return Val::dynamic(Val::Kind::Int,
                      arith::SelectOp::create(builder, l, cond.value,
                                              toIndex(a, e.getLoc()), toIndex(b, e.getLoc())));
}

Val MLIRGen::load(const IndexExpr &e) {
  const Binding *b = lookup(e.base);
  if (!b) {
    error(e.baseRange, "use of undeclared name '" + e.base + "'");
    return Val::poison();
  }
  if (b->val.isPoison())
    return Val::poison();
  if (b->val.kind == Val::Kind::Tensor) {
    error(e.getRange(), "tensor '" + e.base + "' cannot be read element by "
                        "element; copy a slice of it into a tile first");
    return Val::poison();
  }
  if (b->val.kind != Val::Kind::Tile) {
    error(e.baseRange, "'" + e.base + "' is " + describeVal(b->val) +
                           " and cannot be indexed");
    return Val::poison();
  }
  if (e.hasSlices()) {
    error(e.getRange(), "a slice is not a scalar; slices are operands of "
                        "copy(), fill(), gemm(), reduce_*() and atomic_*()");
    return Val::poison();
  }
  auto type = cast<MemRefType>(b->val.value.getType());
  if (e.subscripts.size() != static_cast<size_t>(type.getRank())) {
    error(e.getRange(), "tile '" + e.base + "' has " +
                            llvm::Twine(type.getRank()) + " dimensions but " +
                            llvm::Twine(e.subscripts.size()) +
                            " indices were given");
    return Val::poison();
  }
  std::optional<SmallVector<Value>> indices = integerIndices(e.subscripts, "tile index");
  if (!indices)
    return Val::poison();
  Value v = memref::LoadOp::create(builder, loc(e.getLoc()), b->val.value, *indices);
  return fromElement(v, e.getLoc());
}

std::optional<SmallVector<Value>> MLIRGen::integerIndices(llvm::ArrayRef<Subscript> subscripts, llvm::StringRef what) {
  SmallVector<Value> indices;
  for (const Subscript &s : subscripts) {
    Val i = expr(*s.start);
    if (i.isPoison())
      return std::nullopt;
    if (!i.isIntLike()) {
      error(s.start->getRange(), what + " must be an integer, got " + describeVal(i));
      return std::nullopt;
    }
    indices.push_back(toIndex(i, s.start->getLoc()));
  }
  return indices;
}
