// The conflict analysis of tile-legalize-atomics: which blocks of a grid can
// update the same destination element through one tile.atomic_add.
#include "tilec/Transforms/AtomicConflictAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace tilec::tile;

namespace tilec {

std::optional<int64_t> GridCollision::splitExtent() const {
  if (period && gridExtent)
    return std::min(*period, *gridExtent);
  if (period)
    return period;
  return gridExtent;
}

namespace {

/// An index value as a function of the block indices.
struct Form {
  enum class Kind { Invariant, Block, Unknown };
  Kind kind = Kind::Unknown;
  std::optional<int64_t> constant; // Invariant: its value, when known
  // Block: a * (b_k floordiv q) + c, c invariant; zeroOffset when c == 0.
  unsigned k = 0;
  int64_t a = 1, q = 1;
  bool zeroOffset = true;
  // Terms that vary within a block: coefficient * (induction variable `iv` of an enclosing tile.parallel loop),
  // added to the rest. Only sums and products by positive constants keep them; anything else is Unknown.
  llvm::SmallVector<std::pair<unsigned, int64_t>, 2> lanes;

  static Form unknown() { return {}; }
  static Form invariant(std::optional<int64_t> c = std::nullopt) {
    Form f;
    f.kind = Kind::Invariant;
    f.constant = c;
    return f;
  }
  static Form block(unsigned k, int64_t a, int64_t q, bool zeroOffset) {
    Form f;
    f.kind = Kind::Block;
    f.k = k;
    f.a = a;
    f.q = q;
    f.zeroOffset = zeroOffset;
    return f;
  }
  bool isInvariant() const { return kind == Kind::Invariant && lanes.empty(); }
  bool isBlock() const { return kind == Kind::Block; }
  bool isZero() const { return isInvariant() && constant == 0; }
};

/// The induction variables of the tile.parallel loops around an atomic: a number and an extent each.
using ParallelIvs = llvm::DenseMap<Value, std::pair<unsigned, int64_t>>;

class FormAnalysis {
public:
  FormAnalysis(KernelOp kernel, ParallelIvs ivs) : kernel(kernel), ivs(std::move(ivs)) {}

  Form get(Value v) {
    auto it = memo.find(v);
    if (it != memo.end())
      return it->second;
    Form f = compute(v);
    memo[v] = f;
    return f;
  }

private:
  Form compute(Value v);
  Form combine(Operation *op, const Form &l, const Form &r);
  KernelOp kernel;
  ParallelIvs ivs;
  llvm::DenseMap<Value, Form> memo;
};

Form FormAnalysis::compute(Value v) {
  if (auto it = ivs.find(v); it != ivs.end()) {
    Form f = Form::invariant();
    f.lanes.push_back({it->second.first, 1});
    return f;
  }
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() != &kernel.getBodyBlock())
      return Form::unknown(); // a loop induction variable
    unsigned n = kernel.getNumArguments();
    if (arg.getArgNumber() < n)
      return Form::invariant(); // a scalar kernel argument
    return Form::block(arg.getArgNumber() - n, 1, 1, true);
  }
  Operation *op = v.getDefiningOp();
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
      return Form::invariant(i.getInt());
    return Form::invariant();
  }
  if (auto dim = dyn_cast<memref::DimOp>(op)) {
    auto src = dyn_cast<BlockArgument>(dim.getSource());
    if (!src || src.getOwner() != &kernel.getBodyBlock() ||
        !get(dim.getIndex()).isInvariant())
      return Form::unknown();
    return Form::invariant();
  }
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op))
    return get(op->getOperand(0));
  if (op->getDialect() && op->getDialect()->getNamespace() != "arith")
    return Form::unknown();
  if (op->getNumOperands() != 2) {
    bool inv = llvm::all_of(op->getOperands(),
                            [&](Value o) { return get(o).isInvariant(); });
    return inv ? Form::invariant() : Form::unknown();
  }
  Form l = get(op->getOperand(0)), r = get(op->getOperand(1));
  if (l.lanes.empty() && r.lanes.empty())
    return combine(op, l, r);
  // Parallel-loop terms: kept through l + r, l - (no lanes), (lanes) * c with a constant c > 0; the rest of each
  // side combines as above, as if the lanes were not there (they never make a block form, only an offset).
  auto withoutLanes = [](Form f) {
    if (!f.lanes.empty()) {
      f.lanes.clear();
      f.constant = std::nullopt;
      f.zeroOffset = false;
    }
    return f;
  };
  llvm::SmallVector<std::pair<unsigned, int64_t>, 2> lanes;
  if (isa<arith::AddIOp>(op)) {
    lanes = l.lanes;
    for (const auto &term : r.lanes) {
      auto same = llvm::find_if(lanes, [&](const auto &t) { return t.first == term.first; });
      if (same == lanes.end())
        lanes.push_back(term);
      else if (__builtin_add_overflow(same->second, term.second, &same->second))
        return Form::unknown();
    }
  } else if (isa<arith::SubIOp>(op) && r.lanes.empty()) {
    lanes = l.lanes;
  } else if (isa<arith::MulIOp>(op) && (l.lanes.empty() != r.lanes.empty())) {
    const Form &c = l.lanes.empty() ? l : r;
    if (!c.isInvariant() || !c.constant || *c.constant <= 0)
      return Form::unknown();
    lanes = l.lanes.empty() ? r.lanes : l.lanes;
    for (auto &t : lanes)
      if (__builtin_mul_overflow(t.second, *c.constant, &t.second))
        return Form::unknown();
  } else {
    return Form::unknown();
  }
  Form f = combine(op, withoutLanes(l), withoutLanes(r));
  if (f.kind == Form::Kind::Unknown)
    return f;
  f.constant = std::nullopt;
  f.zeroOffset = false;
  f.lanes = lanes;
  return f;
}

