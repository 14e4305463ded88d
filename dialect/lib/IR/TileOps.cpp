// Verifiers and builders of the tile dialect's whole-tile ops. The kernel and
// loop ops, which carry regions and custom syntax, live in KernelOp.cpp and
// LoopOps.cpp.
#include "tilec/Dialect/Tile/IR/TileOps.h"
#include "VerifyUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace tilec::tile;

#define GET_OP_CLASSES
#include "tilec/Dialect/Tile/IR/TileOps.cpp.inc"

namespace tilec::tile::detail {

std::string shapeText(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      shape, os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << '?';
        else
          os << d;
      },
      "x");
  return text;
}

LogicalResult verifyTileOperand(Operation *op, Value value, StringRef role,
                                ArrayRef<MemorySpace> allowed) {
  std::optional<MemorySpace> space = getMemorySpaceOf(value.getType());
  if (!space)
    return op->emitOpError() << role << " must be in a #tile.space memory "
                             << "space, got " << value.getType();
  if (!llvm::is_contained(allowed, *space)) {
    auto diag = op->emitOpError() << role << " must be ";
    llvm::interleave(
        allowed, diag,
        [&](MemorySpace s) { diag << stringifyMemorySpace(s); }, " or ");
    diag << ", got " << describeTile(value.getType());
    return diag;
  }
  if (!op->getParentOfType<KernelOp>()) {
    if (*space != MemorySpace::Global)
      return op->emitOpError()
             << role << " is a " << stringifyMemorySpace(*space)
             << " tile used outside a tile.kernel";
    return op->emitOpError() << "must be inside a tile.kernel";
  }
  return success();
}

} // namespace tilec::tile::detail

using namespace tilec::tile::detail;

static constexpr MemorySpace kAnySpace[] = {
    MemorySpace::Global, MemorySpace::Shared, MemorySpace::Fragment,
    MemorySpace::Local};
static constexpr MemorySpace kOnChip[] = {
    MemorySpace::Shared, MemorySpace::Fragment, MemorySpace::Local};

//===----------------------------------------------------------------------===//
// AllocOp
//===----------------------------------------------------------------------===//

// A tile allocated by the front end prints under its source name (the op's
// location is a NameLoc carrying it).
void AllocOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  if (auto name = dyn_cast<NameLoc>(getLoc()))
    setNameFn(getResult(), name.getName().getValue());
}

LogicalResult AllocOp::verify() {
  MemRefType type = getType();
  std::optional<MemorySpace> space = getMemorySpaceOf(type);
  if (!space)
    return emitOpError() << "result must be in a #tile.space memory space, got "
                         << type;
  if (*space == MemorySpace::Global)
    return emitOpError() << "cannot allocate in global memory; global tensors "
                            "are kernel arguments";
  if (!type.getElementType().isIntOrFloat())
    return emitOpError() << "element type must be an integer or float, got "
                         << type.getElementType();
  if (!type.getLayout().isIdentity())
    return emitOpError() << "tiles have the identity layout, got "
                         << type.getLayout();
  if (!(*this)->getParentOfType<KernelOp>())
    return emitOpError() << "allocates a " << stringifyMemorySpace(*space)
                         << " tile outside a tile.kernel";
  return success();
}

//===----------------------------------------------------------------------===//
// RegionOp
//===----------------------------------------------------------------------===//

void RegionOp::build(OpBuilder &builder, OperationState &state, Value source,
                     ValueRange offsets, ArrayRef<int64_t> sizes) {
  auto memref = cast<MemRefType>(source.getType());
  auto space = getMemorySpaceOf(memref).value_or(MemorySpace::Global);
  auto type = RegionType::get(builder.getContext(), getSqueezedShape(sizes),
                              memref.getElementType(), space);
  build(builder, state, type, source, offsets,
        builder.getDenseI64ArrayAttr(sizes), /*pad=*/nullptr);
}

