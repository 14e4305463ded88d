// tile-legalize-atomics: decides how every tile.atomic_add is realised
// (exclusive read-modify-write, f32 workspace, deterministic split + sum, or
// native) and turns every user kernel into a launch plan (tile.entry).
// tile.atomic_rmw (max, min) is exact in any order and stays as written.
#include "AtomicKernels.h"
#include "tilec/Dialect/Tile/IR/TileOps.h"
#include "tilec/Transforms/AtomicConflictAnalysis.h"
#include "tilec/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

namespace tilec {
#define GEN_PASS_DEF_LEGALIZEATOMICS
#include "tilec/Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;
using namespace tilec::tile;

namespace {

using Strategy = AtomicsStrategy;
enum class Storage { Native, F32Workspace, Split };

/// Everything decided about one destination argument of a kernel.
struct Destination {
  unsigned arg = 0;
  std::string name;
  SmallVector<AtomicAddOp> sites;
  AtomicConflict conflict;
  Storage storage = Storage::Native;
  bool exclusive = false;
  // Split partial slices updated at most once per element (the op does not repeat within a block): plain stores.
  bool writeOnce = false;
  // ... and the blocks together write every element of every slice: the partial buffer needs no zeroing.
  bool covered = false;
  // ... and the last block to finish a destination tile adds the slices into it (no separate sum kernel): the
  // kernel gains the destination and an arrival counter per tile as arguments.
  bool lastBlockSum = false;
  unsigned dstArg = 0, counterArg = 0;
  bool sharesCounter = false; // counterArg is an earlier destination's (one arrival for both)
  int64_t splits = 1;
  std::string why;   // the strategy part of the remark, before kernel names
  std::string pre, post; // generated kernels (names)
};

std::string argName(KernelOp kernel, unsigned i) {
  auto names = kernel->getAttrOfType<ArrayAttr>("tile.arg_names");
  if (names && i < names.size())
    if (auto s = dyn_cast<StringAttr>(names[i]))
      return s.str();
  return "#" + std::to_string(i);
}

std::string typeText(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

std::string opName(Operation *op) {
  return op->getName().getStringRef().str();
}

/// Why the uses of destination `arg` keep it from being replaced by an f32
/// workspace (`forSplit`: by a partial buffer that only atomics may touch);
/// empty when nothing does.
std::string replacementBlocker(Value arg, bool forSplit) {
  auto allowed = [&](Operation *user, Value used) {
    if (auto a = dyn_cast<AtomicAddOp>(user))
      return a.getDest() == used;
    return !forSplit && isa<CopyOp>(user);
  };
  for (Operation *user : arg.getUsers()) {
    if (isa<memref::DimOp>(user) || allowed(user, arg))
      continue;
    if (auto region = dyn_cast<RegionOp>(user)) {
      for (Operation *inner : region->getUsers())
        if (!allowed(inner, region))
          return "it is also accessed by '" + opName(inner) + "'";
      continue;
    }
    return "it is also accessed by '" + opName(user) + "'";
  }
  return "";
}

class KernelLegalizer {
public:
  KernelLegalizer(ModuleOp module, KernelOp kernel, Strategy strategy,
                  int64_t maxSplit, bool deterministic)
      : module(module), kernel(kernel), strategy(strategy),
        maxSplit(maxSplit), deterministic(deterministic) {}

  LogicalResult run();

private:
  void decide(Destination &d);
  std::string uniqueName(const std::string &base);
  void retypeToF32(Destination &d);
  void retypeToSplit(Destination &d);
  void buildEntry(StringRef userName, FunctionType userType,
                  ArrayRef<NamedAttribute> userAttrs,
                  ArrayRef<Destination *> replaced);

  ModuleOp module;
  KernelOp kernel;
  Strategy strategy;
  int64_t maxSplit;
  bool deterministic;
  std::string mainName;
  // The grid's (argument, axis) bindings before split shifted any (the user's arguments' axes).
  SmallVector<int64_t> userGridOperands;
};

std::string KernelLegalizer::uniqueName(const std::string &base) {
  std::string name = base;
  for (int i = 1; SymbolTable::lookupSymbolIn(module, name); ++i)
    name = base + "_" + std::to_string(i);
  return name;
}

void KernelLegalizer::decide(Destination &d) {
  Value arg = kernel.getArgument(d.arg);
  Type elem = cast<MemRefType>(arg.getType()).getElementType();
  bool isFloat = isa<FloatType>(elem);
  bool narrow = elem.isBF16() || elem.isF16();
  bool workspaceable = (narrow || elem.isF32()) &&
                       cast<MemRefType>(arg.getType()).getRank() >= 1;
  std::string f32Blocker = replacementBlocker(arg, /*forSplit=*/false);
  if (d.sites.size() > 1) {
    d.conflict = AtomicConflict();
    d.conflict.kind = AtomicConflict::Kind::Unsplittable;
    d.conflict.reason = "'" + d.name + "' is updated by " +
                        std::to_string(d.sites.size()) +
                        " atomic_add ops, and collisions between different "
                        "ops are not analysed";
    d.conflict.repeats = true;
  } else {
    d.conflict = analyzeAtomicConflict(d.sites.front(), kernel, maxSplit);
  }
  std::string dtype = typeText(elem);

  if (!isFloat) {
    d.exclusive = d.conflict.kind == AtomicConflict::Kind::Exclusive;
    d.why = d.exclusive ? "plain read-modify-write in " + dtype
                        : "integer additions are exact in any order: " +
                              dtype + " atomics in place";
    return;
  }
  if (d.conflict.kind == AtomicConflict::Kind::Exclusive) {
    d.exclusive = true;
    if (narrow && workspaceable && d.conflict.repeats &&
        strategy != Strategy::Native && f32Blocker.empty()) {
      d.storage = Storage::F32Workspace;
      d.why = "the op repeats within a block, so it accumulates with plain "
              "read-modify-writes into an f32 workspace";
    } else {
      d.why = "plain read-modify-write in " + dtype;
    }
    return;
  }
  std::string fallback;
  if (strategy == Strategy::Split) {
    std::string splitBlocker = replacementBlocker(arg, /*forSplit=*/true);
    if (d.conflict.kind == AtomicConflict::Kind::ConstantSplit &&
        workspaceable && splitBlocker.empty()) {
      d.storage = Storage::Split;
      d.exclusive = true;
      d.splits = d.conflict.splitExtent;
      // Only this op writes the partial buffer; when it runs once per
      // block, each element gets one update, so the update is a store (no
      // read of the zeros), and where the grid provably writes every
      // element, the zeros are not needed either.
      d.writeOnce = !d.conflict.repeats;
      d.covered = d.writeOnce &&
                  splitSlicesCovered(d.sites.front(), kernel, d.conflict);
      d.lastBlockSum = d.covered;
      d.why = "split: each of the " + std::to_string(d.splits) +
              " splits updates its own slice of " +
              (d.covered ? "an f32 partial buffer, not zeroed because "
                           "every element is written, "
                         : "a zeroed f32 partial buffer ") +
              "with " +
              (d.writeOnce ? "plain stores (each element is written once)"
                           : "plain read-modify-writes");
      return;
    }
    if (!workspaceable)
      fallback = "split does not handle " + dtype + " destinations";
    else if (d.conflict.kind == AtomicConflict::Kind::ConstantSplit)
      fallback = "split is not possible because " + splitBlocker;
    else
      fallback = "split is not possible";
  }
  if (strategy != Strategy::Native && narrow && workspaceable &&
      f32Blocker.empty()) {
    d.storage = Storage::F32Workspace;
    d.why = "fp32: f32 atomics into an f32 workspace";
  } else if (strategy != Strategy::Native && narrow) {
    d.why = "fp32 is not possible because " +
            (workspaceable ? f32Blocker : std::string("it has rank 0")) +
            ", so " + dtype + " atomics in place";
  } else {
    d.why = (strategy == Strategy::Native ? "native: " : "") + dtype +
            " atomics in place";
  }
  if (!fallback.empty())
    d.why = fallback + ", so " + d.why;
}

void KernelLegalizer::retypeToF32(Destination &d) {
  BlockArgument arg = kernel.getArgument(d.arg);
  auto old = cast<MemRefType>(arg.getType());
  Type f32 = Float32Type::get(kernel.getContext());
  arg.setType(MemRefType::get(old.getShape(), f32, old.getLayout(),
                              old.getMemorySpace()));
  for (Operation *user : arg.getUsers())
    if (auto region = dyn_cast<RegionOp>(user)) {
      RegionType t = region.getType();
      region.getResult().setType(
          RegionType::get(t.getContext(), t.getShape(), f32, t.getSpace()));
    }
}

void KernelLegalizer::retypeToSplit(Destination &d) {
  BlockArgument arg = kernel.getArgument(d.arg);
  auto old = cast<MemRefType>(arg.getType());
  Type f32 = Float32Type::get(kernel.getContext());
  SmallVector<int64_t> shape = {d.splits};
  shape.append(old.getShape().begin(), old.getShape().end());
  arg.setType(getTileMemRefType(shape, f32, MemorySpace::Global));
  // Grid extents bound to the destination's dims now read the partial
  // buffer's, one axis further.
  SmallVector<int64_t> gridOperands(kernel.getGridOperands());
  for (size_t i = 0; i + 1 < gridOperands.size(); i += 2)
    if (gridOperands[i] == d.arg)
      ++gridOperands[i + 1];
  kernel.setGridOperands(gridOperands);
  // The argument's shape in terms of named dims gains the split extent.
  if (auto shapes = kernel->getAttrOfType<ArrayAttr>("tile.arg_shapes"))
    if (d.arg < shapes.size())
      if (auto map = dyn_cast<AffineMapAttr>(shapes[d.arg])) {
        SmallVector<AffineExpr> results = {
            getAffineConstantExpr(d.splits, kernel.getContext())};
        llvm::append_range(results, map.getValue().getResults());
        SmallVector<Attribute> updated(shapes.begin(), shapes.end());
        updated[d.arg] = AffineMapAttr::get(
            AffineMap::get(map.getValue().getNumDims(),
                           map.getValue().getNumSymbols(), results,
                           kernel.getContext()));
        kernel->setAttr("tile.arg_shapes",
                        ArrayAttr::get(kernel.getContext(), updated));
      }

  // The split index, from the colliding block indices (first one fastest).
  OpBuilder b(kernel.getContext());
  b.setInsertionPointToStart(&kernel.getBodyBlock());
  Location loc = d.sites.front().getLoc();
  Value index;
  int64_t stride = 1;
  for (const GridCollision &c : d.conflict.collisions) {
    int64_t e = *c.splitExtent();
    Value term = kernel.getBlockIndex(c.blockIndex);
    if (!c.gridExtent || e < *c.gridExtent)
      term = arith::RemSIOp::create(
          b, loc, term, arith::ConstantIndexOp::create(b, loc, e));
    if (stride != 1)
      term = arith::MulIOp::create(
          b, loc, term, arith::ConstantIndexOp::create(b, loc, stride));
    index = index ? arith::AddIOp::create(b, loc, index, term).getResult()
                  : term;
    stride *= e;
  }

  for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
    if (auto dim = dyn_cast<memref::DimOp>(user)) {
      OpBuilder db(dim);
      Value next = arith::AddIOp::create(
          db, dim.getLoc(), dim.getIndex(),
          arith::ConstantIndexOp::create(db, dim.getLoc(), 1));
      dim.getIndexMutable().assign(next);
    } else if (auto region = dyn_cast<RegionOp>(user)) {
      OpBuilder rb(region);
      SmallVector<Value> offsets = {index};
      offsets.append(region.getOffsets().begin(), region.getOffsets().end());
      SmallVector<int64_t> sizes = {1};
      sizes.append(region.getSizes().begin(), region.getSizes().end());
      auto slice = RegionOp::create(rb, region.getLoc(), arg, offsets, sizes);
      if (auto pad = region.getPadAttr())
        slice.setPadAttr(pad);
      region.getResult().replaceAllUsesWith(slice.getResult());
      region.erase();
    } else if (auto atomic = dyn_cast<AtomicAddOp>(user)) {
      if (atomic.isElementForm()) {
        SmallVector<Value> indices = {index};
        indices.append(atomic.getIndices().begin(), atomic.getIndices().end());
        atomic.getIndicesMutable().assign(indices);
        continue;
      }
      // Region form into the whole tensor (`atomic_add(Y, t)`): into this block's slice of the partial buffer,
      // a region of the tensor's extents (static ones, else the tile's, which the op says are the same).
      SmallVector<int64_t> extents(old.getShape().begin(), old.getShape().end());
      if (ShapedType::isDynamicShape(extents)) {
        ArrayRef<int64_t> valueShape = isa<MemRefType>(atomic.getValue().getType())
                                           ? cast<MemRefType>(atomic.getValue().getType()).getShape()
                                           : cast<RegionType>(atomic.getValue().getType()).getShape();
        if (valueShape.size() != extents.size()) {
          atomic.emitError("split cannot slice a whole-tensor atomic_add whose tile has another rank than the "
                           "tensor's dynamic shape; give the destination as a region");
          continue;
        }
        for (auto [e, v] : llvm::zip(extents, valueShape))
          if (ShapedType::isDynamic(e))
            e = v;
      }
      OpBuilder rb(atomic);
      Value zero = arith::ConstantIndexOp::create(rb, atomic.getLoc(), 0);
      SmallVector<Value> offsets(extents.size() + 1, zero);
      offsets[0] = index;
      SmallVector<int64_t> sizes = {1};
      sizes.append(extents.begin(), extents.end());
      auto slice = RegionOp::create(rb, atomic.getLoc(), arg, offsets, sizes);
      atomic.getDestMutable().assign(slice.getResult());
    }
  }
}

void KernelLegalizer::buildEntry(StringRef userName, FunctionType userType,
                                 ArrayRef<NamedAttribute> userAttrs,
                                 ArrayRef<Destination *> replaced) {
  OpBuilder b(kernel.getContext());
  b.setInsertionPointAfter(kernel);
  Location loc = kernel.getLoc();
  auto entry = EntryOp::create(b, loc, userName, userType);
  for (NamedAttribute attr : userAttrs)
    entry->setAttr(attr.getName(), attr.getValue());
  b.setInsertionPointToStart(&entry.getBodyBlock());
  SmallVector<Value> args(entry.getBodyBlock().getArguments());
  SmallVector<Value> launchArgs(args);
  SmallVector<Value> buffers;
  llvm::DenseMap<int64_t, Value> constants;
  auto constant = [&](int64_t v) {
    Value &c = constants[v];
    if (!c)
      c = arith::ConstantIndexOp::create(b, loc, v);
    return c;
  };
  for (Destination *d : replaced) {
    Value dst = args[d->arg];
    auto dstType = cast<MemRefType>(dst.getType());
    SmallVector<Value> sizes;
    for (int64_t i = 0; i < dstType.getRank(); ++i)
      if (dstType.isDynamicDim(i))
        sizes.push_back(memref::DimOp::create(b, loc, dst, constant(i)));
    auto type = cast<MemRefType>(kernel.getArgument(d->arg).getType());
    bool split = d->storage == Storage::Split;
    Value ws = WorkspaceOp::create(b, loc, type, sizes, /*zeroed=*/split && !d->covered);
    if (!split)
      LaunchOp::create(b, loc, d->pre, ValueRange{dst, ws});
    launchArgs[d->arg] = ws;
    buffers.push_back(ws);
  }
  // Last-block sums: the destination and a zeroed counter per block of the grid (counted from the user's
  // arguments, which the plan knows the dims of).
  SmallVector<Value> counterBuffers;
  for (Destination *d : replaced) {
    if (!d->lastBlockSum)
      continue;
    launchArgs.resize(std::max<size_t>(launchArgs.size(), std::max(d->dstArg, d->counterArg) + 1));
    launchArgs[d->dstArg] = args[d->arg];
    if (d->sharesCounter)
      continue;
    SmallVector<Value> extents = gridExtentValues(b, loc, kernel, userGridOperands, [&](int64_t arg, int64_t axis) {
      return memref::DimOp::create(b, loc, args[arg], constant(axis)).getResult();
    });
    Value blocks = constant(1);
    for (Value e : extents)
      blocks = arith::MulIOp::create(b, loc, blocks, e);
    auto counterType = cast<MemRefType>(kernel.getArgument(d->counterArg).getType());
    Value counters = WorkspaceOp::create(b, loc, counterType, ValueRange{blocks}, /*zeroed=*/true);
    launchArgs[d->counterArg] = counters;
    counterBuffers.push_back(counters);
  }
  LaunchOp::create(b, loc, mainName, launchArgs);
  for (auto [d, ws] : llvm::zip(replaced, buffers)) {
    if (!d->post.empty())
      LaunchOp::create(b, loc, d->post, ValueRange{ws, args[d->arg]});
    FreeOp::create(b, loc, ws);
  }
  for (Value counters : counterBuffers)
    FreeOp::create(b, loc, counters);
}

LogicalResult KernelLegalizer::run() {
  std::string userName = kernel.getSymName().str();
  FunctionType userType = kernel.getFunctionType();
  userGridOperands.assign(kernel.getGridOperands().begin(), kernel.getGridOperands().end());
  // The arguments' shapes over the named dims, before split prepends its extent to any.
  ArrayAttr userShapes = kernel->getAttrOfType<ArrayAttr>("tile.arg_shapes");
  // The user's view of the signature, for the entry (the main kernel's
  // shapes change with split).
  SmallVector<NamedAttribute> userAttrs;
  for (StringRef name : {"tile.arg_names", "tile.arg_shapes", "tile.dim_names"})
    if (Attribute a = kernel->getAttr(name))
      userAttrs.push_back(NamedAttribute(
          StringAttr::get(kernel.getContext(), name), a));

  // Atomic sites, grouped by the kernel argument they update.
  llvm::MapVector<unsigned, Destination> dests;
  SmallVector<AtomicAddOp> local;
  kernel.walk([&](AtomicAddOp op) {
    std::optional<unsigned> arg = atomicDestinationArgument(op, kernel);
    if (!arg) {
      local.push_back(op);
      return;
    }
    Destination &d = dests[*arg];
    d.arg = *arg;
    d.name = argName(kernel, *arg);
    d.sites.push_back(op);
  });
  // max and min are exact and order-independent: no strategy, nothing to make deterministic. A destination that
  // also takes atomic_add keeps its own type (replacementBlocker sees the tile.atomic_rmw).
  kernel.walk([&](AtomicRmwOp op) {
    op.emitRemark() << "atomic_" << stringifyAtomicRmwKind(op.getKind()) << " into a "
                    << describeTile(op.getDest().getType())
                    << ": exact and independent of the order of updates, left as a native atomic";
  });
  bool failed = false;
  for (AtomicAddOp op : local) {
    // Block-local; only an element-form update inside tile.parallel can see
    // several iterations add into one element, in any order.
    bool inParallel = op->getParentOfType<ParallelOp>() != nullptr;
    if (deterministic && inParallel &&
        isa<FloatType>(getElementTypeOf(op.getDest().getType()))) {
      op.emitError() << "atomic_add into a "
                     << describeTile(op.getDest().getType())
                     << " cannot be made deterministic: it is inside a "
                        "tile.parallel loop, whose iterations may update the "
                        "same element in any order";
      failed = true;
      continue;
    }
    op.emitRemark() << "atomic_add into a "
                    << describeTile(op.getDest().getType())
                    << ": the block's own memory, left as written";
  }

  for (auto &[arg, d] : dests) {
    decide(d);
    bool nondeterministic =
        isa<FloatType>(getElementTypeOf(kernel.getArgument(arg).getType())) &&
        !d.exclusive;
    if (deterministic && nondeterministic) {
      for (AtomicAddOp site : d.sites)
        site.emitError() << "atomic_add into '" << d.name
                         << "' cannot be made deterministic: "
                         << d.conflict.reason;
      failed = true;
    }
  }
  if (failed)
    return failure();

  // Rename the kernel, then build what each destination needs.
  mainName = uniqueName(userName + "_main");
  kernel.setSymName(mainName);
  SmallVector<Destination *> replaced;
  // Last-block sums so far, for destinations written by the same groups of blocks to share one arrival.
  SmallVector<std::pair<Destination *, LastBlockSumArgs>> lastBlockSums;
  OpBuilder b(kernel);
  for (auto &[arg, d] : dests) {
    auto dstType = cast<MemRefType>(userType.getInput(arg));
    if (d.storage == Storage::F32Workspace) {
      retypeToF32(d);
      auto wsType = cast<MemRefType>(kernel.getArgument(arg).getType());
      d.pre = uniqueName(userName + "_" + d.name + "_to_f32");
      buildAtomicKernel(b, kernel.getLoc(), d.pre, AtomicKernelKind::ToF32,
                        dstType, wsType, 1, d.name);
      d.post = uniqueName(userName + "_" + d.name + "_from_f32");
      buildAtomicKernel(b, kernel.getLoc(), d.post, AtomicKernelKind::FromF32,
                        dstType, wsType, 1, d.name);
      replaced.push_back(&d);
    } else if (d.storage == Storage::Split) {
      retypeToSplit(d);
      if (d.lastBlockSum) {
        // Same splits and the same colliding block indices (with their periods): the same groups of blocks write
        // the tiles of both, so one arrival per block serves both (one counter, one acq_rel atomic and its
        // barriers fewer per block), and the last block sums both.
        const LastBlockSumArgs *sharing = nullptr;
        for (auto &[other, args] : lastBlockSums)
          if (other->splits == d.splits &&
              llvm::equal(other->conflict.collisions, d.conflict.collisions,
                          [](const GridCollision &x, const GridCollision &y) {
                            return x.blockIndex == y.blockIndex && x.period == y.period;
                          }))
            sharing = &args;
        LastBlockSumArgs added = addLastBlockSum(kernel, d.sites.front(), d.conflict, arg, d.name, d.splits, dstType,
                                                 userShapes, userGridOperands, sharing);
        d.dstArg = added.dstArg;
        d.counterArg = added.counterArg;
        d.sharesCounter = sharing != nullptr;
        if (!sharing)
          lastBlockSums.push_back({&d, added});
      } else {
        auto partType = cast<MemRefType>(kernel.getArgument(arg).getType());
        d.post = uniqueName(userName + "_" + d.name + "_sum");
        buildAtomicKernel(b, kernel.getLoc(), d.post, AtomicKernelKind::Sum,
                          dstType, partType, d.splits, d.name);
      }
      replaced.push_back(&d);
    }
    for (AtomicAddOp site : d.sites) {
      if (d.exclusive)
        site.setExclusive(true);
      if (d.writeOnce)
        site.setWriteOnce(true);
    }
    std::string kernels;
    if (d.storage == Storage::F32Workspace)
      kernels = " (@" + d.pre + " before, @" + d.post + " after)";
    else if (d.storage == Storage::Split && d.lastBlockSum)
      kernels = "; the last of the " + std::to_string(d.splits) + " blocks that write a tile of '" + d.name +
                "' adds the slices into it, in a fixed order";
    else if (d.storage == Storage::Split)
      kernels = ", and @" + d.post + " adds the slices into '" + d.name +
                "' in a fixed order";
    Type elem = getElementTypeOf(userType.getInput(arg));
    for (AtomicAddOp site : d.sites)
      site.emitRemark() << "atomic_add into '" << d.name << "' ("
                        << typeText(elem) << "): " << d.conflict.reason
                        << "; " << d.why << kernels;
  }
  SmallVector<Type> inputs;
  for (BlockArgument a :
       kernel.getBodyBlock().getArguments().take_front(kernel.getNumArguments()))
    inputs.push_back(a.getType());
  kernel.setFunctionType(FunctionType::get(kernel.getContext(), inputs, {}));
  buildEntry(userName, userType, userAttrs, replaced);
  return success();
}

struct LegalizeAtomics : tilec::impl::LegalizeAtomicsBase<LegalizeAtomics> {
  using LegalizeAtomicsBase::LegalizeAtomicsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Strategy s = strategy;
    if (deterministic && s != Strategy::Split) {
      module.emitError() << "tile-legalize-atomics: deterministic needs "
                            "strategy=split, got '"
                         << strategyName(s) << "'";
      return signalPassFailure();
    }
    if (maxSplit < 1) {
      module.emitError() << "tile-legalize-atomics: max-split must be at "
                            "least 1, got "
                         << static_cast<int64_t>(maxSplit);
      return signalPassFailure();
    }
    // User kernels: those no entry launches yet (the pass is idempotent).
    llvm::StringSet<> launched;
    module.walk([&](LaunchOp l) { launched.insert(l.getKernel()); });
    SmallVector<KernelOp> kernels;
    for (KernelOp k : module.getOps<KernelOp>())
      if (!launched.contains(k.getSymName()))
        kernels.push_back(k);
    bool failed = false;
    for (KernelOp k : kernels) {
      KernelLegalizer legalizer(module, k, s, maxSplit, deterministic);
      if (mlir::failed(legalizer.run()))
        failed = true;
    }
    if (failed)
      signalPassFailure();
  }
};

} // namespace
