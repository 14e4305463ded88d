// The kernel frame (signature, shared memory, register tiles), op dispatch and the helpers the op families share.
// Scalar code (arith, math, scf) is in EmitScalar.cpp.
#include "EmitterImpl.h"
#include "tilec/Target/CUDA/CudaEmitter.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstring>
#include <numeric>

using namespace mlir;
using namespace tilec;
using namespace tilec::tile;

namespace tilec::cuda {

std::vector<int64_t> TileRef::squeezed() const {
  std::vector<int64_t> s;
  for (int64_t e : window)
    if (e != 1)
      s.push_back(e);
  return s;
}

std::vector<std::string> TileRef::baseCoords(const std::vector<std::string> &coords) const {
  std::vector<std::string> out;
  size_t k = 0;
  for (size_t d = 0; d < window.size(); ++d) {
    std::string local = window[d] == 1 ? "0" : (k < coords.size() ? coords[k++] : "0");
    if (offsets.empty())
      out.push_back(local);
    else if (local == "0")
      out.push_back(offsets[d]);
    else
      out.push_back("(" + offsets[d] + " + " + local + ")");
  }
  return out;
}

raw_ostream &KernelEmitter::line() { return out; }

void KernelEmitter::open(const std::string &head) {
  // "{ // comment" opens a plain scope; anything else is a statement head.
  out << head << (head.rfind("{ //", 0) == 0 ? "\n" : " {\n");
  out.indent();
}

void KernelEmitter::close() {
  out.unindent();
  out << "}\n";
}

void KernelEmitter::shadowThreadIndex(const std::string &why) {
  std::string raw = fresh("tid_reread");
  line() << "int " << raw << "; asm volatile(\"mov.u32 %0, %%tid.x;\" : \"=r\"(" << raw << ")); // " << why
         << "\n";
  line() << "const int tid = " << raw << ";\n";
}

std::string KernelEmitter::fresh(const std::string &hint) {
  static const llvm::StringSet<> reserved = {
      "auto",  "bool",   "break", "case",   "char",   "const",   "continue", "default", "do",    "double",
      "else",  "enum",   "extern", "float", "for",    "goto",    "if",       "int",     "long",  "new",
      "delete", "return", "short", "signed", "sizeof", "static",  "struct",   "switch",  "this",  "unsigned",
      "void",  "while",  "class", "namespace", "template", "typename", "using", "operator", "tid", "lane",
      "warp",  "smem",   "tilec", "min",   "max",    "exp2",    "log2",     "private", "public", "volatile",
      "union", "true",   "false", "inline", "register", "typedef", "asm", "friend", "virtual", "try", "catch",
      "throw", "and", "or", "not", "xor", "bitand", "bitor", "compl"};
  std::string base;
  for (char c : hint)
    base += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0])))
    base = "v" + base;
  if (reserved.contains(base) || base.rfind("__", 0) == 0)
    base += "_";
  // Names the op families use internally start with tc_; a source name never does after this.
  if (base.rfind("tc_", 0) == 0)
    base = "u" + base;
  std::string name = base;
  for (int i = 1; std::find(usedNames.begin(), usedNames.end(), name) != usedNames.end(); ++i)
    name = base + "_" + std::to_string(i);
  usedNames.push_back(name);
  return name;
}

std::string KernelEmitter::cType(Type t) {
  if (t.isIndex() || t.isInteger(64))
    return "long long";
  if (t.isInteger(1))
    return "bool";
  if (t.isInteger(32))
    return "int";
  if (t.isInteger(8))
    return "signed char";
  if (t.isF32())
    return "float";
  if (t.isF64())
    return "double";
  if (t.isBF16())
    return "tilec::device::bf16";
  if (t.isF16())
    return "tilec::device::f16";
  return "/*unsupported type*/ void";
}

std::string KernelEmitter::value(Value v) {
  auto it = names.find(v);
  if (it != names.end())
    return it->second;
  // A value the emitter printed no definition for (an op it skipped, or one defined in another scope): reported at
  // the op being emitted (emitOp) rather than printed as a made-up value.
  if (unsupportedAccess.empty())
    unsupportedAccess = "a value it has not defined in this scope";
  return "0";
}

const Buffer &KernelEmitter::buffer(Value v) { return buffers.find(gpu::baseBuffer(v))->second; }

