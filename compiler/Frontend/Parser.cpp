#include "tilec/Frontend/Parser.h"

#include "llvm/ADT/StringSwitch.h"

using namespace tilec::frontend;
using llvm::SMLoc;
using llvm::SMRange;

Program tilec::frontend::parseSource(llvm::StringRef buffer, Diagnostics &diag) {
  Lexer lexer(buffer, diag);
  Parser parser(lexer.lexAll(), diag);
  return parser.parseProgram();
}

const Token &Parser::peek(unsigned ahead) const {
  size_t i = std::min(pos + ahead, tokens.size() - 1);
  return tokens[i];
}

const Token &Parser::consume() {
  const Token &t = tokens[pos];
  if (pos + 1 < tokens.size())
    ++pos;
  return t;
}

bool Parser::accept(Tok kind) {
  if (!is(kind))
    return false;
  consume();
  return true;
}

static std::string describe(const Token &t) {
  switch (t.kind) {
  case Tok::Ident:
    return ("identifier '" + t.text + "'").str();
  case Tok::Int:
  case Tok::Float:
    return ("number " + t.text).str();
  case Tok::Error:
    return "an invalid token";
  default:
    return tokenName(t.kind);
  }
}

void Parser::errorAtCurrent(const llvm::Twine &message) {
  const Token &t = peek();
  // An invalid token was already reported by the lexer.
  if (t.kind == Tok::Error)
    return;
  diag.error(t.range(), message + ", found " + describe(t));
}

bool Parser::isWord(llvm::StringRef word, unsigned ahead) const {
  return is(Tok::Ident, ahead) && peek(ahead).text == word;
}

bool Parser::expectWord(llvm::StringRef word, llvm::StringRef context) {
  if (isWord(word)) {
    consume();
    return true;
  }
  errorAtCurrent("expected '" + word + "' " + context);
  return false;
}

bool Parser::expect(Tok kind, llvm::StringRef context) {
  if (accept(kind))
    return true;
  errorAtCurrent(llvm::Twine("expected ") + tokenName(kind) + " " + context);
  return false;
}

SMRange Parser::rangeFrom(SMLoc start) const {
  // The end of the last consumed token.
  size_t last = pos == 0 ? 0 : pos - 1;
  const Token &t = tokens[last];
  const char *end = t.text.data() + t.text.size();
  if (end < start.getPointer())
    end = start.getPointer();
  return SMRange(start, SMLoc::getFromPointer(end));
}

void Parser::skipStatement() {
  int nesting = 0;
  while (!is(Tok::Eof)) {
    Tok k = peek().kind;
    if (k == Tok::Newline && nesting == 0) {
      consume();
      break;
    }
    if (k == Tok::Indent)
      ++nesting;
    if (k == Tok::Dedent) {
      if (nesting == 0)
        break;
      --nesting;
    }
    consume();
  }
  skipBlockIfAny();
}

