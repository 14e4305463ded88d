// A stable, line-based text form of entries (signature + launch plan), so that a plan lowered by the compiler can
// travel as data to a host or GPU test that has no MLIR (`tilec --emit=plan` writes it). Grammar and an example:
// docs/runtime.md, "Plan text". In short:
//
//   tilec-plan 1
//   entry attn_bwd
//   param Q bf16 [batch, seq, heads, 128] align 16 contiguous
//   alloc 0 {(((dim(6, 0) * dim(6, 1)) * dim(6, 2)) * 512)} zeroed
//   launch attn_bwd_main cubin 0 grid {dim(0, 2)} {ceildiv(dim(0, 1), 64)} {dim(0, 0)} block 256 1 1 smem {0}
//     ... args tensor 0 workspace 0 i64 {seq}          (one line)
//   free 0
//   end
//
// Blank lines and lines starting with '#' are ignored. Expressions are Expr text between braces.
#pragma once

#include "tilec/runtime/Module.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilec::runtime {

inline constexpr int kPlanTextVersion = 1;

// The text of one entry, or of several (one header, then every entry in order). Parsing the text gives back the
// same signatures and steps.
std::string printPlan(const EntrySpec &entry);
std::string printPlan(const std::vector<EntrySpec> &entries);

struct PlanTextError {
  int line = 0;   // 1-based
  int column = 0; // 1-based, in bytes
  std::string message;
  std::string toString() const; // "3:7: message"
};

struct ParsedPlan {
  std::vector<EntrySpec> entries;
  std::optional<PlanTextError> error; // set when the text is malformed; `entries` is then empty
  explicit operator bool() const { return !error.has_value(); }
  const EntrySpec *find(const std::string &name) const;
};

// Parses the text of one or more entries. Never throws for malformed text: the first problem is reported with its
// line and column. Beyond syntax it checks what can be checked without CUBINs: dim names and dim(arg, axis)
// references against the signature, tensor argument indices, workspace ids allocated in order, used only while
// live, freed exactly once, and duplicate entry names.
ParsedPlan parsePlan(std::string_view text);

} // namespace tilec::runtime
