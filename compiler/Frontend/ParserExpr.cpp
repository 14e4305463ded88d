// The expression half of the recursive-descent parser (Parser.cpp holds the
// token helpers, kernels and statements): precedence climbing over the
// operators of docs/language.md, calls, subscripts and allocations, with the
// nesting and height limits that keep a fuzzer's input from the stack limit.
#include "tilec/Frontend/Parser.h"

using namespace tilec::frontend;
using llvm::SMLoc;
using llvm::SMRange;

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

static constexpr unsigned kMaxHeight = 1000;

ExprPtr Parser::finish(ExprPtr e) {
  if (!e)
    return e;
  unsigned h = 0;
  auto see = [&](const Expr *child) {
    if (child)
      h = std::max(h, child->height);
  };
  if (auto *u = llvm::dyn_cast<UnaryExpr>(e.get())) {
    see(u->operand.get());
  } else if (auto *b = llvm::dyn_cast<BinaryExpr>(e.get())) {
    see(b->lhs.get());
    see(b->rhs.get());
  } else if (auto *t = llvm::dyn_cast<TernaryExpr>(e.get())) {
    see(t->cond.get());
    see(t->thenValue.get());
    see(t->elseValue.get());
  } else if (auto *c = llvm::dyn_cast<CallExpr>(e.get())) {
    for (auto &a : c->args)
      see(a.get());
    for (auto &kw : c->kwargs)
      see(kw.value.get());
  } else if (auto *i = llvm::dyn_cast<IndexExpr>(e.get())) {
    for (auto &s : i->subscripts) {
      see(s.start.get());
      see(s.length.get());
    }
  } else if (auto *a = llvm::dyn_cast<AllocExpr>(e.get())) {
    for (auto &d : a->dims)
      see(d.get());
  }
  e->height = h + 1;
  if (e->height > kMaxHeight) {
    diag.error(e->getRange(), "expression too complex (nested or chained "
                              "more than " + llvm::Twine(kMaxHeight) +
                              " operations deep)");
    return nullptr;
  }
  return e;
}

ExprPtr Parser::parseExpr() {
  DepthGuard guard(depth);
  if (depth > kMaxDepth) {
    diag.error(peek().range(), "expression nested too deeply");
    return nullptr;
  }
  return parseTernary();
}

ExprPtr Parser::parseTernary() {
  SMLoc start = peek().loc();
  ExprPtr cond = parseBinary(0);
  if (!cond || !accept(Tok::Question))
    return cond;
  ExprPtr thenValue = parseExpr();
  if (!thenValue || !expect(Tok::Colon, "between the two values of '?:'"))
    return nullptr;
  ExprPtr elseValue = parseExpr();
  if (!elseValue)
    return nullptr;
  return finish(std::make_unique<TernaryExpr>(rangeFrom(start), std::move(cond),
                                              std::move(thenValue),
                                              std::move(elseValue)));
}

namespace {
/// Binding strength of the operators, loosest first. `not` is a prefix
/// operator between `and` and the comparisons (`not a < b` is `not (a < b)`);
/// unary - and + bind tighter than every binary operator (`-a * b` is
/// `(-a) * b`). Binary operators are left-associative, comparisons do not
/// chain.
enum Precedence : int {
  kOr = 1,
  kAnd,
  kNot,
  kComparison,
  kAdditive,
  kMultiplicative,
  kUnary,
};

struct BinaryOperator {
  BinaryOp op;
  int precedence;
};

std::optional<BinaryOperator> binaryOperator(Tok kind) {
  switch (kind) {
  case Tok::KwOr: return BinaryOperator{BinaryOp::Or, kOr};
  case Tok::KwAnd: return BinaryOperator{BinaryOp::And, kAnd};
  case Tok::Less: return BinaryOperator{BinaryOp::Lt, kComparison};
  case Tok::LessEq: return BinaryOperator{BinaryOp::Le, kComparison};
  case Tok::Greater: return BinaryOperator{BinaryOp::Gt, kComparison};
  case Tok::GreaterEq: return BinaryOperator{BinaryOp::Ge, kComparison};
  case Tok::EqEq: return BinaryOperator{BinaryOp::Eq, kComparison};
  case Tok::NotEq: return BinaryOperator{BinaryOp::Ne, kComparison};
  case Tok::Plus: return BinaryOperator{BinaryOp::Add, kAdditive};
  case Tok::Minus: return BinaryOperator{BinaryOp::Sub, kAdditive};
  case Tok::Star: return BinaryOperator{BinaryOp::Mul, kMultiplicative};
  case Tok::Slash: return BinaryOperator{BinaryOp::Div, kMultiplicative};
  case Tok::Percent: return BinaryOperator{BinaryOp::Rem, kMultiplicative};
  default: return std::nullopt;
  }
}
} // namespace