TileRef KernelEmitter::ref(Value operand) {
  TileRef r;
  r.buffer = &buffer(operand);
  if (auto region = operand.getDefiningOp<RegionOp>()) {
    for (Value o : region.getOffsets())
      r.offsets.push_back(value(o));
    auto sizes = region.getSizes();
    r.window.assign(sizes.begin(), sizes.end());
    if (auto pad = region.getPad())
      r.pad = pad->convertToDouble();
  } else {
    r.window = r.buffer->shape;
  }
  return r;
}

static std::string digitExpr(const std::string &x, const LayoutTerm &t, int64_t total) {
  std::string e = x;
  if (t.stride != 1)
    e = "(" + e + " / " + std::to_string(t.stride) + ")";
  if (t.stride * t.extent < total)
    e = "(" + e + " % " + std::to_string(t.extent) + ")";
  if (t.scale != 1)
    e = e + " * " + std::to_string(t.scale);
  return e;
}

std::string KernelEmitter::threadPart(const FragmentLayout &l, int dim) const {
  std::string e;
  for (const LayoutTerm &t : l.threadTerms())
    if (t.dim == dim)
      e += (e.empty() ? "" : " + ") + digitExpr("tid", t, threads);
  return e.empty() ? "0" : e;
}

std::string KernelEmitter::slotPart(const FragmentLayout &l, int dim, const std::string &slot) const {
  std::string e;
  for (const LayoutTerm &t : l.slotTerms())
    if (t.dim == dim)
      e += (e.empty() ? "" : " + ") + digitExpr(slot, t, l.numSlots());
  return e.empty() ? "0" : e;
}

std::string KernelEmitter::primaryCondition(const FragmentLayout &l) const {
  std::string e;
  for (const LayoutTerm &t : l.replicaTerms()) {
    LayoutTerm d = t;
    d.scale = 1;
    e += (e.empty() ? "" : " && ") + digitExpr("tid", d, threads) + " == 0";
  }
  return e;
}

std::string KernelEmitter::slotMapExpr(const SlotMap &map, const std::string &slot) const {
  std::string e = std::to_string(map.offset);
  for (const LayoutTerm &t : map.terms) {
    LayoutTerm d = t;
    e += " + " + digitExpr(slot, d, std::numeric_limits<int64_t>::max());
  }
  return e;
}

SlotLoop KernelEmitter::openSlotLoop(const FragmentLayout &l, const std::string &what, int64_t step, int64_t first,
                                     int64_t end, bool declarePrimary) {
  if (end < 0)
    end = l.numSlots();
  SlotLoop loop;
  loop.layout = &l;
  loop.slot = fresh("slot");
  open("{ // " + what + ": " + l.name());
  std::vector<std::string> bases;
  for (int d = 0; d < l.rank(); ++d) {
    std::string base = fresh("base" + std::to_string(d));
    // An op's body need not use every coordinate or the primary flag: [[maybe_unused]] keeps NVRTC's log clean.
    line() << "[[maybe_unused]] const int " << base << " = " << threadPart(l, d) << ";\n";
    bases.push_back(base);
  }
  std::string primary = declarePrimary ? primaryCondition(l) : std::string();
  if (!primary.empty()) {
    loop.primary = fresh("primary");
    line() << "[[maybe_unused]] const bool " << loop.primary << " = " << primary << ";\n";
  }
  line() << (end - first <= 128 ? "#pragma unroll\n" : "#pragma unroll 1\n");
  open("for (int " + loop.slot + " = " + std::to_string(first) + "; " + loop.slot + " < " + std::to_string(end) + "; " +
       (step == 1 ? "++" + loop.slot : loop.slot + " += " + std::to_string(step)) + ")");
  std::string inBounds;
  for (int d = 0; d < l.rank(); ++d) {
    std::string c = fresh("c" + std::to_string(d));
    line() << "[[maybe_unused]] const int " << c << " = " << bases[d] << " + " << slotPart(l, d, loop.slot) << ";\n";
    loop.coords.push_back(c);
    if (l.hasPadding())
      inBounds += (inBounds.empty() ? "" : " && ") + c + " < " + std::to_string(l.shape()[d]);
  }
  if (!inBounds.empty())
    open("if (" + inBounds + ")");
  return loop;
}

SlotLoop KernelEmitter::openTileOpLoop(std::optional<FragmentLayout> &driver, const FragmentLayout &blockDriver,
                                       const std::vector<int64_t> &shape, const std::string &what) {
  if (!currentLoop) {
    driver = blockDriver;
    return openSlotLoop(*driver, what);
  }
  driver = perIterationDriver(shape, threads);
  SlotLoop sl = openSlotLoop(*driver, what + ", once per iteration of the enclosing parallel loop", 1, 0, -1,
                             /*declarePrimary=*/false);
  sl.primary = currentLoop->primary;
  return sl;
}

