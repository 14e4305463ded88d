// tile-unswitch-parallel: loop unswitching of tile.parallel on index conditions that hold on its whole iteration
// space.
//
// Masks are written per element (`keep = n * block_n + j < seq and i <= j ...; s[i, j] = keep ? s[i, j] : -inf`)
// and lowered per element: on the GPU every thread evaluates them for every slot it holds, in 64-bit index
// arithmetic, every time the loop runs, although in most blocks of a tiled kernel every element passes (only the
// tail block and, under a causal mask, the diagonal blocks mix). This pass finds, in the body of each tile.parallel,
// the integer comparisons (`arith.cmpi` slt/sle/sgt/sge on index or i64) whose operands are affine in the loop's
// induction variables with constant coefficients (sums, differences, products by constants of induction
// variables, constants and values defined outside the loop). Such a comparison holds on the whole box
// [0, e0) x ... x [0, eN) iff it holds at one corner: the one where lhs - rhs is largest (for < and <=) or smallest
// (for > and >=). The pass evaluates each comparison at its corner before the loop (the same arithmetic the loop
// does for that element, so nothing can overflow that the loop does not) and:
//   - a corner check that folds to true: the comparison is true everywhere; it becomes the constant true;
//   - one that folds to false: the comparison is mixed (or false everywhere); it stays;
//   - otherwise the loop is versioned: `scf.if (all corner checks) { loop with those comparisons true } else
//     { loop as written }`, and the first copy is simplified (selects on true fold away).
// The condition is uniform over the block (it is computed from values outside the loop, which every thread of a
// block shares), so the branch does not diverge. Both copies get their layouts from tile-infer-layouts, which runs
// after this pass. The semantics are unchanged; the CPU backend does not run the pass.
#include "tilec/Dialect/Tile/IR/TileOps.h"
#include "tilec/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

namespace tilec {
#define GEN_PASS_DEF_UNSWITCHPARALLEL
#include "tilec/Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec::tile;

namespace {

using Coefficients = SmallVector<int64_t>;

/// The coefficients of `v` in the loop's induction variables where `v` is affine in them with constant
/// coefficients, collecting into `chain` the ops of the loop body that compute it; nullopt otherwise.
class AffineIndexAnalysis {
public:
  explicit AffineIndexAnalysis(ParallelOp loop) : loop(loop), rank(loop.getInductionVars().size()) {}

  std::optional<Coefficients> coefficients(Value v, llvm::SetVector<Operation *> &chain) {
    if (!isIntegerIndex(v.getType()))
      return std::nullopt;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == &loop.getBodyBlock()) {
        Coefficients unit(rank, 0);
        unit[arg.getArgNumber()] = 1;
        return unit;
      }
      if (isOutside(v))
        return Coefficients(rank, 0);
      return std::nullopt; // a block argument of a region nested in the body
    }
    if (isOutside(v))
      return Coefficients(rank, 0);
    Operation *op = v.getDefiningOp();
    if (op->getBlock() != &loop.getBodyBlock() || op->getNumRegions() != 0 || !isPure(op))
      return std::nullopt;
    std::optional<Coefficients> result;
    if (isa<arith::AddIOp, arith::SubIOp>(op)) {
      auto a = coefficients(op->getOperand(0), chain), b = coefficients(op->getOperand(1), chain);
      if (!a || !b)
        return std::nullopt;
      result = *a;
      for (unsigned k = 0; k < rank; ++k)
        (*result)[k] += isa<arith::AddIOp>(op) ? (*b)[k] : -(*b)[k];
    } else if (isa<arith::MulIOp>(op)) {
      auto a = coefficients(op->getOperand(0), chain), b = coefficients(op->getOperand(1), chain);
      if (!a || !b)
        return std::nullopt;
      APInt constant;
      if (isZero(*a) && isZero(*b)) {
        result = *a;
      } else if (isZero(*b) && matchPattern(op->getOperand(1), m_ConstantInt(&constant))) {
        result = scaled(*a, constant.getSExtValue());
      } else if (isZero(*a) && matchPattern(op->getOperand(0), m_ConstantInt(&constant))) {
        result = scaled(*b, constant.getSExtValue());
      } else {
        return std::nullopt; // the sign of a product by a run-time value is not known
      }
    } else {
      // Any other pure op may compute a loop-invariant value in the body (a constant, a cast of an outer value).
      for (Value operand : op->getOperands()) {
        if (isIntegerIndex(operand.getType())) {
          auto c = coefficients(operand, chain);
          if (!c || !isZero(*c))
            return std::nullopt;
        } else if (!isOutside(operand) && !operand.getDefiningOp<arith::ConstantOp>()) {
          return std::nullopt;
        }
      }
      result = Coefficients(rank, 0);
    }
    chain.insert(op);
    return result;
  }