ExprPtr Parser::parseBinary(int minPrecedence) {
  SMLoc start = peek().loc();
  ExprPtr lhs = parsePrefix(minPrecedence);
  while (lhs) {
    std::optional<BinaryOperator> op = binaryOperator(peek().kind);
    if (!op || op->precedence < minPrecedence)
      break;
    consume();
    // Left-associative: the right operand binds strictly tighter.
    ExprPtr rhs = parseBinary(op->precedence + 1);
    if (!rhs)
      return nullptr;
    lhs = finish(std::make_unique<BinaryExpr>(rangeFrom(start), op->op,
                                              std::move(lhs), std::move(rhs)));
    if (lhs && op->precedence == kComparison) {
      std::optional<BinaryOperator> next = binaryOperator(peek().kind);
      if (next && next->precedence == kComparison) {
        errorAtCurrent("comparisons do not chain; combine them with 'and'");
        return nullptr;
      }
    }
  }
  return lhs;
}

ExprPtr Parser::parsePrefix(int minPrecedence) {
  SMLoc start = peek().loc();
  std::optional<UnaryOp> op;
  int operandPrecedence = kUnary;
  if (is(Tok::KwNot) && minPrecedence <= kNot) {
    op = UnaryOp::Not;
    operandPrecedence = kNot;
  } else if (is(Tok::Minus)) {
    op = UnaryOp::Neg;
  } else if (is(Tok::Plus)) {
    op = UnaryOp::Plus;
  }
  if (!op)
    return parsePrimary();
  consume();
  DepthGuard guard(depth);
  if (depth > kMaxDepth) {
    diag.error(peek().range(), "expression nested too deeply");
    return nullptr;
  }
  ExprPtr operand = operandPrecedence == kUnary ? parsePrefix(kUnary)
                                                : parseBinary(operandPrecedence);
  if (!operand)
    return nullptr;
  return finish(std::make_unique<UnaryExpr>(rangeFrom(start), *op,
                                            std::move(operand)));
}

ExprPtr Parser::parseAdditive() { return parseBinary(kAdditive); }

ExprPtr Parser::parsePrimary() {
  const Token &t = peek();
  switch (t.kind) {
  case Tok::Int:
    consume();
    return std::make_unique<IntExpr>(t.range(), t.intValue);
  case Tok::Float:
    consume();
    return std::make_unique<FloatExpr>(t.range(), t.floatValue);
  case Tok::KwTrue:
  case Tok::KwFalse:
    consume();
    return std::make_unique<BoolExpr>(t.range(), t.kind == Tok::KwTrue);
  case Tok::LParen: {
    consume();
    ExprPtr inner = parseExpr();
    if (!inner || !expect(Tok::RParen, "to close the parenthesis"))
      return nullptr;
    return inner;
  }
  case Tok::Ident: {
    const Token &name = consume();
    if (is(Tok::LParen))
      return parseCallRest(name);
    if (is(Tok::LSquare))
      return parseIndexRest(name);
    if (is(Tok::Less) && (name.text == "shared" || name.text == "fragment" ||
                          name.text == "local"))
      return parseAllocRest(name);
    return std::make_unique<NameExpr>(name.range(), name.text.str());
  }
  default:
    errorAtCurrent("expected an expression");
    return nullptr;
  }
}