void KernelEmitter::closeSlotLoop(const FragmentLayout &l) {
  if (l.hasPadding())
    close();
  close(); // for
  close(); // scope
}

std::string KernelEmitter::linearIndex(const Buffer &b, const std::vector<std::string> &coords) const {
  std::string e;
  for (size_t d = 0; d < coords.size(); ++d) {
    if (d == 0)
      e = coords[0];
    else
      e = "(" + e + ") * " + b.dims[d] + " + " + coords[d];
  }
  return e.empty() ? "0" : e;
}

std::string KernelEmitter::sharedIndex(const Buffer &b, const std::vector<std::string> &coords) const {
  if (b.swizzle.none() || coords.size() < 2)
    return linearIndex(b, coords);
  std::vector<std::string> rows(coords.begin(), coords.end() - 1);
  Buffer rowsOnly = b;
  rowsOnly.dims.pop_back();
  std::string row = linearIndex(rowsOnly, rows);
  if (b.swizzle.panelledRows())
    return "tilec::device::panelled_swizzled_index<" + std::to_string(b.swizzle.mask) + ", " +
           std::to_string(16 / gpu::elementBytes(b.element)) + ", " + std::to_string(b.swizzle.panelCols) + ", " +
           std::to_string(b.swizzle.panelRows) + ">(" + row + ", " + coords.back() + ")";
  return "tilec::device::swizzled_index<" + std::to_string(b.swizzle.mask) + ", " +
         std::to_string(b.swizzle.rowDivisor) + ", " + std::to_string(16 / gpu::elementBytes(b.element)) + ", " +
         std::to_string(b.shape.back()) + ">(" + row + ", " + coords.back() + ")";
}

std::string KernelEmitter::sharedAddress(const Buffer &b, const std::string &index) const {
  return "(" + b.addrVar + " + " + std::to_string(gpu::elementBytes(b.element)) + "u * (unsigned)(" + index + "))";
}

std::string KernelEmitter::boundsCheck(const TileRef &r, const std::vector<std::string> &base, int skipDim) const {
  std::string e;
  for (size_t d = 0; d < base.size(); ++d) {
    bool windowInside = r.offsets.empty() && r.buffer->shape[d] != ShapedType::kDynamic;
    if (windowInside || int(d) == skipDim)
      continue;
    e += (e.empty() ? "" : " && ") + std::string("(unsigned long long)(") + base[d] + ") < (unsigned long long)(" +
         r.buffer->dims[d] + ")";
  }
  return e;
}

std::string KernelEmitter::convert(const std::string &expr, Type from, Type to) const {
  if (from == to)
    return expr;
  std::string f = from.isF32() ? expr : (from.isBF16() || from.isF16()) ? "tilec::device::to_float(" + expr + ")"
                                                                        : "(float)(" + expr + ")";
  if (to.isF32())
    return f;
  if (to.isBF16())
    return "tilec::device::to_bf16(" + f + ")";
  if (to.isF16())
    return "tilec::device::to_f16(" + f + ")";
  if (to.isInteger(32) && from.isInteger())
    return "(int)(" + expr + ")";
  // Truncated toward zero, as int() and the CPU backend's arith.fptosi (it rounded to nearest: a copy of 2.7 into
  // an i32 tile gave 3 on the GPU and 2 on the CPU).
  if (to.isInteger(32))
    return "__float2int_rz(" + f + ")";
  return "(" + cType(to) + ")(" + expr + ")";
}

int64_t KernelEmitter::knownDivisor(Value v) const { return gpu::knownDivisor(v); }

LogicalResult KernelEmitter::emitBlock(Block &block) {
  for (Operation &op : block)
    if (failed(emitOp(&op)))
      return failure();
  return success();
}

LogicalResult KernelEmitter::emitOp(Operation *op) {
  if (failed(emitOpBody(op)))
    return failure();
  if (unsupportedAccess.empty())
    return success();
  std::string what = std::move(unsupportedAccess);
  unsupportedAccess.clear();
  return op->emitError() << "internal compiler error: the CUDA emitter cannot lower this op (" << what
                         << "); please report it with this kernel";
}