Form FormAnalysis::combine(Operation *op, const Form &l, const Form &r) {
  // Every product and sum is checked: a wrapped coefficient could make colliding blocks look apart (an
  // "exclusive" atomic that loses updates); on overflow a constant becomes unknown and a block form unknown, both
  // conservative.
  auto add = [](int64_t x, int64_t y) -> std::optional<int64_t> {
    int64_t z;
    if (__builtin_add_overflow(x, y, &z))
      return std::nullopt;
    return z;
  };
  auto subtract = [](int64_t x, int64_t y) -> std::optional<int64_t> {
    int64_t z;
    if (__builtin_sub_overflow(x, y, &z))
      return std::nullopt;
    return z;
  };
  auto multiply = [](int64_t x, int64_t y) -> std::optional<int64_t> {
    int64_t z;
    if (__builtin_mul_overflow(x, y, &z))
      return std::nullopt;
    return z;
  };
  auto both = [&](auto fn) -> std::optional<int64_t> {
    if (l.constant && r.constant)
      return fn(*l.constant, *r.constant);
    return std::nullopt;
  };
  if (isa<arith::AddIOp>(op)) {
    if (l.isInvariant() && r.isInvariant())
      return Form::invariant(both(add));
    if (l.isBlock() && r.isInvariant())
      return Form::block(l.k, l.a, l.q, l.zeroOffset && r.isZero());
    if (r.isBlock() && l.isInvariant())
      return Form::block(r.k, r.a, r.q, r.zeroOffset && l.isZero());
    if (l.isBlock() && r.isBlock() && l.k == r.k && l.q == r.q)
      if (std::optional<int64_t> a = add(l.a, r.a))
        return Form::block(l.k, *a, l.q, l.zeroOffset && r.zeroOffset);
    return Form::unknown();
  }
  if (isa<arith::SubIOp>(op)) {
    if (l.isInvariant() && r.isInvariant())
      return Form::invariant(both(subtract));
    if (l.isBlock() && r.isInvariant())
      return Form::block(l.k, l.a, l.q, l.zeroOffset && r.isZero());
    return Form::unknown(); // c - a*b: a negative coefficient
  }
  if (isa<arith::MulIOp>(op)) {
    if (l.isInvariant() && r.isInvariant())
      return Form::invariant(both(multiply));
    const Form &b = l.isBlock() ? l : r, &c = l.isBlock() ? r : l;
    if (b.isBlock() && c.isInvariant() && c.constant && *c.constant > 0)
      if (std::optional<int64_t> a = multiply(b.a, *c.constant))
        return Form::block(b.k, *a, b.q, b.zeroOffset);
    return Form::unknown();
  }
  if (isa<arith::DivSIOp, arith::FloorDivSIOp, arith::DivUIOp>(op)) {
    if (l.isInvariant() && r.isInvariant())
      return Form::invariant();
    // (a * (b floordiv q)) floordiv g for b >= 0 (block indices are).
    if (l.isBlock() && l.zeroOffset && r.constant && *r.constant > 0) {
      int64_t g = *r.constant;
      if (l.a % g == 0)
        return Form::block(l.k, l.a / g, l.q, true);
      if (g % l.a == 0)
        if (std::optional<int64_t> q = multiply(l.q, g / l.a))
          return Form::block(l.k, 1, *q, true);
    }
    return Form::unknown();
  }
  if (l.isInvariant() && r.isInvariant())
    return Form::invariant();
  return Form::unknown();
}

