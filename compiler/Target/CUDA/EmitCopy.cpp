// The copy op family: global -> shared in 16-byte chunks (cp.async for tile.async_copy), global <-> fragment
// in vectors of a thread's consecutive elements, and the element-at-a-time path every other copy takes.
//
// The vector paths rely on what the runtime's signature check guarantees every tensor argument: a 16-byte aligned
// data pointer (ParamSpec::alignment) and a contiguous row-major layout. A vector of G elements then starts at an
// aligned address whenever its offset along the last dim and the last extent are multiples of G; where the extent is
// dynamic, the kernel checks that at run time and falls back to the element-wise copy otherwise. Groups are aligned
// to G along the last dim, so each lies wholly inside or wholly outside the tensor: one predicate per vector.
#include "EmitterImpl.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::tile;

namespace tilec::cuda {

namespace {

/// The C type of a G*elementBytes-byte vector and the device-library width suffix of its predicated accesses.
struct VectorWidth {
  const char *type;
  const char *suffix;
};

std::optional<VectorWidth> vectorWidth(int64_t bytes) {
  switch (bytes) {
  case 16: return VectorWidth{"uint4", "16"};
  case 8: return VectorWidth{"uint2", "8"};
  case 4: return VectorWidth{"unsigned", "4"};
  default: return std::nullopt;
  }
}

} // namespace

/// #tile.copy<row_chunks>: the threads together cover whole rows of a 2-d tile in each step (threads x vec a multiple
/// of the row length, every step full): each thread's column and first row are fixed, and each step moves it `rows`
/// rows down. Its source address, shared address and bounds are then computed once, and a step adds constants to
/// them: NVVM does not strength-reduce the 64-bit index arithmetic of the general form (about 20 integer instructions
/// per 16-byte chunk in the flash-attention loops, a third of their instructions). The shared offset must step by the
/// same amount for every thread (tile-plan-copies checked it against the tile's swizzle; true for every swizzle
/// tile-plan-shared-memory picks when `rows` is a multiple of 8). False, with nothing emitted, when the tile does not
/// fit the form after all (a plan the pass did not make).
static bool emitRowStridedGlobalToShared(KernelEmitter &e, CopyOperands copy, const TileRef &src, const TileRef &dst,
                                         int64_t vec) {
  const Buffer &g = *src.buffer, &s = *dst.buffer;
  int64_t bytes = gpu::elementBytes(s.element);
  std::optional<gpu::RowChunkSteps> steps = gpu::rowChunkSteps(s.shape, bytes, s.swizzle, e.blockThreads(), vec);
  if (!steps)
    return false;
  std::vector<int64_t> shape = squeeze(s.shape);
  int64_t rows = shape[0], cols = shape[1];
  const int64_t step = steps->step, iterations = steps->iterations, delta = steps->delta;
  // The global dim the tile's rows run along, and its stride in elements.
  int rowDim = -1;
  for (size_t d = 0; d < src.window.size(); ++d)
    if (src.window[d] != 1) {
      rowDim = int(d);
      break;
    }
  if (rowDim < 0)
    return false;
  std::string stride;
  for (size_t d = rowDim + 1; d < g.dims.size(); ++d)
    stride += (stride.empty() ? "" : " * ") + g.dims[d];
  e.open("{ // copy " + gpu::nameOf(copy.getSource()) + " -> " + s.var + ": 16-byte vectors, " +
         std::to_string(rows * cols / vec) + " chunks, " + std::to_string(step) + " rows per step");
  std::string row = e.fresh("c0"), col = e.fresh("c1");
  e.line() << "const int " << row << " = (tid * " << vec << ") / " << cols << ";\n";
  e.line() << "const int " << col << " = (tid * " << vec << ") % " << cols << ";\n";
  std::vector<std::string> base = src.baseCoords({row, col});
  std::string from = e.fresh("src"), to = e.fresh("dst"), lo = e.fresh("rows_lo"), hi = e.fresh("rows_hi");
  std::string type = KernelEmitter::cType(g.element);
  e.line() << "const " << type << " *const " << from << " = &" << g.var << "[" << e.linearIndex(g, base) << "];\n";
  e.line() << "const unsigned " << to << " = " << e.sharedAddress(s, e.sharedIndex(s, [&] {
    std::vector<std::string> tileCoords;
    size_t k = 0;
    for (int64_t x : s.shape)
      tileCoords.push_back(x == 1 ? "0" : (k++ == 0 ? row : col));
    return tileCoords;
  }())) << ";\n";
  // Bounds: every dim but the rows' once; the rows' as the step range [lo, hi) of rows inside the tensor, clamped to
  // the tile so that each chunk compares two ints.
  std::string rowCoord = base[rowDim];
  std::string fixed = e.boundsCheck(src, base, rowDim);
  std::string rowsTotal = std::to_string(rows);
  e.line() << "const int " << lo << " = (int)min(max(-(long long)(" << rowCoord << "), 0LL), " << rowsTotal
           << "LL);\n";
  e.line() << "const int " << hi << " = (int)min(max((long long)(" << g.dims[rowDim] << ") - (long long)("
           << rowCoord << "), 0LL), " << rowsTotal << "LL);\n";
  std::string it = e.fresh("it");
  e.line() << "#pragma unroll\n";
  e.open("for (int " + it + " = 0; " + it + " < " + std::to_string(iterations) + "; ++" + it + ")");
  std::string stepRows = it + " * " + std::to_string(step);
  std::string pred = lo + " <= " + stepRows + " && " + stepRows + " < " + hi + (fixed.empty() ? "" : " && " + fixed);
  std::string address = from + " + (long long)" + stepRows + " * " + (stride.empty() ? "1" : stride);
  std::string shared = "(" + to + " + " + std::to_string(delta * bytes) + "u * (unsigned)" + it + ")";
  if (e.issuesAsyncCopies())
    e.line() << "tilec::device::cp_async_16(" << shared << ", " << address << ", " << pred << ");\n";
  else
    e.line() << "tilec::device::store16_shared(" << shared << ", tilec::device::load16_pred(" << address << ", "
             << pred << "));\n";
  e.close();
  e.close();
  return true;
}

/// #tile.copy<chunks>: 16-byte copies from a global region into a whole shared tile of the same dtype, when every
/// 16-byte chunk is either entirely inside the tensor or entirely outside it (gpu::vectorCopyElements).
static void emitVectorGlobalToShared(KernelEmitter &e, CopyOperands copy, const TileRef &src, const TileRef &dst,
                                     int64_t vec) {
  const Buffer &g = *src.buffer, &s = *dst.buffer;
  std::vector<int64_t> shape = squeeze(s.shape);
  int64_t elements = 1;
  for (int64_t x : shape)
    elements *= x;
  int64_t chunks = elements / vec, iterations = (chunks + e.blockThreads() - 1) / e.blockThreads();
  std::string it = e.fresh("it");
  e.open("{ // copy " + gpu::nameOf(copy.getSource()) + " -> " + s.var + ": 16-byte vectors, " +
         std::to_string(chunks) + " chunks");
  e.line() << "#pragma unroll\n";
  e.open("for (int " + it + " = 0; " + it + " < " + std::to_string(iterations) + "; ++" + it + ")");
  std::string chunk = e.fresh("chunk");
  e.line() << "const int " << chunk << " = tid + " << it << " * " << e.blockThreads() << ";\n";
  if (chunks % e.blockThreads() != 0)
    e.open("if (" + chunk + " < " + std::to_string(chunks) + ")");
  // Unflatten the chunk's first element over the squeezed shape.
  std::vector<std::string> coords(shape.size());
  int64_t stride = 1;
  for (int d = int(shape.size()) - 1; d >= 0; --d) {
    std::string c = e.fresh("c" + std::to_string(d));
    std::string flat = "(" + chunk + " * " + std::to_string(vec) + ")";
    std::string expr = stride == 1 ? flat : "(" + flat + " / " + std::to_string(stride) + ")";
    if (d > 0)
      expr = "(" + expr + " % " + std::to_string(shape[d]) + ")";
    e.line() << "const int " << c << " = " << expr << ";\n";
    coords[d] = c;
    stride *= shape[d];
  }
  std::vector<std::string> base = src.baseCoords(coords);
  std::string inBounds = e.boundsCheck(src, base);
  std::vector<std::string> tileCoords;
  size_t k = 0;
  for (int64_t x : s.shape)
    tileCoords.push_back(x == 1 ? "0" : coords[k++]);
  if (e.issuesAsyncCopies()) // zero-filled where out of bounds, like load16_pred
    e.line() << "tilec::device::cp_async_16(" << e.sharedAddress(s, e.sharedIndex(s, tileCoords)) << ", &" << g.var
             << "[" << e.linearIndex(g, base) << "], " << (inBounds.empty() ? "true" : inBounds) << ");\n";
  else
    e.line() << "tilec::device::store16_shared(" << e.sharedAddress(s, e.sharedIndex(s, tileCoords)) << ", "
             << "tilec::device::load16_pred(&" << g.var << "[" << e.linearIndex(g, base) << "], "
             << (inBounds.empty() ? "true" : inBounds) << "));\n";
  if (chunks % e.blockThreads() != 0)
    e.close();
  e.close();
  e.close();
}

/// #tile.copy<fragment_vectors>: global <-> distributed fragment with one predicated vector access per group of
/// `width` slots (tile-plan-copies checked that `width` consecutive slots of every thread hold consecutive, aligned
/// elements of the tensor's last dim).
static void emitVectorFragmentCopy(KernelEmitter &e, CopyOperands copy, const TileRef &global, const Buffer &fragment,
                                   bool isLoad, int64_t width) {
  const FragmentLayout &l = *fragment.layout;
  const Buffer &g = *global.buffer;
  VectorWidth vw = *vectorWidth(width * gpu::elementBytes(g.element));
  std::string what = "copy " + gpu::nameOf(copy.getSource()) + " -> " + gpu::nameOf(copy.getTarget()) + ": " +
                     std::to_string(width) + "-element vectors";
  SlotLoop sl = e.openSlotLoop(l, what, width);
  std::vector<std::string> base = global.baseCoords(squeezeCoords(fragment.shape, sl.coords));
  std::string inBounds = e.boundsCheck(global, base);
  std::string address = "&" + g.var + "[" + e.linearIndex(g, base) + "]";
  std::string raw = e.fresh("raw"), elements = e.fresh("elements");
  std::string element = KernelEmitter::cType(g.element);
  if (isLoad) {
    e.line() << "const " << vw.type << " " << raw << " = tilec::device::load" << vw.suffix << "_pred(" << address
             << ", " << (inBounds.empty() ? "true" : inBounds) << ");\n";
    e.line() << "const " << element << " *" << elements << " = reinterpret_cast<const " << element << " *>(&" << raw
             << ");\n";
    for (int64_t k = 0; k < width; ++k)
      e.line() << fragment.var << "[" << sl.slot << " + " << k << "] = "
               << e.convert(elements + "[" + std::to_string(k) + "]", g.element, fragment.element) << ";\n";
  } else {
    std::string guard = sl.primary;
    if (!inBounds.empty())
      guard = guard.empty() ? inBounds : guard + " && " + inBounds;
    e.line() << vw.type << " " << raw << ";\n";
    e.line() << element << " *" << elements << " = reinterpret_cast<" << element << " *>(&" << raw << ");\n";
    for (int64_t k = 0; k < width; ++k)
      e.line() << elements << "[" << k << "] = "
               << e.convert(fragment.var + "[" + sl.slot + " + " + std::to_string(k) + "]", fragment.element,
                            g.element)
               << ";\n";
    e.line() << "tilec::device::store" << vw.suffix << "_pred(" << address << ", " << raw << ", "
             << (guard.empty() ? "true" : guard) << ");\n";
  }
  e.closeSlotLoop(l);
}

/// #tile.copy<packed_pairs>: a whole distributed fragment into a whole 2-d shared tile of 16-bit floats of the same
/// shape, two elements per 32-bit store (tile-plan-copies checked that slots 2s and 2s + 1 of every thread hold
/// (r, c) and (r, c + 1) with c even; mma accumulators do: flash attention's dS). With `separable` (lane_index), the
/// store's element index is the thread's swizzled index once, then per slot pair an XOR of the slot's column offset
/// and an add of its row offset (the pass checked that identity for every thread and slot): a separately swizzled
/// index per slot pair is what NVVM would otherwise hoist out of a pipelined loop, one register each (32 of them
/// for the backward pass's dS at d=128, which then spilled).
static void emitPackedFragmentToShared(KernelEmitter &e, CopyOperands copy, const TileRef &src, const TileRef &dst,
                                       bool separable) {
  const Buffer &f = *src.buffer, &s = *dst.buffer;
  const FragmentLayout &l = *f.layout;
  int64_t cols = s.shape[1];
  e.open("{ // copy " + gpu::nameOf(copy.getSource()) + " -> " + s.var + ": " + l.name() + ", 2 elements per store" +
         (separable ? ", index per thread ^ column + row offset" : ""));
  std::string lane = e.fresh("lane_index");
  if (separable)
    e.line() << "const int " << lane << " = " << e.sharedIndex(s, {e.threadPart(l, 0), e.threadPart(l, 1)}) << ";\n";
  std::string slot = e.fresh("slot");
  e.line() << (l.numSlots() <= 128 ? "#pragma unroll\n" : "#pragma unroll 1\n");
  e.open("for (int " + slot + " = 0; " + slot + " < " + std::to_string(l.numSlots()) + "; " + slot + " += 2)");
  std::string index =
      separable ? "((" + lane + " ^ (" + e.slotPart(l, 1, slot) + ")) + (" + e.slotPart(l, 0, slot) + ") * " +
                      std::to_string(cols) + ")"
                : e.sharedIndex(s, {e.threadPart(l, 0) + " + " + e.slotPart(l, 0, slot),
                                    e.threadPart(l, 1) + " + " + e.slotPart(l, 1, slot)});
  e.line() << "tilec::device::store4_shared(" << e.sharedAddress(s, index) << ", tilec::device::pack2("
           << e.convert(f.var + "[" + slot + "]", f.element, s.element) << ", "
           << e.convert(f.var + "[" + slot + " + 1]", f.element, s.element) << "));\n";
  e.close();
  e.close();
}

LogicalResult KernelEmitter::emitCopy(CopyOperands copy) {
  auto plan = copy.op->getAttrOfType<CopyPlanAttr>(gpu::kCopyPlanAttr);
  if (!plan)
    return copy.emitError("copy has no plan (run tile-plan-copies)");
  if (asyncCopies && plan.getKind() != CopyKind::Chunks && plan.getKind() != CopyKind::RowChunks)
    return copy.emitError("internal compiler error: an asynchronous copy must move 16-byte chunks, which "
                          "tile-multi-buffer checks");
  if (currentLoop) { // once per iteration of the enclosing parallel loop, by its thread
    if (plan.getKind() != CopyKind::Elementwise)
      return copy.emitError("internal compiler error: a copy inside a parallel loop is planned as ")
             << plan << " (tile-plan-copies plans it elementwise)";
    return emitElementwiseCopy(copy);
  }
  TileRef src = ref(copy.getSource()), dst = ref(copy.getTarget());
  int64_t vec = plan.getVector();
  // A dynamic last extent is checked at run time; an asynchronous copy (cp.async into the buffer of a later
  // iteration of a pipelined loop) whose check fails stores the same buffer element by element instead: the wait and
  // barrier before the iteration that reads the buffer order those stores as they order cp.async.
  auto check = [&](const TileRef &global) {
    return plan.getChecked() ? global.buffer->dims.back() + " % " + std::to_string(vec) + " == 0" : std::string();
  };
  switch (plan.getKind()) {
  case CopyKind::Chunks:
  case CopyKind::RowChunks:
    return withRuntimeCheck(
        *this, check(src),
        [&] {
          if (plan.getKind() == CopyKind::Chunks) {
            emitVectorGlobalToShared(*this, copy, src, dst, vec);
            return success();
          }
          if (!emitRowStridedGlobalToShared(*this, copy, src, dst, vec)) {
            copy.emitError("internal compiler error: the copy does not fit its plan ") << plan;
            return failure();
          }
          return success();
        },
        [&] { return emitElementwiseCopy(copy); });
  case CopyKind::FragmentVectors: {
    // Global <-> fragment, the fragment driving the copy.
    bool load = isDistributed(*dst.buffer) && isWhole(copy.getTarget());
    const Buffer &fragment = load ? *dst.buffer : *src.buffer;
    const TileRef &global = load ? src : dst;
    return withRuntimeCheck(
        *this, check(global),
        [&] {
          emitVectorFragmentCopy(*this, copy, global, fragment, load, vec);
          return success();
        },
        [&] { return emitElementwiseCopy(copy); });
  }
  case CopyKind::PackedPairs:
    emitPackedFragmentToShared(*this, copy, src, dst, plan.getLaneIndex());
    return success();
  case CopyKind::Elementwise:
    break;
  }
  return emitElementwiseCopy(copy);
}

LogicalResult KernelEmitter::emitElementwiseCopy(CopyOperands copy) {
  TileRef src = ref(copy.getSource()), dst = ref(copy.getTarget());
  Type from = src.buffer->element, to = dst.buffer->element;
  std::optional<FragmentLayout> driver, blockDriver;
  const std::vector<int64_t> *driverShape = nullptr;
  if (currentLoop) {
    // Once per iteration (openTileOpLoop); layout inference leaves no distributed fragment operand here.
  } else if (isDistributed(*dst.buffer) && isWhole(copy.getTarget())) {
    blockDriver = *dst.buffer->layout;
    driverShape = &dst.buffer->shape;
  } else if (isDistributed(*src.buffer) && isWhole(copy.getSource())) {
    blockDriver = *src.buffer->layout;
    driverShape = &src.buffer->shape;
  }
  if (!blockDriver) {
    bool everyThread = dst.buffer->layout && dst.buffer->layout->isReplicated();
    blockDriver = plainDriver(dst.squeezed(), threads, everyThread);
  }
  SlotLoop sl = openTileOpLoop(driver, *blockDriver, dst.squeezed(),
                               "copy " + gpu::nameOf(copy.getSource()) + " -> " + dst.buffer->var);
  std::vector<std::string> coords = driverShape ? squeezeCoords(*driverShape, sl.coords) : sl.coords;
  if (!driverShape && dst.squeezed().empty())
    coords.clear();
  std::string v = readElement(src, coords, sl);
  line() << writeElement(*this, dst, coords, sl, convert(v, from, to)) << "\n";
  closeSlotLoop(*driver);
  return success();
}

/// tile.discard: the block's threads drop, one line each at a time, the 128-byte L2 lines that lie wholly inside an
/// in-bounds row (the region's last dim) of the region. A row of B bytes holds at most B / 128 whole lines,
/// wherever it starts; lines it shares with bytes outside the region are kept, so nothing else is ever lost.
LogicalResult KernelEmitter::emitDiscard(DiscardOp op) {
  TileRef r = ref(op.getRegion());
  const Buffer &b = *r.buffer;
  const size_t rank = r.window.size();
  const int64_t elementBytes = gpu::elementBytes(b.element);
  const int64_t linesPerRow = r.window[rank - 1] * elementBytes / 128;
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d)
    rows *= r.window[d];
  if (linesPerRow == 0 || rows == 0) {
    line() << "// discard " << b.var << ": rows of " << r.window[rank - 1] * elementBytes
           << " bytes hold no whole 128-byte line\n";
    return success();
  }
  open("{ // discard " + b.var + ": the 128-byte lines inside " + std::to_string(rows) + " rows of " +
       std::to_string(r.window[rank - 1] * elementBytes) + " bytes");
  std::string n = fresh("line_index"), row = fresh("row");
  line() << "#pragma unroll\n";
  open("for (int " + n + " = tid; " + n + " < " + std::to_string(rows * linesPerRow) + "; " + n +
       " += " + std::to_string(threads) + ")");
  line() << "const int " << row << " = " << n << " / " << linesPerRow << ";\n";
  std::vector<std::string> base;
  int64_t stride = rows;
  for (size_t d = 0; d + 1 < rank; ++d) {
    stride /= r.window[d];
    std::string c = r.window[d] == 1 ? "0" : "(" + row + " / " + std::to_string(stride) + ") % " +
                                                 std::to_string(r.window[d]);
    base.push_back("(long long)(" + r.offsets[d] + ") + " + c);
  }
  std::string lo = fresh("lo"), hi = fresh("hi"), begin = fresh("begin"), at = fresh("line");
  const std::string &offset = r.offsets[rank - 1];
  line() << "const long long " << lo << " = (long long)(" << offset << ") > 0 ? (long long)(" << offset
         << ") : 0LL;\n";
  line() << "const long long " << hi << " = (long long)(" << offset << ") + " << r.window[rank - 1]
         << "LL < (long long)(" << b.dims[rank - 1] << ") ? (long long)(" << offset << ") + "
         << r.window[rank - 1] << "LL : (long long)(" << b.dims[rank - 1] << ");\n";
  base.push_back(lo);
  std::string inside = boundsCheck(r, base, int(rank - 1));
  open("if (" + (inside.empty() ? "" : inside + " && ") + lo + " < " + hi + ")");
  line() << "const unsigned long long " << begin << " = (unsigned long long)&" << b.var << "["
         << linearIndex(b, base) << "];\n";
  line() << "const unsigned long long " << at << " = ((" << begin << " + 127ULL) & ~127ULL) + (unsigned long long)("
         << n << " % " << linesPerRow << ") * 128ULL;\n";
  line() << "if (" << at << " + 128ULL <= " << begin << " + (unsigned long long)(" << hi << " - " << lo << ") * "
         << elementBytes << "ULL) tilec::device::discard_l2_line((const void *)" << at << ");\n";
  close();
  close();
  close();
  return success();
}

} // namespace tilec::cuda
