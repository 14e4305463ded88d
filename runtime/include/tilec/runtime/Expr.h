// Integer expressions over launch arguments: grid extents, workspace sizes and scalar kernel arguments of a launch
// plan are computed from tensor dims with them.
//
// Text form (Expr::parse, Expr::toString):
//   expr   := term (('+' | '-') term)*
//   term   := factor ('*' factor)*
//   factor := INTEGER | NAME | '(' expr ')' | '-' factor
//           | ('floordiv' | 'ceildiv' | 'mod' | 'min' | 'max') '(' expr ',' expr ')'
//           | 'dim' '(' INTEGER ',' INTEGER ')'        -- extent of argument #a along axis i
//           | 'stride' '(' INTEGER ',' INTEGER ')'     -- stride (elements) of argument #a along axis i
// A NAME is a named dim of the entry's signature ("N" in q: bf16[N, 64]); it is bound when the entry is created.
// Evaluation is exact int64 arithmetic: overflow and division by zero throw PlanError.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tilec::runtime {

class TensorView;

// Throws PlanError("unknown dim name '<name>' ..."); out of line so that the header needs no <fmt>.
[[noreturn]] void throwUnknownSymbol(const std::string &name);

class Expr {
public:
  enum class Op : std::uint8_t { Const, Dim, Stride, Symbol, Add, Sub, Mul, FloorDiv, CeilDiv, Mod, Min, Max };
  struct Token {
    Op op;
    std::int64_t value = 0; // Const: the value
    int arg = 0;            // Dim/Stride: argument index
    int axis = 0;           // Dim/Stride: axis
    std::string symbol;     // Symbol: the name; kept after binding to Dim, for messages
  };

  // How deeply parse() lets parentheses, unary minus and function calls nest, and how many operands evaluate()
  // may have pending: one limit, checked when text is parsed.
  static constexpr int kMaxDepth = 32;

  Expr() : Expr(std::int64_t{0}) {}
  Expr(std::int64_t constant); // NOLINT: implicit, so that plans can say 128 for a constant extent
  Expr(int constant) : Expr(static_cast<std::int64_t>(constant)) {}
  static Expr parse(const std::string &text); // throws PlanError with the column of the problem
  static Expr dim(int arg, int axis);
  static Expr stride(int arg, int axis);
  static Expr symbol(std::string name);

  friend Expr operator+(Expr a, const Expr &b) { return combine(std::move(a), b, Op::Add); }
  friend Expr operator-(Expr a, const Expr &b) { return combine(std::move(a), b, Op::Sub); }
  friend Expr operator*(Expr a, const Expr &b) { return combine(std::move(a), b, Op::Mul); }
  friend Expr floordiv(Expr a, const Expr &b) { return combine(std::move(a), b, Op::FloorDiv); }
  friend Expr ceildiv(Expr a, const Expr &b) { return combine(std::move(a), b, Op::CeilDiv); }
  friend Expr mod(Expr a, const Expr &b) { return combine(std::move(a), b, Op::Mod); }
  friend Expr min(Expr a, const Expr &b) { return combine(std::move(a), b, Op::Min); }
  friend Expr max(Expr a, const Expr &b) { return combine(std::move(a), b, Op::Max); }

  // Replaces every Symbol by Dim(arg, axis) using `lookup` (name -> {arg, axis}, or {-1, -1} if unknown); throws
  // PlanError naming the first unknown symbol.
  template <typename Lookup> void bindSymbols(Lookup lookup);
  bool hasUnboundSymbols() const;

  // Evaluates against the launch arguments. Throws PlanError on an unbound symbol, an argument or axis out of
  // range, division or modulo by zero, or int64 overflow.
  std::int64_t evaluate(const TensorView *args, std::size_t count) const;
  std::int64_t evaluate() const { return evaluate(nullptr, 0); } // constant expressions

  const std::vector<Token> &tokens() const { return tokens_; } // reverse Polish notation
  std::string toString() const;

private:
  static Expr combine(Expr a, const Expr &b, Op op);
  std::vector<Token> tokens_;
};

template <typename Lookup> void Expr::bindSymbols(Lookup lookup) {
  for (Token &token : tokens_) {
    if (token.op != Op::Symbol)
      continue;
    auto [arg, axis] = lookup(token.symbol);
    if (arg < 0)
      throwUnknownSymbol(token.symbol);
    token.op = Op::Dim;
    token.arg = arg;
    token.axis = axis;
  }
}

} // namespace tilec::runtime
