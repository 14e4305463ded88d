// MLIRGen, statements: blocks, assignments, allocations, stores, tile operands and regions, `for` (range,
// parallel, pipelined) and `if`.
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
// Statements
//===----------------------------------------------------------------------===//

void MLIRGen::generateBlock(const Block &block) {
  for (auto &stmt : block) {
    if (diag.tooManyErrors())
      return;
    generateStmt(*stmt);
  }
}

void MLIRGen::generateStmt(const Stmt &stmt) {
  if (auto *a = llvm::dyn_cast<AssignStmt>(&stmt))
    return generateAssign(*a);
  if (auto *s = llvm::dyn_cast<StoreStmt>(&stmt))
    return generateStore(*s);
  if (auto *f = llvm::dyn_cast<ForStmt>(&stmt))
    return generateFor(*f);
  if (auto *i = llvm::dyn_cast<IfStmt>(&stmt))
    return generateIf(*i);
  if (llvm::isa<PassStmt>(&stmt))
    return;
  auto &e = llvm::cast<ExprStmt>(stmt);
  if (auto *call = llvm::dyn_cast<CallExpr>(e.expr.get()))
    return generateCallStmt(*call);
  error(e.expr->getRange(), "this expression has no effect; a statement is an "
                            "assignment, a call such as copy(...), or a loop");
}

void MLIRGen::generateAssign(const AssignStmt &stmt) {
  if (auto *alloc = llvm::dyn_cast<AllocExpr>(stmt.value.get())) {
    Val tile = generateAlloc(*alloc, stmt.name);
    define(stmt.name, tile, stmt.nameRange);
    return;
  }
  Val v = expr(*stmt.value);
  if (v.isBuffer()) {
    error(stmt.value->getRange(), "'" + stmt.name + "' would alias " +
                                      describeVal(v) +
                                      "; copy tiles with copy(src, dst)");
    v = Val::poison();
  }
  define(stmt.name, v, stmt.nameRange);
}

Val MLIRGen::generateAlloc(const AllocExpr &alloc, llvm::StringRef name) {
  Type element = dtype(alloc.dtype, alloc.dtypeRange);
  SmallVector<int64_t> shape;
  bool ok = element != nullptr;
  for (auto &d : alloc.dims) {
    auto n = constInt(*d, "a tile dimension");
    if (!n) {
      ok = false;
      continue;
    }
    if (*n <= 0) {
      error(d->getRange(), "tile dimension must be positive, got " +
                               llvm::Twine(*n));
      ok = false;
      continue;
    }
    shape.push_back(*n);
  }
  if (!ok)
    return Val::poison();
  // A tile lives on chip (or, on the CPU, in one allocation): anything near
  // 2 GiB is a mistake, and products past int64 must not wrap.
  constexpr int64_t kMaxTileBytes = int64_t(1) << 31;
  int64_t bytes = (element.getIntOrFloatBitWidth() + 7) / 8;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(bytes, d, &bytes) || bytes > kMaxTileBytes) {
      error(alloc.getRange(), "tile '" + name + "' is too large (more than 2 GiB)");
      return Val::poison();
    }
  auto space = llvm::StringSwitch<tile::MemorySpace>(alloc.space)
                   .Case("shared", tile::MemorySpace::Shared)
                   .Case("fragment", tile::MemorySpace::Fragment)
                   .Default(tile::MemorySpace::Local);
  auto op = tile::AllocOp::create(
      builder, NameLoc::get(builder.getStringAttr(name), loc(alloc.getLoc())),
      tile::getTileMemRefType(shape, element, space));
  Val v = Val::dynamic(Val::Kind::Tile, op.getResult());
  v.name = name.str();
  return v;
}

void MLIRGen::generateStore(const StoreStmt &stmt) {
  const IndexExpr &target = *stmt.target;
  const Binding *b = lookup(target.base);
  if (!b) {
    error(target.baseRange, "use of undeclared name '" + target.base + "'");
    return;
  }
  if (b->val.isPoison())
    return;
  if (b->val.kind == Val::Kind::Tensor) {
    error(target.getRange(), "tensor '" + target.base + "' cannot be written "
                             "element by element; use copy() or atomic_add()");
    return;
  }
  if (b->val.kind != Val::Kind::Tile) {
    error(target.baseRange, "'" + target.base + "' is " + describeVal(b->val) +
                                ", not a tile");
    return;
  }
  if (target.hasSlices()) {
    error(target.getRange(), "a store writes one element; use copy() or "
                             "fill() for a slice");
    return;
  }
  auto type = cast<MemRefType>(b->val.value.getType());
  if (target.subscripts.size() != static_cast<size_t>(type.getRank())) {
    error(target.getRange(), "tile '" + target.base + "' has " +
                                 llvm::Twine(type.getRank()) +
                                 " dimensions but " +
                                 llvm::Twine(target.subscripts.size()) +
                                 " indices were given");
    return;
  }
  std::optional<SmallVector<Value>> indices = integerIndices(target.subscripts, "tile index");
  if (!indices)
    return;
  Val value = expr(*stmt.value);
  if (value.isPoison())
    return;
  if (stmt.compound) {
    Val old = load(target);
    if (old.isPoison())
      return;
    value = binaryValues(*stmt.compound, old, value, *stmt.value);
    if (value.isPoison())
      return;
  }
  Value element = toElement(value, type.getElementType(), *stmt.value);
  if (!element)
    return;
  memref::StoreOp::create(builder, loc(stmt.getLoc()), element, b->val.value,
                          *indices);
}