LogicalResult KernelEmitter::emitOpBody(Operation *op) {
  if (isa<AllocOp, RegionOp, scf::YieldOp>(op))
    return success();
  // Ops that spread their work over (or synchronize) the block's threads cannot run once per iteration of a
  // parallel loop; tile-infer-layouts refuses them there.
  if (currentLoop && isa<ParallelOp, GemmOp, ReduceOp, DiscardOp, BarrierOp, ArriveLastOp>(op))
    return op->emitError("internal compiler error: this op cannot run inside a parallel loop on the GPU, and "
                         "tile-infer-layouts should have refused it; please report it with this kernel");
  if (isa<BarrierOp>(op)) {
    emitBarrier();
    return success();
  }
  if (auto wait = dyn_cast<WgmmaWaitOp>(op))
    return emitWgmmaWait(wait);
  if (auto loop = dyn_cast<ParallelOp>(op))
    return emitParallel(loop);
  if (auto arrive = dyn_cast<ArriveLastOp>(op)) {
    // The barrier orders every thread's earlier writes before thread 0's count, an acq_rel atomic at GPU scope:
    // its release half publishes them (cumulatively, what the barrier made thread 0 observe), its acquire half,
    // in the last block, orders the reads that follow the second barrier after every other block's release. The
    // fence of every thread that this replaced (__threadfence, the CUDA guide's pattern) made the flash-attention
    // backward's split main kernel 20 % slower at d=128 on an H100.
    std::string last = fresh("last"), mine = fresh("arrived_last");
    emitBarrier();
    line() << "int " << mine << " = 0;\n";
    line() << "if (threadIdx.x == 0) " << mine << " = tilec::device::arrive_acq_rel(&"
           << buffer(arrive.getCounters()).var << "[" << value(arrive.getIndex()) << "]) == "
           << arrive.getCount() - 1 << ";\n";
    line() << "const bool " << last << " = __syncthreads_or(" << mine << ") != 0;\n";
    names[arrive.getLast()] = last;
    return success();
  }
  if (auto copy = dyn_cast<CopyOp>(op)) {
    if (copy->hasAttr(gpu::kPrefetchAttr))
      return copy.emitError("internal compiler error: a copy marked tile.prefetch is left in the kernel (its loop "
                            "was not expanded by tile-expand-pipelines)");
    return emitCopy(copy);
  }
  if (auto view = dyn_cast<StageViewOp>(op))
    return emitStageView(view);
  if (auto copy = dyn_cast<AsyncCopyOp>(op))
    return emitAsyncCopy(copy);
  if (auto commit = dyn_cast<AsyncCommitOp>(op))
    return emitAsyncCommit(commit);
  if (auto wait = dyn_cast<AsyncWaitOp>(op))
    return emitAsyncWait(wait);
  if (auto fill = dyn_cast<FillOp>(op))
    return emitFill(fill);
  if (auto discard = dyn_cast<DiscardOp>(op))
    return emitDiscard(discard);
  if (auto atomic = dyn_cast<AtomicAddOp>(op))
    return emitAtomic(AtomicUpdate::of(atomic));
  if (auto atomic = dyn_cast<AtomicRmwOp>(op))
    return emitAtomic(AtomicUpdate::of(atomic));
  if (auto gemm = dyn_cast<GemmOp>(op))
    return emitGemm(gemm);
  if (auto reduce = dyn_cast<ReduceOp>(op))
    return emitReduce(reduce);
  if (isa<memref::LoadOp, memref::StoreOp>(op))
    return emitElementAccess(op);
  if (isa<PipelinedOp>(op))
    return op->emitError("internal compiler error: a tile.pipelined loop reached the CUDA emitter (run "
                         "tile-expand-pipelines)");
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    if (loop.getNumResults() != 0)
      return loop.emitError("loops that carry values are not supported by the CUDA emitter yet");
    std::string iv = fresh("i");
    names[loop.getInductionVar()] = iv;
    open("for (long long " + iv + " = " + value(loop.getLowerBound()) + "; " + iv + " < " +
         value(loop.getUpperBound()) + "; " + iv + " += " + value(loop.getStep()) + ")");
    // tile.reread_thread_index (tile-multi-buffer): `tid`, shadowed by a value NVVM cannot prove equal to the
    // kernel's, so the index arithmetic built on it is recomputed in each iteration rather than hoisted into
    // registers held across the loop.
    if (loop->hasAttr(gpu::kRereadThreadIndexAttr))
      shadowThreadIndex("register pressure: recompute indices here");
    LogicalResult r = emitBlock(*loop.getBody());
    close();
    return r;
  }
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    std::vector<std::string> results;
    for (Value r : ifOp.getResults()) {
      std::string n = fresh("v" + std::to_string(counter++));
      line() << cType(r.getType()) << " " << n << ";\n";
      names[r] = n;
      results.push_back(n);
    }
    auto yieldInto = [&](Block &b) {
      auto y = cast<scf::YieldOp>(b.getTerminator());
      for (auto [i, v] : llvm::enumerate(y.getOperands()))
        line() << results[i] << " = " << value(v) << ";\n";
    };
    open("if (" + value(ifOp.getCondition()) + ")");
    if (failed(emitBlock(ifOp.getThenRegion().front())))
      return failure();
    yieldInto(ifOp.getThenRegion().front());
    close();
    if (!ifOp.getElseRegion().empty()) {
      open("else");
      if (failed(emitBlock(ifOp.getElseRegion().front())))
        return failure();
      yieldInto(ifOp.getElseRegion().front());
      close();
    }
    return success();
  }
  return emitScalarOp(op);
}

