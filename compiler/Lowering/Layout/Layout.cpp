// Fragment layouts and shared-memory swizzles (see Layout.h).
#include "tilec/Lowering/Layout.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <numeric>

namespace tilec::layout {

namespace {

int64_t digit(int64_t x, const LayoutTerm &t) { return (x / t.stride) % t.extent; }

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s.empty() ? "scalar" : s;
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t e : shape)
    n *= e;
  return n;
}

bool isPowerOfTwo(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

} // namespace

void FragmentLayout::finish() {
  numSlots_ = 1;
  for (const LayoutTerm &t : slotTerms_)
    numSlots_ *= t.extent;
  padded_ = false;
  for (int d = 0; d < rank(); ++d) {
    int64_t max = 0;
    for (const auto *terms : {&threadTerms_, &slotTerms_})
      for (const LayoutTerm &t : *terms)
        if (t.dim == d)
          max += (t.extent - 1) * t.scale;
    if (max >= shape_[d])
      padded_ = true;
  }
}

FragmentLayout FragmentLayout::replicated(std::vector<int64_t> shape, int64_t threads) {
  FragmentLayout l;
  l.name_ = "replicated " + shapeText(shape);
  l.spec_ = std::make_shared<const LayoutSpec>(LayoutSpec{LayoutSpec::Kind::Replicated, shape});
  l.shape_ = std::move(shape);
  l.threads_ = threads;
  int64_t stride = 1;
  for (int d = l.rank() - 1; d >= 0; --d) {
    if (l.shape_[d] > 1)
      l.slotTerms_.push_back({stride, l.shape_[d], d, 1});
    stride *= l.shape_[d];
  }
  if (threads > 1)
    l.replicaTerms_.push_back({1, threads, -1, 0});
  l.finish();
  return l;
}

FragmentLayout FragmentLayout::blocked(std::vector<int64_t> shape, int64_t threads, int64_t vector) {
  FragmentLayout l;
  l.name_ = "blocked " + shapeText(shape) + " vec " + std::to_string(vector);
  l.spec_ = std::make_shared<const LayoutSpec>(LayoutSpec{LayoutSpec::Kind::Blocked, shape, vector});
  l.shape_ = std::move(shape);
  l.threads_ = threads;
  int r = l.rank();
  if (r == 0)
    return replicated({}, threads);
  std::vector<int64_t> perThread(r, 1), threadsPerDim(r, 1), reps(r, 1);
  if (vector > 0 && l.shape_[r - 1] % vector == 0)
    perThread[r - 1] = vector;
  int64_t remaining = threads;
  for (int d = r - 1; d >= 0; --d) {
    int64_t want = (l.shape_[d] + perThread[d] - 1) / perThread[d];
    int64_t best = 1;
    for (int64_t c = 1; c <= std::min(want, remaining); ++c)
      if (remaining % c == 0)
        best = c;
    threadsPerDim[d] = best;
    remaining /= best;
    reps[d] = (l.shape_[d] + perThread[d] * best - 1) / (perThread[d] * best);
  }
  int64_t stride = 1;
  for (int d = r - 1; d >= 0; --d) {
    if (threadsPerDim[d] > 1)
      l.threadTerms_.push_back({stride, threadsPerDim[d], d, perThread[d]});
    stride *= threadsPerDim[d];
  }
  if (remaining > 1)
    l.replicaTerms_.push_back({stride, remaining, -1, 0});
  int64_t slotStride = 1;
  if (perThread[r - 1] > 1) {
    l.slotTerms_.push_back({1, perThread[r - 1], r - 1, 1});
    slotStride = perThread[r - 1];
  }
  for (int d = r - 1; d >= 0; --d) {
    if (reps[d] > 1) {
      l.slotTerms_.push_back({slotStride, reps[d], d, perThread[d] * threadsPerDim[d]});
      slotStride *= reps[d];
    }
  }
  l.finish();
  return l;
}