LogicalResult RegionOp::verify() {
  auto source = getSource().getType();
  if (failed(verifyTileOperand(*this, getSource(), "source",
                               {MemorySpace::Global, MemorySpace::Shared,
                                MemorySpace::Fragment})))
    return failure();
  int64_t rank = source.getRank();
  if (static_cast<int64_t>(getOffsets().size()) != rank)
    return emitOpError() << "expects one offset per dimension of the source ("
                         << rank << "), got " << getOffsets().size();
  if (static_cast<int64_t>(getSizes().size()) != rank)
    return emitOpError() << "expects one size per dimension of the source ("
                         << rank << "), got " << getSizes().size();
  for (auto [i, size] : llvm::enumerate(getSizes()))
    if (size <= 0)
      return emitOpError() << "size of dimension " << i
                           << " must be positive, got " << size;
  RegionType result = getType();
  SmallVector<int64_t> expected = getSqueezedShape(getSizes());
  if (ArrayRef<int64_t>(expected) != result.getShape())
    return emitOpError() << "result shape " << shapeText(result.getShape())
                         << " must be the sizes with unit dimensions dropped ("
                         << shapeText(expected) << ")";
  if (result.getElementType() != source.getElementType())
    return emitOpError() << "result element type " << result.getElementType()
                         << " differs from the source's "
                         << source.getElementType();
  if (result.getSpace() != getMemorySpaceOf(source))
    return emitOpError() << "result memory space "
                         << stringifyMemorySpace(result.getSpace())
                         << " differs from the source's";
  return success();
}

//===----------------------------------------------------------------------===//
// CopyOp
//===----------------------------------------------------------------------===//

LogicalResult CopyOp::verify() {
  if (failed(verifyTileOperand(*this, getSource(), "source", kAnySpace)) ||
      failed(verifyTileOperand(*this, getTarget(), "target", kAnySpace)))
    return failure();
  Type srcType = getSource().getType(), dstType = getTarget().getType();
  if (getMemorySpaceOf(srcType) == MemorySpace::Global &&
      getMemorySpaceOf(dstType) == MemorySpace::Global)
    return emitOpError() << "copies between two global buffers; stage the "
                            "data through a shared tile or fragment";
  SmallVector<int64_t> src = getSqueezedShape(getShapeOf(srcType));
  SmallVector<int64_t> dst = getSqueezedShape(getShapeOf(dstType));
  if (src != dst)
    return emitOpError() << "source " << describeTile(srcType)
                         << " and target " << describeTile(dstType)
                         << " have different extents (" << shapeText(src)
                         << " vs " << shapeText(dst)
                         << " with unit dimensions dropped)";
  if (llvm::any_of(src, ShapedType::isDynamic))
    return emitOpError() << "copies a tile of dynamic shape "
                         << describeTile(srcType)
                         << "; take a static-shape region of it first";
  Type srcElem = getElementTypeOf(srcType), dstElem = getElementTypeOf(dstType);
  if (!srcElem.isIntOrFloat() || !dstElem.isIntOrFloat())
    return emitOpError() << "converts " << srcElem << " to " << dstElem
                         << "; only integer and float elements are copied";
  return success();
}

//===----------------------------------------------------------------------===//
// FillOp
//===----------------------------------------------------------------------===//

LogicalResult FillOp::verify() {
  if (failed(verifyTileOperand(*this, getTarget(), "target", kAnySpace)))
    return failure();
  SmallVector<int64_t> shape = getShapeOf(getTarget().getType());
  if (llvm::any_of(shape, ShapedType::isDynamic))
    return emitOpError() << "fills a target of dynamic shape "
                         << describeTile(getTarget().getType())
                         << "; fill a static-shape region of it";
  return success();
}

//===----------------------------------------------------------------------===//
// GemmOp
//===----------------------------------------------------------------------===//

