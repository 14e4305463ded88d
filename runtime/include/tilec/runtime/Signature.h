// The tensor parameters of an entry and the checks every launch argument must pass before anything is launched.
#pragma once

#include "tilec/runtime/TensorView.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tilec::runtime {

// One axis of a parameter: any extent, a fixed one, or a name shared across parameters ("N" in q: [N, 64] and
// k: [N, 64] means q and k must agree on axis 0).
struct DimSpec {
  enum class Kind : std::uint8_t { Any, Static, Named };
  Kind kind = Kind::Any;
  std::int64_t extent = 0;
  std::string name;

  DimSpec() = default;
  DimSpec(std::int64_t fixed) : kind(Kind::Static), extent(fixed) {} // NOLINT: {"N", 64} reads as a shape
  DimSpec(int fixed) : DimSpec(static_cast<std::int64_t>(fixed)) {}  // NOLINT
  DimSpec(const char *named) : kind(Kind::Named), name(named) {}     // NOLINT
  DimSpec(std::string named) : kind(Kind::Named), name(std::move(named)) {} // NOLINT
  static DimSpec any() { return {}; }
  std::string toString() const;
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
  // agreement of named dims, alignment, contiguity. Throws ArgumentError naming the entry and the parameter.
  void check(const std::string &entryName, const TensorView *args, std::size_t count) const;

private:
  std::vector<ParamSpec> params_;
  std::vector<std::string> dimNames_;
  std::vector<std::pair<int, int>> dimOrigins_;
};

} // namespace tilec::runtime
