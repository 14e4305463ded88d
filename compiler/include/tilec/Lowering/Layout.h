// Fragment layouts: which thread of a block holds which element of a register tile.
//
// A layout maps (thread, slot) to a tile coordinate. Both the thread id and the slot index are read as mixed-radix
// numbers; every digit adds `digit * scale` to one coordinate:
//
//     digit(x, term) = (x / term.stride) % term.extent
//     coord[d]       = sum over thread terms of dim d + sum over slot terms of dim d
//
// Thread digits that move no coordinate are *replica* digits: threads that differ only in them hold the same
// elements (a row of an mma accumulator reduced over its columns is held by the four lanes of a quad). One replica
// of each element, the *primary* (all replica digits zero), performs side effects such as stores to memory.
//
// This is the subset of CuTe's shape/stride layouts and Triton's linear layouts that tile kernels need: the
// mma.sync m16n8k16 accumulator and A-operand layouts, blocked layouts for element-wise tiles, slices (a reduction's
// result) and fully replicated tiles (read from scalar code). Because every coordinate is a sum of a thread part and
// a slot part, emitted code computes the thread part once and the slot part folds to a constant in unrolled loops.
// Tile extents are static, so questions such as "does this thread own that element" are answered by enumeration.
#ifndef TILEC_LOWERING_LAYOUT_H
#define TILEC_LOWERING_LAYOUT_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilec::layout {

struct LayoutTerm {
  int64_t stride = 1; // digit = (x / stride) % extent
  int64_t extent = 1;
  int dim = -1;       // coordinate it moves; -1 for a replica digit
  int64_t scale = 0;  // coordinate step per digit value
  bool operator==(const LayoutTerm &o) const {
    return stride == o.stride && extent == o.extent && dim == o.dim && scale == o.scale;
  }
};

/// How a layout is made: which factory of FragmentLayout, with which arguments. The dialect's layout attributes
/// (#tile.blocked<...> and the others; tilec/Lowering/LayoutAttrs.h converts) hold exactly this, and
/// FragmentLayout::build makes the layout again.
struct LayoutSpec {
  enum class Kind { Replicated, Blocked, MmaAccumulator, MmaOperandA, Slice };
  Kind kind = Kind::Replicated;
  std::vector<int64_t> shape;               // every kind but Slice
  int64_t vector = 0;                       // Blocked
  int64_t warpsM = 0, warpsN = 0;           // MmaAccumulator, MmaOperandA
  int dim = -1;                             // Slice: the dim of `parent` it drops
  std::shared_ptr<const LayoutSpec> parent; // Slice
};

class FragmentLayout {
public:
  // Every thread holds every element (row-major slots). What scalar code and `local` tiles need.
  static FragmentLayout replicated(std::vector<int64_t> shape, int64_t threads);
  // Element-wise distribution: `vector` consecutive elements of the last dim per thread, threads spread over the
  // dims from the innermost outwards, repeated until the tile is covered; threads left over are replicas.
  static FragmentLayout blocked(std::vector<int64_t> shape, int64_t threads, int64_t vector);
  // The mma.sync m16n8k16 accumulator of an MxN tile split over warpsM x warpsN warps (M % (16 warpsM) == 0,
  // N % (8 warpsN) == 0). Slots per thread: [atom_m][atom_n][row half][col pair].
  static FragmentLayout mmaAccumulator(int64_t m, int64_t n, int64_t warpsM, int64_t warpsN);
  // The A operand (MxK, row-major) of the same gemm: each warp holds its rows and all of K, replicated over warpsN.
  // Slots: [atom_m][atom_k][register 0..3][half 0..1], the order mma.sync takes them.
  static FragmentLayout mmaOperandA(int64_t m, int64_t k, int64_t warpsM, int64_t warpsN);
  // The layout of a reduction of this layout's tile over `dim`: that dim is dropped, the threads that spread it
  // become replicas, its slot digits disappear.
  FragmentLayout slice(int dim) const;