LogicalResult GemmOp::verify() {
  if (failed(verifyTileOperand(*this, getA(), "operand A",
                               {MemorySpace::Shared, MemorySpace::Fragment})) ||
      failed(verifyTileOperand(*this, getB(), "operand B",
                               {MemorySpace::Shared})) ||
      failed(verifyTileOperand(*this, getC(), "accumulator C",
                               {MemorySpace::Fragment})))
    return failure();
  Type aType = getA().getType(), bType = getB().getType(),
       cType = getC().getType();
  SmallVector<int64_t> a = getShapeOf(aType), b = getShapeOf(bType),
                       c = getShapeOf(cType);
  for (auto [name, shape, type] :
       {std::tuple<StringRef, ArrayRef<int64_t>, Type>{"A", a, aType},
        {"B", b, bType},
        {"C", c, cType}})
    if (shape.size() != 2)
      return emitOpError() << "operand " << name << " must be a 2-d tile, got "
                           << describeTile(type);
  if (getTransposeA() &&
      getMemorySpaceOf(aType) == MemorySpace::Fragment)
    return emitOpError() << "operand A is a register fragment and cannot be "
                            "transposed; put it in a shared tile";
  int64_t m = getTransposeA() ? a[1] : a[0], ka = getTransposeA() ? a[0] : a[1];
  int64_t kb = getTransposeB() ? b[1] : b[0], n = getTransposeB() ? b[0] : b[1];
  if (ka != kb)
    return emitOpError() << "reduction extents differ: op(A) is " << m << "x"
                         << ka << " and op(B) is " << kb << "x" << n;
  if (c[0] != m || c[1] != n)
    return emitOpError() << "accumulator C is " << shapeText(c)
                         << " but op(A)·op(B) is " << m << "x" << n;
  Type aElem = getElementTypeOf(aType), bElem = getElementTypeOf(bType),
       cElem = getElementTypeOf(cType);
  if (aElem != bElem)
    return emitOpError() << "operands A and B have different element types ("
                         << aElem << " vs " << bElem << ")";
  if (!aElem.isBF16() && !aElem.isF16() && !aElem.isF32())
    return emitOpError() << "operand element type must be bf16, f16 or f32, got "
                         << aElem;
  if (!cElem.isF32())
    return emitOpError() << "accumulator C must be f32, got " << cElem;
  return success();
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  if (failed(verifyTileOperand(*this, getSource(), "source", kOnChip)) ||
      failed(verifyTileOperand(*this, getTarget(), "target", kOnChip)))
    return failure();
  SmallVector<int64_t> src = getShapeOf(getSource().getType());
  SmallVector<int64_t> dst = getShapeOf(getTarget().getType());
  int64_t dim = getDim();
  if (dim < 0 || dim >= static_cast<int64_t>(src.size()))
    return emitOpError() << "reduction dim " << dim << " is out of range for a "
                         << src.size() << "-d source";
  SmallVector<int64_t> expected(src);
  expected.erase(expected.begin() + dim);
  if (expected != dst)
    return emitOpError() << "target is " << shapeText(dst)
                         << " but reducing dim " << dim << " of "
                         << shapeText(src) << " gives " << shapeText(expected);
  Type srcElem = getElementTypeOf(getSource().getType());
  Type dstElem = getElementTypeOf(getTarget().getType());
  if (srcElem != dstElem)
    return emitOpError() << "source and target element types differ ("
                         << srcElem << " vs " << dstElem << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// AtomicAddOp
//===----------------------------------------------------------------------===//

static bool isAtomicDestElement(Type t) {
  return t.isF32() || t.isF16() || t.isBF16() || t.isF64() ||
         t.isSignlessInteger(32);
}

/// Effects of both atomic ops: read and write `dest`; read `value` too when it is a tile (the region form), which
/// passes that move or erase ops rely on (a copy into the tile must stay before the atomic).
static void getAtomicEffects(
    OpOperand &value, OpOperand &dest,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &dest);
  effects.emplace_back(MemoryEffects::Write::get(), &dest);
  if (isa<MemRefType, RegionType>(value.get().getType()))
    effects.emplace_back(MemoryEffects::Read::get(), &value);
}