void Parser::skipBlockIfAny() {
  if (!is(Tok::Indent))
    return;
  int nesting = 0;
  while (!is(Tok::Eof)) {
    Tok k = consume().kind;
    if (k == Tok::Indent)
      ++nesting;
    else if (k == Tok::Dedent && --nesting == 0)
      return;
  }
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

Program Parser::parseProgram() {
  Program program;
  while (!is(Tok::Eof) && !diag.tooManyErrors()) {
    if (accept(Tok::Newline))
      continue;
    if (is(Tok::KwKernel)) {
      if (auto kernel = parseKernel())
        program.kernels.push_back(std::move(kernel));
      continue;
    }
    errorAtCurrent("expected 'kernel' at the top level");
    // Skip to the next line that starts a kernel.
    while (!is(Tok::Eof) && !is(Tok::KwKernel))
      consume();
  }
  return program;
}

bool Parser::parseNameList(
    std::vector<std::pair<std::string, SMRange>> &out,
    llvm::StringRef context) {
  do {
    if (!is(Tok::Ident)) {
      errorAtCurrent(llvm::Twine("expected a name ") + context);
      return false;
    }
    const Token &t = consume();
    out.emplace_back(t.text.str(), t.range());
  } while (accept(Tok::Comma));
  return true;
}

bool Parser::parseNameAndType(const NameAndTypeWording &wording,
                              std::string &name, SMRange &nameRange,
                              std::string &type, SMRange &typeRange) {
  if (!is(Tok::Ident)) {
    errorAtCurrent(wording.expected);
    return false;
  }
  const Token &nameTok = consume();
  name = nameTok.text.str();
  nameRange = nameTok.range();
  if (!expect(Tok::Colon, wording.afterName))
    return false;
  if (!is(Tok::Ident)) {
    errorAtCurrent(wording.expectedType);
    return false;
  }
  const Token &typeTok = consume();
  type = typeTok.text.str();
  typeRange = typeTok.range();
  return true;
}

bool Parser::parseConstParam(Kernel &kernel) {
  ConstParam param;
  if (!parseNameAndType({"expected a compile-time constant 'name: type'",
                         "after the constant's name",
                         "expected the constant's type (int, float or bool)"},
                        param.name, param.range, param.type, param.typeRange))
    return false;
  const SMRange typeRange = param.typeRange;
  if (param.type != "int" && param.type != "float" && param.type != "bool") {
    diag.error(typeRange, "compile-time constants are int, float or bool, "
                          "not '" + param.type + "'");
    return false;
  }
  if (accept(Tok::Assign)) {
    // No comparisons here: '>' closes the constant list.
    param.defaultValue = parseAdditive();
    if (!param.defaultValue)
      return false;
  }
  kernel.constParams.push_back(std::move(param));
  return true;
}

bool Parser::parseTensorParam(Kernel &kernel) {
  TensorParam param;
  if (!parseNameAndType({"expected a tensor parameter 'name: dtype[dims]'",
                         "after the parameter's name",
                         "expected the parameter's dtype"},
                        param.name, param.range, param.dtype, param.dtypeRange))
    return false;
  if (!expect(Tok::LSquare, "to open the parameter's dimensions"))
    return false;
  do {
    ExprPtr dim = parseExpr();
    if (!dim)
      return false;
    param.dims.push_back(std::move(dim));
  } while (accept(Tok::Comma));
  if (!expect(Tok::RSquare, "to close the parameter's dimensions"))
    return false;
  kernel.params.push_back(std::move(param));
  return true;
}

std::unique_ptr<Kernel> Parser::parseKernel() {
  auto kernel = std::make_unique<Kernel>();
  SMLoc start = peek().loc();
  consume(); // 'kernel'
  auto fail = [&]() -> std::unique_ptr<Kernel> {
    // Skip the rest of this kernel: up to the next top-level 'kernel'.
    while (!is(Tok::Eof) && !is(Tok::KwKernel))
      consume();
    return nullptr;
  };
  if (!is(Tok::Ident)) {
    errorAtCurrent("expected the kernel's name");
    return fail();
  }
  const Token &name = consume();
  kernel->name = name.text.str();
  kernel->nameRange = name.range();

  if (accept(Tok::Less)) {
    if (!is(Tok::Greater)) {
      do {
        if (is(Tok::Greater))
          break; // trailing comma
        if (!parseConstParam(*kernel))
          return fail();
      } while (accept(Tok::Comma));
    }
    if (!expect(Tok::Greater, "to close the compile-time constants"))
      return fail();
  }
  if (!expect(Tok::LParen, "to open the kernel's parameters"))
    return fail();
  if (!is(Tok::RParen)) {
    do {
      if (is(Tok::RParen))
        break;
      if (!parseTensorParam(*kernel))
        return fail();
    } while (accept(Tok::Comma));
  }
  if (!expect(Tok::RParen, "to close the kernel's parameters"))
    return fail();

  // The launch configuration may sit on its own, indented, line.
  bool headerIndented = false;
  if (is(Tok::Newline) && is(Tok::Indent, 1) && isWord("grid", 2)) {
    consume();
    consume();
    headerIndented = true;
  }
  SMLoc gridStart = peek().loc();
  if (!expectWord("grid", "after the kernel's parameters") ||
      !expect(Tok::LParen, "after 'grid'"))
    return fail();
  do {
    ExprPtr extent = parseExpr();
    if (!extent)
      return fail();
    kernel->grid.push_back(std::move(extent));
  } while (accept(Tok::Comma));
  if (!expect(Tok::RParen, "to close the grid"))
    return fail();
  kernel->gridRange = rangeFrom(gridStart);
  if (!expectWord("threads", "after the grid") ||
      !expect(Tok::LParen, "after 'threads'"))
    return fail();
  kernel->threads = parseExpr();
  if (!kernel->threads || !expect(Tok::RParen, "to close 'threads'"))
    return fail();
  if (!expect(Tok::KwAs, "to name the block indices") ||
      !expect(Tok::LParen, "after 'as'") ||
      !parseNameList(kernel->blockIndices, "for a block index") ||
      !expect(Tok::RParen, "to close the block indices"))
    return fail();
  kernel->range = rangeFrom(start);
  if (!parseBlock(kernel->body, "as the kernel's body"))
    return fail();
  if (headerIndented && !accept(Tok::Dedent) && !is(Tok::Eof)) {
    errorAtCurrent("expected the end of the kernel");
    return fail();
  }
  return kernel;
}

bool Parser::parseBlock(Block &block, llvm::StringRef context) {
  if (!expect(Tok::Colon, "to open a block") ||
      !expect(Tok::Newline, "after ':'"))
    return false;
  if (!is(Tok::Indent)) {
    errorAtCurrent(llvm::Twine("expected an indented block ") + context);
    return false;
  }
  consume();
  DepthGuard guard(blockDepth);
  if (blockDepth > kMaxDepth) {
    diag.error(peek().range(), "blocks nested too deeply");
    // Skip this whole block (up to its matching end), and count it as
    // parsed: the caller has nothing left to recover from.
    int nesting = 1;
    while (!is(Tok::Eof)) {
      Tok k = consume().kind;
      if (k == Tok::Indent)
        ++nesting;
      else if (k == Tok::Dedent && --nesting == 0)
        break;
    }
    return true;
  }
  while (!is(Tok::Dedent) && !is(Tok::Eof) && !diag.tooManyErrors()) {
    if (accept(Tok::Newline))
      continue;
    if (StmtPtr stmt = parseStatement())
      block.push_back(std::move(stmt));
  }
  accept(Tok::Dedent);
  return true;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

StmtPtr Parser::parseStatement() {
  SMLoc start = peek().loc();
  if (is(Tok::KwFor))
    return parseFor();
  if (is(Tok::KwIf))
    return parseIf(/*isElif=*/false);
  if (is(Tok::KwElif) || is(Tok::KwElse)) {
    errorAtCurrent("'elif'/'else' without a matching 'if'");
    skipStatement();
    return nullptr;
  }
  if (accept(Tok::KwPass)) {
    auto stmt = std::make_unique<PassStmt>(rangeFrom(start));
    if (!expect(Tok::Newline, "after 'pass'")) {
      skipStatement();
      return nullptr;
    }
    return stmt;
  }
  if (is(Tok::Indent)) {
    diag.error(peek().range(), "unexpected indentation");
    skipBlockIfAny();
    return nullptr;
  }

  ExprPtr expr = parseExpr();
  if (!expr) {
    skipStatement();
    return nullptr;
  }
  StmtPtr stmt;
  Tok k = peek().kind;
  if (k == Tok::Assign || k == Tok::PlusAssign || k == Tok::MinusAssign ||
      k == Tok::StarAssign) {
    const Token &op = consume();
    ExprPtr value = parseExpr();
    if (!value) {
      skipStatement();
      return nullptr;
    }
    if (auto *name = llvm::dyn_cast<NameExpr>(expr.get())) {
      if (k != Tok::Assign) {
        diag.error(op.range(), "'" + op.text + "' needs a tile element on the "
                               "left; scalars are bound once with '='");
        skipStatement();
        return nullptr;
      }
      auto assign = std::make_unique<AssignStmt>(rangeFrom(start));
      assign->name = name->name;
      assign->nameRange = name->getRange();
      assign->value = std::move(value);
      stmt = std::move(assign);
    } else if (llvm::isa<IndexExpr>(expr.get())) {
      auto store = std::make_unique<StoreStmt>(rangeFrom(start));
      store->target.reset(llvm::cast<IndexExpr>(expr.release()));
      if (k == Tok::PlusAssign)
        store->compound = BinaryOp::Add;
      else if (k == Tok::MinusAssign)
        store->compound = BinaryOp::Sub;
      else if (k == Tok::StarAssign)
        store->compound = BinaryOp::Mul;
      store->value = std::move(value);
      stmt = std::move(store);
    } else {
      diag.error(expr->getRange(), "cannot assign to this expression; the "
                                   "left of '" + op.text +
                                   "' is a name or a tile element");
      skipStatement();
      return nullptr;
    }
  } else {
    stmt = std::make_unique<ExprStmt>(rangeFrom(start), std::move(expr));
  }
  if (!is(Tok::Newline) && !is(Tok::Dedent) && !is(Tok::Eof)) {
    errorAtCurrent("expected the end of the statement");
    skipStatement();
    return nullptr;
  }
  accept(Tok::Newline);
  return stmt;
}

StmtPtr Parser::parseFor() {
  SMLoc start = peek().loc();
  consume(); // 'for'
  auto stmt = std::make_unique<ForStmt>(SMRange(start, start));
  if (!parseNameList(stmt->vars, "after 'for'") ||
      !expect(Tok::KwIn, "after the loop variables")) {
    skipStatement();
    return nullptr;
  }
  if (!is(Tok::Ident) || !is(Tok::LParen, 1)) {
    errorAtCurrent("expected parallel(...), pipelined(...) or range(...)");
    skipStatement();
    return nullptr;
  }
  const Token &callee = consume();
  ExprPtr iter = parseCallRest(callee);
  if (!iter) {
    skipStatement();
    return nullptr;
  }
  stmt->iter.reset(llvm::cast<CallExpr>(iter.release()));
  auto header = rangeFrom(start);
  if (!parseBlock(stmt->body, "as the loop's body")) {
    skipStatement();
    return nullptr;
  }
  auto result = std::make_unique<ForStmt>(header);
  result->vars = std::move(stmt->vars);
  result->iter = std::move(stmt->iter);
  result->body = std::move(stmt->body);
  return result;
}

StmtPtr Parser::parseIf(bool isElif) {
  SMLoc start = peek().loc();
  consume(); // 'if' or 'elif'
  (void)isElif;
  ExprPtr cond = parseExpr();
  if (!cond) {
    skipStatement();
    return nullptr;
  }
  auto stmt = std::make_unique<IfStmt>(rangeFrom(start));
  stmt->cond = std::move(cond);
  if (!parseBlock(stmt->thenBody, "after 'if'")) {
    skipStatement();
    // The broken if's elif/else branches go with it.
    while (is(Tok::KwElif) || is(Tok::KwElse))
      skipStatement();
    return nullptr;
  }
  if (is(Tok::KwElif)) {
    // Each elif nests one level deeper (it is an if in the else branch).
    DepthGuard guard(blockDepth);
    if (blockDepth > kMaxDepth) {
      diag.error(peek().range(), "too many 'elif' branches in one chain (the "
                                 "limit is " + llvm::Twine(kMaxDepth) + ")");
      skipStatement();
      return stmt;
    }
    if (StmtPtr nested = parseIf(/*isElif=*/true))
      stmt->elseBody.push_back(std::move(nested));
  } else if (accept(Tok::KwElse)) {
    if (!parseBlock(stmt->elseBody, "after 'else'")) {
      skipStatement();
      return nullptr;
    }
  }
  return stmt;
}