  // For messages: "replicated 64x64", "blocked 64x128 vec 4", "mma_c 64x64 warps 4x1", "mma_a 64x64 warps 4x2",
  // "slice(mma_c 64x64 warps 4x1, dim 1)".
  const std::string &name() const { return name_; }
  // How this layout was made.
  const LayoutSpec &spec() const { return *spec_; }
  // The layout a spec describes for a block of `threads` threads. Returns nothing (and sets `error`) where the spec
  // is malformed or does not fit the thread count (an mma layout's warps must make the block).
  static std::optional<FragmentLayout> build(const LayoutSpec &spec, int64_t threads, std::string *error = nullptr);

  const std::vector<int64_t> &shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t threads() const { return threads_; }
  int64_t numSlots() const { return numSlots_; }
  const std::vector<LayoutTerm> &threadTerms() const { return threadTerms_; }
  const std::vector<LayoutTerm> &slotTerms() const { return slotTerms_; }
  // Thread digits that move no coordinate.
  const std::vector<LayoutTerm> &replicaTerms() const { return replicaTerms_; }
  bool isReplicated() const { return threadTerms_.empty(); }
  // Whether some (thread, slot) falls outside the shape (blocked layouts of extents that threads do not divide).
  bool hasPadding() const { return padded_; }

  std::vector<int64_t> coords(int64_t thread, int64_t slot) const;
  bool inBounds(const std::vector<int64_t> &coords) const;
  bool isPrimary(int64_t thread) const;
  // The slot at which `thread` holds `coords`, if it holds them.
  std::optional<int64_t> slotOf(int64_t thread, const std::vector<int64_t> &coords) const;

  bool operator==(const FragmentLayout &o) const {
    return shape_ == o.shape_ && threads_ == o.threads_ && threadTerms_ == o.threadTerms_ &&
           slotTerms_ == o.slotTerms_ && replicaTerms_ == o.replicaTerms_;
  }
  bool operator!=(const FragmentLayout &o) const { return !(*this == o); }

private:
  void finish(); // computes numSlots_ and padded_
  std::string name_;
  std::shared_ptr<const LayoutSpec> spec_;
  std::vector<int64_t> shape_;
  int64_t threads_ = 0;
  std::vector<LayoutTerm> threadTerms_, slotTerms_, replicaTerms_;
  int64_t numSlots_ = 1;
  bool padded_ = false;
};

// slot -> slot of another layout, as a sum of digits: f(s) = offset + sum_k ((s / stride_k) % extent_k) * scale_k.
// In unrolled loops `s` is a constant and so is f(s).
struct SlotMap {
  int64_t offset = 0;
  std::vector<LayoutTerm> terms; // dim unused; scale is the step in the target slot
  int64_t apply(int64_t slot) const;
};

// Asks whether a loop driven by `driver` (each thread visiting its own slots) can read `other` in registers at the
// coordinates `project(coords)`, where project picks driver dims: `dims[k]` is the driver dim that gives `other`'s
// dim k (or -1 for the constant `constants[k]`). True when, for every thread and every in-bounds driver slot, the
// thread holds that element of `other` at a slot that depends on the driver slot alone, and that dependence is a
// SlotMap. Returns the map.
std::optional<SlotMap> registerAccessMap(const FragmentLayout &driver, const FragmentLayout &other,
                                         const std::vector<int> &dims, const std::vector<int64_t> &constants = {});

// Asks whether a loop driven by `driver` that writes `other` at the coordinates `project(coords)` (dims and constants
// as for registerAccessMap) leaves every replica of each written element with the same value: true when, for every
// iteration, the threads that run it are exactly the threads that hold the element it writes. Writes in place are
// only correct then. False, for instance, for `r[i] = ...` under `if j == 5` in a loop over (i, j) whose j is spread
// over threads: the one thread running (i, 5) writes its own replica of r[i], and the replicas of the other threads
// (which run (i, j != 5)) keep their old value.
bool writesReachEveryReplica(const FragmentLayout &driver, const FragmentLayout &other, const std::vector<int> &dims,
                             const std::vector<int64_t> &constants = {});

