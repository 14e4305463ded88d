#include "tilec/Frontend/Lexer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

using namespace tilec::frontend;

const char *tilec::frontend::tokenName(Tok kind) {
  switch (kind) {
  case Tok::Eof: return "end of file";
  case Tok::Newline: return "end of line";
  case Tok::Indent: return "indentation";
  case Tok::Dedent: return "end of block";
  case Tok::Ident: return "identifier";
  case Tok::Int: return "integer";
  case Tok::Float: return "float";
  case Tok::KwKernel: return "'kernel'";
  case Tok::KwAs: return "'as'";
  case Tok::KwFor: return "'for'";
  case Tok::KwIn: return "'in'";
  case Tok::KwIf: return "'if'";
  case Tok::KwElif: return "'elif'";
  case Tok::KwElse: return "'else'";
  case Tok::KwAnd: return "'and'";
  case Tok::KwOr: return "'or'";
  case Tok::KwNot: return "'not'";
  case Tok::KwTrue: return "'true'";
  case Tok::KwFalse: return "'false'";
  case Tok::KwPass: return "'pass'";
  case Tok::LParen: return "'('";
  case Tok::RParen: return "')'";
  case Tok::LSquare: return "'['";
  case Tok::RSquare: return "']'";
  case Tok::Comma: return "','";
  case Tok::Colon: return "':'";
  case Tok::SliceLen: return "':+'";
  case Tok::Assign: return "'='";
  case Tok::PlusAssign: return "'+='";
  case Tok::MinusAssign: return "'-='";
  case Tok::StarAssign: return "'*='";
  case Tok::Plus: return "'+'";
  case Tok::Minus: return "'-'";
  case Tok::Star: return "'*'";
  case Tok::Slash: return "'/'";
  case Tok::Percent: return "'%'";
  case Tok::Question: return "'?'";
  case Tok::Less: return "'<'";
  case Tok::Greater: return "'>'";
  case Tok::LessEq: return "'<='";
  case Tok::GreaterEq: return "'>='";
  case Tok::EqEq: return "'=='";
  case Tok::NotEq: return "'!='";
  case Tok::Error: return "invalid token";
  }
  return "token";
}

Lexer::Lexer(llvm::StringRef buffer, Diagnostics &diag)
    : buffer(buffer), cur(buffer.begin()), diag(diag) {}

Token Lexer::make(Tok kind, const char *begin) const {
  Token t;
  t.kind = kind;
  t.text = llvm::StringRef(begin, cur - begin);
  return t;
}

Token Lexer::error(const char *begin, const char *end,
                   const llvm::Twine &message) {
  diag.error(llvm::SMRange(llvm::SMLoc::getFromPointer(begin),
                           llvm::SMLoc::getFromPointer(end)),
             message);
  cur = end;
  Token t;
  t.kind = Tok::Error;
  t.text = llvm::StringRef(begin, end - begin);
  return t;
}

std::vector<Token> Lexer::lexAll() {
  std::vector<Token> out;
  // Old Mac line endings would silently turn a file into one line (and one
  // comment); say so instead.
  for (const char *p = buffer.begin(); p != buffer.end(); ++p)
    if (*p == '\r' && (p + 1 == buffer.end() || p[1] != '\n')) {
      diag.error(llvm::SMRange(llvm::SMLoc::getFromPointer(p),
                               llvm::SMLoc::getFromPointer(p + 1)),
                 "carriage return without a line feed; use LF or CRLF line "
                 "endings");
      Token eof;
      eof.text = llvm::StringRef(buffer.end(), 0);
      out.push_back(eof);
      return out;
    }
  while (true) {
    if (atLineStart && bracketDepth == 0) {
      lexLineStart(out);
      if (cur == buffer.end())
        break;
    }
    Token t = next();
    if (t.kind == Tok::Eof)
      break;
    out.push_back(t);
    lastKinds[1] = lastKinds[0];
    lastKinds[0] = t.kind;
    if (diag.tooManyErrors())
      break;
  }
  // Close the last line and every open block.
  Token end;
  end.text = llvm::StringRef(buffer.end(), 0);
  if (!out.empty() && out.back().kind != Tok::Newline &&
      out.back().kind != Tok::Dedent && bracketDepth == 0) {
    end.kind = Tok::Newline;
    out.push_back(end);
  }
  // Inside an open bracket the file just ends: no end of line or block, so
  // the parser reports "found end of file".
  while (indents.size() > 1 && bracketDepth == 0) {
    indents.pop_back();
    end.kind = Tok::Dedent;
    out.push_back(end);
  }
  end.kind = Tok::Eof;
  out.push_back(end);
  return out;
}

