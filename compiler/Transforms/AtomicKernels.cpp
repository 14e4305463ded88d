// The element-wise kernels of atomic legalization, built as tile IR so that
// every backend runs them like any other kernel.
#include "AtomicKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AffineExpr.h"

#include <algorithm>

using namespace mlir;
using namespace tilec::tile;

namespace tilec {

static Value constIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

KernelOp buildAtomicKernel(OpBuilder &b, Location loc, StringRef name,
                           AtomicKernelKind kind, MemRefType dstType,
                           MemRefType accType, int64_t splits,
                           StringRef dstName) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = dstType.getRank();
  ArrayRef<int64_t> shape = dstType.getShape();
  // Which argument is the destination, which the f32 side.
  bool dstFirst = kind == AtomicKernelKind::ToF32;
  unsigned dstArg = dstFirst ? 0 : 1, accArg = dstFirst ? 1 : 0;
  SmallVector<Type> inputs = dstFirst ? SmallVector<Type>{dstType, accType}
                                      : SmallVector<Type>{accType, dstType};

  // Chunks of the last dimension: at most 256 elements per block; and `rows` consecutive indices of the dimension
  // before it, so that a block moves kElementsPerBlock elements: these kernels are bound by memory bandwidth, which
  // wants many bytes in flight per SM, and one 128-element row per 128-thread block kept a quarter of the threads
  // busy (flash attention's dQ at d=128). Rows past the extent are dropped like any region's tail.
  constexpr int64_t kElementsPerBlock = 2048;
  int64_t last = shape[rank - 1];
  int64_t chunk = ShapedType::isDynamic(last) ? 256 : std::min<int64_t>(last, 256);
  int64_t rows = 1;
  if (rank >= 2) {
    rows = std::max<int64_t>(1, kElementsPerBlock / chunk);
    if (!ShapedType::isDynamic(shape[rank - 2]))
      rows = std::min<int64_t>(rows, shape[rank - 2]);
  }

  // Grid: one block per (chunk, group of rows), row-major, as one extent.
  SmallVector<std::pair<int64_t, int64_t>> gridDims;
  auto dimExpr = [&](int64_t d) -> AffineExpr {
    if (!ShapedType::isDynamic(shape[d]))
      return getAffineConstantExpr(shape[d], ctx);
    gridDims.push_back({dstArg, d});
    return getAffineSymbolExpr(gridDims.size() - 1, ctx);
  };
  AffineExpr extent = dimExpr(rank - 1).ceilDiv(chunk);
  for (int64_t d = rank - 2; d >= 0; --d)
    extent = (d == rank - 2 ? dimExpr(d).ceilDiv(rows) : dimExpr(d)) * extent;
  AffineMap grid = AffineMap::get(0, gridDims.size(), extent, ctx);

