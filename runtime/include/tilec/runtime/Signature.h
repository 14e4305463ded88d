// The tensor parameters of an entry and the checks every launch argument must pass before anything is launched.
#pragma once

#include "tilec/runtime/Expr.h"
#include "tilec/runtime/TensorView.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tilec::runtime {

// One axis of a parameter: any extent, a fixed one, a name shared across parameters ("N" in q: [N, 64] and
// k: [N, 64] means q and k must agree on axis 0), or an expression over named dims: a derived extent must equal
// its expression's value ("(kv_heads * 4)" in q: [B, S, (kv_heads * 4), D] makes q's heads a multiple of 4;
// "floordiv(rows, 4)" rounds down, as the language's `/` does).
struct DimSpec {
  enum class Kind : std::uint8_t { Any, Static, Named, Derived };
  Kind kind = Kind::Any;
  std::int64_t extent = 0;
  std::string name;
  Expr expr; // Derived: over the names of named dims (Expr::symbol)

  DimSpec() = default;
  DimSpec(std::int64_t fixed) : kind(Kind::Static), extent(fixed) {} // NOLINT: {"N", 64} reads as a shape
  DimSpec(int fixed) : DimSpec(static_cast<std::int64_t>(fixed)) {}  // NOLINT
  DimSpec(const char *named) : kind(Kind::Named), name(named) {}     // NOLINT
  DimSpec(std::string named) : kind(Kind::Named), name(std::move(named)) {} // NOLINT
  static DimSpec any() { return {}; }
  static DimSpec derived(Expr expr);
  std::string toString() const; // "?", "64", "N", "{floordiv(heads, 4)}"
};

struct ParamSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<DimSpec> dims;
  // The data pointer's required alignment in bytes: what the kernel's vector loads and stores rely on.
  std::size_t alignment = 16;
  // Whether the kernel assumes a dense row-major layout (it indexes with dims only, not strides).
  bool contiguous = true;

  std::string toString() const; // "q: bf16[N, 64] (align 16, contiguous)"
};

class Signature {
public:
  Signature() = default;
  explicit Signature(std::vector<ParamSpec> params);

  const std::vector<ParamSpec> &params() const { return params_; }
  // Named dims in order of first appearance.
  const std::vector<std::string> &dimNames() const { return dimNames_; }
  // Where a named dim is first declared: {parameter index, axis}, or {-1, -1}.
  std::pair<int, int> findDim(const std::string &name) const;

  // Checks `args` against the parameters: count, device (CUDA, all on one device), dtype, rank, static extents,
  // agreement of named dims, derived extents, alignment, contiguity. Throws ArgumentError naming the entry and the
  // parameter.
  void check(const std::string &entryName, const TensorView *args, std::size_t count) const;

  // The shape of every parameter for given values of the named dims (in dimNames() order): what a host that makes
  // tensors for an entry allocates. Throws ArgumentError naming the parameter for an axis of unknown extent ('?'),
  // or a negative extent.
  std::vector<std::vector<std::int64_t>> shapesFor(const std::vector<std::int64_t> &dimValues) const;

private:
  std::vector<ParamSpec> params_;
  std::vector<std::string> dimNames_;
  std::vector<std::pair<int, int>> dimOrigins_;
  // Each Derived dim's expression with its names bound to their origins (Expr::dim), in parameter and axis order.
  std::vector<Expr> boundDerived_;
  void checkDerived(const std::string &entryName, const TensorView *args) const;
  // Throws the ArgumentError of argument #p: "entry 'e', argument #p 'name' (what it is): problem; expected ...".
  [[noreturn]] void rejectArgument(const std::string &entryName, const TensorView *args, std::size_t p,
                                   const std::string &problem) const;
};

} // namespace tilec::runtime