// Measures the indentation of the next line that holds a token and emits
// INDENT/DEDENT tokens for it; blank and comment-only lines don't count.
void Lexer::lexLineStart(std::vector<Token> &out) {
  while (cur != buffer.end()) {
    const char *lineBegin = cur;
    unsigned width = 0;
    bool sawTab = false;
    while (cur != buffer.end() && (*cur == ' ' || *cur == '\t')) {
      if (*cur == '\t' && !sawTab) {
        diag.error(llvm::SMRange(llvm::SMLoc::getFromPointer(cur),
                                 llvm::SMLoc::getFromPointer(cur + 1)),
                   "tab in indentation; indent with spaces");
        sawTab = true;
      }
      ++width;
      ++cur;
    }
    if (cur == buffer.end())
      return;
    if (*cur == '#') {
      while (cur != buffer.end() && *cur != '\n')
        ++cur;
    }
    if (cur != buffer.end() && (*cur == '\n' || *cur == '\r')) {
      ++cur;
      continue;
    }
    if (cur == buffer.end())
      return;
    atLineStart = false;
    Token t;
    t.text = llvm::StringRef(cur, 0);
    // The width of a tab-indented line means nothing; keep the current level
    // rather than report a cascade of indentation errors.
    if (sawTab)
      width = indents.back();
    if (width > indents.back()) {
      indents.push_back(width);
      t.kind = Tok::Indent;
      out.push_back(t);
    } else {
      unsigned popped = indents.back();
      while (width < indents.back()) {
        popped = indents.back();
        indents.pop_back();
        t.kind = Tok::Dedent;
        out.push_back(t);
      }
      if (width != indents.back()) {
        error(lineBegin, cur,
              "unindent does not match any outer indentation level");
        // Recover as if the line sat at the level it fell short of (the
        // innermost one left), so one misplaced line gives one error.
        indents.push_back(popped);
        out.pop_back();
      }
    }
    return;
  }
}

Token Lexer::lexNumber() {
  const char *begin = cur;
  bool isFloat = false;
  while (cur != buffer.end() && isdigit(static_cast<unsigned char>(*cur)))
    ++cur;
  if (cur != buffer.end() && *cur == '.' && cur + 1 != buffer.end() &&
      isdigit(static_cast<unsigned char>(cur[1]))) {
    isFloat = true;
    ++cur;
    while (cur != buffer.end() && isdigit(static_cast<unsigned char>(*cur)))
      ++cur;
  } else if (cur != buffer.end() && *cur == '.') {
    // "1." is a float too.
    isFloat = true;
    ++cur;
  }
  if (cur != buffer.end() && (*cur == 'e' || *cur == 'E')) {
    const char *expBegin = cur;
    ++cur;
    if (cur != buffer.end() && (*cur == '+' || *cur == '-'))
      ++cur;
    if (cur == buffer.end() || !isdigit(static_cast<unsigned char>(*cur)))
      return error(begin, cur, "malformed exponent in number '" +
                                   llvm::StringRef(begin, cur - begin) + "'");
    (void)expBegin;
    isFloat = true;
    while (cur != buffer.end() && isdigit(static_cast<unsigned char>(*cur)))
      ++cur;
  }
  if (cur != buffer.end() &&
      (isalpha(static_cast<unsigned char>(*cur)) || *cur == '_')) {
    while (cur != buffer.end() &&
           (isalnum(static_cast<unsigned char>(*cur)) || *cur == '_'))
      ++cur;
    return error(begin, cur, "invalid number '" +
                                 llvm::StringRef(begin, cur - begin) + "'");
  }
  std::string text(begin, cur);
  Token t = make(isFloat ? Tok::Float : Tok::Int, begin);
  errno = 0;
  if (isFloat) {
    t.floatValue = std::strtod(text.c_str(), nullptr);
    // Underflow (1e-999) rounds to zero or a denormal, as in C; overflow is
    // an error.
    if (errno == ERANGE && std::isinf(t.floatValue))
      return error(begin, cur, "float literal '" + text + "' is out of range");
  } else {
    unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
    if (errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX))
      return error(begin, cur,
                   "integer literal '" + text + "' does not fit in 64 bits");
    t.intValue = static_cast<int64_t>(v);
  }
  return t;
}

