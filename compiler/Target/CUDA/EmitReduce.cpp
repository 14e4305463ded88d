// tile.reduce: a distributed fragment is folded in each thread, then across the lanes that share a result (warp
// shuffles), then across warps through the kernel's reduction scratch in shared memory. Shared, local and replicated
// sources are folded whole by the threads that hold each result.
#include "EmitterImpl.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::tile;

namespace tilec::cuda {

namespace {

bool isPowerOfTwo(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

bool shuffleable(const LayoutTerm &t) { return t.stride * t.extent <= 32 && isPowerOfTwo(t.stride) && isPowerOfTwo(t.extent); }

} // namespace

LogicalResult KernelEmitter::emitReduce(ReduceOp op) {
  TileRef src = ref(op.getSource()), dst = ref(op.getTarget());
  Type element = src.buffer->element;
  bool integer = element.isInteger(32);
  std::string accType = integer ? "int" : "float";
  std::string identity, combine;
  switch (op.getKind()) {
  case ReduceKind::Sum:
    identity = integer ? "0" : "0.0f";
    combine = "tilec::device::reduce_sum";
    break;
  case ReduceKind::Max:
    identity = integer ? "(-2147483647 - 1)" : "__int_as_float(0xff800000)";
    combine = "tilec::device::reduce_max";
    break;
  case ReduceKind::Min:
    identity = integer ? "2147483647" : "__int_as_float(0x7f800000)";
    combine = "tilec::device::reduce_min";
    break;
  }
  Type accT = integer ? element : Float32Type::get(kernel.getContext());
  int dim = static_cast<int>(op.getDim());
  const Buffer &sb = *src.buffer;
  bool distributed = sb.layout && !sb.layout->isReplicated() && src.offsets.empty();

  if (!distributed) {
    // Each result element is folded whole by the thread(s) producing it.
    bool everyThread = dst.buffer->layout && dst.buffer->layout->isReplicated();
    bool targetDrives = dst.buffer->layout && !everyThread && dst.offsets.empty();
    FragmentLayout driver = targetDrives ? *dst.buffer->layout
                            : everyThread ? FragmentLayout::replicated(dst.squeezed().empty() ? std::vector<int64_t>{1}
                                                                                              : dst.squeezed(), threads)
                                          : FragmentLayout::blocked(dst.squeezed().empty() ? std::vector<int64_t>{1}
                                                                                          : dst.squeezed(), threads, 1);
    SlotLoop sl = openSlotLoop(driver, "reduce " + sb.var + " dim " + std::to_string(dim) + " -> " + dst.buffer->var);
    std::vector<std::string> out = sl.coords;
    if (dst.squeezed().empty())
      out.clear();
    std::string acc = fresh("tc_acc"), k = fresh("k");
    line() << accType << " " << acc << " = " << identity << ";\n";
    // `dim` counts the dims of the operand's type, which keeps a whole tile's extents of 1 (a [1, 96] tile);
    // readElement takes squeezed coordinates, where such dims are gone.
    llvm::ArrayRef<int64_t> typeShape = cast<MemRefType>(op.getSource().getType()).getShape();
    int squeezedDim = static_cast<int>(llvm::count_if(typeShape.take_front(dim), [](int64_t e) { return e != 1; }));
    int64_t extent = typeShape[dim];
    open("for (int " + k + " = 0; " + k + " < " + std::to_string(extent) + "; ++" + k + ")");
    std::vector<std::string> in = out;
    if (extent != 1)
      in.insert(in.begin() + squeezedDim, k);
    line() << acc << " = " << combine << "(" << acc << ", " << convert(readElement(src, in, SlotLoop{}), element, accT)
           << ");\n";
    close();
    if (!op.getClear())
      line() << acc << " = " << combine << "(" << acc << ", "
             << convert(readElement(dst, out, sl), dst.buffer->element, accT) << ");\n";
    line() << writeElement(*this, dst, out, sl, convert(acc, accT, dst.buffer->element)) << "\n";
    closeSlotLoop(driver);
    return success();
  }

  const FragmentLayout &l = *sb.layout;
  FragmentLayout sliced = l.slice(dim);
  std::vector<int> dims;
  for (int d = 0; d < l.rank(); ++d)
    if (d != dim)
      dims.push_back(d);
  auto map = registerAccessMap(l, sliced, dims);
  if (!map)
    return op.emitError("internal: a layout'tc_s slice is not reachable from it");
  open("{ // reduce " + std::string(stringifyReduceKind(op.getKind())) + " " + sb.var + " dim " +
       std::to_string(dim) + " -> " + dst.buffer->var + ": " + l.name());
  std::string acc = fresh("tc_acc");
  line() << accType << " " << acc << "[" << sliced.numSlots() << "];\n";
  line() << "#pragma unroll\n";
  line() << "for (int tc_s = 0; tc_s < " << sliced.numSlots() << "; ++tc_s) " << acc << "[tc_s] = " << identity << ";\n";
  {
    SlotLoop sl = openSlotLoop(l, "fold in each thread");
    line() << acc << "[" << slotMapExpr(*map, sl.slot) << "] = " << combine << "(" << acc << "["
           << slotMapExpr(*map, sl.slot) << "], " << convert(sb.var + "[" + sl.slot + "]", element, accT) << ");\n";
    closeSlotLoop(l);
  }
  std::vector<LayoutTerm> scratchTerms;
  for (const LayoutTerm &t : l.threadTerms()) {
    if (t.dim != dim)
      continue;
    if (!shuffleable(t)) {
      scratchTerms.push_back(t);
      continue;
    }
    line() << "#pragma unroll\n";
    open("for (int tc_s = 0; tc_s < " + std::to_string(sliced.numSlots()) + "; ++tc_s)");
    for (int64_t offset = t.stride; offset < t.stride * t.extent; offset *= 2)
      line() << acc << "[tc_s] = " << combine << "(" << acc << "[tc_s], tilec::device::shfl_xor(" << acc << "[tc_s], "
             << offset << "));\n";
    close();
  }
  if (!scratchTerms.empty()) {
    auto offset = kernel->getAttrOfType<IntegerAttr>(gpu::kScratchAttr);
    if (!offset || offset.getInt() < 0)
      return op.emitError("reduction needs scratch shared memory that was not planned (run tile-plan-shared-memory)");
    int64_t elements = 1, combos = 1;
    for (int64_t e : sliced.shape())
      elements *= e;
    std::string combo, writer;
    for (const LayoutTerm &t : scratchTerms) {
      combo += (combo.empty() ? "" : " + ") + ("((tid / " + std::to_string(t.stride) + ") % " +
                                               std::to_string(t.extent) + ") * " + std::to_string(combos));
      combos *= t.extent;
    }
    // Writers: one thread per (warp combination, result element): lane-shuffled digits and other replicas zero.
    for (const LayoutTerm &t : l.threadTerms())
      if (t.dim == dim && shuffleable(t))
        writer += (writer.empty() ? "" : " && ") + ("(tid / " + std::to_string(t.stride) + ") % " +
                                                    std::to_string(t.extent) + " == 0");
    for (const LayoutTerm &t : l.replicaTerms())
      writer += (writer.empty() ? "" : " && ") + ("(tid / " + std::to_string(t.stride) + ") % " +
                                                  std::to_string(t.extent) + " == 0");
    std::string scratch = fresh("scratch");
    line() << accType << " *const " << scratch << " = reinterpret_cast<" << accType << " *>(smem + "
           << offset.getInt() << ");\n";
    auto linear = [&](const std::string &slot) {
      std::string e;
      for (int d = 0; d < sliced.rank(); ++d) {
        std::string c = "(" + threadPart(sliced, d) + " + " + slotPart(sliced, d, slot) + ")";
        e = e.empty() ? c : "(" + e + ") * " + std::to_string(sliced.shape()[d]) + " + " + c;
      }
      return e.empty() ? std::string("0") : e;
    };
    // A padded layout (a [64, 48] tile spread as 64 columns) has slots past the tile's extents: they hold no
    // element and have no place in the scratch, which has one per element (writing them ran past the scratch's end
    // into whatever followed; compute-sanitizer-free GPU runs showed it as an illegal address, kernel-fuzz k20).
    std::string inTile;
    if (sliced.hasPadding())
      for (int d = 0; d < sliced.rank(); ++d)
        inTile += (inTile.empty() ? "" : " && ") + ("(" + threadPart(sliced, d) + " + " + slotPart(sliced, d, "tc_s") +
                                                   ") < " + std::to_string(sliced.shape()[d]));
    line() << "__syncthreads(); // the scratch may still be read by an earlier reduction\n";
    line() << "#pragma unroll\n";
    open("for (int tc_s = 0; tc_s < " + std::to_string(sliced.numSlots()) + "; ++tc_s)");
    std::string writeIf = writer.empty() ? inTile : inTile.empty() ? writer : writer + " && " + inTile;
    line() << (writeIf.empty() ? "" : "if (" + writeIf + ") ") << scratch << "[(" << combo << ") * " << elements
           << " + " << linear("tc_s") << "] = " << acc << "[tc_s];\n";
    close();
    line() << "__syncthreads();\n";
    line() << "#pragma unroll\n";
    open("for (int tc_s = 0; tc_s < " + std::to_string(sliced.numSlots()) + "; ++tc_s)");
    line() << acc << "[tc_s] = " << identity << ";\n";
    // A padding slot reads element 0 instead (its result is never used): a branch around the loop here kept NVVM
    // from unrolling the slot loop, which put the accumulators in local memory (ptxas: 24 bytes of spill).
    std::string at = inTile.empty() ? linear("tc_s") : "(" + inTile + " ? " + linear("tc_s") + " : 0)";
    line() << "for (int tc_w = 0; tc_w < " << combos << "; ++tc_w) " << acc << "[tc_s] = " << combine << "(" << acc
           << "[tc_s], " << scratch << "[tc_w * " << elements << " + " << at << "]);\n";
    close();
  }
  // Into the target: a fragment in the slice layout slot by slot; shared or global memory by the primary threads.
  const Buffer &tb = *dst.buffer;
  if (tb.layout && !tb.layout->isReplicated()) {
    if (*tb.layout != sliced || !dst.offsets.empty())
      return op.emitError("reduction target is not in the reduction'tc_s layout (tile-infer-layouts converts such targets)");
    line() << "#pragma unroll\n";
    open("for (int tc_s = 0; tc_s < " + std::to_string(sliced.numSlots()) + "; ++tc_s)");
    std::string v = acc + "[tc_s]";
    if (!op.getClear())
      v = combine + "(" + convert(tb.var + "[tc_s]", tb.element, accT) + ", " + v + ")";
    line() << tb.var << "[tc_s] = " << convert(v, accT, tb.element) << ";\n";
    close();
  } else {
    SlotLoop sl = openSlotLoop(sliced, "store the reduction");
    // readElement and writeElement take squeezed coordinates (the target's window without its extents of 1): a
    // [1, 8] target took the unit dim's coordinate for its column, and every row sum went into element 0.
    std::vector<std::string> out = squeezeCoords(sliced.shape(), sl.coords);
    std::string v = acc + "[" + sl.slot + "]";
    if (!op.getClear())
      v = combine + "(" + convert(readElement(dst, out, sl), tb.element, accT) + ", " + v + ")";
    line() << writeElement(*this, dst, out, sl, convert(v, accT, tb.element)) << "\n";
    closeSlotLoop(sliced);
  }
  close();
  return success();
}

} // namespace tilec::cuda