FragmentLayout FragmentLayout::mmaAccumulator(int64_t m, int64_t n, int64_t warpsM, int64_t warpsN) {
  FragmentLayout l;
  l.name_ = "mma_c " + std::to_string(m) + "x" + std::to_string(n) + " warps " + std::to_string(warpsM) + "x" +
            std::to_string(warpsN);
  l.shape_ = {m, n};
  l.spec_ = std::make_shared<const LayoutSpec>(LayoutSpec{LayoutSpec::Kind::MmaAccumulator, l.shape_, 0, warpsM, warpsN});
  l.threads_ = 32 * warpsM * warpsN;
  int64_t tileM = m / warpsM, tileN = n / warpsN;
  l.threadTerms_ = {{4, 8, 0, 1}, {1, 4, 1, 2}};
  if (warpsM > 1)
    l.threadTerms_.push_back({32, warpsM, 0, tileM});
  if (warpsN > 1)
    l.threadTerms_.push_back({32 * warpsM, warpsN, 1, tileN});
  int64_t atomsM = tileM / 16, atomsN = tileN / 8;
  l.slotTerms_ = {{1, 2, 1, 1}, {2, 2, 0, 8}};
  if (atomsN > 1)
    l.slotTerms_.push_back({4, atomsN, 1, 8});
  if (atomsM > 1)
    l.slotTerms_.push_back({4 * atomsN, atomsM, 0, 16});
  l.finish();
  return l;
}

FragmentLayout FragmentLayout::mmaOperandA(int64_t m, int64_t k, int64_t warpsM, int64_t warpsN) {
  FragmentLayout l;
  l.name_ = "mma_a " + std::to_string(m) + "x" + std::to_string(k) + " warps " + std::to_string(warpsM) + "x" +
            std::to_string(warpsN);
  l.shape_ = {m, k};
  l.spec_ = std::make_shared<const LayoutSpec>(LayoutSpec{LayoutSpec::Kind::MmaOperandA, l.shape_, 0, warpsM, warpsN});
  l.threads_ = 32 * warpsM * warpsN;
  int64_t tileM = m / warpsM;
  l.threadTerms_ = {{4, 8, 0, 1}, {1, 4, 1, 2}};
  if (warpsM > 1)
    l.threadTerms_.push_back({32, warpsM, 0, tileM});
  if (warpsN > 1)
    l.replicaTerms_.push_back({32 * warpsM, warpsN, -1, 0});
  int64_t atomsM = tileM / 16, atomsK = k / 16;
  l.slotTerms_ = {{1, 2, 1, 1}, {2, 2, 0, 8}, {4, 2, 1, 8}};
  if (atomsK > 1)
    l.slotTerms_.push_back({8, atomsK, 1, 16});
  if (atomsM > 1)
    l.slotTerms_.push_back({8 * atomsK, atomsM, 0, 16});
  l.finish();
  return l;
}

FragmentLayout FragmentLayout::slice(int dim) const {
  FragmentLayout l;
  l.name_ = "slice(" + name_ + ", dim " + std::to_string(dim) + ")";
  l.spec_ = std::make_shared<const LayoutSpec>(LayoutSpec{LayoutSpec::Kind::Slice, {}, 0, 0, 0, dim, spec_});
  l.threads_ = threads_;
  for (int d = 0; d < rank(); ++d)
    if (d != dim)
      l.shape_.push_back(shape_[d]);
  auto renumber = [&](LayoutTerm t) {
    if (t.dim > dim)
      --t.dim;
    return t;
  };
  l.replicaTerms_ = replicaTerms_;
  for (const LayoutTerm &t : threadTerms_) {
    if (t.dim == dim)
      l.replicaTerms_.push_back({t.stride, t.extent, -1, 0});
    else
      l.threadTerms_.push_back(renumber(t));
  }
  std::sort(l.replicaTerms_.begin(), l.replicaTerms_.end(),
            [](const LayoutTerm &a, const LayoutTerm &b) { return a.stride < b.stride; });
  std::vector<LayoutTerm> kept;
  for (const LayoutTerm &t : slotTerms_)
    if (t.dim != dim)
      kept.push_back(renumber(t));
  std::sort(kept.begin(), kept.end(), [](const LayoutTerm &a, const LayoutTerm &b) { return a.stride < b.stride; });
  int64_t stride = 1;
  for (LayoutTerm &t : kept) {
    t.stride = stride;
    stride *= t.extent;
  }
  l.slotTerms_ = kept;
  l.finish();
  return l;
}

