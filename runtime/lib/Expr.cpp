#include "tilec/runtime/Expr.h"

#include "tilec/runtime/Error.h"
#include "tilec/runtime/TensorView.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace tilec::runtime {

void throwUnknownSymbol(const std::string &name) {
  throw PlanError(fmt::format("launch plan refers to dim name '{}', which no parameter of the signature declares",
                              name));
}

Expr::Expr(std::int64_t constant) { tokens_.push_back({Op::Const, constant, 0, 0, {}}); }

Expr Expr::dim(int arg, int axis) {
  Expr expr;
  expr.tokens_[0] = {Op::Dim, 0, arg, axis, {}};
  return expr;
}

Expr Expr::stride(int arg, int axis) {
  Expr expr;
  expr.tokens_[0] = {Op::Stride, 0, arg, axis, {}};
  return expr;
}

Expr Expr::symbol(std::string name) {
  Expr expr;
  expr.tokens_[0] = {Op::Symbol, 0, 0, 0, std::move(name)};
  return expr;
}

Expr Expr::combine(Expr a, const Expr &b, Op op) {
  a.tokens_.insert(a.tokens_.end(), b.tokens_.begin(), b.tokens_.end());
  a.tokens_.push_back({op, 0, 0, 0, {}});
  return a;
}

bool Expr::hasUnboundSymbols() const {
  for (const Token &token : tokens_)
    if (token.op == Op::Symbol)
      return true;
  return false;
}

namespace {

const char *functionName(Expr::Op op) {
  switch (op) {
  case Expr::Op::FloorDiv:
    return "floordiv";
  case Expr::Op::CeilDiv:
    return "ceildiv";
  case Expr::Op::Mod:
    return "mod";
  case Expr::Op::Min:
    return "min";
  case Expr::Op::Max:
    return "max";
  default:
    return nullptr;
  }
}

std::int64_t floorDivide(std::int64_t a, std::int64_t b) {
  std::int64_t quotient = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --quotient;
  return quotient;
}

class Parser {
public:
  explicit Parser(const std::string &text) : text_(text) {}

  Expr parseAll() {
    Expr expr = parseSum();
    skipSpace();
    if (position_ != text_.size())
      fail(fmt::format("unexpected '{}'", text_[position_]));
    return expr;
  }

private:
  [[noreturn]] void fail(const std::string &what) const {
    throw PlanError(fmt::format("cannot parse expression '{}' at column {}: {}", text_, position_ + 1, what));
  }
  void skipSpace() {
    while (position_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[position_])))
      ++position_;
  }
  bool accept(char c) {
    skipSpace();
    if (position_ < text_.size() && text_[position_] == c) {
      ++position_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!accept(c))
      fail(fmt::format("expected '{}'", c));
  }
  Expr parseSum() {
    Expr expr = parseProduct();
    for (;;) {
      if (accept('+'))
        expr = expr + parseProduct();
      else if (accept('-'))
        expr = expr - parseProduct();
      else
        return expr;
    }
  }
  Expr parseProduct() {
    Expr expr = parseFactor();
    while (accept('*'))
      expr = expr * parseFactor();
    return expr;
  }
  std::int64_t parseInteger() {
    skipSpace();
    std::size_t start = position_;
    while (position_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[position_])))
      ++position_;
    if (start == position_)
      fail("expected an integer");
    try {
      return std::stoll(text_.substr(start, position_ - start));
    } catch (const std::out_of_range &) {
      position_ = start;
      fail("integer out of range");
    }
  }
  Expr parseFactor() {
    skipSpace();
    if (position_ >= text_.size())
      fail("unexpected end");
    // Every recursion of the parser passes here: bounded, so that no text can exhaust the stack.
    struct Nesting {
      int &depth;
      explicit Nesting(int &d) : depth(++d) {}
      ~Nesting() { --depth; }
    } nesting(depth_);
    if (depth_ > Expr::kMaxDepth)
      fail(fmt::format("nested deeper than {}", Expr::kMaxDepth));
    char c = text_[position_];
    if (accept('(')) {
      Expr inner = parseSum();
      expect(')');
      return inner;
    }
    if (accept('-'))
      return Expr(0) - parseFactor();
    if (std::isdigit(static_cast<unsigned char>(c)))
      return Expr(parseInteger());
    if (!(std::isalpha(static_cast<unsigned char>(c)) || c == '_'))
      fail(fmt::format("unexpected '{}'", c));
    std::size_t start = position_;
    while (position_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[position_])) || text_[position_] == '_'))
      ++position_;
    std::string name = text_.substr(start, position_ - start);
    skipSpace();
    if (position_ >= text_.size() || text_[position_] != '(')
      return Expr::symbol(name);
    expect('(');
    if (name == "dim" || name == "stride") {
      int arg = static_cast<int>(parseInteger());
      expect(',');
      int axis = static_cast<int>(parseInteger());
      expect(')');
      return name == "dim" ? Expr::dim(arg, axis) : Expr::stride(arg, axis);
    }
    Expr left = parseSum();
    expect(',');
    Expr right = parseSum();
    expect(')');
    if (name == "floordiv")
      return floordiv(std::move(left), right);
    if (name == "ceildiv")
      return ceildiv(std::move(left), right);
    if (name == "mod")
      return mod(std::move(left), right);
    if (name == "min")
      return min(std::move(left), right);
    if (name == "max")
      return max(std::move(left), right);
    position_ = start;
    fail(fmt::format("unknown function '{}' (known: floordiv, ceildiv, mod, min, max, dim, stride)", name));
  }

  const std::string &text_;
  std::size_t position_ = 0;
  int depth_ = 0;
};

} // namespace

