// Element-wise op families: parallel loops, copy, fill, atomic_add, and element loads/stores. Each is a loop over
// the slots of a driving layout (the fragment involved, or a blocked split of the tile over the threads); every
// global access is predicated against the tensor's extents.
#include "EmitterImpl.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::tile;

namespace tilec::cuda {

std::string KernelEmitter::readElement(const TileRef &r, const std::vector<std::string> &coords,
                                       const SlotLoop &loop) {
  const Buffer &b = *r.buffer;
  std::vector<std::string> base = r.baseCoords(coords);
  switch (b.space) {
  case MemorySpace::Fragment:
  case MemorySpace::Local:
    if (b.layout->isReplicated())
      return b.var + "[" + linearIndex(b, base) + "]";
    // Distributed: only the driver itself (or an identical layout) is read in place.
    if (loop.layout && *loop.layout == *b.layout && r.offsets.empty())
      return b.var + "[" + loop.slot + "]";
    unsupportedAccess = "reading a distributed fragment '" + b.var + "' in a layout other than the loop's";
    return "0";
  case MemorySpace::Shared:
    return b.var + "[" + sharedIndex(b, base) + "]";
  case MemorySpace::Global: {
    std::string inBounds = boundsCheck(r, base);
    std::string load = b.var + "[" + linearIndex(b, base) + "]";
    if (inBounds.empty())
      return load;
    Type f32 = Float32Type::get(kernel.getContext());
    std::string pad = convert(floatLiteral(r.pad, f32), f32, b.element);
    return "(" + inBounds + " ? " + load + " : " + pad + ")";
  }
  }
  return "0";
}

/// A statement writing `valueExpr` (already of the buffer's element type) into element `coords` of `r`.
std::string writeElement(KernelEmitter &e, const TileRef &r, const std::vector<std::string> &coords,
                                const SlotLoop &loop, const std::string &valueExpr) {
  const Buffer &b = *r.buffer;
  std::vector<std::string> base = r.baseCoords(coords);
  std::string guard = loop.primary;
  std::string target;
  switch (b.space) {
  case MemorySpace::Fragment:
  case MemorySpace::Local:
    guard.clear(); // every replica keeps its own copy
    if (b.layout->isReplicated())
      target = b.var + "[" + e.linearIndex(b, base) + "]";
    else if (loop.layout && *loop.layout == *b.layout && r.offsets.empty())
      target = b.var + "[" + loop.slot + "]";
    else {
      e.unsupportedAccess = "writing a distributed fragment '" + b.var + "' in a layout other than the loop's";
      target = b.var + "[0]";
    }
    break;
  case MemorySpace::Shared:
    target = b.var + "[" + e.sharedIndex(b, base) + "]";
    break;
  case MemorySpace::Global: {
    std::string inBounds = e.boundsCheck(r, base);
    if (!inBounds.empty())
      guard = guard.empty() ? inBounds : guard + " && " + inBounds;
    target = b.var + "[" + e.linearIndex(b, base) + "]";
    break;
  }
  }
  std::string stmt = target + " = " + valueExpr + ";";
  return guard.empty() ? stmt : "if (" + guard + ") " + stmt;
}

LogicalResult KernelEmitter::emitParallel(ParallelOp loop) {
  std::string error;
  std::optional<FragmentLayout> layout = layout::fromAttr(loop->getAttr(gpu::kLayoutAttr), threads, &error);
  if (!layout)
    return loop.emitError("parallel loop has no layout it can use (run tile-infer-layouts): ") << error;
  SlotLoop sl = openSlotLoop(*layout, "parallel");
  for (auto [k, iv] : llvm::enumerate(loop.getInductionVars()))
    names[iv] = "(long long)" + sl.coords[k];
  const SlotLoop *saved = currentLoop;
  ParallelOp savedLoop = currentParallel;
  currentLoop = &sl;
  currentParallel = loop;
  // tile-infer-layouts's decision: the other threads of an iteration would race with the primary one's writes.
  bool primaryOnly = loop->hasAttr(gpu::kPrimaryOnlyAttr) && !sl.primary.empty();
  if (primaryOnly)
    open("if (" + sl.primary + ")");
  LogicalResult r = emitBlock(loop.getBodyBlock());
  if (primaryOnly)
    close();
  currentLoop = saved;
  currentParallel = savedLoop;
  closeSlotLoop(*layout);
  return r;
}

LogicalResult KernelEmitter::emitElementAccess(Operation *op) {
  auto load = dyn_cast<memref::LoadOp>(op);
  auto store = dyn_cast<memref::StoreOp>(op);
  Value memref = load ? load.getMemRef() : store.getMemRef();
  ValueRange indices = load ? load.getIndices() : store.getIndices();
  const Buffer &b = buffer(memref);
  std::vector<std::string> idx;
  for (Value i : indices)
    idx.push_back(value(i));
  std::string target;
  switch (b.space) {
  case MemorySpace::Fragment:
  case MemorySpace::Local: {
    if (b.layout->isReplicated()) {
      target = b.var + "[" + linearIndex(b, idx) + "]";
      break;
    }
    if (!currentLoop)
      return op->emitError("a distributed fragment is accessed outside a parallel loop");
    std::vector<int> dims;
    std::vector<int64_t> constants;
    for (Value i : indices) {
      auto arg = dyn_cast<BlockArgument>(i);
      if (arg && arg.getOwner() == &currentParallel.getBodyBlock()) {
        dims.push_back(arg.getArgNumber());
        constants.push_back(0);
      } else if (auto c = i.getDefiningOp<arith::ConstantIndexOp>()) {
        dims.push_back(-1);
        constants.push_back(c.value());
      } else {
        return op->emitError("fragment indexed by an expression in a loop spread over threads");
      }
    }
    auto map = registerAccessMap(*currentLoop->layout, *b.layout, dims, constants);
    if (!map)
      return op->emitError("the threads of this loop do not hold the fragment elements accessed here");
    target = b.var + "[" + slotMapExpr(*map, currentLoop->slot) + "]";
    break;
  }
  case MemorySpace::Shared:
    target = b.var + "[" + sharedIndex(b, idx) + "]";
    break;
  case MemorySpace::Global:
    return op->emitError("global tensors are not accessed element by element");
  }
  if (load) {
    std::string n = fresh("v" + std::to_string(counter++));
    line() << "const " << cType(load.getType()) << " " << n << " = " << target << ";\n";
    names[load.getResult()] = n;
    return success();
  }
  std::string stmt = target + " = " + value(store.getValue()) + ";";
  if (b.space == MemorySpace::Shared) {
    std::string guard = currentLoop ? currentLoop->primary : "tid == 0";
    if (!guard.empty())
      stmt = "if (" + guard + ") " + stmt;
  }
  line() << stmt << "\n";
  return success();
}

LogicalResult KernelEmitter::emitFill(FillOp fill) {
  TileRef dst = ref(fill.getTarget());
  std::optional<FragmentLayout> driver;
  bool whole = !currentLoop && isDistributed(*dst.buffer) && isWhole(fill.getTarget());
  SlotLoop sl = openTileOpLoop(driver,
                               whole ? *dst.buffer->layout
                                     : plainDriver(dst.squeezed(), threads,
                                                   dst.buffer->layout && dst.buffer->layout->isReplicated()),
                               dst.squeezed(), "fill " + dst.buffer->var);
  std::vector<std::string> coords = whole ? squeezeCoords(dst.buffer->shape, sl.coords) : sl.coords;
  if (!whole && dst.squeezed().empty())
    coords.clear();
  line() << writeElement(*this, dst, coords, sl, value(fill.getValue())) << "\n";
  closeSlotLoop(*driver);
  return success();
}

/// A statement combining `v` (f32; double for f64 and int for i32 destinations) into `element` as the op says.
static std::string atomicStatement(const AtomicUpdate &op, const Buffer &dst, const std::string &element,
                                   const std::string &v, std::string *error) {
  Type t = dst.element;
  std::string address = "&" + element;
  if (op.combiner != "add") {
    // tilec::device::atomic_max / atomic_min (atomic_extrema.cuh): overloaded on the element type, any address
    // space, every memory order.
    std::string order;
    switch (op.order) {
    case MemoryOrder::Relaxed: break;
    case MemoryOrder::Release: order = "<tilec::device::rmw_order::release>"; break;
    case MemoryOrder::AcqRel: order = "<tilec::device::rmw_order::acq_rel>"; break;
    case MemoryOrder::SeqCst: order = "<tilec::device::rmw_order::seq_cst>"; break;
    }
    std::string operand = t.isInteger(32) ? "(int)(" + v + ")" : t.isF64() ? "(double)(" + v + ")" : v;
    return "tilec::device::atomic_" + op.combiner + order + "(" + address + ", " + operand + ");";
  }
  if (op.exclusive) {
    // write_once: this update is the element's only one and its prior contents do not matter. 0 + v, not v: the
    // add turns -0 into +0 as a read-modify-write of zero would (split sums stay bitwise those of the CPU backend).
    if (op.writeOnce && t.isInteger(32))
      return element + " = (int)(" + v + ");";
    if (t.isInteger(32))
      return element + " += " + v + ";";
    std::string sum = op.writeOnce ? (t.isF64() ? "0.0 + " : "0.0f + ") + v
                                   : "tilec::device::to_float_any(" + element + ") + " + v;
    return element + " = " + (t.isBF16() ? "tilec::device::to_bf16(" + sum + ")"
                              : t.isF16() ? "tilec::device::to_f16(" + sum + ")"
                                          : "(" + KernelEmitter::cType(t) + ")(" + sum + ")") + ";";
  }
  std::string suffix;
  switch (op.order) {
  case MemoryOrder::Relaxed: break;
  case MemoryOrder::Release: suffix = "_release"; break;
  case MemoryOrder::AcqRel: suffix = "_acq_rel"; break;
  case MemoryOrder::SeqCst: suffix = "_seq_cst"; break;
  }
  if (t.isF32())
    return "tilec::device::atomic_add_f32" + suffix + "(" + address + ", " + v + ");";
  if (t.isInteger(32))
    return "tilec::device::atomic_add_i32" + suffix + "(" + address + ", (int)(" + v + "));";
  if (!suffix.empty() && (t.isBF16() || t.isF16()))
    return std::string("tilec::device::atomic_add_") + (t.isBF16() ? "bf16" : "f16") +
           "_ordered<tilec::device::add_order::" + suffix.substr(1) + ">(" + address + ", " + v + ");";
  if (!suffix.empty()) {
    *error = "atomic_add with order " + stringifyMemoryOrder(op.order).str() + " into " +
             KernelEmitter::cType(t) + " is not supported on the GPU (f32, i32, bf16 and f16 take an order)";
    return "";
  }
  // The 16-bit adds are red.global: a shared destination takes the generic-address forms.
  std::string space = dst.space == MemorySpace::Shared ? "_shared" : "";
  if (t.isBF16())
    return "tilec::device::atomic_add_bf16" + space + "(" + address + ", " + v + ");";
  if (t.isF16())
    return "tilec::device::atomic_add_f16" + space + "(" + address + ", " + v + ");";
  if (t.isF64())
    return "tilec::device::atomic_add_f64(" + address + ", (double)(" + v + "));";
  *error = "atomic_add into this dtype is not supported on the GPU";
  return "";
}

LogicalResult KernelEmitter::emitAtomic(const AtomicUpdate &op) {
  std::string error;
  Type f32 = Float32Type::get(kernel.getContext());
  if (op.elementForm) {
    TileRef dst = ref(op.dest);
    std::vector<std::string> idx;
    for (Value i : op.indices)
      idx.push_back(value(i));
    std::vector<std::string> base = dst.offsets.empty() ? idx : dst.baseCoords(idx);
    const Buffer &b = *dst.buffer;
    std::string element = b.space == MemorySpace::Shared ? b.var + "[" + sharedIndex(b, base) + "]"
                                                         : b.var + "[" + linearIndex(b, base) + "]";
    Type vt = op.value.getType();
    std::string v = b.element.isInteger(32) ? value(op.value)
                                            : convert(value(op.value), vt.isIndex() ? f32 : vt, f32);
    std::string stmt = atomicStatement(op, b, element, v, &error);
    if (!error.empty())
      return op.op->emitError(error);
    std::string guard = currentLoop ? currentLoop->primary : "tid == 0";
    // The indices are arbitrary values (a label read from a tensor, say): every dim is checked, static ones too;
    // an update outside the destination is dropped, as at tile level.
    std::string inBounds;
    for (size_t d = 0; d < base.size(); ++d)
      inBounds += (inBounds.empty() ? "" : " && ") + std::string("(unsigned long long)(") + base[d] +
                  ") < (unsigned long long)(" + b.dims[d] + ")";
    guard = guard.empty() ? inBounds : (inBounds.empty() ? guard : guard + " && " + inBounds);
    line() << (guard.empty() ? stmt : "if (" + guard + ") " + stmt) << "\n";
    return success();
  }
  auto plan = op.op->getAttrOfType<AtomicPlanAttr>(gpu::kAtomicPlanAttr);
  if (!plan)
    return op.op->emitError("atomic has no plan (run tile-plan-atomics)");
  if (currentLoop && plan.getKind() != AtomicKind::Elementwise)
    return op.op->emitError("internal compiler error: an atomic inside a parallel loop is planned as ")
           << plan << " (tile-plan-atomics plans it elementwise)";
  TileRef dst = ref(op.dest);
  int64_t width = plan.getVector();
  std::string check =
      plan.getChecked() ? dst.buffer->dims.back() + " % " + std::to_string(width) + " == 0" : std::string();
  switch (plan.getKind()) {
  case AtomicKind::ExclusiveRmw:
    // An exclusive add of a whole fragment (the block owns those elements: flash attention's dK/dV under MHA) is a
    // read-modify-write; every read is issued before the first write (emitExclusiveRegionAdd).
    if (width == 1)
      return emitExclusiveRegionAdd(op, 1);
    return withRuntimeCheck(
        *this, check, [&] { return emitExclusiveRegionAdd(op, width); },
        [&] { return emitExclusiveRegionAdd(op, 1); });
  case AtomicKind::Vectors:
    // Relaxed adds of a whole fragment into a global f32 tensor: G of a thread's consecutive slots that are
    // consecutive elements of the destination go in one vector reduction (red.global.add.v2/v4.f32 on sm_90: the
    // fp32 strategy's workspaces, e.g. flash attention's dQ), and for a write-once add (the split strategy's partial
    // slices) one vector store.
    return withRuntimeCheck(
        *this, check, [&] { return emitRegionAtomic(op, width); }, [&] { return emitRegionAtomic(op, 1); });
  case AtomicKind::Elementwise:
    break;
  }
  return emitRegionAtomic(op, 1);
}

LogicalResult KernelEmitter::emitRegionAtomic(const AtomicUpdate &op, int64_t width) {
  std::string error;
  Type f32 = Float32Type::get(kernel.getContext());
  TileRef src = ref(op.value), dst = ref(op.dest);
  std::optional<FragmentLayout> driver;
  bool whole = !currentLoop && isDistributed(*src.buffer) && isWhole(op.value);
  std::string what = "atomic_" + op.combiner + " " + gpu::nameOf(op.value) + " -> " + dst.buffer->var;
  if (width > 1)
    what += ": " + std::to_string(width) +
            (op.writeOnce ? "-element vector stores (write once)" : "-element vector reductions");
  SlotLoop sl;
  if (width > 1) {
    driver = *src.buffer->layout; // emitAtomic chose the vector form for a whole distributed fragment
    sl = openSlotLoop(*driver, what, width);
  } else {
    sl = openTileOpLoop(driver, whole ? *src.buffer->layout : plainDriver(src.squeezed(), threads, false),
                        src.squeezed(), what);
  }
  std::vector<std::string> coords = whole ? squeezeCoords(src.buffer->shape, sl.coords) : sl.coords;
  if (!whole && src.squeezed().empty())
    coords.clear();
  std::vector<std::string> base = dst.baseCoords(coords);
  const Buffer &b = *dst.buffer;
  std::string element = b.space == MemorySpace::Shared ? b.var + "[" + sharedIndex(b, base) + "]"
                                                       : b.var + "[" + linearIndex(b, base) + "]";
  std::string stmt;
  if (width > 1) {
    // The group's first element; tile-plan-atomics proved the group aligned and wholly in or out of bounds
    // (gpu::fragmentVectorElements).
    std::string values;
    for (int64_t k = 0; k < width; ++k)
      values += (k ? ", " : "") +
                convert(src.buffer->var + "[" + sl.slot + " + " + std::to_string(k) + "]", src.buffer->element, f32);
    std::string w = std::to_string(width);
    // (Exclusive adds that are not write-once took emitExclusiveRegionAdd.)
    std::string function =
        op.writeOnce ? "tilec::device::store_zero_plus_f32x" + w : "tilec::device::atomic_add_f32x" + w;
    stmt = function + "(&" + element + ", make_float" + w + "(" + values + "));";
  } else {
    std::string v = readElement(src, coords, sl);
    // In f32, or f64 for an f64 destination (an f64 tile would lose bits through f32).
    Type destElement = dst.buffer->element;
    if (!destElement.isInteger(32))
      v = convert(v, src.buffer->element, destElement.isF64() ? destElement : f32);
    stmt = atomicStatement(op, b, element, v, &error);
    if (!error.empty())
      return op.op->emitError(error);
  }
  std::string guard = sl.primary;
  std::string inBounds = boundsCheck(dst, base);
  if (!inBounds.empty())
    guard = guard.empty() ? inBounds : guard + " && " + inBounds;
  line() << (guard.empty() ? stmt : "if (" + guard + ") " + stmt) << "\n";
  closeSlotLoop(*driver);
  return success();
}

/// An exclusive region add of a whole distributed fragment into a global f32/bf16/f16 tensor, in two passes over the
/// thread's slots: first every old value is read (G elements per vector access, into registers), then each is added
/// to and written back. Element by element in one pass, each store may alias the next load as far as NVVM knows, so
/// the reads went to memory one round trip at a time (64 of them per thread at the end of every flash-attention
/// backward block under MHA). Within the thread the elements are distinct and no other block touches them
/// (exclusive), so reading them all first changes nothing; where the layout has replicas, only the primary one writes.
LogicalResult KernelEmitter::emitExclusiveRegionAdd(const AtomicUpdate &op, int64_t width) {
  TileRef src = ref(op.value), dst = ref(op.dest);
  const Buffer &f = *src.buffer, &g = *dst.buffer;
  const FragmentLayout &l = *f.layout;
  Type f32 = Float32Type::get(kernel.getContext());
  int64_t bytes = width * gpu::elementBytes(g.element);
  const char *rawType = bytes == 16 ? "uint4" : bytes == 8 ? "uint2" : bytes == 4 ? "unsigned" : nullptr;
  if (width > 1 && !rawType)
    width = 1;
  // Reads in flight are registers: at most 16 of them per batch of slots (the backward's dK at d=128 has 32 pairs,
  // whose reads all at once made ptxas spill).
  int64_t perBatch = std::max<int64_t>(1, 64 / std::max<int64_t>(bytes, 4)) * width;
  std::string what = "atomic_add " + gpu::nameOf(op.value) + " -> " + g.var + ": exclusive, every read first" +
                     (width > 1 ? ", " + std::to_string(width) + "-element vectors" : "") +
                     (perBatch < l.numSlots() ? ", " + std::to_string(perBatch) + " slots per batch" : "");
  open("{ // " + what);
  std::string element = cType(g.element);
  for (int64_t first = 0; first < l.numSlots(); first += perBatch) {
    int64_t end = std::min(l.numSlots(), first + perBatch);
    std::string old = fresh("old");
    line() << (width > 1 ? std::string(rawType) : element) << " " << old << "[" << (end - first) / width << "];\n";
    for (int pass = 0; pass < 2; ++pass) {
      SlotLoop sl = openSlotLoop(l, pass == 0 ? "read" : "add and write", width, first, end);
      std::vector<std::string> base = dst.baseCoords(squeezeCoords(f.shape, sl.coords));
      std::string inBounds = boundsCheck(dst, base);
      // Where the layout has replicas, each of them reads, but only its primary thread writes back: every replica
      // writing would add the value once per replica.
      if (pass == 1 && !sl.primary.empty())
        inBounds = inBounds.empty() ? sl.primary : sl.primary + " && " + inBounds;
      std::string pred = inBounds.empty() ? "true" : inBounds;
      std::string element0 = g.var + "[" + linearIndex(g, base) + "]";
      std::string group = old + "[(" + sl.slot + " - " + std::to_string(first) + ") / " + std::to_string(width) + "]";
      if (pass == 0) {
        if (width > 1)
          line() << group << " = tilec::device::load" << bytes << "_pred(&" << element0 << ", " << pred << ");\n";
        else
          line() << group << " = " << (inBounds.empty() ? element0 : "(" + inBounds + ") ? " + element0 + " : " + element + "()")
                 << ";\n";
      } else if (width > 1) {
        std::string elements = fresh("elements");
        line() << element << " *" << elements << " = reinterpret_cast<" << element << " *>(&" << group << ");\n";
        for (int64_t k = 0; k < width; ++k) {
          std::string e = elements + "[" + std::to_string(k) + "]";
          std::string sum = convert(e, g.element, f32) + " + " +
                            convert(f.var + "[" + sl.slot + " + " + std::to_string(k) + "]", f.element, f32);
          line() << e << " = " << convert("(" + sum + ")", f32, g.element) << ";\n";
        }
        line() << "tilec::device::store" << bytes << "_pred(&" << element0 << ", " << group << ", " << pred << ");\n";
      } else {
        std::string sum = convert(group, g.element, f32) + " + " + convert(f.var + "[" + sl.slot + "]", f.element, f32);
        std::string stmt = element0 + " = " + convert("(" + sum + ")", f32, g.element) + ";";
        line() << (inBounds.empty() ? stmt : "if (" + inBounds + ") " + stmt) << "\n";
      }
      closeSlotLoop(l);
    }
  }
  close();
  return success();
}

} // namespace tilec::cuda