std::vector<int64_t> FragmentLayout::coords(int64_t thread, int64_t slot) const {
  std::vector<int64_t> c(shape_.size(), 0);
  for (const LayoutTerm &t : threadTerms_)
    c[t.dim] += digit(thread, t) * t.scale;
  for (const LayoutTerm &t : slotTerms_)
    c[t.dim] += digit(slot, t) * t.scale;
  return c;
}

bool FragmentLayout::inBounds(const std::vector<int64_t> &c) const {
  for (size_t d = 0; d < c.size(); ++d)
    if (c[d] < 0 || c[d] >= shape_[d])
      return false;
  return true;
}

bool FragmentLayout::isPrimary(int64_t thread) const {
  for (const LayoutTerm &t : replicaTerms_)
    if (digit(thread, t) != 0)
      return false;
  return true;
}

std::optional<int64_t> FragmentLayout::slotOf(int64_t thread, const std::vector<int64_t> &c) const {
  for (int64_t s = 0; s < numSlots_; ++s)
    if (coords(thread, s) == c)
      return s;
  return std::nullopt;
}

int64_t SlotMap::apply(int64_t slot) const {
  int64_t s = offset;
  for (const LayoutTerm &t : terms)
    s += digit(slot, t) * t.scale;
  return s;
}

std::optional<SlotMap> registerAccessMap(const FragmentLayout &driver, const FragmentLayout &other,
                                         const std::vector<int> &dims, const std::vector<int64_t> &constants) {
  if (driver.threads() != other.threads() || dims.size() != size_t(other.rank()))
    return std::nullopt;
  std::vector<int64_t> table(driver.numSlots(), -1);
  for (int64_t t = 0; t < driver.threads(); ++t) {
    std::map<std::vector<int64_t>, int64_t> held;
    for (int64_t s = 0; s < other.numSlots(); ++s)
      held.emplace(other.coords(t, s), s);
    for (int64_t s = 0; s < driver.numSlots(); ++s) {
      std::vector<int64_t> c = driver.coords(t, s);
      if (!driver.inBounds(c))
        continue;
      std::vector<int64_t> c2(dims.size());
      for (size_t k = 0; k < dims.size(); ++k)
        c2[k] = dims[k] >= 0 ? c[dims[k]] : (k < constants.size() ? constants[k] : 0);
      auto it = held.find(c2);
      if (it == held.end() || !other.inBounds(c2))
        return std::nullopt;
      if (table[s] == -1)
        table[s] = it->second;
      else if (table[s] != it->second)
        return std::nullopt;
    }
  }
  // Fit table[s] = offset + sum_k digit_k(s) * scale_k over the driver's slot digits.
  if (table.empty() || table[0] < 0)
    return std::nullopt;
  SlotMap map;
  map.offset = table[0];
  for (const LayoutTerm &t : driver.slotTerms()) {
    if (t.stride >= int64_t(table.size()) || table[t.stride] < 0)
      return std::nullopt;
    int64_t scale = table[t.stride] - map.offset;
    if (scale != 0)
      map.terms.push_back({t.stride, t.extent, -1, scale});
  }
  for (int64_t s = 0; s < int64_t(table.size()); ++s)
    if (table[s] >= 0 && map.apply(s) != table[s])
      return std::nullopt;
  return map;
}