Expr Expr::parse(const std::string &text) {
  Expr expr = Parser(text).parseAll();
  // The evaluator's operand stack is kMaxDepth deep: refuse here what evaluate() would refuse at launch.
  int depth = 0, deepest = 0;
  for (const Token &token : expr.tokens_) {
    bool operand = token.op == Op::Const || token.op == Op::Dim || token.op == Op::Stride || token.op == Op::Symbol;
    depth += operand ? 1 : -1;
    deepest = std::max(deepest, depth);
  }
  if (deepest > kMaxDepth)
    throw PlanError(fmt::format("cannot parse expression '{}' at column 1: it needs {} pending operands, more than "
                                "the {} an expression may have",
                                text, deepest, kMaxDepth));
  return expr;
}

std::int64_t Expr::evaluate(const TensorView *args, std::size_t count) const {
  std::int64_t stack[kMaxDepth];
  int depth = 0;
  for (const Token &token : tokens_) {
    switch (token.op) {
    case Op::Const:
    case Op::Dim:
    case Op::Stride: {
      if (depth == kMaxDepth)
        throw PlanError(fmt::format("expression '{}' nests deeper than {}", toString(), kMaxDepth));
      std::int64_t value = token.value;
      if (token.op != Op::Const) {
        if (token.arg < 0 || static_cast<std::size_t>(token.arg) >= count)
          throw PlanError(fmt::format("expression '{}' refers to argument #{}, but only {} were given", toString(),
                                      token.arg, count));
        const TensorView &arg = args[token.arg];
        if (token.axis < 0 || token.axis >= arg.rank())
          throw PlanError(fmt::format("expression '{}' refers to axis {} of argument #{}, which has rank {}",
                                      toString(), token.axis, token.arg, arg.rank()));
        value = token.op == Op::Dim ? arg.dim(token.axis) : arg.stride(token.axis);
      }
      stack[depth++] = value;
      break;
    }
    case Op::Symbol:
      throw PlanError(fmt::format("expression '{}' has the unbound dim name '{}'", toString(), token.symbol));
    default: {
      if (depth < 2)
        throw PlanError(fmt::format("malformed expression '{}'", toString()));
      std::int64_t right = stack[--depth];
      std::int64_t left = stack[depth - 1];
      std::int64_t result = 0;
      bool overflow = false;
      switch (token.op) {
      case Op::Add:
        overflow = __builtin_add_overflow(left, right, &result);
        break;
      case Op::Sub:
        overflow = __builtin_sub_overflow(left, right, &result);
        break;
      case Op::Mul:
        overflow = __builtin_mul_overflow(left, right, &result);
        break;
      case Op::FloorDiv:
      case Op::CeilDiv:
      case Op::Mod:
        if (right == 0)
          throw PlanError(fmt::format("division by zero in expression '{}'", toString()));
        if (left == INT64_MIN && right == -1) {
          overflow = true;
          break;
        }
        if (token.op == Op::FloorDiv)
          result = floorDivide(left, right);
        else if (token.op == Op::CeilDiv)
          result = -floorDivide(-left, right);
        else
          result = left - floorDivide(left, right) * right; // sign of the divisor, as Python and MLIR's floordiv
        break;
      case Op::Min:
        result = std::min(left, right);
        break;
      case Op::Max:
        result = std::max(left, right);
        break;
      default:
        break;
      }
      if (overflow)
        throw PlanError(fmt::format("int64 overflow evaluating expression '{}'", toString()));
      stack[depth - 1] = result;
    }
    }
  }
  if (depth != 1)
    throw PlanError("malformed expression (stack depth " + std::to_string(depth) + ")");
  return stack[0];
}

std::string Expr::toString() const {
  // Rebuild infix text from the RPN tokens; every binary operator is parenthesized, which keeps it unambiguous and
  // re-parseable without tracking precedence.
  std::vector<std::string> stack;
  for (const Token &token : tokens_) {
    switch (token.op) {
    case Op::Const:
      stack.push_back(std::to_string(token.value));
      break;
    case Op::Dim:
      // A bound name prints as the name: messages then read like the plan's author wrote it.
      stack.push_back(token.symbol.empty() ? fmt::format("dim({}, {})", token.arg, token.axis) : token.symbol);
      break;
    case Op::Stride:
      stack.push_back(fmt::format("stride({}, {})", token.arg, token.axis));
      break;
    case Op::Symbol:
      stack.push_back(token.symbol);
      break;
    default: {
      if (stack.size() < 2)
        return "<malformed>";
      std::string right = std::move(stack.back());
      stack.pop_back();
      std::string left = std::move(stack.back());
      stack.pop_back();
      if (const char *function = functionName(token.op))
        stack.push_back(fmt::format("{}({}, {})", function, left, right));
      else
        stack.push_back(fmt::format("({} {} {})", left,
                                    token.op == Op::Add ? '+' : token.op == Op::Sub ? '-' : '*', right));
    }
    }
  }
  return stack.size() == 1 ? stack[0] : "<malformed>";
}

} // namespace tilec::runtime
