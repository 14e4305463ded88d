// tile-to-loops: tile-level kernels as sequential loop nests on plain memrefs,
// the reference semantics that the CPU backend executes.
#include "tilec/Dialect/Tile/IR/TileOps.h"
#include "tilec/Conversion/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

namespace tilec {
#define GEN_PASS_DEF_TILETOLOOPS
#include "tilec/Conversion/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec::tile;

namespace {

/// The memref type without the tile memory space (what the LLVM lowering
/// understands).
MemRefType plainType(MemRefType type) {
  return MemRefType::get(type.getShape(), type.getElementType(),
                         type.getLayout());
}

Value constIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// Converts a scalar between element types, rounding to nearest even.
Value convertScalar(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  auto fromF = dyn_cast<FloatType>(from), toF = dyn_cast<FloatType>(to);
  if (fromF && toF && fromF.getWidth() == toF.getWidth()) {
    // bf16 <-> f16: no single arith cast between two formats of one width. Widening to f32 is exact, so this
    // rounds once, as the GPU's conversion through float does.
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    return arith::TruncFOp::create(b, loc, to, wide).getResult();
  }
  if (fromF && toF)
    return fromF.getWidth() < toF.getWidth()
               ? arith::ExtFOp::create(b, loc, to, v).getResult()
               : arith::TruncFOp::create(b, loc, to, v).getResult();
  if (!fromF && toF)
    return from.isInteger(1) ? arith::UIToFPOp::create(b, loc, to, v).getResult()
                             : arith::SIToFPOp::create(b, loc, to, v).getResult();
  if (fromF && !toF)
    return arith::FPToSIOp::create(b, loc, to, v);
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  // A bool widens to 0 or 1, as it converts to 0.0 or 1.0 above and as the GPU's (int) does (sign extension made
  // true -1 here).
  if (fw < tw && from.isInteger(1))
    return arith::ExtUIOp::create(b, loc, to, v).getResult();
  return fw < tw ? arith::ExtSIOp::create(b, loc, to, v).getResult()
                 : arith::TruncIOp::create(b, loc, to, v).getResult();
}

Value zeroOf(OpBuilder &b, Location loc, Type t) {
  return arith::ConstantOp::create(b, loc, b.getZeroAttr(t));
}

/// A tile operand seen as a logical array: a whole memref, or a region (a
/// window of a base memref at offsets, with unit dims dropped and masked
/// accesses).
struct View {
  Value base;                       // converted (plain) memref
  SmallVector<int64_t> logicalShape; // shape of the tile operand's type
  // Regions only:
  bool masked = false;
  SmallVector<Value> offsets;       // one per base dim
  SmallVector<int64_t> sizes;       // one per base dim
  double pad = 0;

  Type elementType() const {
    return cast<MemRefType>(base.getType()).getElementType();
  }

  /// Base-memref indices of a logical index.
  SmallVector<Value> baseIndices(OpBuilder &b, Location loc,
                                 ValueRange logical) const {
    if (!masked)
      return llvm::to_vector(logical);
    SmallVector<Value> out;
    unsigned k = 0;
    for (auto [d, size] : llvm::enumerate(sizes)) {
      if (size == 1) {
        out.push_back(offsets[d]);
        continue;
      }
      out.push_back(arith::AddIOp::create(b, loc, offsets[d], logical[k++]));
    }
    return out;
  }

  /// Whether base indices fall inside the base memref (always for memrefs).
  Value inBounds(OpBuilder &b, Location loc, ValueRange idx) const {
    Value ok;
    for (auto [d, i] : llvm::enumerate(idx)) {
      Value dim = memref::DimOp::create(b, loc, base, static_cast<int64_t>(d));
      // Unsigned: a negative index is out of bounds too.
      Value c = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i, dim);
      ok = ok ? arith::AndIOp::create(b, loc, ok, c).getResult() : c;
    }
    return ok;
  }

