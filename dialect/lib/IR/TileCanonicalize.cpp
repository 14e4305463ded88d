// Canonicalization patterns of the tile ops.
#include "tilec/Dialect/Tile/IR/TileOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace tilec::tile;

namespace {

/// `tile.copy %x, %x` moves nothing.
struct EraseSelfCopy : OpRewritePattern<CopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CopyOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getSource() != op.getTarget())
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

/// A fill whose every element is overwritten by the next op, a fill of the
/// same target, is dead.
struct EraseOverwrittenFill : OpRewritePattern<FillOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FillOp op,
                                PatternRewriter &rewriter) const override {
    auto next = dyn_cast_or_null<FillOp>(op->getNextNode());
    if (!next || next.getTarget() != op.getTarget())
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

/// A gemm with `clear` overwrites its accumulator, so a fill of that
/// accumulator right before it is dead.
struct EraseFillBeforeClearingGemm : OpRewritePattern<FillOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FillOp op,
                                PatternRewriter &rewriter) const override {
    auto next = dyn_cast_or_null<GemmOp>(op->getNextNode());
    if (!next || !next.getClear() || next.getC() != op.getTarget() ||
        next.getA() == op.getTarget() || next.getB() == op.getTarget())
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void CopyOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                         MLIRContext *context) {
  patterns.add<EraseSelfCopy>(context);
}

void FillOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                         MLIRContext *context) {
  patterns.add<EraseOverwrittenFill, EraseFillBeforeClearingGemm>(context);
}
