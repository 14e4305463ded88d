// Recursive-descent parser for .tile sources. On a syntax error it reports
// one diagnostic, skips to the end of the statement (and over any block the
// broken statement opened) and goes on, so one run shows several errors.
#ifndef TILEC_FRONTEND_PARSER_H
#define TILEC_FRONTEND_PARSER_H

#include "tilec/Frontend/AST.h"
#include "tilec/Frontend/Diagnostics.h"
#include "tilec/Frontend/Lexer.h"

namespace tilec::frontend {

class Parser {
public:
  Parser(std::vector<Token> tokens, Diagnostics &diag)
      : tokens(std::move(tokens)), diag(diag) {}

  Program parseProgram();

private:
  // Token access.
  const Token &peek(unsigned ahead = 0) const;
  const Token &consume();
  bool is(Tok kind, unsigned ahead = 0) const { return peek(ahead).kind == kind; }
  bool accept(Tok kind);
  bool expect(Tok kind, llvm::StringRef context);
  /// `grid` and `threads` are words only in a kernel header, so they stay
  /// usable as names (a constant called `threads`, say).
  bool isWord(llvm::StringRef word, unsigned ahead = 0) const;
  bool expectWord(llvm::StringRef word, llvm::StringRef context);
  void errorAtCurrent(const llvm::Twine &message);
  llvm::SMRange rangeFrom(llvm::SMLoc start) const;

  // Recovery.
  void skipStatement();
  void skipBlockIfAny();

  std::unique_ptr<Kernel> parseKernel();
  /// What to say when `name: type` (a constant or a tensor parameter) is
  /// malformed.
  struct NameAndTypeWording {
    const char *expected, *afterName, *expectedType;
  };
  bool parseNameAndType(const NameAndTypeWording &wording, std::string &name,
                        llvm::SMRange &nameRange, std::string &type,
                        llvm::SMRange &typeRange);
  bool parseConstParam(Kernel &kernel);
  bool parseTensorParam(Kernel &kernel);
  bool parseNameList(std::vector<std::pair<std::string, llvm::SMRange>> &out,
                     llvm::StringRef context);
  bool parseBlock(Block &block, llvm::StringRef context);
  StmtPtr parseStatement();
  StmtPtr parseFor();
  StmtPtr parseIf(bool isElif);

  /// Sets `e`'s height from its children; null (with an error) past the limit.
  ExprPtr finish(ExprPtr e);
  ExprPtr parseExpr();
  ExprPtr parseTernary();
  /// Precedence climbing over the binary operators: an expression whose operators all bind at least as tightly
  /// as `minPrecedence` (Parser.cpp's table: or < and < not < comparisons < + - < * / % < unary - +).
  ExprPtr parseBinary(int minPrecedence);
  /// A prefix operator (`not` where `minPrecedence` admits it, unary - or +) and its operand, or a primary.
  ExprPtr parsePrefix(int minPrecedence);
  /// What a compile-time constant's default is: an expression without comparisons or boolean operators, whose
  /// bare `>` would close the constant list.
  ExprPtr parseAdditive();
  ExprPtr parsePrimary();
  ExprPtr parseCallRest(const Token &name);
  ExprPtr parseIndexRest(const Token &name);
  ExprPtr parseAllocRest(const Token &space);

  std::vector<Token> tokens;
  size_t pos = 0;
  Diagnostics &diag;
  // Guard the recursion against pathological nesting, separately for
  // expressions and for blocks (so each limit reports its own message).
  // Deeper nesting than kMaxDepth is a fuzzer's input, not a kernel; refusing
  // it keeps the recursion far from the stack limit.
  static constexpr unsigned kMaxDepth = 200;
  struct DepthGuard {
    unsigned &depth;
    explicit DepthGuard(unsigned &d) : depth(d) { ++depth; }
    ~DepthGuard() { --depth; }
  };
  unsigned depth = 0;
  unsigned blockDepth = 0;
};

/// Lexes and parses a whole buffer.
Program parseSource(llvm::StringRef buffer, Diagnostics &diag);

} // namespace tilec::frontend

#endif
