// The element-wise kernels of atomic legalization, built as tile IR so that
// every backend runs them like any other kernel.
#include "AtomicKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

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

} // namespace tilec