  Value load(OpBuilder &b, Location loc, ValueRange logical) const {
    SmallVector<Value> idx = baseIndices(b, loc, logical);
    if (!masked)
      return memref::LoadOp::create(b, loc, base, idx);
    Type t = elementType();
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{t}, inBounds(b, loc, idx),
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      Value v = memref::LoadOp::create(b, loc, base, idx);
      scf::YieldOp::create(b, loc, v);
      b.setInsertionPointToStart(ifOp.elseBlock());
      Value p = isa<FloatType>(t)
                    ? arith::ConstantOp::create(b, loc, b.getFloatAttr(t, pad)).getResult()
                    : arith::ConstantOp::create(b, loc, b.getIntegerAttr(t, (int64_t)pad)).getResult();
      scf::YieldOp::create(b, loc, p);
    }
    return ifOp.getResult(0);
  }

  /// Calls `body(baseIndices)` where the element exists.
  void guarded(OpBuilder &b, Location loc, ValueRange logical,
               function_ref<void(ValueRange)> body) const {
    SmallVector<Value> idx = baseIndices(b, loc, logical);
    if (!masked) {
      body(idx);
      return;
    }
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, inBounds(b, loc, idx),
                                  /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    body(idx);
  }

  void store(OpBuilder &b, Location loc, Value v, ValueRange logical) const {
    guarded(b, loc, logical, [&](ValueRange idx) {
      memref::StoreOp::create(b, loc, v, base, idx);
    });
  }

  /// Logical index from an index over the squeezed shape (unit dims get 0).
  SmallVector<Value> expand(OpBuilder &b, Location loc,
                            ValueRange squeezed) const {
    SmallVector<Value> out;
    unsigned k = 0;
    for (int64_t e : logicalShape)
      out.push_back(e == 1 ? constIndex(b, loc, 0) : squeezed[k++]);
    return out;
  }
};

/// Emits a loop nest over `shape` and calls `body` with the induction
/// variables at the innermost level.
void loopNest(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
              function_ref<void(ValueRange)> body) {
  SmallVector<Value> ivs;
  OpBuilder::InsertionGuard g(b);
  Value zero = constIndex(b, loc, 0), one = constIndex(b, loc, 1);
  for (int64_t e : shape) {
    auto loop = scf::ForOp::create(b, loc, zero, constIndex(b, loc, e), one);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    ivs.push_back(loop.getInductionVar());
  }
  body(ivs);
}

class KernelLowering {
public:
  KernelLowering(KernelOp kernel) : kernel(kernel), b(kernel) {}

  LogicalResult run();

private:
  LogicalResult lowerBlock(Block &from);
  LogicalResult lowerOp(Operation &op);
  View viewOf(Value old);

  LogicalResult lowerCopy(CopyOp op);
  LogicalResult lowerFill(FillOp op);
  LogicalResult lowerGemm(GemmOp op);
  LogicalResult lowerReduce(ReduceOp op);
  /// tile.atomic_add (`kind` empty) and tile.atomic_rmw: one program runs each block, so a plain
  /// read-modify-write.
  LogicalResult lowerAtomic(Operation *op, Value value, Value dest, OperandRange indices,
                            std::optional<AtomicRmwKind> kind, bool writeOnce = false);

  KernelOp kernel;
  OpBuilder b;
  IRMapping map;
  /// Where tiles are allocated: the start of the block function, whatever loop or branch the tile.alloc is in (a
  /// tile lives until the end of the kernel, docs/language.md §7.2; the frees at the end must be dominated).
  Block *allocBlock = nullptr;
  Operation *lastAlloc = nullptr;
  DenseMap<Value, View> regions;
};

View KernelLowering::viewOf(Value old) {
  auto it = regions.find(old);
  if (it != regions.end())
    return it->second;
  View v;
  v.base = map.lookup(old);
  v.logicalShape = getShapeOf(old.getType());
  return v;
}