/// "h" (the source's name, when the front end recorded it) or "#0".
std::string indexName(KernelOp kernel, unsigned k) {
  if (auto names = kernel->getAttrOfType<ArrayAttr>("tile.index_names"))
    if (k < names.size())
      if (auto name = dyn_cast<StringAttr>(names[k]))
        return name.str();
  return "#" + std::to_string(k);
}

} // namespace

std::optional<unsigned> atomicDestinationArgument(AtomicAddOp op,
                                                  KernelOp kernel) {
  Value dest = op.getDest();
  if (auto region = dest.getDefiningOp<RegionOp>())
    dest = region.getSource();
  auto arg = dyn_cast<BlockArgument>(dest);
  if (!arg || arg.getOwner() != &kernel.getBodyBlock() ||
      arg.getArgNumber() >= kernel.getNumArguments())
    return std::nullopt;
  return arg.getArgNumber();
}

std::string describeGridExtent(KernelOp kernel, unsigned blockIndex) {
  std::string text;
  llvm::raw_string_ostream os(text);
  kernel.getGrid().getResult(blockIndex).print(os);
  auto names = kernel->getAttrOfType<ArrayAttr>("tile.dim_names");
  if (!names)
    return text;
  for (int64_t s = static_cast<int64_t>(names.size()) - 1; s >= 0; --s) {
    auto name = dyn_cast<StringAttr>(names[s]);
    if (!name)
      continue;
    std::string sym = "s" + std::to_string(s);
    for (size_t at = 0; (at = text.find(sym, at)) != std::string::npos;) {
      text.replace(at, sym.size(), name.str());
      at += name.size();
    }
  }
  return text;
}