  static bool isZero(const Coefficients &c) {
    return llvm::all_of(c, [](int64_t x) { return x == 0; });
  }

private:
  static bool isIntegerIndex(Type t) { return t.isIndex() || t.isInteger(64); }

  bool isOutside(Value v) { return !loop.getBody().isAncestor(v.getParentRegion()); }

  static Coefficients scaled(const Coefficients &c, int64_t factor) {
    Coefficients r = c;
    for (int64_t &x : r)
      x *= factor;
    return r;
  }

  ParallelOp loop;
  unsigned rank;
};

/// A comparison whose truth on the whole box is decided by one corner.
struct Candidate {
  arith::CmpIOp compare;
  SmallVector<int64_t> corner;
  llvm::SetVector<Operation *> chain;
};

std::optional<Candidate> candidateOf(arith::CmpIOp compare, ParallelOp loop, AffineIndexAnalysis &analysis) {
  using P = arith::CmpIPredicate;
  P pred = compare.getPredicate();
  bool upper = pred == P::slt || pred == P::sle; // lhs - rhs must stay below (or at) zero: its maximum decides
  if (!upper && pred != P::sgt && pred != P::sge)
    return std::nullopt;
  Candidate c{compare, {}, {}};
  auto lhs = analysis.coefficients(compare.getLhs(), c.chain);
  auto rhs = analysis.coefficients(compare.getRhs(), c.chain);
  if (!lhs || !rhs)
    return std::nullopt;
  bool varies = false;
  ArrayRef<int64_t> extents = loop.getExtents();
  for (size_t k = 0; k < extents.size(); ++k) {
    int64_t d = (*lhs)[k] - (*rhs)[k];
    varies |= d != 0;
    bool atEnd = upper ? d > 0 : d < 0;
    c.corner.push_back(atEnd ? extents[k] - 1 : 0);
  }
  if (!varies)
    return std::nullopt; // the same for every element: nothing to gain
  // Chain ops in body order, so that each clone's operands are cloned before it.
  SmallVector<Operation *> ordered(c.chain.begin(), c.chain.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  c.chain = llvm::SetVector<Operation *>(ordered.begin(), ordered.end());
  return c;
}

/// The comparison of `c` evaluated at its corner, before `loop` (folded where its operands are constants). The ops
/// it creates are added to `created`.
Value cornerCheck(OpBuilder &b, ParallelOp loop, Candidate &c, SmallVectorImpl<Operation *> &created) {
  Operation *last = loop->getPrevNode(); // the builder inserts right before the loop
  IRMapping mapping;
  for (auto [k, iv] : llvm::enumerate(loop.getInductionVars()))
    mapping.map(iv, arith::ConstantIndexOp::create(b, loop.getLoc(), c.corner[k]).getResult());
  auto cloneFolded = [&](Operation *op) {
    Operation *clone = b.clone(*op, mapping);
    SmallVector<Value> folded;
    if (succeeded(b.tryFold(clone, folded)) && !folded.empty()) {
      for (auto [from, to] : llvm::zip(op->getResults(), folded))
        mapping.map(from, to);
      clone->erase();
    }
  };
  for (Operation *op : c.chain)
    cloneFolded(op);
  cloneFolded(c.compare);
  // Everything now between `last` and the loop is this check's (constants that folding materialized included).
  for (Operation *op = loop->getPrevNode(); op && op != last; op = op->getPrevNode())
    created.push_back(op);
  return mapping.lookup(c.compare.getResult());
}

/// Erases the ops of `ops` that nothing uses any more, users before what they use.
void eraseUnused(SmallVectorImpl<Operation *> &ops) {
  bool erased = true;
  while (erased) {
    erased = false;
    for (Operation *&op : ops)
      if (op && op->use_empty() && isPure(op)) {
        op->erase();
        op = nullptr;
        erased = true;
      }
  }
}

/// Folds what constant conditions made trivial in the loop's body (selects, ands) and drops what became dead.
void simplify(ParallelOp loop) {
  MLIRContext *context = loop.getContext();
  RewritePatternSet patterns(context);
  arith::SelectOp::getCanonicalizationPatterns(patterns, context);
  arith::AndIOp::getCanonicalizationPatterns(patterns, context);
  arith::OrIOp::getCanonicalizationPatterns(patterns, context);
  arith::XOrIOp::getCanonicalizationPatterns(patterns, context);
  (void)applyPatternsGreedily(loop.getBody(), std::move(patterns));
}

/// True when `loop` changed.
bool unswitch(ParallelOp loop) {
  AffineIndexAnalysis analysis(loop);
  SmallVector<Candidate> candidates;
  loop.getBody().walk([&](arith::CmpIOp compare) {
    if (auto c = candidateOf(compare, loop, analysis))
      candidates.push_back(std::move(*c));
  });
  if (candidates.empty())
    return false;
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  SmallVector<arith::CmpIOp> alwaysTrue, versioned;
  SmallVector<Operation *> created;
  Value all;
  for (Candidate &c : candidates) {
    Value check = cornerCheck(b, loop, c, created);
    APInt constant;
    if (matchPattern(check, m_ConstantInt(&constant))) {
      if (constant.isOne())
        alwaysTrue.push_back(c.compare);
      continue; // false at the corner: mixed (or false everywhere), stays per element
    }
    versioned.push_back(c.compare);
    all = all ? arith::AndIOp::create(b, loc, all, check).getResult() : check;
  }
  // Replaces each comparison (of the loop `in`, mapped from `loop` by `mapping`) with true.
  auto makeTrue = [&](ParallelOp in, ArrayRef<arith::CmpIOp> compares, IRMapping *mapping) {
    if (compares.empty())
      return;
    // Defined outside the loop body, which simplify() rewrites (and may erase dead constants of).
    OpBuilder outside(in);
    Value yes = arith::ConstantIntOp::create(outside, loc, 1, 1).getResult();
    created.push_back(yes.getDefiningOp());
    for (arith::CmpIOp compare : compares) {
      Operation *target = mapping ? mapping->lookup(compare.getOperation()) : compare.getOperation();
      target->getResult(0).replaceAllUsesWith(yes);
      target->erase();
    }
    simplify(in);
  };
  if (!versioned.empty()) {
    auto ifOp = scf::IfOp::create(b, loc, all, /*withElseRegion=*/true);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    IRMapping mapping;
    auto fast = cast<ParallelOp>(b.clone(*loop, mapping));
    loop->moveBefore(ifOp.elseBlock()->getTerminator());
    SmallVector<arith::CmpIOp> both = versioned;
    both.append(alwaysTrue.begin(), alwaysTrue.end());
    makeTrue(fast, both, &mapping);
  }
  makeTrue(loop, alwaysTrue, nullptr);
  eraseUnused(created); // checks that folded to a constant, or to false
  return !versioned.empty() || !alwaysTrue.empty();
}

struct UnswitchParallel : tilec::impl::UnswitchParallelBase<UnswitchParallel> {
  void runOnOperation() override {
    SmallVector<ParallelOp> loops;
    getOperation().walk([&](KernelOp kernel) { kernel.walk([&](ParallelOp loop) { loops.push_back(loop); }); });
    llvm::SetVector<Operation *> changed;
    for (ParallelOp loop : loops)
      if (unswitch(loop))
        changed.insert(loop->getParentOfType<KernelOp>());
    // Each comparison's corner check clones its operands' arithmetic on its own (the masks of one loop share most
    // of it: block offsets, `seq`); merged here so that the emitted kernels compute each value once.
    IRRewriter rewriter(&getContext());
    DominanceInfo dominance;
    for (Operation *kernel : changed)
      eliminateCommonSubExpressions(rewriter, dominance, kernel);
  }
};

} // namespace