LogicalResult KernelLowering::run() {
  Location loc = kernel.getLoc();
  auto module = kernel->getParentOfType<ModuleOp>();
  SmallVector<Type> args;
  for (Type t : kernel.getFunctionType().getInputs())
    args.push_back(isa<MemRefType>(t) ? plainType(cast<MemRefType>(t)) : t);
  SmallVector<Type> blockArgs(args);
  for (unsigned i = 0; i < kernel.getGridRank(); ++i)
    blockArgs.push_back(b.getIndexType());

  // @k_block: one block.
  b.setInsertionPoint(kernel);
  auto blockFn = func::FuncOp::create(b, loc, (kernel.getSymName() + "_block").str(),
                                      b.getFunctionType(blockArgs, {}));
  blockFn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  Block *entry = blockFn.addEntryBlock();
  for (auto [from, to] : llvm::zip(kernel.getBodyBlock().getArguments(),
                                   entry->getArguments()))
    map.map(from, to);
  b.setInsertionPointToStart(entry);
  SmallVector<Value> allocs;
  // Tiles live for one block: allocated on entry, freed on exit.
  allocBlock = entry;
  lastAlloc = nullptr;
  if (failed(lowerBlock(kernel.getBodyBlock())))
    return failure();
  kernel.walk([&](AllocOp alloc) { allocs.push_back(map.lookup(alloc.getResult())); });
  for (Value a : allocs)
    memref::DeallocOp::create(b, loc, a);
  func::ReturnOp::create(b, loc);

  // @k: the whole grid, blocks in order.
  b.setInsertionPoint(kernel);
  auto gridFn = func::FuncOp::create(b, loc, kernel.getSymName(),
                                     b.getFunctionType(args, {}));
  gridFn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  Block *gridEntry = gridFn.addEntryBlock();
  b.setInsertionPointToStart(gridEntry);
  SmallVector<Value> symbols;
  for (unsigned i = 0; i < kernel.getGrid().getNumSymbols(); ++i) {
    auto [arg, dim] = kernel.getGridSymbol(i);
    symbols.push_back(memref::DimOp::create(b, loc, gridEntry->getArgument(arg), dim));
  }
  SmallVector<Value> extents = kernel.buildGridExtents(b, loc, symbols);
  SmallVector<Value> ivs;
  {
    OpBuilder::InsertionGuard g(b);
    Value zero = constIndex(b, loc, 0), one = constIndex(b, loc, 1);
    for (Value e : extents) {
      auto loop = scf::ForOp::create(b, loc, zero, e, one);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      ivs.push_back(loop.getInductionVar());
    }
    SmallVector<Value> callArgs(gridEntry->getArguments());
    callArgs.append(ivs);
    func::CallOp::create(b, loc, blockFn, callArgs);
  }
  func::ReturnOp::create(b, loc);
  (void)module;
  return success();
}

LogicalResult KernelLowering::lowerBlock(Block &from) {
  for (Operation &op : from)
    if (failed(lowerOp(op)))
      return failure();
  return success();
}