bool writesReachEveryReplica(const FragmentLayout &driver, const FragmentLayout &other, const std::vector<int> &dims,
                             const std::vector<int64_t> &constants) {
  if (driver.threads() != other.threads() || dims.size() != size_t(other.rank()))
    return false;
  // Coordinates as row-major indices into count tables (the shapes are static and bounded: register tiles and
  // parallel loops are size-checked before layouts are inferred).
  auto linear = [](const FragmentLayout &l, const std::vector<int64_t> &c) {
    int64_t index = 0;
    for (int d = 0; d < l.rank(); ++d)
      index = index * l.shape()[d] + c[d];
    return index;
  };
  auto size = [](const FragmentLayout &l) {
    int64_t n = 1;
    for (int64_t e : l.shape())
      n *= e;
    return n;
  };
  // How many threads hold each element of `other`, and how many run each iteration of the loop (a thread holding or
  // running one twice counts once).
  auto countThreads = [&](const FragmentLayout &l) {
    std::vector<int64_t> count(size(l), 0), lastThread(size(l), -1);
    for (int64_t t = 0; t < l.threads(); ++t)
      for (int64_t s = 0; s < l.numSlots(); ++s)
        if (std::vector<int64_t> c = l.coords(t, s); l.inBounds(c)) {
          int64_t e = linear(l, c);
          if (lastThread[e] != t) {
            lastThread[e] = t;
            ++count[e];
          }
        }
    return count;
  };
  std::vector<int64_t> holders = countThreads(other), runners = countThreads(driver);
  // registerAccessMap checks that each runner holds what it writes; equal counts then make the two sets equal.
  std::vector<int64_t> iteration(driver.rank(), 0), c(dims.size());
  for (int64_t it = 0; it < int64_t(runners.size()); ++it) {
    int64_t r = it;
    for (int d = driver.rank() - 1; d >= 0; --d) {
      iteration[d] = r % driver.shape()[d];
      r /= driver.shape()[d];
    }
    if (runners[it] == 0)
      continue;
    for (size_t k = 0; k < dims.size(); ++k)
      c[k] = dims[k] >= 0 ? iteration[dims[k]] : (k < constants.size() ? constants[k] : 0);
    if (!other.inBounds(c) || holders[linear(other, c)] != runners[it])
      return false;
  }
  return true;
}

Swizzle Swizzle::forRow(int64_t rowBytes) {
  Swizzle s;
  if (rowBytes >= 128 && rowBytes % 128 == 0) {
    s.rowChunks = rowBytes / 16;
    s.mask = 7;
  } else if (rowBytes == 64) {
    s.rowChunks = 4;
    s.mask = 3;
    s.rowDivisor = 2;
  }
  return s;
}

Swizzle Swizzle::panelled(int64_t rows, int64_t rowBytes, int64_t elementBytes) {
  Swizzle s = forRow(rowBytes);
  if (s.mask == 7 && rowBytes > 128) {
    s.rowChunks = 8;
    s.panelCols = 128 / elementBytes;
    s.panelRows = rows;
  }
  return s;
}

std::string Swizzle::name() const {
  if (none())
    return "none";
  return "xor" + std::to_string(mask + 1) + (rowDivisor > 1 ? "/" + std::to_string(rowDivisor) : "") +
         (panelledRows() ? " panels" : "");
}

Swizzle::Kind Swizzle::kind() const {
  if (none())
    return Kind::None;
  if (panelledRows())
    return Kind::Xor8Panels;
  return rowDivisor > 1 ? Kind::Xor4Rows2 : Kind::Xor8;
}

std::optional<Swizzle> Swizzle::ofKind(Kind kind, int64_t rows, int64_t rowBytes, int64_t elementBytes) {
  if (kind == Kind::None)
    return Swizzle{};
  Swizzle s = kind == Kind::Xor8Panels ? panelled(rows, rowBytes, elementBytes) : forRow(rowBytes);
  if (s.kind() != kind)
    return std::nullopt;
  return s;
}

int64_t Swizzle::apply(int64_t row, int64_t col, int64_t cols, int64_t elementBytes) const {
  if (none())
    return row * cols + col;
  int64_t panel = 0;
  if (panelledRows()) {
    panel = col / panelCols;
    col %= panelCols;
    cols = panelCols;
  }
  int64_t perChunk = 16 / elementBytes;
  int64_t chunk = col / perChunk;
  int64_t swizzled = chunk ^ ((row / rowDivisor) % (mask + 1));
  return panel * panelRows * panelCols + row * cols + swizzled * perChunk + col % perChunk;
}

