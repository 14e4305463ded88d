// MLIRGen, part 2b: calls of the value builtins (math on floats, min/max,
// cdiv, pow, abs, float/int conversions). Each folds in double or int64 when
// its arguments are compile-time values and otherwise becomes arith/math ops;
// a tile builtin used as a value is refused here with a diagnostic.
#include "MLIRGenImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace tilec::frontend;

namespace {
/// A math builtin on floats, f(x) -> float: folded in double when x is a compile-time value (`fold`), else built as
/// math-dialect ops on f32 (`build`). One row per builtin: the name, the folding and the lowering stay together.
struct UnaryFloatBuiltin {
  const char *name;
  double (*fold)(double);
  Value (*build)(OpBuilder &, Location, Value);
};

template <typename OpTy> Value buildMath(OpBuilder &b, Location l, Value x) { return OpTy::create(b, l, x); }

// sigmoid(x) = 1 / (1 + exp(-x)): exp overflows to inf for very negative x, giving 0 as it should.
Value buildSigmoid(OpBuilder &b, Location l, Value x) {
  Value one = arith::ConstantOp::create(b, l, b.getF32FloatAttr(1.0f));
  Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, x));
  return arith::DivFOp::create(b, l, one, arith::AddFOp::create(b, l, one, e));
}

const UnaryFloatBuiltin kUnaryFloat[] = {
    {"exp2", [](double x) { return std::exp2(x); }, buildMath<math::Exp2Op>},
    {"log2", [](double x) { return std::log2(x); }, buildMath<math::Log2Op>},
    {"exp", [](double x) { return std::exp(x); }, buildMath<math::ExpOp>},
    {"log", [](double x) { return std::log(x); }, buildMath<math::LogOp>},
    {"sqrt", [](double x) { return std::sqrt(x); }, buildMath<math::SqrtOp>},
    {"rsqrt", [](double x) { return 1.0 / std::sqrt(x); }, buildMath<math::RsqrtOp>},
    {"tanh", [](double x) { return std::tanh(x); }, buildMath<math::TanhOp>},
    {"erf", [](double x) { return std::erf(x); }, buildMath<math::ErfOp>},
    {"sin", [](double x) { return std::sin(x); }, buildMath<math::SinOp>},
    {"cos", [](double x) { return std::cos(x); }, buildMath<math::CosOp>},
    {"floor", [](double x) { return std::floor(x); }, buildMath<math::FloorOp>},
    {"ceil", [](double x) { return std::ceil(x); }, buildMath<math::CeilOp>},
    {"log1p", [](double x) { return std::log1p(x); }, buildMath<math::Log1pOp>},
    {"expm1", [](double x) { return std::expm1(x); }, buildMath<math::ExpM1Op>},
    {"sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, buildSigmoid},
};

const UnaryFloatBuiltin *unaryFloatBuiltin(llvm::StringRef name) {
  for (const UnaryFloatBuiltin &b : kUnaryFloat)
    if (name == b.name)
      return &b;
  return nullptr;
}

const char *const kBinary[] = {"min", "max", "cdiv", "pow"};
} // namespace

bool tilec::frontend::isValueBuiltin(llvm::StringRef name) {
  return unaryFloatBuiltin(name) || llvm::is_contained(kBinary, name) || name == "abs" ||
         name == "float" || name == "int";
}

