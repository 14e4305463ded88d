// Compiler-style diagnostics for the front end: `file:line:col: error: ...`,
// the source line and a caret under the offending text (llvm::SourceMgr does
// the formatting). Errors are counted so a run reports several and fails.
#ifndef TILEC_FRONTEND_DIAGNOSTICS_H
#define TILEC_FRONTEND_DIAGNOSTICS_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"

namespace tilec::frontend {

class Diagnostics {
public:
  explicit Diagnostics(llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os,
                       unsigned maxErrors = 50)
      : sourceMgr(sourceMgr), os(os), maxErrors(maxErrors) {}

  void error(llvm::SMRange range, const llvm::Twine &message);
  void error(llvm::SMLoc loc, const llvm::Twine &message) {
    error(llvm::SMRange(loc, loc), message);
  }
  void note(llvm::SMRange range, const llvm::Twine &message);

  unsigned errorCount() const { return errors; }
  bool hasErrors() const { return errors != 0; }
  /// After this many errors the rest are dropped: a badly broken file
  /// should not bury the first, most useful, message.
  bool tooManyErrors() const { return errors >= maxErrors; }
  llvm::SourceMgr &getSourceMgr() { return sourceMgr; }

private:
  llvm::SourceMgr &sourceMgr;
  llvm::raw_ostream &os;
  unsigned maxErrors;
  unsigned errors = 0;
};

} // namespace tilec::frontend

#endif