LogicalResult KernelLowering::lowerOp(Operation &op) {
  Location loc = op.getLoc();
  if (auto alloc = dyn_cast<AllocOp>(op)) {
    OpBuilder::InsertionGuard guard(b);
    if (lastAlloc)
      b.setInsertionPointAfter(lastAlloc);
    else
      b.setInsertionPointToStart(allocBlock);
    auto m = memref::AllocOp::create(b, loc, plainType(alloc.getType()));
    lastAlloc = m;
    map.map(alloc.getResult(), m.getResult());
    return success();
  }
  if (auto region = dyn_cast<RegionOp>(op)) {
    View v = viewOf(region.getSource());
    View r;
    r.base = v.base;
    r.masked = true;
    r.logicalShape = llvm::to_vector(region.getType().getShape());
    for (Value o : region.getOffsets())
      r.offsets.push_back(map.lookup(o));
    r.sizes = llvm::to_vector(region.getSizes());
    r.pad = region.getPad() ? region.getPad()->convertToDouble() : 0.0;
    if (v.masked) {
      // A region of a region is never produced; refuse rather than guess.
      return op.emitOpError("tile-to-loops: a region of a region is not supported");
    }
    regions[region.getResult()] = r;
    return success();
  }
  if (auto copy = dyn_cast<CopyOp>(op))
    return lowerCopy(copy);
  if (auto fill = dyn_cast<FillOp>(op))
    return lowerFill(fill);
  if (auto discard = dyn_cast<DiscardOp>(op)) {
    // Dead contents: NaN in every floating-point element, so that a read after the discard cannot pass unseen
    // (integers keep their values).
    View dst = viewOf(discard.getRegion());
    auto element = dyn_cast<FloatType>(dst.elementType());
    if (!element)
      return success();
    Value nan = arith::ConstantFloatOp::create(b, loc, element, APFloat::getQNaN(element.getFloatSemantics()));
    loopNest(b, loc, dst.logicalShape, [&](ValueRange ivs) { dst.store(b, loc, nan, ivs); });
    return success();
  }
  if (auto gemm = dyn_cast<GemmOp>(op))
    return lowerGemm(gemm);
  if (auto reduce = dyn_cast<ReduceOp>(op))
    return lowerReduce(reduce);
  if (auto atomic = dyn_cast<AtomicAddOp>(op))
    return lowerAtomic(&op, atomic.getValue(), atomic.getDest(), atomic.getIndices(), std::nullopt,
                       atomic.getWriteOnce());
  if (auto atomic = dyn_cast<AtomicRmwOp>(op))
    return lowerAtomic(&op, atomic.getValue(), atomic.getDest(), atomic.getIndices(), atomic.getKind());
  if (auto arrive = dyn_cast<ArriveLastOp>(op)) {
    // One program runs the blocks one after another: a plain count.
    Value counters = map.lookup(arrive.getCounters()), index = map.lookup(arrive.getIndex());
    Value old = memref::LoadOp::create(b, loc, counters, ValueRange{index});
    Value one = arith::ConstantIntOp::create(b, loc, 1, 32);
    memref::StoreOp::create(b, loc, arith::AddIOp::create(b, loc, old, one), counters, ValueRange{index});
    Value lastBefore = arith::ConstantIntOp::create(b, loc, arrive.getCount() - 1, 32);
    map.map(arrive.getLast(),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, old, lastBefore).getResult());
    return success();
  }
  if (auto par = dyn_cast<ParallelOp>(op)) {
    OpBuilder::InsertionGuard g(b);
    Value zero = constIndex(b, loc, 0), one = constIndex(b, loc, 1);
    for (auto [iv, e] : llvm::zip(par.getInductionVars(), par.getExtents())) {
      auto loop = scf::ForOp::create(b, loc, zero, constIndex(b, loc, e), one);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      map.map(iv, loop.getInductionVar());
    }
    return lowerBlock(par.getBodyBlock());
  }
  if (auto pipe = dyn_cast<PipelinedOp>(op)) {
    OpBuilder::InsertionGuard g(b);
    auto loop = scf::ForOp::create(b, loc, map.lookup(pipe.getLower()),
                                   map.lookup(pipe.getUpper()),
                                   constIndex(b, loc, 1));
    b.setInsertionPoint(loop.getBody()->getTerminator());
    map.map(pipe.getInductionVar(), loop.getInductionVar());
    return lowerBlock(pipe.getBodyBlock());
  }
  if (auto forOp = dyn_cast<scf::ForOp>(op)) {
    SmallVector<Value> inits;
    for (Value v : forOp.getInitArgs())
      inits.push_back(map.lookup(v));
    auto loop = scf::ForOp::create(b, loc, map.lookup(forOp.getLowerBound()),
                                   map.lookup(forOp.getUpperBound()),
                                   map.lookup(forOp.getStep()), inits);
    for (auto [from, to] : llvm::zip(forOp.getBody()->getArguments(),
                                     loop.getBody()->getArguments()))
      map.map(from, to);
    for (auto [from, to] : llvm::zip(forOp.getResults(), loop.getResults()))
      map.map(from, to);
    OpBuilder::InsertionGuard g(b);
    // The new loop's body holds a default yield only when it has no results.
    if (!loop.getBody()->empty())
      loop.getBody()->getTerminator()->erase();
    b.setInsertionPointToEnd(loop.getBody());
    return lowerBlock(*forOp.getBody());
  }
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    auto newIf = scf::IfOp::create(b, loc, ifOp.getResultTypes(),
                                   map.lookup(ifOp.getCondition()),
                                   /*withElseRegion=*/!ifOp.getElseRegion().empty());
    for (auto [from, to] : llvm::zip(ifOp.getResults(), newIf.getResults()))
      map.map(from, to);
    OpBuilder::InsertionGuard g(b);
    for (auto [from, to] : {std::pair<Region *, Region *>{&ifOp.getThenRegion(), &newIf.getThenRegion()},
                            {&ifOp.getElseRegion(), &newIf.getElseRegion()}}) {
      if (from->empty())
        continue;
      Block &toBlock = to->front();
      if (!toBlock.empty())
        toBlock.getTerminator()->erase();
      b.setInsertionPointToEnd(&toBlock);
      if (failed(lowerBlock(from->front())))
        return failure();
    }
    return success();
  }
  if (isa<memref::LoadOp, memref::StoreOp, memref::DimOp, scf::YieldOp>(op) ||
      op.getDialect()->getNamespace() == "arith" ||
      op.getDialect()->getNamespace() == "math") {
    if (op.getNumRegions() != 0)
      return op.emitOpError("tile-to-loops: unexpected region");
    b.clone(op, map);
    return success();
  }
  return op.emitOpError("tile-to-loops: cannot lower this op");
}