  auto kernel = KernelOp::create(b, loc, name, b.getFunctionType(inputs, {}),
                                 grid, gridDims, /*threads=*/128);
  std::string accName = (dstName + (kind == AtomicKernelKind::Sum ? "_partial" : "_f32")).str();
  SmallVector<Attribute> names(2);
  names[dstArg] = b.getStringAttr(dstName);
  names[accArg] = b.getStringAttr(accName);
  kernel->setAttr("tile.arg_names", b.getArrayAttr(names));

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&kernel.getBodyBlock());
  Value dst = kernel.getArgument(dstArg), acc = kernel.getArgument(accArg);
  auto dimValue = [&](int64_t d) -> Value {
    if (!ShapedType::isDynamic(shape[d]))
      return constIndex(b, loc, shape[d]);
    return memref::DimOp::create(b, loc, dst, d);
  };

  // Block index -> (row indices, chunk of the last dimension).
  Value x = kernel.getBlockIndex(0);
  Value chunks = arith::CeilDivSIOp::create(b, loc, dimValue(rank - 1),
                                            constIndex(b, loc, chunk));
  Value c = arith::RemSIOp::create(b, loc, x, chunks);
  Value row = arith::DivSIOp::create(b, loc, x, chunks);
  SmallVector<Value> offsets(rank);
  // Row-major over the leading dims; dim rank-2 counts groups of `rows`.
  for (int64_t d = rank - 2; d >= 0; --d) {
    if (d == 0) {
      offsets[0] = row;
    } else {
      Value e = d == rank - 2 ? arith::CeilDivSIOp::create(b, loc, dimValue(d), constIndex(b, loc, rows)).getResult()
                              : dimValue(d);
      offsets[d] = arith::RemSIOp::create(b, loc, row, e);
      row = arith::DivSIOp::create(b, loc, row, e);
    }
    if (d == rank - 2 && rows > 1)
      offsets[d] = arith::MulIOp::create(b, loc, offsets[d], constIndex(b, loc, rows));
  }
  offsets[rank - 1] =
      arith::MulIOp::create(b, loc, c, constIndex(b, loc, chunk));
  SmallVector<int64_t> sizes(rank, 1);
  sizes[rank - 1] = chunk;
  if (rank >= 2)
    sizes[rank - 2] = rows;

  SmallVector<int64_t> tileShape = rows > 1 ? SmallVector<int64_t>{rows, chunk} : SmallVector<int64_t>{chunk};
  MemRefType fragType = getTileMemRefType(tileShape, b.getF32Type(), MemorySpace::Fragment);
  Value dstRegion = RegionOp::create(b, loc, dst, offsets, sizes);
  switch (kind) {
  case AtomicKernelKind::ToF32:
  case AtomicKernelKind::FromF32: {
    Value frag = AllocOp::create(b, loc, fragType);
    Value accRegion = RegionOp::create(b, loc, acc, offsets, sizes);
    if (kind == AtomicKernelKind::ToF32) {
      CopyOp::create(b, loc, dstRegion, frag);
      CopyOp::create(b, loc, frag, accRegion);
    } else {
      CopyOp::create(b, loc, accRegion, frag);
      CopyOp::create(b, loc, frag, dstRegion);
    }
    break;
  }
  case AtomicKernelKind::Sum: {
    Value sum = AllocOp::create(b, loc, fragType);
    Value part = AllocOp::create(b, loc, fragType);
    CopyOp::create(b, loc, dstRegion, sum);
    auto loop = scf::ForOp::create(b, loc, constIndex(b, loc, 0),
                                   constIndex(b, loc, splits),
                                   constIndex(b, loc, 1));
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      SmallVector<Value> partOffsets = {loop.getInductionVar()};
      partOffsets.append(offsets);
      SmallVector<int64_t> partSizes = {1};
      partSizes.append(sizes);
      Value partRegion = RegionOp::create(b, loc, acc, partOffsets, partSizes);
      CopyOp::create(b, loc, partRegion, part);
      auto par = ParallelOp::create(b, loc, ArrayRef<int64_t>(tileShape));
      b.setInsertionPointToStart(&par.getBodyBlock());
      ValueRange at = par.getInductionVars();
      Value s = memref::LoadOp::create(b, loc, sum, at);
      Value p = memref::LoadOp::create(b, loc, part, at);
      Value t = arith::AddFOp::create(b, loc, s, p);
      memref::StoreOp::create(b, loc, t, sum, at);
    }
    CopyOp::create(b, loc, sum, dstRegion);
    break;
  }
  }
  return kernel;
}

/// The kernel's grid extents as index values, each grid symbol read with `dimOf(argument, axis)`.
SmallVector<Value> gridExtentValues(OpBuilder &b, Location loc, KernelOp kernel, ArrayRef<int64_t> gridOperands,
                                    llvm::function_ref<Value(int64_t, int64_t)> dimOf) {
  SmallVector<Value> symbols;
  for (size_t i = 0; i + 1 < gridOperands.size(); i += 2)
    symbols.push_back(dimOf(gridOperands[i], gridOperands[i + 1]));
  return kernel.buildGridExtents(b, loc, symbols);
}