Token Lexer::next() {
  // Skip blanks, comments and (inside brackets) line breaks.
  while (cur != buffer.end()) {
    char c = *cur;
    if (c == ' ' || c == '\t' || c == '\r') {
      ++cur;
    } else if (c == '#') {
      while (cur != buffer.end() && *cur != '\n')
        ++cur;
    } else if (c == '\\' && cur + 1 != buffer.end() && cur[1] == '\n') {
      cur += 2; // explicit line continuation
    } else if (c == '\\' && cur + 2 < buffer.end() && cur[1] == '\r' &&
               cur[2] == '\n') {
      cur += 3; // the same, in a CRLF file
    } else if (c == '\n' && bracketDepth > 0) {
      ++cur;
    } else {
      break;
    }
  }
  const char *begin = cur;
  if (cur == buffer.end())
    return make(Tok::Eof, begin);

  char c = *cur;
  if (c == '\n') {
    ++cur;
    atLineStart = true;
    return make(Tok::Newline, begin);
  }
  if (isalpha(static_cast<unsigned char>(c)) || c == '_') {
    while (cur != buffer.end() &&
           (isalnum(static_cast<unsigned char>(*cur)) || *cur == '_'))
      ++cur;
    llvm::StringRef word(begin, cur - begin);
    Tok kind = llvm::StringSwitch<Tok>(word)
                   .Case("kernel", Tok::KwKernel)
                   .Case("as", Tok::KwAs)
                   .Case("for", Tok::KwFor)
                   .Case("in", Tok::KwIn)
                   .Case("if", Tok::KwIf)
                   .Case("elif", Tok::KwElif)
                   .Case("else", Tok::KwElse)
                   .Case("and", Tok::KwAnd)
                   .Case("or", Tok::KwOr)
                   .Case("not", Tok::KwNot)
                   .Case("true", Tok::KwTrue)
                   .Case("false", Tok::KwFalse)
                   .Case("pass", Tok::KwPass)
                   .Default(Tok::Ident);
    return make(kind, begin);
  }
  if (isdigit(static_cast<unsigned char>(c)) ||
      (c == '.' && cur + 1 != buffer.end() &&
       isdigit(static_cast<unsigned char>(cur[1]))))
    return lexNumber();

  auto two = [&](char second) {
    return cur + 1 != buffer.end() && cur[1] == second;
  };
  auto take = [&](Tok kind, int n) {
    cur += n;
    return make(kind, begin);
  };
  switch (c) {
  case '(': ++bracketDepth; return take(Tok::LParen, 1);
  case '[': ++bracketDepth; return take(Tok::LSquare, 1);
  case ')':
    if (bracketDepth > 0) --bracketDepth;
    return take(Tok::RParen, 1);
  case ']':
    if (bracketDepth > 0) --bracketDepth;
    return take(Tok::RSquare, 1);
  case ',': return take(Tok::Comma, 1);
  case ':': return two('+') ? take(Tok::SliceLen, 2) : take(Tok::Colon, 1);
  case '=': return two('=') ? take(Tok::EqEq, 2) : take(Tok::Assign, 1);
  case '+': return two('=') ? take(Tok::PlusAssign, 2) : take(Tok::Plus, 1);
  case '-': return two('=') ? take(Tok::MinusAssign, 2) : take(Tok::Minus, 1);
  case '*': return two('=') ? take(Tok::StarAssign, 2) : take(Tok::Star, 1);
  case '/': return take(Tok::Slash, 1);
  case '%': return take(Tok::Percent, 1);
  case '?': return take(Tok::Question, 1);
  case '<':
    if (two('='))
      return take(Tok::LessEq, 2);
    // `kernel name<...>`: the constant list may span lines like (...).
    if (lastKinds[0] == Tok::Ident && lastKinds[1] == Tok::KwKernel &&
        angleDepth == 0) {
      angleDepth = 1;
      ++bracketDepth;
    }
    return take(Tok::Less, 1);
  case '>':
    if (two('='))
      return take(Tok::GreaterEq, 2);
    if (angleDepth == 1 && bracketDepth == 1) {
      angleDepth = 0;
      --bracketDepth;
    }
    return take(Tok::Greater, 1);
  case '!':
    if (two('='))
      return take(Tok::NotEq, 2);
    return error(begin, begin + 1, "unexpected '!'; write 'not' for negation");
  default:
    break;
  }
  // One diagnostic for a whole run of bytes that are not source text (a
  // non-UTF-8 blob should not produce thousands of errors).
  const char *end = cur + 1;
  while (end != buffer.end() && (static_cast<unsigned char>(*end) >= 0x80))
    ++end;
  std::string shown;
  unsigned char lead = static_cast<unsigned char>(c);
  unsigned length = lead >= 0xf0 && lead < 0xf8 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 ? 2 : 0;
  bool validUtf8 = length != 0 && static_cast<size_t>(buffer.end() - cur) >= length;
  for (unsigned i = 1; validUtf8 && i < length; ++i)
    validUtf8 = (static_cast<unsigned char>(cur[i]) & 0xc0) == 0x80;
  if (validUtf8) {
    // A well-formed non-ASCII character: name it, and only it.
    uint32_t code = lead & (0x7f >> length);
    for (unsigned i = 1; i < length; ++i)
      code = (code << 6) | (static_cast<unsigned char>(cur[i]) & 0x3f);
    return error(begin, begin + length,
                 "unexpected character '" + llvm::StringRef(begin, length) +
                     "' (U+" + llvm::utohexstr(code, /*LowerCase=*/false, 4) +
                     ") in source");
  }
  if (static_cast<unsigned char>(c) >= 0x80 || !isprint(static_cast<unsigned char>(c)))
    shown = llvm::formatv("byte {0:x2}", static_cast<unsigned char>(c)).str();
  else
    shown = std::string("'") + c + "'";
  return error(begin, end, "unexpected " + shown + " in source");
}