Value MLIRGen::tileOperand(const Expr &e, llvm::StringRef role) {
  if (auto *n = llvm::dyn_cast<NameExpr>(&e)) {
    const Binding *b = lookup(n->name);
    if (!b) {
      error(e.getRange(), "use of undeclared name '" + n->name + "'");
      return {};
    }
    if (b->val.isPoison())
      return {};
    if (b->val.isBuffer())
      return b->val.value;
    error(e.getRange(), role + " must be a tile, a tensor or a slice of one; '" +
                            n->name + "' is " + describeVal(b->val));
    return {};
  }
  if (auto *idx = llvm::dyn_cast<IndexExpr>(&e)) {
    const Binding *b = lookup(idx->base);
    if (!b) {
      error(idx->baseRange, "use of undeclared name '" + idx->base + "'");
      return {};
    }
    if (b->val.isPoison())
      return {};
    if (!b->val.isBuffer()) {
      error(idx->baseRange, "'" + idx->base + "' is " + describeVal(b->val) +
                                " and cannot be sliced");
      return {};
    }
    return regionOf(*idx, b->val);
  }
  error(e.getRange(), role + " must be a tile, a tensor or a slice of one");
  return {};
}

Value MLIRGen::regionOf(const IndexExpr &index, const Val &base) {
  auto type = cast<MemRefType>(base.value.getType());
  if (index.subscripts.size() != static_cast<size_t>(type.getRank())) {
    error(index.getRange(), "'" + index.base + "' has " +
                                llvm::Twine(type.getRank()) +
                                " dimensions but " +
                                llvm::Twine(index.subscripts.size()) +
                                " subscripts were given");
    return {};
  }
  SmallVector<Value> offsets;
  SmallVector<int64_t> sizes;
  for (auto [d, s] : llvm::enumerate(index.subscripts)) {
    switch (s.kind) {
    case Subscript::Kind::Full: {
      if (type.isDynamicDim(d)) {
        error(s.range, "':' takes all of dimension " + llvm::Twine(d) +
                           " of '" + index.base +
                           "', which is known only at launch; write a slice "
                           "'start :+ length'");
        return {};
      }
      offsets.push_back(arith::ConstantIndexOp::create(builder, loc(s.range.Start), 0));
      sizes.push_back(type.getDimSize(d));
      break;
    }
    case Subscript::Kind::Index:
    case Subscript::Kind::Slice: {
      Val start = expr(*s.start);
      if (start.isPoison())
        return {};
      if (!start.isIntLike()) {
        error(s.start->getRange(), "index must be an integer, got " +
                                       describeVal(start));
        return {};
      }
      int64_t size = 1;
      if (s.kind == Subscript::Kind::Slice) {
        auto len = constInt(*s.length, "a slice length");
        if (!len)
          return {};
        if (*len <= 0) {
          error(s.length->getRange(), "slice length must be positive, got " +
                                          llvm::Twine(*len));
          return {};
        }
        size = *len;
      }
      offsets.push_back(toIndex(start, s.start->getLoc()));
      sizes.push_back(size);
      break;
    }
    }
  }
  return tile::RegionOp::create(builder, loc(index.getLoc()), base.value,
                                offsets, sizes);
}