/// How many f32 values per thread the last block's sum holds at once: its own fragment and the slices of one round,
/// whose loads are all issued before their adds. Each round of loads waits a whole L2 round trip, and the sum runs
/// after the main loop with one block per SM and nothing to overlap it, so a round loads as many slices as fit. The
/// main loop's registers are dead by then; with the loads' addresses, 160 values stay under 255 registers where 192
/// did not (flash attention's backward at d=128: 64-value tiles, sum + 2 slices spilled 80 bytes; ptxas, sm_90a).
constexpr int64_t kSliceSumValuesPerThread = 160;

/// How many slices one round of the last block's sum loads: the most that kSliceSumValuesPerThread allows (at least
/// one), rounded down to a divisor of `splits` so that every round has the same shape.
static int64_t slicesPerRound(KernelOp kernel, RegionType sliceType, int64_t splits) {
  int64_t elements = 1;
  for (int64_t extent : sliceType.getShape())
    elements *= extent;
  int64_t threads = std::max<int64_t>(kernel.getThreads(), 1);
  int64_t perThread = std::max<int64_t>((elements + threads - 1) / threads, 1);
  int64_t round = std::clamp<int64_t>(kSliceSumValuesPerThread / perThread - 1, 1, splits);
  while (splits % round != 0)
    --round;
  return round;
}

/// The last block's fixed-order sum of one tile: dst <- round(f32(dst) + partial[0] + ... + partial[splits-1]),
/// through the f32 fragments `sum` and `parts` (one per slice of a round: the round's loads are all in flight
/// before its adds), then the slices dropped from L2 (they are dead until the next launch writes them).
static void addSliceSum(OpBuilder &b, Location loc, KernelOp kernel, RegionOp slice, unsigned partialArg, Value dst,
                        int64_t splits, Value sum, ArrayRef<Value> parts) {
  RegionType sliceType = slice.getType();
  // The user's region: the slice's offsets and sizes without the split axis.
  SmallVector<Value> offsets(slice.getOffsets().drop_front());
  SmallVector<int64_t> sizes(slice.getSizes().drop_front());
  auto dstRegion = RegionOp::create(b, loc, dst, offsets, sizes);
  CopyOp::create(b, loc, dstRegion, sum);
  int64_t round = static_cast<int64_t>(parts.size());
  // One round: load slices first + 0 .. first + round - 1, then add them to the sum in order.
  auto addRound = [&](OpBuilder &b, Value first) {
    for (int64_t j = 0; j < round; ++j) {
      Value index = j == 0 ? first : arith::AddIOp::create(b, loc, first, constIndex(b, loc, j)).getResult();
      SmallVector<Value> partOffsets = {index};
      partOffsets.append(offsets);
      auto partRegion = RegionOp::create(b, loc, kernel.getArgument(partialArg), partOffsets, slice.getSizes());
      CopyOp::create(b, loc, partRegion, parts[j]);
    }
    auto par = ParallelOp::create(b, loc, sliceType.getShape());
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&par.getBodyBlock());
    ValueRange at = par.getInductionVars();
    Value t = memref::LoadOp::create(b, loc, sum, at);
    for (Value part : parts)
      t = arith::AddFOp::create(b, loc, t, memref::LoadOp::create(b, loc, part, at));
    memref::StoreOp::create(b, loc, t, sum, at);
  };
  if (round == splits) {
    addRound(b, constIndex(b, loc, 0));
  } else {
    auto loop = scf::ForOp::create(b, loc, constIndex(b, loc, 0), constIndex(b, loc, splits),
                                   constIndex(b, loc, round));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    addRound(b, loop.getInductionVar());
  }
  SmallVector<Value> allOffsets = {constIndex(b, loc, 0)};
  allOffsets.append(offsets);
  SmallVector<int64_t> allSizes(slice.getSizes());
  allSizes[0] = splits;
  DiscardOp::create(b, loc, RegionOp::create(b, loc, kernel.getArgument(partialArg), allOffsets, allSizes));
  CopyOp::create(b, loc, sum, dstRegion);
}