LogicalResult KernelLowering::lowerCopy(CopyOp op) {
  Location loc = op.getLoc();
  View src = viewOf(op.getSource()), dst = viewOf(op.getTarget());
  SmallVector<int64_t> shape = getSqueezedShape(src.logicalShape);
  loopNest(b, loc, shape, [&](ValueRange ivs) {
    Value v = src.load(b, loc, src.expand(b, loc, ivs));
    v = convertScalar(b, loc, v, dst.elementType());
    dst.store(b, loc, v, dst.expand(b, loc, ivs));
  });
  return success();
}

LogicalResult KernelLowering::lowerFill(FillOp op) {
  Location loc = op.getLoc();
  View dst = viewOf(op.getTarget());
  Value v = map.lookup(op.getValue());
  loopNest(b, loc, dst.logicalShape,
           [&](ValueRange ivs) { dst.store(b, loc, v, ivs); });
  return success();
}

LogicalResult KernelLowering::lowerGemm(GemmOp op) {
  Location loc = op.getLoc();
  View a = viewOf(op.getA()), bv = viewOf(op.getB()), c = viewOf(op.getC());
  bool ta = op.getTransposeA(), tb = op.getTransposeB();
  int64_t m = c.logicalShape[0], n = c.logicalShape[1];
  int64_t k = ta ? a.logicalShape[0] : a.logicalShape[1];
  Type f32 = b.getF32Type();
  loopNest(b, loc, {m, n}, [&](ValueRange ij) {
    Value init = op.getClear() ? zeroOf(b, loc, f32)
                               : convertScalar(b, loc, c.load(b, loc, ij), f32);
    auto loop = scf::ForOp::create(b, loc, constIndex(b, loc, 0),
                                   constIndex(b, loc, k), constIndex(b, loc, 1),
                                   ValueRange{init});
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(loop.getBody());
      Value kk = loop.getInductionVar();
      SmallVector<Value> ai = ta ? SmallVector<Value>{kk, ij[0]} : SmallVector<Value>{ij[0], kk};
      SmallVector<Value> bi = tb ? SmallVector<Value>{ij[1], kk} : SmallVector<Value>{kk, ij[1]};
      Value x = convertScalar(b, loc, a.load(b, loc, ai), f32);
      Value y = convertScalar(b, loc, bv.load(b, loc, bi), f32);
      Value prod = arith::MulFOp::create(b, loc, x, y);
      Value acc = arith::AddFOp::create(b, loc, loop.getRegionIterArg(0), prod);
      scf::YieldOp::create(b, loc, acc);
    }
    c.store(b, loc, convertScalar(b, loc, loop.getResult(0), c.elementType()), ij);
  });
  return success();
}

