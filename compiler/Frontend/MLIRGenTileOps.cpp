// MLIRGen, the whole-tile builtins called as statements: copy, fill, gemm, reduce_*, atomic_add (and their
// keyword arguments).
#include "MLIRGenImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace tilec::frontend;
namespace tile = tilec::tile;

//===----------------------------------------------------------------------===//
// Tile builtins
//===----------------------------------------------------------------------===//

void MLIRGen::generateCallStmt(const CallExpr &call) {
  Location l = loc(call.getLoc());
  llvm::StringRef callee = call.callee;
  if (callee == "copy") {
    if (!checkArgs(call, 2, 2, {"pad"}, "source, target"))
      return;
    Value src = tileOperand(*call.args[0], "the source of copy()");
    Value dst = tileOperand(*call.args[1], "the target of copy()");
    if (!src || !dst)
      return;
    // pad=v: what the source's elements past the end of its tensor (or tile) read as, instead of zero.
    if (const KeywordArg *kw = keyword(call, "pad")) {
      Val v = expr(*kw->value);
      if (v.isPoison())
        return;
      if (!v.isConst() || !(v.isFloatLike() || v.isIntLike())) {
        error(kw->value->getRange(), "pad must be a compile-time number, got " + describeVal(v));
        return;
      }
      auto region = src.getDefiningOp<tile::RegionOp>();
      if (!region) {
        error(kw->value->getRange(), "pad= applies to a source that is a slice of a tensor or tile (elements past "
                                     "its end read as the pad value); this source is a whole tile");
        return;
      }
      double value = v.kind == Val::Kind::ConstInt ? double(v.intValue) : v.floatValue;
      region.setPadAttr(builder.getF64FloatAttr(value));
    }
    tile::CopyOp::create(builder, l, src, dst);
    return;
  }
  if (callee == "fill") {
    if (!checkArgs(call, 2, 2, {}, "target, value"))
      return;
    Value dst = tileOperand(*call.args[0], "the target of fill()");
    Val v = expr(*call.args[1]);
    if (!dst || v.isPoison())
      return;
    if (!v.isScalar()) {
      error(call.args[1]->getRange(), "fill() value must be a scalar, got " +
                                          describeVal(v));
      return;
    }
    Value element = toElement(v, tile::getElementTypeOf(dst.getType()),
                              *call.args[1]);
    if (element)
      tile::FillOp::create(builder, l, dst, element);
    return;
  }
  if (callee == "gemm") {
    if (!checkArgs(call, 3, 3, {"transpose_a", "transpose_b", "clear", "policy"},
                   "a, b, c"))
      return;
    Value a = tileOperand(*call.args[0], "operand A of gemm()");
    Value b = tileOperand(*call.args[1], "operand B of gemm()");
    Value c = tileOperand(*call.args[2], "accumulator C of gemm()");
    bool flags[3] = {false, false, false};
    const char *names[3] = {"transpose_a", "transpose_b", "clear"};
    for (int i = 0; i < 3; ++i)
      if (const KeywordArg *kw = keyword(call, names[i])) {
        auto v = constBool(*kw->value, names[i]);
        if (!v)
          return;
        flags[i] = *v;
      }
    tile::GemmPolicy policy = tile::GemmPolicy::Square;
    if (const KeywordArg *kw = keyword(call, "policy")) {
      auto *n = llvm::dyn_cast<NameExpr>(kw->value.get());
      auto parsed = n ? tile::symbolizeGemmPolicy(n->name) : std::nullopt;
      if (!parsed) {
        error(kw->value->getRange(),
              "policy must be square, full_row or full_col");
        return;
      }
      policy = *parsed;
    }
    if (!a || !b || !c)
      return;
    auto op = tile::GemmOp::create(builder, l, a, b, c);
    op.setTransposeA(flags[0]);
    op.setTransposeB(flags[1]);
    op.setClear(flags[2]);
    op.setPolicy(policy);
    return;
  }
  if (callee == "reduce_sum" || callee == "reduce_max" || callee == "reduce_min") {
    if (!checkArgs(call, 2, 2, {"dim", "clear"}, "source, target"))
      return;
    Value src = tileOperand(*call.args[0], "the source of " + callee.str() + "()");
    Value dst = tileOperand(*call.args[1], "the target of " + callee.str() + "()");
    if (!src || !dst)
      return;
    int64_t rank = tile::getShapeOf(src.getType()).size();
    int64_t dim = rank - 1;
    bool clear = true;
    if (const KeywordArg *kw = keyword(call, "dim")) {
      auto v = constInt(*kw->value, "the reduction dim");
      if (!v)
        return;
      if (*v < -rank || *v >= rank) {
        error(kw->value->getRange(), "reduction dim " + llvm::Twine(*v) +
                                         " is out of range for a " +
                                         llvm::Twine(rank) + "-d source");
        return;
      }
      dim = *v < 0 ? *v + rank : *v;
    }
    if (const KeywordArg *kw = keyword(call, "clear")) {
      auto v = constBool(*kw->value, "clear");
      if (!v)
        return;
      clear = *v;
    }
    auto kind = callee == "reduce_sum"   ? tile::ReduceKind::Sum
                : callee == "reduce_max" ? tile::ReduceKind::Max
                                         : tile::ReduceKind::Min;
    auto op = tile::ReduceOp::create(builder, l, kind, src, dst, dim);
    op.setClear(clear);
    return;
  }
  if (callee == "atomic_add" || callee == "atomic_max" || callee == "atomic_min") {
    // atomic_add is tile.atomic_add (it goes through the atomic strategies); max and min are tile.atomic_rmw.
    std::optional<tile::AtomicRmwKind> kind;
    if (callee != "atomic_add")
      kind = callee == "atomic_max" ? tile::AtomicRmwKind::Max : tile::AtomicRmwKind::Min;
    auto build = [&](Value value, Value dst, ValueRange indices, tile::MemoryOrder order) {
      if (kind) {
        auto op = tile::AtomicRmwOp::create(builder, l, *kind, value, dst, indices);
        op.setOrder(order);
      } else {
        auto op = tile::AtomicAddOp::create(builder, l, value, dst, indices);
        op.setOrder(order);
      }
    };
    if (!checkArgs(call, 2, 2, {"order"}, "destination, value"))
      return;
    tile::MemoryOrder order = tile::MemoryOrder::Relaxed;
    if (const KeywordArg *kw = keyword(call, "order")) {
      auto *n = llvm::dyn_cast<NameExpr>(kw->value.get());
      auto parsed = n ? tile::symbolizeMemoryOrder(n->name) : std::nullopt;
      if (!parsed) {
        error(kw->value->getRange(),
              "order must be relaxed, release, acq_rel or seq_cst");
        return;
      }
      order = *parsed;
    }
    // dst[i, j] with plain indices and a scalar value: the element form.
    auto *idx = llvm::dyn_cast<IndexExpr>(call.args[0].get());
    if (idx && !idx->hasSlices()) {
      const Binding *b = lookup(idx->base);
      Val v = expr(*call.args[1]);
      if (!b) {
        error(idx->baseRange, "use of undeclared name '" + idx->base + "'");
        return;
      }
      if (b->val.isPoison() || v.isPoison())
        return;
      if (v.isBoolLike()) {
        error(call.args[1]->getRange(),
              callee + "() " + (kind ? "takes" : "adds") + " a number, got " +
                  describeVal(v));
        return;
      }
      if (v.isScalar()) {
        if (!b->val.isBuffer()) {
          error(idx->baseRange, "'" + idx->base + "' is " +
                                    describeVal(b->val) + ", not a tensor");
          return;
        }
        auto type = cast<MemRefType>(b->val.value.getType());
        if (idx->subscripts.size() != static_cast<size_t>(type.getRank())) {
          error(idx->getRange(), "'" + idx->base + "' has " +
                                     llvm::Twine(type.getRank()) +
                                     " dimensions but " +
                                     llvm::Twine(idx->subscripts.size()) +
                                     " indices were given");
          return;
        }
        std::optional<SmallVector<Value>> indices = integerIndices(idx->subscripts, "index");
        if (!indices)
          return;
        Type element = type.getElementType();
        Value value = isa<FloatType>(element) ? toF32(v, call.args[1]->getLoc())
                                              : toElement(v, element, *call.args[1]);
        if (!value)
          return;
        build(value, b->val.value, *indices, order);
        return;
      }
    }
    Value dst = tileOperand(*call.args[0], ("the destination of " + callee + "()").str());
    Value src = tileOperand(*call.args[1], ("the value of " + callee + "()").str());
    if (!dst || !src)
      return;
    build(src, dst, ValueRange{}, order);
    return;
  }
  if (isValueBuiltin(callee)) {
    error(call.getRange(), "the result of " + callee + "() is unused");
    return;
  }
  error(call.calleeRange, "unknown function '" + callee + "'");
}