// The step identities below are stated for unpanelled rows (a row step adds 16 whole rows of `cols` elements, a
// column step XORs inside one row); panelled tiles answer false and their readers compute every index in full.
bool Swizzle::columnStepIsXor(int64_t cols, int64_t elementBytes, int64_t k) const {
  int64_t perChunk = elementBytes > 0 ? 16 / elementBytes : 0;
  return !panelledRows() && isPowerOfTwo(cols) && k <= cols && (perChunk == 4 || perChunk == 8);
}

bool Swizzle::columnTileStepIsXor(int64_t cols, int64_t elementBytes, int64_t span) const {
  return isPowerOfTwo(span) && span >= 16 && columnStepIsXor(cols, elementBytes, span);
}

bool Swizzle::rowStepIsAdd() const {
  return none() || (!panelledRows() && 16 % ((mask + 1) * rowDivisor) == 0);
}

int64_t crossWarpReduceScratchBytes(const FragmentLayout &layout, int dim) {
  int64_t combos = 1;
  for (const LayoutTerm &t : layout.threadTerms())
    if (t.dim == dim && !(t.stride * t.extent <= 32 && isPowerOfTwo(t.stride) && isPowerOfTwo(t.extent)))
      combos *= t.extent;
  if (combos == 1)
    return 0;
  std::vector<int64_t> rest;
  for (int d = 0; d < layout.rank(); ++d)
    if (d != dim)
      rest.push_back(layout.shape()[d]);
  return combos * numElements(rest) * 4;
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

std::optional<FragmentLayout> FragmentLayout::build(const LayoutSpec &spec, int64_t threads, std::string *error) {
  auto fail = [&](std::string message) -> std::optional<FragmentLayout> {
    if (error)
      *error = std::move(message);
    return std::nullopt;
  };
  if (threads <= 0)
    return fail("a block needs at least one thread");
  for (int64_t e : spec.shape)
    if (e <= 0)
      return fail("the extents of a layout's shape must be positive");
  switch (spec.kind) {
  case LayoutSpec::Kind::Slice: {
    if (!spec.parent)
      return fail("a slice needs the layout it slices");
    auto parent = build(*spec.parent, threads, error);
    if (!parent)
      return std::nullopt;
    if (spec.dim < 0 || spec.dim >= parent->rank())
      return fail("slice dim " + std::to_string(spec.dim) + " is out of range for a layout of rank " +
                  std::to_string(parent->rank()));
    return parent->slice(spec.dim);
  }
  case LayoutSpec::Kind::Replicated:
    return replicated(spec.shape, threads);
  case LayoutSpec::Kind::Blocked:
    if (spec.shape.empty())
      return fail("a blocked layout needs a shape of rank 1 or more");
    if (spec.vector <= 0)
      return fail("a blocked layout's vector must be positive");
    return blocked(spec.shape, threads, spec.vector);
  case LayoutSpec::Kind::MmaAccumulator:
  case LayoutSpec::Kind::MmaOperandA: {
    bool acc = spec.kind == LayoutSpec::Kind::MmaAccumulator;
    if (spec.shape.size() != 2)
      return fail("an mma layout's shape has rank 2");
    int64_t wm = spec.warpsM, wn = spec.warpsN;
    if (wm <= 0 || wn <= 0 || 32 * wm * wn != threads)
      return fail("warps " + std::to_string(wm) + "x" + std::to_string(wn) + " do not make " +
                  std::to_string(threads) + " threads");
    int64_t m = spec.shape[0], n = spec.shape[1];
    if (m % (16 * wm) != 0 || n % ((acc ? 8 : 16) * (acc ? wn : 1)) != 0)
      return fail("tile " + std::to_string(m) + "x" + std::to_string(n) +
                  " does not split into mma atoms over the warps");
    return acc ? mmaAccumulator(m, n, wm, wn) : mmaOperandA(m, n, wm, wn);
  }
  }
  return fail("unknown layout kind");
}

} // namespace tilec::layout