/// The checks tile.atomic_add and tile.atomic_rmw share. `name` says what the op does ("atomic add",
/// "atomic max"), `verb` what it does with its value ("adds", "combines").
static LogicalResult verifyAtomicUpdate(Operation *op, Value value, Value dest, ValueRange indices,
                                        StringRef name, StringRef verb) {
  if (failed(verifyTileOperand(op, dest, "destination", {MemorySpace::Global, MemorySpace::Shared})))
    return failure();
  Type destType = dest.getType();
  Type destElem = getElementTypeOf(destType);
  if (!isAtomicDestElement(destElem))
    return op->emitOpError() << name << " into " << destElem
                             << " is not supported; the destination must be f32, f16, bf16, f64 or i32";
  Type valueType = value.getType();
  bool valueIsTile = isa<MemRefType, RegionType>(valueType);
  if (!indices.empty()) {
    if (valueIsTile)
      return op->emitOpError() << "element form (with indices) " << verb << " a scalar, got "
                               << describeTile(valueType);
    if (llvm::isa<RegionType>(destType))
      return op->emitOpError() << "element form indexes a buffer, not a region";
    int64_t rank = cast<MemRefType>(destType).getRank();
    if (static_cast<int64_t>(indices.size()) != rank)
      return op->emitOpError() << "expects " << rank << " indices for a " << rank << "-d destination, got "
                               << indices.size();
  } else if (!valueIsTile) {
    return op->emitOpError() << verb << " the scalar " << valueType
                             << " without indices; give one index per dimension of the destination";
  }
  Type valueElem = valueIsTile ? getElementTypeOf(valueType) : valueType;
  if (!valueElem.isIntOrFloat() || isa<FloatType>(valueElem) != isa<FloatType>(destElem))
    return op->emitOpError() << verb << " " << valueElem << " into " << destElem
                             << "; value and destination must both be float or both integer";
  if (valueIsTile) {
    if (failed(verifyTileOperand(op, value, "value", kOnChip)))
      return failure();
    SmallVector<int64_t> v = getSqueezedShape(getShapeOf(valueType));
    SmallVector<int64_t> d = getSqueezedShape(getShapeOf(destType));
    if (v != d)
      return op->emitOpError() << "value " << describeTile(valueType) << " and destination "
                               << describeTile(destType) << " have different extents (" << shapeText(v) << " vs "
                               << shapeText(d) << ")";
  }
  return success();
}

void AtomicAddOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  getAtomicEffects(getValueMutable(), getDestMutable(), effects);
}

LogicalResult AtomicAddOp::verify() {
  if (getWriteOnce() && !getExclusive())
    return emitOpError() << "is 'write_once' but not 'exclusive': an element written once by this op must not be "
                            "touched by any other block either";
  return verifyAtomicUpdate(*this, getValue(), getDest(), getIndices(), "atomic add", "adds");
}

//===----------------------------------------------------------------------===//
// AtomicRmwOp
//===----------------------------------------------------------------------===//

void AtomicRmwOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  getAtomicEffects(getValueMutable(), getDestMutable(), effects);
}

LogicalResult AtomicRmwOp::verify() {
  std::string name = "atomic " + stringifyAtomicRmwKind(getKind()).str();
  return verifyAtomicUpdate(*this, getValue(), getDest(), getIndices(), name, "combines");
}

LogicalResult ArriveLastOp::verify() {
  auto kernel = (*this)->getParentOfType<KernelOp>();
  if (!kernel)
    return emitOpError() << "must be inside a tile.kernel";
  if ((*this)->getParentOp() != kernel.getOperation())
    return emitOpError() << "must be directly in the kernel body: every thread of the block arrives, or none";
  auto type = cast<MemRefType>(getCounters().getType());
  if (type.getRank() != 1 || !type.getElementType().isSignlessInteger(32) ||
      getMemorySpaceOf(type) != MemorySpace::Global)
    return emitOpError() << "counters must be a rank-1 i32 buffer in global memory, got " << type;
  if (getCount() < 1)
    return emitOpError() << "count must be at least 1, got " << getCount();
  return success();
}

