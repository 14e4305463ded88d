// The .tile lexer: Python-shaped layout (NEWLINE, INDENT, DEDENT tokens from
// indentation; newlines inside brackets are ignored), C-like operators.
#ifndef TILEC_FRONTEND_LEXER_H
#define TILEC_FRONTEND_LEXER_H

#include "tilec/Frontend/Diagnostics.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <vector>

namespace tilec::frontend {

enum class Tok {
  Eof, Newline, Indent, Dedent,
  Ident, Int, Float,
  // keywords
  KwKernel, KwAs, KwFor, KwIn, KwIf, KwElif, KwElse,
  KwAnd, KwOr, KwNot, KwTrue, KwFalse, KwPass,
  // punctuation and operators
  LParen, RParen, LSquare, RSquare, Comma, Colon, SliceLen /* :+ */,
  Assign, PlusAssign, MinusAssign, StarAssign,
  Plus, Minus, Star, Slash, Percent, Question,
  Less, Greater, LessEq, GreaterEq, EqEq, NotEq,
  Error,
};

const char *tokenName(Tok kind);

struct Token {
  Tok kind = Tok::Eof;
  llvm::StringRef text;   // points into the source buffer
  int64_t intValue = 0;
  double floatValue = 0;
  llvm::SMLoc loc() const { return llvm::SMLoc::getFromPointer(text.data()); }
  llvm::SMRange range() const {
    return {loc(), llvm::SMLoc::getFromPointer(text.data() + text.size())};
  }
};

/// Splits a whole buffer into tokens up front; errors are reported to `diag`
/// and produce Tok::Error tokens, so the parser can go on.
class Lexer {
public:
  Lexer(llvm::StringRef buffer, Diagnostics &diag);
  std::vector<Token> lexAll();

private:
  Token next();
  void lexLineStart(std::vector<Token> &out);
  Token lexNumber();
  Token make(Tok kind, const char *begin) const;
  Token error(const char *begin, const char *end, const llvm::Twine &message);

  llvm::StringRef buffer;
  const char *cur;
  Diagnostics &diag;
  std::vector<unsigned> indents{0};
  int bracketDepth = 0;
  int angleDepth = 0;          // inside a kernel's `<...>` constant list
  Tok lastKinds[2] = {Tok::Eof, Tok::Eof};
  bool atLineStart = true;
};

} // namespace tilec::frontend

#endif