// An XOR swizzle of 16-byte chunks within a row of a shared tile, so that the eight 16-byte rows one ldmatrix (or
// one quarter-warp of 16-byte stores) touches fall into different banks.
//
// A *panelled* tile (rows wider than 128 bytes, for Hopper's wgmma) is stored as column panels of 128 bytes, each a
// dense rows x 128-byte tile swizzled the same way: element (r, c) lives in panel c / panelCols, at row r of it.
// That is the canonical "128-byte swizzle" layout wgmma's shared-memory descriptors describe (8 rows of 128 bytes
// per 1024-byte atom, chunk ^= row % 8 on the address bits), which rows of 256 bytes are not.
struct Swizzle {
  int64_t rowChunks = 0; // 16-byte chunks per row (0: no swizzle)
  int64_t mask = 0;      // chunk ^= (row / rowDivisor) % (mask + 1)
  int64_t rowDivisor = 1;
  int64_t panelCols = 0; // columns per 128-byte panel (0: rows are not split into panels)
  int64_t panelRows = 0; // rows of the tile (a panel's height)
  // The swizzle for a row-major tile whose last dim holds `rowBytes` bytes: rows of a multiple of 128 bytes XOR the
  // chunk with row % 8, rows of 64 bytes with (row / 2) % 4; other widths are left unswizzled.
  static Swizzle forRow(int64_t rowBytes);
  // The wgmma layout of a `rows` x `rowBytes` tile (rowBytes a multiple of 128): the xor8 swizzle, and 128-byte
  // panels where rows are wider than that.
  static Swizzle panelled(int64_t rows, int64_t rowBytes, int64_t elementBytes);
  bool none() const { return mask == 0; }
  bool panelledRows() const { return panelCols > 0; }
  std::string name() const; // "none", "xor8", "xor4/2", "xor8 panels"
  // Which of the swizzles forRow and panelled make this is (what the dialect's #tile.swizzle attribute records).
  enum class Kind { None, Xor8, Xor4Rows2, Xor8Panels };
  Kind kind() const;
  // The swizzle of `kind` for a `rows` x `rowBytes` tile, as forRow or panelled make it; nothing if no tile of that
  // row width gets that kind.
  static std::optional<Swizzle> ofKind(Kind kind, int64_t rows, int64_t rowBytes, int64_t elementBytes);
  // Element offset of (row, col) in a tile with `cols` columns of `elementBytes`-byte elements.
  int64_t apply(int64_t row, int64_t col, int64_t cols, int64_t elementBytes) const;
  // Whether stepping a column c < 16 by 16 kk (kk < k / 16) is an XOR of the offset: apply(r, 16 kk + c) ==
  // apply(r, c) ^ 16 kk. True when `cols` is a power of two, k <= cols and a 16-byte chunk holds 4 or 8 elements: the
  // chunk index of 16 kk + c is 2 kk ^ c/8 (disjoint bits) and the swizzle only XORs bits below `cols`.
  bool columnStepIsXor(int64_t cols, int64_t elementBytes, int64_t k) const;
  // Whether stepping a column base + 16 j (j < span / 16) is an XOR of the offset when base is a multiple of `span`
  // plus c < 16: apply(r, base + 16 j) == apply(r, base) ^ 16 j. A warp's tile steps within its warp tile: true when
  // `span` is a power of two (so base and 16 j have disjoint bits) and columnStepIsXor holds for k = span.
  bool columnTileStepIsXor(int64_t cols, int64_t elementBytes, int64_t span) const;
  // Whether stepping a row by 16 adds 16 rows' worth of elements: apply(r + 16 kk, c) == apply(r, c) + 16 kk cols.
  // True when the swizzle's row term (row / rowDivisor) % (mask + 1) repeats every 16 rows.
  bool rowStepIsAdd() const;
};

// Shared memory needed to combine partial results across warps when reducing a tile in `layout` over `dim`: one f32
// (or 4-byte int) per (warp digit combination, result element). 0 when lanes alone suffice.
int64_t crossWarpReduceScratchBytes(const FragmentLayout &layout, int dim);

} // namespace tilec::layout

#endif
