#include "tilec/Frontend/Diagnostics.h"

using namespace tilec::frontend;

void Diagnostics::error(llvm::SMRange range, const llvm::Twine &message) {
  ++errors;
  if (errors > maxErrors)
    return;
  llvm::ArrayRef<llvm::SMRange> ranges;
  if (range.Start != range.End)
    ranges = range;
  sourceMgr.PrintMessage(os, range.Start, llvm::SourceMgr::DK_Error, message,
                         ranges);
  if (errors == maxErrors)
    os << "error: too many errors, stopping here\n";
}

void Diagnostics::note(llvm::SMRange range, const llvm::Twine &message) {
  if (errors > maxErrors)
    return;
  llvm::ArrayRef<llvm::SMRange> ranges;
  if (range.Start != range.End)
    ranges = range;
  sourceMgr.PrintMessage(os, range.Start, llvm::SourceMgr::DK_Note, message,
                         ranges);
}