AtomicConflict analyzeAtomicConflict(AtomicAddOp op, KernelOp kernel,
                                     int64_t maxSplit) {
  AtomicConflict result;
  for (Operation *p = op->getParentOp(); p && p != kernel; p = p->getParentOp())
    if (isa<LoopLikeOpInterface>(p) || isa<PipelinedOp>(p) ||
        p->getName().getStringRef() == "scf.while")
      result.repeats = true;
  // Inside tile.parallel loops (their iterations run at the same time, on different threads), an element-form
  // update is safe to treat like the others only when its indices are injective in the loops' induction variables:
  // each variable in one index, there with a positive coefficient, and the coefficients of one index mixed-radix
  // (each larger than the reach of the smaller ones), so that no two iterations name the same element. The indices
  // then cover a window of 1 + sum a_i (e_i - 1) elements per dim, and blocks are analysed over those windows.
  ParallelIvs ivs;
  SmallVector<int64_t> ivExtents;
  for (Operation *p = op->getParentOp(); p && p != kernel; p = p->getParentOp())
    if (auto par = dyn_cast<ParallelOp>(p))
      for (auto [arg, extent] : llvm::zip(par.getBody().front().getArguments(), par.getExtents())) {
        ivs[arg] = {static_cast<unsigned>(ivExtents.size()), extent};
        ivExtents.push_back(extent);
      }
  auto collideInBlock = [&](const std::string &why) {
    result.kind = AtomicConflict::Kind::Unsplittable;
    result.reason = "it is inside a tile.parallel loop, whose iterations may update the same element at the same "
                    "time (" + why + ")";
    return result;
  };
  if (!ivs.empty() && op.getIndices().empty())
    return collideInBlock("every iteration adds a whole region");

  // Offsets and window sizes in every destination dimension.
  SmallVector<Value> offsets;
  SmallVector<int64_t> sizes;
  if (!op.getIndices().empty()) {
    offsets.append(op.getIndices().begin(), op.getIndices().end());
    sizes.assign(offsets.size(), 1);
  } else if (auto region = op.getDest().getDefiningOp<RegionOp>()) {
    offsets.append(region.getOffsets().begin(), region.getOffsets().end());
    sizes.append(region.getSizes().begin(), region.getSizes().end());
  } // else: the whole buffer, in every block: nothing separates blocks.

  FormAnalysis forms(kernel, ivs);
  if (!ivs.empty()) {
    SmallVector<int> dimOfIv(ivExtents.size(), -1);
    for (auto [d, o] : llvm::enumerate(offsets)) {
      Form f = forms.get(o);
      if (f.kind == Form::Kind::Unknown)
        return collideInBlock("index " + std::to_string(d) + " is not a sum of loop and block indices with "
                              "constant positive coefficients");
      SmallVector<std::pair<int64_t, int64_t>> terms; // (coefficient, extent)
      for (auto [iv, a] : f.lanes) {
        if (dimOfIv[iv] != -1)
          return collideInBlock("a loop index appears in two indices");
        dimOfIv[iv] = static_cast<int>(d);
        if (ivExtents[iv] > 1) {
          if (a <= 0)
            return collideInBlock("a loop index has a coefficient that is not positive");
          terms.push_back({a, ivExtents[iv]});
        }
      }
      llvm::sort(terms);
      int64_t reach = 0; // the largest offset the terms so far can add
      for (auto [a, e] : terms) {
        int64_t add;
        if (a <= reach)
          return collideInBlock("two loop indices can add up to the same offset in index " + std::to_string(d));
        if (__builtin_mul_overflow(a, e - 1, &add) || __builtin_add_overflow(reach, add, &reach))
          return collideInBlock("index " + std::to_string(d) + " overflows");
      }
      sizes[d] = reach + 1;
    }
    for (auto [iv, d] : llvm::enumerate(dimOfIv))
      if (d == -1 && ivExtents[iv] > 1)
        return collideInBlock("a loop index does not appear in the element's indices");
  }
  unsigned rank = kernel.getGridRank();
  SmallVector<std::optional<int64_t>> period(rank);
  for (auto [o, s] : llvm::zip(offsets, sizes)) {
    Form f = forms.get(o);
    if (!f.isBlock() || f.a <= 0)
      continue;
    // The offsets a * (b floordiv q) of every block must be representable: index arithmetic wraps at 2^64, and
    // wrapped offsets of different blocks can coincide (m * 2^62 is 0 again at m = 4). Blocks along a dynamic
    // grid extent number at most 2^31 - 1. Otherwise, and if p = q * ceil(s / a) overflows, no period: the blocks
    // along k are taken to collide (conservative).
    int64_t lastBlock = (int64_t{1} << 31) - 2;
    if (auto e = dyn_cast<AffineConstantExpr>(kernel.getGrid().getResult(f.k)))
      lastBlock = std::max<int64_t>(e.getValue() - 1, 0);
    int64_t span, p;
    if (__builtin_mul_overflow(f.a, lastBlock / f.q, &span) || __builtin_add_overflow(span, s, &span) ||
        __builtin_mul_overflow(f.q, (s - 1) / f.a + 1, &p))
      continue;
    if (!period[f.k] || p < *period[f.k])
      period[f.k] = p;
  }

  for (unsigned k = 0; k < rank; ++k) {
    GridCollision c;
    c.blockIndex = k;
    c.period = period[k];
    if (auto e = dyn_cast<AffineConstantExpr>(kernel.getGrid().getResult(k)))
      c.gridExtent = e.getValue();
    std::optional<int64_t> extent = c.splitExtent();
    if (extent && *extent <= 1)
      continue;
    result.collisions.push_back(c);
  }

  std::string text;
  llvm::raw_string_ostream os(text);
  if (result.collisions.empty()) {
    result.kind = AtomicConflict::Kind::Exclusive;
    os << "each element is updated by one block only";
    result.reason = text;
    return result;
  }
  for (const GridCollision &c : result.collisions)
    if (!c.splitExtent()) {
      result.kind = AtomicConflict::Kind::DynamicSplit;
      os << "blocks collide over block index "
         << indexName(kernel, c.blockIndex)
         << ", whose extent (" << describeGridExtent(kernel, c.blockIndex)
         << ") is not a compile-time constant";
      result.reason = text;
      return result;
    }
  int64_t total = 1;
  for (const GridCollision &c : result.collisions)
    if (__builtin_mul_overflow(total, *c.splitExtent(), &total) || total > (int64_t{1} << 40))
      total = int64_t{1} << 40;
  result.splitExtent = total;
  os << "blocks collide over ";
  llvm::interleave(
      result.collisions, os,
      [&](const GridCollision &c) {
        os << "block index " << indexName(kernel, c.blockIndex) << " in "
           << *c.splitExtent() << " ways (split index "
           << indexName(kernel, c.blockIndex);
        if (c.period && (!c.gridExtent || *c.period < *c.gridExtent))
          os << " mod " << *c.period;
        os << ")";
      },
      " and ");
  if (total > maxSplit) {
    result.kind = AtomicConflict::Kind::TooLarge;
    os << ": " << total << " splits, more than max-split=" << maxSplit;
  } else {
    result.kind = AtomicConflict::Kind::ConstantSplit;
  }
  result.reason = text;
  return result;
}