LogicalResult KernelLowering::lowerReduce(ReduceOp op) {
  Location loc = op.getLoc();
  View src = viewOf(op.getSource()), dst = viewOf(op.getTarget());
  int64_t dim = op.getDim();
  Type t = src.elementType();
  bool isFloat = isa<FloatType>(t);
  ReduceKind kind = op.getKind();
  // A sum of 16-bit floats is accumulated in f32 and rounded once, at the store, as on the GPU (docs/language.md
  // §9.4); rounding every partial sum to 16 bits would lose bits with every term.
  Type acc = kind == ReduceKind::Sum && isFloat && t.getIntOrFloatBitWidth() < 32 ? b.getF32Type() : t;
  Value identity;
  if (kind == ReduceKind::Sum) {
    identity = zeroOf(b, loc, acc);
  } else if (isFloat) {
    double inf = std::numeric_limits<double>::infinity();
    identity = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(t, kind == ReduceKind::Max ? -inf : inf));
  } else {
    unsigned w = t.getIntOrFloatBitWidth();
    APInt v = kind == ReduceKind::Max ? APInt::getSignedMinValue(w)
                                      : APInt::getSignedMaxValue(w);
    identity = arith::ConstantOp::create(b, loc, b.getIntegerAttr(t, v));
  }
  auto combine = [&](Value x, Value y) -> Value {
    switch (kind) {
    case ReduceKind::Sum:
      return isFloat ? arith::AddFOp::create(b, loc, x, y).getResult()
                     : arith::AddIOp::create(b, loc, x, y).getResult();
    case ReduceKind::Max:
      return isFloat ? arith::MaximumFOp::create(b, loc, x, y).getResult()
                     : arith::MaxSIOp::create(b, loc, x, y).getResult();
    case ReduceKind::Min:
      return isFloat ? arith::MinimumFOp::create(b, loc, x, y).getResult()
                     : arith::MinSIOp::create(b, loc, x, y).getResult();
    }
    llvm_unreachable("reduce kind");
  };
  loopNest(b, loc, dst.logicalShape, [&](ValueRange out) {
    // The slice is reduced on its own, then combined with the target's old contents (clear=false), as on the GPU.
    auto loop = scf::ForOp::create(b, loc, constIndex(b, loc, 0),
                                   constIndex(b, loc, src.logicalShape[dim]),
                                   constIndex(b, loc, 1), ValueRange{identity});
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> in(out.begin(), out.end());
      in.insert(in.begin() + dim, loop.getInductionVar());
      Value x = convertScalar(b, loc, src.load(b, loc, in), acc);
      scf::YieldOp::create(b, loc, combine(loop.getRegionIterArg(0), x));
    }
    Value result = loop.getResult(0);
    if (!op.getClear())
      result = combine(convertScalar(b, loc, dst.load(b, loc, out), acc), result);
    dst.store(b, loc, convertScalar(b, loc, result, dst.elementType()), out);
  });
  return success();
}