LogicalResult DiscardOp::verify() {
  if (!(*this)->getParentOfType<KernelOp>())
    return emitOpError() << "must be inside a tile.kernel";
  if ((*this)->getParentOfType<ParallelOp>())
    return emitOpError() << "must not be inside a tile.parallel loop: the block discards the region together";
  auto type = cast<RegionType>(getRegion().getType());
  if (type.getSpace() != MemorySpace::Global)
    return emitOpError() << "needs a region of global memory, got " << type;
  return success();
}

LogicalResult WgmmaWaitOp::verify() {
  if (!(*this)->getParentOfType<KernelOp>())
    return emitOpError() << "must be inside a tile.kernel";
  for (Value acc : getAccumulators())
    if (getMemorySpaceOf(acc.getType()) != MemorySpace::Fragment)
      return emitOpError() << "waits for accumulators in registers (fragment tiles), got " << acc.getType();
  return success();
}

LogicalResult BarrierOp::verify() {
  if (!(*this)->getParentOfType<KernelOp>())
    return emitOpError() << "must be inside a tile.kernel";
  return success();
}

//===----------------------------------------------------------------------===//
// Asynchronous copies (GPU lowering)
//===----------------------------------------------------------------------===//

void StageViewOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  if (Operation *alloc = getTile().getDefiningOp())
    if (auto name = dyn_cast<NameLoc>(alloc->getLoc()))
      setNameFn(getResult(), (name.getName().getValue() + "_stage").str());
}

LogicalResult StageViewOp::verify() {
  static constexpr MemorySpace kShared[] = {MemorySpace::Shared};
  if (failed(verifyTileOperand(*this, getTile(), "tile", kShared)))
    return failure();
  auto alloc = getTile().getDefiningOp<AllocOp>();
  if (!alloc)
    return emitOpError() << "views a buffer of a shared tile's tile.alloc, got a value not defined by one";
  auto stages = alloc->getAttrOfType<IntegerAttr>("tile.stages");
  if (!stages)
    return emitOpError() << "views a buffer of a shared tile that is not multi-buffered (its tile.alloc has no "
                            "'tile.stages')";
  APInt index;
  if (matchPattern(getIndex(), m_ConstantInt(&index)) &&
      (index.isNegative() || index.getSExtValue() >= stages.getInt()))
    return emitOpError() << "views buffer " << index.getSExtValue() << " of a tile with " << stages.getInt()
                         << " buffers";
  return success();
}

LogicalResult AsyncCopyOp::verify() {
  static constexpr MemorySpace kGlobal[] = {MemorySpace::Global};
  static constexpr MemorySpace kShared[] = {MemorySpace::Shared};
  if (failed(verifyTileOperand(*this, getSource(), "source", kGlobal)) ||
      failed(verifyTileOperand(*this, getTarget(), "target", kShared)))
    return failure();
  Type srcType = getSource().getType(), dstType = getTarget().getType();
  SmallVector<int64_t> src = getSqueezedShape(getShapeOf(srcType));
  SmallVector<int64_t> dst = getSqueezedShape(getShapeOf(dstType));
  if (src != dst)
    return emitOpError() << "source " << describeTile(srcType) << " and target " << describeTile(dstType)
                         << " have different extents (" << shapeText(src) << " vs " << shapeText(dst)
                         << " with unit dimensions dropped)";
  if (getElementTypeOf(srcType) != getElementTypeOf(dstType))
    return emitOpError() << "copies " << getElementTypeOf(srcType) << " into " << getElementTypeOf(dstType)
                         << "; an asynchronous copy moves bytes and cannot convert";
  return success();
}

LogicalResult AsyncCommitOp::verify() {
  if (!(*this)->getParentOfType<KernelOp>())
    return emitOpError() << "must be inside a tile.kernel";
  return success();
}

LogicalResult AsyncWaitOp::verify() {
  if (!(*this)->getParentOfType<KernelOp>())
    return emitOpError() << "must be inside a tile.kernel";
  return success();
}