ExprPtr Parser::parseCallRest(const Token &name) {
  SMLoc start = name.loc();
  consume(); // '('
  auto call = std::make_unique<CallExpr>(SMRange(start, start),
                                         name.text.str(), name.range());
  if (!is(Tok::RParen)) {
    do {
      if (is(Tok::RParen))
        break;
      if (is(Tok::Ident) && is(Tok::Assign, 1)) {
        KeywordArg kw;
        const Token &key = consume();
        kw.name = key.text.str();
        kw.nameRange = key.range();
        consume(); // '='
        kw.value = parseExpr();
        if (!kw.value)
          return nullptr;
        call->kwargs.push_back(std::move(kw));
        continue;
      }
      if (!call->kwargs.empty()) {
        errorAtCurrent("expected a keyword argument 'name=value' after "
                       "keyword arguments");
        return nullptr;
      }
      ExprPtr arg = parseExpr();
      if (!arg)
        return nullptr;
      call->args.push_back(std::move(arg));
    } while (accept(Tok::Comma));
  }
  if (!expect(Tok::RParen, ("to close the call to '" + name.text + "'").str()))
    return nullptr;
  auto result = std::make_unique<CallExpr>(rangeFrom(start), call->callee,
                                           call->calleeRange);
  result->args = std::move(call->args);
  result->kwargs = std::move(call->kwargs);
  return finish(std::move(result));
}

ExprPtr Parser::parseIndexRest(const Token &name) {
  SMLoc start = name.loc();
  consume(); // '['
  auto index = std::make_unique<IndexExpr>(SMRange(start, start),
                                           name.text.str(), name.range());
  do {
    Subscript sub;
    SMLoc subStart = peek().loc();
    if (is(Tok::Colon) && (is(Tok::Comma, 1) || is(Tok::RSquare, 1))) {
      consume();
      sub.kind = Subscript::Kind::Full;
    } else {
      sub.start = parseExpr();
      if (!sub.start)
        return nullptr;
      if (accept(Tok::SliceLen)) {
        sub.kind = Subscript::Kind::Slice;
        sub.length = parseExpr();
        if (!sub.length)
          return nullptr;
      } else if (is(Tok::Colon)) {
        errorAtCurrent("slices are written 'start :+ length'");
        return nullptr;
      }
    }
    sub.range = rangeFrom(subStart);
    index->subscripts.push_back(std::move(sub));
  } while (accept(Tok::Comma));
  if (!expect(Tok::RSquare, ("to close the subscript of '" + name.text + "'").str()))
    return nullptr;
  auto result = std::make_unique<IndexExpr>(rangeFrom(start), index->base,
                                            index->baseRange);
  result->subscripts = std::move(index->subscripts);
  return finish(std::move(result));
}

ExprPtr Parser::parseAllocRest(const Token &space) {
  SMLoc start = space.loc();
  consume(); // '<'
  auto alloc = std::make_unique<AllocExpr>(SMRange(start, start));
  alloc->space = space.text.str();
  if (!is(Tok::Ident)) {
    errorAtCurrent("expected the tile's dtype");
    return nullptr;
  }
  const Token &dtype = consume();
  alloc->dtype = dtype.text.str();
  alloc->dtypeRange = dtype.range();
  if (!expect(Tok::Greater, "after the tile's dtype") ||
      !expect(Tok::LSquare, "to open the tile's shape"))
    return nullptr;
  do {
    ExprPtr dim = parseExpr();
    if (!dim)
      return nullptr;
    alloc->dims.push_back(std::move(dim));
  } while (accept(Tok::Comma));
  if (!expect(Tok::RSquare, "to close the tile's shape"))
    return nullptr;
  auto result = std::make_unique<AllocExpr>(rangeFrom(start));
  result->space = alloc->space;
  result->dtype = alloc->dtype;
  result->dtypeRange = alloc->dtypeRange;
  result->dims = std::move(alloc->dims);
  return finish(std::move(result));
}