bool splitSlicesCovered(AtomicAddOp op, KernelOp kernel, const AtomicConflict &conflict) {
  // Once in every block: directly in the kernel body, not in a loop or a conditional.
  if (conflict.kind != AtomicConflict::Kind::ConstantSplit || op->getParentOp() != kernel.getOperation())
    return false;
  auto region = op.getDest().getDefiningOp<RegionOp>();
  auto arg = region ? dyn_cast<BlockArgument>(region.getSource()) : BlockArgument();
  if (!arg || arg.getOwner() != &kernel.getBodyBlock() || arg.getArgNumber() >= kernel.getNumArguments())
    return false;
  auto shapes = kernel->getAttrOfType<ArrayAttr>("tile.arg_shapes");
  auto shape = shapes && arg.getArgNumber() < shapes.size()
                   ? dyn_cast<AffineMapAttr>(shapes[arg.getArgNumber()])
                   : AffineMapAttr();
  AffineMap grid = kernel.getGrid();
  if (!shape || shape.getValue().getNumSymbols() != grid.getNumSymbols() ||
      shape.getValue().getNumResults() != region.getOffsets().size())
    return false;
  unsigned symbols = grid.getNumSymbols();
  FormAnalysis forms(kernel, ParallelIvs());
  SmallVector<bool> used(kernel.getGridRank(), false);
  for (auto [d, offset, size] : llvm::enumerate(region.getOffsets(), region.getSizes())) {
    AffineExpr extent = shape.getValue().getResult(d);
    Form f = forms.get(offset);
    if (f.isInvariant()) { // whole: offset 0, a window at least the static extent
      auto c = dyn_cast<AffineConstantExpr>(extent);
      if (!f.isZero() || !c || c.getValue() > size)
        return false;
      continue;
    }
    if (!f.isBlock() || !f.zeroOffset || !f.lanes.empty() || f.a != size || used[f.k])
      return false;
    used[f.k] = true;
    // The blocks along k write windows 0 .. extent(k)/q - 1 of every split slice; enough of them when
    // extent(k) - q * ceildiv(dim, size) simplifies to a constant >= 0.
    AffineExpr need = extent.ceilDiv(size) * f.q;
    AffineExpr slack = simplifyAffineExpr(grid.getResult(f.k) - need, 0, symbols);
    auto c = dyn_cast<AffineConstantExpr>(slack);
    if (!c || c.getValue() < 0)
      return false;
  }
  // A colliding block index in no dimension is the split index itself: every value when it spans its constant extent.
  for (const GridCollision &c : conflict.collisions)
    if (!used[c.blockIndex] && (c.period || !c.gridExtent))
      return false;
  return true;
}

} // namespace tilec