LogicalResult KernelLowering::lowerAtomic(Operation *op, Value value, Value dest, OperandRange indices,
                                          std::optional<AtomicRmwKind> kind, bool writeOnce) {
  Location loc = op->getLoc();
  View dst = viewOf(dest);
  Type t = dst.elementType();
  bool isFloat = isa<FloatType>(t);
  // dst = round(dst op value), computed in f32 for 16-bit floats. max and min are IEEE maximum / minimum (NaN in,
  // NaN out; -0.0 below +0.0), as on the GPU.
  Type acc = isFloat && t.getIntOrFloatBitWidth() < 32 ? b.getF32Type() : t;
  auto combine = [&](Value old, Value v) -> Value {
    if (!kind)
      return isFloat ? arith::AddFOp::create(b, loc, old, v).getResult()
                     : arith::AddIOp::create(b, loc, old, v).getResult();
    if (*kind == AtomicRmwKind::Max)
      return isFloat ? arith::MaximumFOp::create(b, loc, old, v).getResult()
                     : arith::MaxSIOp::create(b, loc, old, v).getResult();
    return isFloat ? arith::MinimumFOp::create(b, loc, old, v).getResult()
                   : arith::MinSIOp::create(b, loc, old, v).getResult();
  };
  auto update = [&](ValueRange idx, Value v) {
    // write_once: 0 + value, without reading the destination (a split slice that may not have been zeroed).
    Value old = writeOnce ? (isFloat ? arith::ConstantOp::create(b, loc, acc, b.getFloatAttr(acc, 0.0)).getResult()
                                     : arith::ConstantOp::create(b, loc, acc, b.getIntegerAttr(acc, 0)).getResult())
                          : convertScalar(b, loc, memref::LoadOp::create(b, loc, dst.base, idx), acc);
    Value result = combine(old, convertScalar(b, loc, v, acc));
    memref::StoreOp::create(b, loc, convertScalar(b, loc, result, t), dst.base, idx);
  };
  if (!indices.empty()) {
    // Element form on a buffer: bounds-checked like a region access.
    SmallVector<Value> idx;
    for (Value i : indices)
      idx.push_back(map.lookup(i));
    View checked = dst;
    checked.masked = true;
    Value ok = checked.inBounds(b, loc, idx);
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, ok, false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    update(idx, map.lookup(value));
    return success();
  }
  View src = viewOf(value);
  SmallVector<int64_t> shape = getSqueezedShape(src.logicalShape);
  loopNest(b, loc, shape, [&](ValueRange ivs) {
    Value v = src.load(b, loc, src.expand(b, loc, ivs));
    dst.guarded(b, loc, dst.expand(b, loc, ivs),
                [&](ValueRange idx) { update(idx, v); });
  });
  return success();
}

struct TileToLoops : tilec::impl::TileToLoopsBase<TileToLoops> {
  void runOnOperation() override {
    SmallVector<KernelOp> kernels;
    getOperation().walk([&](KernelOp k) { kernels.push_back(k); });
    for (KernelOp k : kernels) {
      KernelLowering lowering(k);
      if (failed(lowering.run()))
        return signalPassFailure();
      k->erase();
    }
    // What the conversion leaves: no op of the tile dialect but the host-side launch plans (tile.entry and the
    // plan ops in it, which the CPU runner reads before lowering and the GPU path never lowers here).
    ConversionTarget target(getContext());
    target.addLegalDialect<func::FuncDialect, scf::SCFDialect, memref::MemRefDialect, arith::ArithDialect,
                           math::MathDialect>();
    target.addIllegalDialect<TileDialect>();
    target.addLegalOp<EntryOp, WorkspaceOp, LaunchOp, FreeOp>();
    WalkResult left = getOperation().walk([&](Operation *op) {
      if (!target.isIllegal(op))
        return WalkResult::advance();
      op->emitError() << "tile-to-loops left '" << op->getName() << "' unconverted";
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