// After the split store, the block arrives at its destination tile's counter; the last of the `splits` blocks that
// write the tile (the others may still be running: the order of arrival is arbitrary) reads the destination and
// the slices back, still in L2, and writes dst <- round(f32(dst) + partial[0] + ... + partial[splits-1]): the
// sum kernel's order, so the result is bitwise the same whichever block is last.
//
// Tiles: covered (splitSlicesCovered) means each destination dimension is whole or tiled by one block index k
// as (b_k floordiv q) * window, and the colliding indices in no dimension span their constant extent. Blocks
// agreeing on b_k floordiv q for every used k (q = the collision's period) write the same tile, and blocks that
// do not write disjoint ones; a tile's counter is the block's linear index with each colliding b_k replaced by
// b_k floordiv q (or 0 where no dimension separates it). A group cut short at the grid's end (its extent not a
// multiple of q) never reaches `splits` arrivals; covered puts its tile past the destination's extent, where
// nothing is written.
LastBlockSumArgs addLastBlockSum(KernelOp kernel, AtomicAddOp site, const AtomicConflict &conflict, unsigned partialArg,
                                 StringRef name, int64_t splits, MemRefType dstType, ArrayAttr userShapes,
                                 ArrayRef<int64_t> userGridOperands, const LastBlockSumArgs *sharing) {
  MLIRContext *ctx = kernel.getContext();
  Location loc = site.getLoc();
  AffineMap userShape = userShapes && partialArg < userShapes.size()
                            ? cast<AffineMapAttr>(userShapes[partialArg]).getValue()
                            : AffineMap();
  Block &body = kernel.getBodyBlock();
  unsigned numArgs = kernel.getNumArguments();
  auto counterType = getTileMemRefType({ShapedType::kDynamic}, IntegerType::get(ctx, 32), MemorySpace::Global);
  LastBlockSumArgs result{numArgs, sharing ? sharing->counterArg : numArgs + 1, {}};
  BlockArgument dst = body.insertArgument(result.dstArg, dstType, loc);
  SmallVector<Type> inputs(kernel.getFunctionType().getInputs());
  inputs.push_back(dstType);
  if (!sharing) {
    body.insertArgument(result.counterArg, counterType, loc);
    inputs.push_back(counterType);
  }
  kernel.setFunctionType(FunctionType::get(ctx, inputs, {}));
  if (auto names = kernel->getAttrOfType<ArrayAttr>("tile.arg_names")) {
    SmallVector<Attribute> updated(names.begin(), names.end());
    if (partialArg < updated.size())
      updated[partialArg] = StringAttr::get(ctx, name + "_partial");
    updated.push_back(StringAttr::get(ctx, name));
    if (!sharing)
      updated.push_back(StringAttr::get(ctx, name + "_arrivals"));
    kernel->setAttr("tile.arg_names", ArrayAttr::get(ctx, updated));
  }
  if (auto shapes = kernel->getAttrOfType<ArrayAttr>("tile.arg_shapes"); shapes && userShape && sharing) {
    SmallVector<Attribute> updated(shapes.begin(), shapes.end());
    updated.push_back(AffineMapAttr::get(userShape));
    kernel->setAttr("tile.arg_shapes", ArrayAttr::get(ctx, updated));
  } else if (shapes && userShape) {
    // The counters: one per block, the grid's extents over the named dims.
    AffineMap grid = kernel.getGrid();
    SmallVector<AffineExpr> symbolExprs;
    bool known = true;
    for (size_t i = 0; i + 1 < userGridOperands.size(); i += 2) {
      int64_t arg = userGridOperands[i], axis = userGridOperands[i + 1];
      AffineMap m = arg < (int64_t)userShapes.size() ? cast<AffineMapAttr>(userShapes[arg]).getValue() : AffineMap();
      if (!m || axis >= m.getNumResults()) {
        known = false;
        break;
      }
      symbolExprs.push_back(m.getResult(axis));
    }
    SmallVector<Attribute> updated(shapes.begin(), shapes.end());
    updated.push_back(AffineMapAttr::get(userShape));
    AffineExpr blocks = getAffineConstantExpr(1, ctx);
    if (known)
      for (AffineExpr e : grid.getResults())
        blocks = blocks * e.replaceDimsAndSymbols({}, symbolExprs);
    updated.push_back(AffineMapAttr::get(known ? AffineMap::get(userShape.getNumDims(), userShape.getNumSymbols(),
                                                                 blocks, ctx)
                                               : AffineMap::get(userShape.getNumDims(), userShape.getNumSymbols(),
                                                                ArrayRef<AffineExpr>{}, ctx)));
    kernel->setAttr("tile.arg_shapes", ArrayAttr::get(ctx, updated));
  }

  auto slice = cast<RegionOp>(site.getDest().getDefiningOp());
  OpBuilder b(ctx);
  RegionType sliceType = slice.getType();
  auto fragType = getTileMemRefType(sliceType.getShape(), Float32Type::get(ctx), MemorySpace::Fragment);
  auto allocParts = [&](OpBuilder &b) {
    SmallVector<Value> parts;
    for (int64_t j = 0, n = slicesPerRound(kernel, sliceType, splits); j < n; ++j)
      parts.push_back(AllocOp::create(b, loc, fragType));
    return parts;
  };
  if (sharing) {
    // The fragments next to the earlier destination's, before the arrival; the sum after the earlier one's.
    result.lastBlock = sharing->lastBlock;
    b.setInsertionPoint(result.lastBlock->getPrevNode());
    Value sum = AllocOp::create(b, loc, fragType);
    SmallVector<Value> parts = allocParts(b);
    b.setInsertionPoint(result.lastBlock.thenBlock()->getTerminator());
    addSliceSum(b, loc, kernel, slice, partialArg, dst, splits, sum, parts);
    return result;
  }
  b.setInsertionPointToEnd(&body);
  // The tile's counter.
  SmallVector<Value> extents = gridExtentValues(b, loc, kernel, kernel.getGridOperands(), [&](int64_t arg, int64_t axis) {
    return memref::DimOp::create(b, loc, kernel.getArgument(arg), axis).getResult();
  });
  Value tileIndex = arith::ConstantIndexOp::create(b, loc, 0);
  for (int64_t k = kernel.getGridRank() - 1; k >= 0; --k) {
    Value term = kernel.getBlockIndex(k);
    for (const GridCollision &c : conflict.collisions)
      if (c.blockIndex == k)
        term = c.period ? arith::FloorDivSIOp::create(b, loc, term,
                                                      arith::ConstantIndexOp::create(b, loc, *c.period))
                              .getResult()
                        : arith::ConstantIndexOp::create(b, loc, 0).getResult();
    tileIndex = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, tileIndex, extents[k]), term);
  }
  // The fragments for the sum: the tile's shape (the region's, unit dimensions dropped), f32.
  Value sum = AllocOp::create(b, loc, fragType);
  SmallVector<Value> parts = allocParts(b);
  Value counters = kernel.getArgument(result.counterArg);
  auto last = ArriveLastOp::create(b, loc, b.getI1Type(), counters, tileIndex, b.getI64IntegerAttr(splits));
  result.lastBlock = scf::IfOp::create(b, loc, TypeRange{}, last.getLast(), /*withElseRegion=*/false);
  b.setInsertionPoint(result.lastBlock.thenBlock()->getTerminator());
  addSliceSum(b, loc, kernel, slice, partialArg, dst, splits, sum, parts);
  return result;
}

} // namespace tilec