LogicalResult KernelEmitter::emit() {
  // Parameters: every tensor's data pointer, then its dynamic extents (the launch plan passes them in this order).
  auto argNames = kernel->getAttrOfType<ArrayAttr>("tile.arg_names");
  std::vector<std::string> params;
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i) {
    Value arg = kernel.getArgument(i);
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (!type)
      return kernel.emitError("scalar kernel arguments are not supported by the CUDA emitter");
    Buffer b;
    b.space = MemorySpace::Global;
    b.var = fresh(argNames && i < argNames.size() ? cast<StringAttr>(argNames[i]).str() : "arg" + std::to_string(i));
    b.element = type.getElementType();
    b.shape.assign(type.getShape().begin(), type.getShape().end());
    params.push_back(cType(b.element) + " *__restrict__ " + b.var);
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (ShapedType::isDynamic(type.getDimSize(d))) {
        std::string dim = fresh(b.var + "_dim" + std::to_string(d));
        params.push_back("const long long " + dim);
        b.dims.push_back(dim);
      } else {
        b.dims.push_back(std::to_string(type.getDimSize(d)) + "LL");
      }
    }
    buffers[arg] = b;
  }
  kernel.walk([&](GemmOp gemm) { usesWgmma |= gemm->hasAttr(gpu::kWgmmaAttr); });
  // The waits are tile-schedule-wgmma-waits's: without any, wgmmas would still run when the block exits.
  if (usesWgmma && !kernel.walk([](WgmmaWaitOp) { return WalkResult::interrupt(); }).wasInterrupted())
    return kernel.emitError("a gemm runs on wgmma but the kernel has no tile.wgmma_wait (run "
                            "tile-schedule-wgmma-waits)");
  os << "extern \"C\" __global__ void __launch_bounds__(" << threads << ") " << kernel.getSymName() << "(";
  for (size_t i = 0; i < params.size(); ++i)
    os << (i ? ",\n    " : "") << params[i];
  os << ") {\n";
  out.indent();
  if (usesWgmma) {
    // wgmma's 128-byte swizzle is a function of the address bits, so its tiles start at 1024-byte boundaries;
    // tile-plan-shared-memory planned offsets from an aligned base and reserved 1024 bytes to align it here.
    line() << "extern __shared__ __align__(1024) unsigned char smem_unaligned[];\n";
    line() << "unsigned char *const smem = smem_unaligned + ((1024u - (tilec::device::shared_address(smem_unaligned) & "
              "1023u)) & 1023u);\n";
  } else {
    line() << "extern __shared__ __align__(128) unsigned char smem[];\n";
  }
  line() << "[[maybe_unused]] const unsigned smem_addr = tilec::device::shared_address(smem);\n";
  line() << "const int tid = threadIdx.x;\n";
  auto indexNames = kernel->getAttrOfType<ArrayAttr>("tile.index_names");
  const char *axes[] = {"x", "y", "z"};
  for (unsigned i = 0; i < kernel.getGridRank(); ++i) {
    std::string n = fresh(indexNames && i < indexNames.size() ? cast<StringAttr>(indexNames[i]).str()
                                                               : "block" + std::to_string(i));
    line() << "const long long " << n << " = blockIdx." << axes[i] << ";\n";
    names[kernel.getBlockIndex(i)] = n;
  }
  // Tiles, in program order: shared tiles as views into the dynamic buffer, fragments and locals as registers.
  LogicalResult result = success();
  kernel.walk([&](AllocOp alloc) {
    MemRefType type = alloc.getType();
    Buffer b;
    b.space = *getMemorySpaceOf(type);
    b.var = fresh(gpu::nameOf(alloc.getResult()));
    b.element = type.getElementType();
    b.shape.assign(type.getShape().begin(), type.getShape().end());
    for (int64_t e : b.shape)
      b.dims.push_back(std::to_string(e));
    std::string elem = cType(b.element);
    if (b.space == MemorySpace::Shared) {
      auto offset = alloc->getAttrOfType<IntegerAttr>(gpu::kOffsetAttr);
      std::optional<Swizzle::Kind> swizzle = layout::swizzleKindOf(alloc->getAttr(gpu::kSwizzleAttr));
      if (!offset || !swizzle) {
        result = alloc.emitError("shared tile has no planned offset and swizzle (run tile-plan-shared-memory)");
        return;
      }
      if (*swizzle != Swizzle::Kind::None) {
        std::optional<Swizzle> planned;
        if (type.getRank() == 2 || (type.getRank() > 2 && *swizzle != Swizzle::Kind::Xor8Panels))
          planned = Swizzle::ofKind(*swizzle, type.getShape()[0], type.getShape().back() * gpu::elementBytes(b.element),
                                    gpu::elementBytes(b.element));
        if (!planned) {
          result = alloc.emitError() << "the planned swizzle " << alloc->getAttr(gpu::kSwizzleAttr)
                                     << " does not fit this tile";
          return;
        }
        b.swizzle = *planned;
      }
      if (auto stages = alloc->getAttrOfType<IntegerAttr>(gpu::kStagesAttr)) {
        auto stride = alloc->getAttrOfType<IntegerAttr>(gpu::kStageBytesAttr);
        if (!stride || stride.getInt() % gpu::elementBytes(b.element) != 0) {
          result = alloc.emitError("multi-buffered shared tile has no planned stage size (run tile-plan-shared-memory)");
          return;
        }
        b.stages = stages.getInt();
        b.stageElements = stride.getInt() / gpu::elementBytes(b.element);
        b.stagesVar = fresh(b.var + "_stages");
        line() << elem << " *const " << b.stagesVar << " = reinterpret_cast<" << elem << " *>(smem + "
               << offset.getInt() << "); // " << b.stages << " buffers of " << type.getNumElements() << " x "
               << elem << ", swizzle " << b.swizzle.name() << "\n";
        b.stagesAddrVar = "(smem_addr + " + std::to_string(offset.getInt()) + "u)";
      } else {
        line() << elem << " *const " << b.var << " = reinterpret_cast<" << elem << " *>(smem + " << offset.getInt()
               << "); // " << type.getNumElements() << " x " << elem << ", swizzle " << b.swizzle.name() << "\n";
        b.addrVar = "(smem_addr + " + std::to_string(offset.getInt()) + "u)";
      }
    } else {
      b.layout = gpu::layoutOf(alloc.getResult(), threads);
      if (!b.layout) {
        result = alloc.emitError("fragment has no layout (run tile-infer-layouts)");
        return;
      }
      line() << elem << " " << b.var << "[" << b.layout->numSlots() << "]; // " << b.layout->name() << "\n";
    }
    buffers[alloc.getResult()] = b;
  });
  if (failed(result))
    return failure();
  result = emitBlock(kernel.getBodyBlock());
  out.unindent();
  os << "}\n";
  return result;
}

} // namespace tilec::cuda

namespace tilec {

LogicalResult emitCuda(ModuleOp module, llvm::raw_ostream &os) {
  std::string kernels;
  llvm::raw_string_ostream kernelsOs(kernels);
  std::map<std::string, std::string> functions;
  for (auto kernel : module.getOps<KernelOp>()) {
    kernelsOs << "\n";
    cuda::KernelEmitter emitter(kernel, kernelsOs, functions);
    if (failed(emitter.emit()))
      return failure();
  }
  os << "// Generated by tilec. Do not edit.\n";
  os << "#include \"tilec/device/all.cuh\"\n";
  if (!functions.empty()) {
    os << "\n#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n";
    for (auto &[name, text] : functions)
      os << text;
    os << "#endif\n";
  }
  os << kernels;
  return success();
}

} // namespace tilec