void MLIRGen::generateFor(const ForStmt &stmt) {
  const CallExpr &iter = *stmt.iter;
  Location l = loc(stmt.getLoc());
  OpBuilder::InsertionGuard guard(builder);
  if (iter.callee == "parallel") {
    if (!checkArgs(iter, 1, 8, {}, "extents..."))
      return;
    if (iter.args.size() != stmt.vars.size()) {
      error(iter.getRange(), "parallel() has " + llvm::Twine(iter.args.size()) +
                                 " extents but the loop names " +
                                 llvm::Twine(stmt.vars.size()) + " variables");
      return;
    }
    SmallVector<int64_t> extents;
    for (auto &a : iter.args) {
      auto e = constInt(*a, "a parallel() extent");
      if (!e)
        return;
      if (*e <= 0) {
        error(a->getRange(), "parallel() extent must be positive, got " +
                                 llvm::Twine(*e));
        return;
      }
      extents.push_back(*e);
    }
    auto op = tile::ParallelOp::create(builder, l, extents);
    builder.setInsertionPointToStart(&op.getBodyBlock());
    pushScope();
    for (auto [i, v] : llvm::enumerate(stmt.vars))
      define(v.first, Val::dynamic(Val::Kind::Int, op.getInductionVars()[i]),
             v.second);
    ++loopDepth;
    generateBlock(stmt.body);
    --loopDepth;
    popScope();
    return;
  }
  if (iter.callee == "pipelined" || iter.callee == "range") {
    bool pipelined = iter.callee == "pipelined";
    if (pipelined ? !checkArgs(iter, 2, 2, {"stages"}, "lower, upper")
                  : !checkArgs(iter, 1, 3, {}, "[lower,] upper[, step]"))
      return;
    if (stmt.vars.size() != 1) {
      error(stmt.vars[1].second, iter.callee + "() loops have one variable");
      return;
    }
    SmallVector<Value> bounds;
    for (auto &a : iter.args) {
      Val v = expr(*a);
      if (v.isPoison())
        return;
      if (!v.isIntLike()) {
        error(a->getRange(), "loop bound must be an integer, got " +
                                 describeVal(v));
        return;
      }
      bounds.push_back(toIndex(v, a->getLoc()));
    }
    Value iv;
    if (pipelined) {
      int64_t stages = 1;
      if (const KeywordArg *kw = keyword(iter, "stages")) {
        auto s = constInt(*kw->value, "the number of stages");
        if (!s)
          return;
        if (*s < 1) {
          error(kw->value->getRange(), "stages must be at least 1, got " +
                                           llvm::Twine(*s));
          return;
        }
        stages = *s;
      }
      auto op = tile::PipelinedOp::create(builder, l, bounds[0], bounds[1],
                                          stages);
      builder.setInsertionPointToStart(&op.getBodyBlock());
      iv = op.getInductionVar();
    } else {
      Value lower = bounds.size() == 1
                        ? arith::ConstantIndexOp::create(builder, l, 0)
                        : bounds[0];
      Value upper = bounds.size() == 1 ? bounds[0] : bounds[1];
      Value step = bounds.size() == 3
                       ? bounds[2]
                       : arith::ConstantIndexOp::create(builder, l, 1);
      if (bounds.size() == 3) {
        Val s = expr(*iter.args[2]);
        if (s.kind == Val::Kind::ConstInt && s.intValue <= 0) {
          error(iter.args[2]->getRange(), "range() step must be positive, got " +
                                              llvm::Twine(s.intValue));
          return;
        }
      }
      auto op = scf::ForOp::create(builder, l, lower, upper, step);
      builder.setInsertionPoint(op.getBody()->getTerminator());
      iv = op.getInductionVar();
    }
    pushScope();
    define(stmt.vars[0].first, Val::dynamic(Val::Kind::Int, iv),
           stmt.vars[0].second);
    ++loopDepth;
    generateBlock(stmt.body);
    --loopDepth;
    popScope();
    return;
  }
  error(iter.calleeRange, "expected parallel(...), pipelined(...) or "
                          "range(...), got '" + iter.callee + "'");
}

void MLIRGen::generateIf(const IfStmt &stmt) {
  Val cond = expr(*stmt.cond);
  if (cond.isPoison())
    return;
  if (!cond.isBoolLike()) {
    error(stmt.cond->getRange(), "condition must be a bool, got " +
                                     describeVal(cond));
    return;
  }
  if (cond.kind == Val::Kind::ConstBool) {
    // Known at compile time (e.g. `if causal:`): only the taken branch
    // exists, but the other is checked too, so that flipping a -D does not
    // reveal errors that were there all along.
    pushScope();
    generateBlock(cond.boolValue ? stmt.thenBody : stmt.elseBody);
    popScope();
    checkOnly([&] { generateBlock(cond.boolValue ? stmt.elseBody : stmt.thenBody); });
    return;
  }
  OpBuilder::InsertionGuard guard(builder);
  auto op = scf::IfOp::create(builder, loc(stmt.getLoc()), cond.value,
                              /*withElseRegion=*/!stmt.elseBody.empty());
  builder.setInsertionPoint(op.thenBlock()->getTerminator());
  pushScope();
  generateBlock(stmt.thenBody);
  popScope();
  if (!stmt.elseBody.empty()) {
    builder.setInsertionPoint(op.elseBlock()->getTerminator());
    pushScope();
    generateBlock(stmt.elseBody);
    popScope();
  }
}