Val MLIRGen::call(const CallExpr &e) {
  llvm::StringRef f = e.callee;
  Location l = loc(e.getLoc());
  static const char *statements[] = {"copy", "fill", "gemm", "reduce_sum",
                                     "reduce_max", "reduce_min", "atomic_add",
                                     "atomic_max", "atomic_min"};
  if (llvm::is_contained(statements, f)) {
    error(e.getRange(), f + "() is a statement and has no value");
    return Val::poison();
  }
  const UnaryFloatBuiltin *unary = unaryFloatBuiltin(f);
  bool isUnaryFloat = unary != nullptr;
  bool isBinary = llvm::is_contained(kBinary, f);
  bool isCast = f == "float" || f == "int";
  if (!isUnaryFloat && !isBinary && !isCast && f != "abs") {
    error(e.calleeRange, "unknown function '" + f + "'");
    return Val::poison();
  }
  unsigned arity = isBinary ? 2 : 1;
  if (!checkArgs(e, arity, arity, {}, isBinary ? "a, b" : "x"))
    return Val::poison();
  SmallVector<Val> args;
  for (auto &a : e.args) {
    Val v = expr(*a);
    if (v.isPoison())
      return v;
    if (!v.isIntLike() && !v.isFloatLike()) {
      error(a->getRange(), f + "() needs a number, got " + describeVal(v));
      return Val::poison();
    }
    args.push_back(v);
  }
  auto asDouble = [](const Val &v) {
    return v.kind == Val::Kind::ConstInt ? double(v.intValue) : v.floatValue;
  };
  bool allConst = llvm::all_of(args, [](const Val &v) { return v.isConst(); });

  if (isUnaryFloat) {
    if (allConst)
      return Val::constFloat(unary->fold(asDouble(args[0])));
    return Val::dynamic(Val::Kind::Float, unary->build(builder, l, toF32(args[0], e.getLoc())));
  }
  if (f == "abs") {
    Val x = args[0];
    if (x.kind == Val::Kind::ConstInt) {
      if (x.intValue == INT64_MIN) {
        error(e.getRange(), "integer overflow in constant expression");
        return Val::poison();
      }
      return Val::constInt(x.intValue < 0 ? -x.intValue : x.intValue);
    }
    if (x.kind == Val::Kind::ConstFloat)
      return Val::constFloat(std::fabs(x.floatValue));
    if (x.kind == Val::Kind::Float)
      return Val::dynamic(Val::Kind::Float, math::AbsFOp::create(builder, l, x.value));
    return Val::dynamic(Val::Kind::Int, math::AbsIOp::create(builder, l, x.value));
  }
  if (f == "float") {
    if (args[0].isConst())
      return Val::constFloat(asDouble(args[0]));
    return Val::dynamic(Val::Kind::Float, toF32(args[0], e.getLoc()));
  }
  if (f == "int") {
    const Val &x = args[0];
    if (x.kind == Val::Kind::ConstInt || x.kind == Val::Kind::Int)
      return x;
    if (x.kind == Val::Kind::ConstFloat) {
      if (!(std::fabs(x.floatValue) < 9.2e18)) {
        error(e.getRange(), "int() of a constant out of the 64-bit range");
        return Val::poison();
      }
      return Val::constInt(static_cast<int64_t>(x.floatValue));
    }
    Value i64 = arith::FPToSIOp::create(builder, l, builder.getI64Type(), x.value);
    return Val::dynamic(Val::Kind::Int,
                        arith::IndexCastOp::create(builder, l, builder.getIndexType(), i64));
  }
  if (f == "pow") {
    if (allConst)
      return Val::constFloat(std::pow(asDouble(args[0]), asDouble(args[1])));
    return Val::dynamic(Val::Kind::Float, math::PowFOp::create(builder, l, toF32(args[0], e.getLoc()),
                                                                 toF32(args[1], e.getLoc())));
  }
  // min, max, cdiv
  Val a = args[0], b = args[1];
  bool isFloat = a.isFloatLike() || b.isFloatLike();
  if (f == "cdiv") {
    if (isFloat) {
      error(e.getRange(), "cdiv() needs two ints");
      return Val::poison();
    }
    if (b.kind == Val::Kind::ConstInt && b.intValue == 0) {
      error(e.args[1]->getRange(), "division by zero");
      return Val::poison();
    }
    if (allConst) {
      int64_t x = a.intValue, y = b.intValue;
      if (x == INT64_MIN && y == -1) {
        error(e.getRange(), "integer overflow in constant expression");
        return Val::poison();
      }
      int64_t q = x / y;
      if ((x % y != 0) && ((x < 0) == (y < 0)))
        ++q;
      return Val::constInt(q);
    }
    return Val::dynamic(Val::Kind::Int,
                        arith::CeilDivSIOp::create(builder, l, toIndex(a, e.getLoc()),
                                                   toIndex(b, e.getLoc())));
  }
  bool isMin = f == "min";
  if (allConst) {
    if (!isFloat)
      return Val::constInt(isMin ? std::min(a.intValue, b.intValue)
                                 : std::max(a.intValue, b.intValue));
    double x = asDouble(a), y = asDouble(b);
    // Like arith.minimumf/maximumf at run time: NaN wins.
    if (std::isnan(x) || std::isnan(y))
      return Val::constFloat(std::numeric_limits<double>::quiet_NaN());
    return Val::constFloat(isMin ? std::min(x, y) : std::max(x, y));
  }
  if (isFloat) {
    Value x = toF32(a, e.getLoc()), y = toF32(b, e.getLoc());
    // NaN-propagating, so a NaN input is never hidden.
    Value r = isMin ? arith::MinimumFOp::create(builder, l, x, y).getResult()
                    : arith::MaximumFOp::create(builder, l, x, y).getResult();
    return Val::dynamic(Val::Kind::Float, r);
  }
  Value x = toIndex(a, e.getLoc()), y = toIndex(b, e.getLoc());
  Value r = isMin ? arith::MinSIOp::create(builder, l, x, y).getResult()
                  : arith::MaxSIOp::create(builder, l, x, y).getResult();
  return Val::dynamic(Val::Kind::Int, r);
}

