// tile.gemm on Hopper's warpgroup mma (wgmma.mma_async m64nNk16, sm_90a), for gemms tile-infer-layouts marked
// `tile.wgmma`: every warp holds 16 whole rows of its warp tile and 4 warps share its columns, so each warpgroup
// (4 warps) owns a 64-row x N block and issues one wgmma per k-step of 16 for it. B, and A unless it is in registers, are read from shared
// memory by the tensor cores through descriptors of the 128-byte swizzle (tile-plan-shared-memory laid the tiles
// out for it: 1024-byte aligned, 128-byte panels where rows are wider). The accumulator's registers are
// mma.sync's, slot for slot, so the surrounding code is the same on every arch; emitGemm wraps this in
// `#if defined(__CUDA_ARCH_FEAT_SM90_ALL)` with the mma.sync lowering as the other branch.
//
// A gemm's wgmmas stay in flight after it (one commit group) until a `tile.wgmma_wait` that
// tile-schedule-wgmma-waits placed: wait_group N (N: the groups committed later, which stay in flight), then an
// empty asm on each register of the accumulators it waited for, so that the compiler cannot move their reads above
// the wait.
#include "EmitterImpl.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::tile;

namespace tilec::cuda {

namespace {

constexpr int64_t kPanelBytes = 128, kAtomBytes = 1024;

/// Defines (once per emitted file) the device function issuing one wgmma of this shape and returns its name.
/// Template parameters: the transpose immediates (TransA: A is M-major; TransB: B is N-major, i.e. K x N rows).
std::string wgmmaFunction(std::map<std::string, std::string> &functions, int64_t n, bool f16, bool registerA) {
  std::string type = f16 ? "f16" : "bf16";
  std::string name = "tilec_wgmma_m64n" + std::to_string(n) + "k16_" + type + (registerA ? "_rs" : "_ss");
  if (functions.count(name))
    return name;
  int64_t regs = n / 2;
  std::string text;
  llvm::raw_string_ostream os(text);
  int64_t aOperand = regs, bOperand = regs + (registerA ? 4 : 1), scaleOperand = bOperand + 1;
  os << "// D[64x" << n << "] (f32, this warpgroup's rows) += A[64x16] * B[16x" << n << "], " << type
     << (registerA ? "; A in registers (mma.sync's A fragment), B" : "; A and B") << " through shared-memory descriptors.\n";
  os << "template <" << (registerA ? "" : "int TransA, ") << "int TransB>\n";
  os << "__device__ __forceinline__ void " << name << "(float *d, "
     << (registerA ? "const unsigned *a" : "unsigned long long desc_a")
     << ", unsigned long long desc_b, int accumulate) {\n";
  os << "  asm volatile(\n";
  os << "      \"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" << scaleOperand << ", 0;\\n\"\n";
  os << "      \"wgmma.mma_async.sync.aligned.m64n" << n << "k16.f32." << type << "." << type << " {\"\n";
  for (int64_t r = 0; r < regs; r += 8) {
    os << "      \"";
    for (int64_t i = r; i < std::min(regs, r + 8); ++i)
      os << "%" << i << (i + 1 < regs ? ", " : "");
    os << "\"\n";
  }
  os << "      \"}, ";
  if (registerA)
    os << "{%" << aOperand << ", %" << aOperand + 1 << ", %" << aOperand + 2 << ", %" << aOperand + 3 << "}";
  else
    os << "%" << aOperand;
  os << ", %" << bOperand << ", p, 1, 1, ";
  if (registerA)
    os << "%" << scaleOperand + 1;
  else
    os << "%" << scaleOperand + 1 << ", %" << scaleOperand + 2;
  os << ";\\n}\\n\"\n      : ";
  for (int64_t i = 0; i < regs; ++i)
    os << "\"+f\"(d[" << i << "])" << (i + 1 < regs ? (i % 8 == 7 ? ",\n        " : ", ") : "\n");
  os << "      : ";
  if (registerA)
    os << "\"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), ";
  else
    os << "\"l\"(desc_a), ";
  os << "\"l\"(desc_b), \"r\"(accumulate), " << (registerA ? "" : "\"n\"(TransA), ") << "\"n\"(TransB)\n";
  os << "      : \"memory\");\n}\n";
  functions[name] = os.str();
  return name;
}

/// How a shared operand's descriptor steps: its base for this warpgroup, and the 16-byte units to add per k-step.
struct OperandWalk {
  std::string base;       // byte address (C expression) of this warpgroup's first element at k = 0
  int64_t leadingBytes;   // descriptor LBO
  std::string kStepUnits; // C expression in tc_kk: 16-byte units to add to the descriptor at k-step tc_kk
};

/// `rowsAlongK`: the tile is K x (M or N) (MN-major); else (M or N) x K (K-major). This warpgroup's block along M
/// or N is number `block` (an expression; "0" for the first) of `blockExtent` rows or columns: a multiple of 8 when
/// K-major (8-row groups), a multiple or a divisor of the panel width when MN-major (markWgmmaGemms checks both).
OperandWalk walkOperand(const Buffer &b, bool rowsAlongK, const std::string &block, int64_t blockExtent) {
  int64_t rows = b.shape[0], bytes = gpu::elementBytes(b.element), panelCols = kPanelBytes / bytes;
  int64_t stepsPerPanel = panelCols / 16;
  OperandWalk w;
  auto offset = [&](int64_t bytesPerBlock) {
    return block == "0" ? b.addrVar
                        : "(" + b.addrVar + " + (unsigned)" + block + " * " + std::to_string(bytesPerBlock) + "u)";
  };
  if (rowsAlongK) {
    // K x MN: 16 rows of K per step (two 1024-byte atoms); the block's columns start blockExtent / panelCols
    // panels in, panels `rows` x 128 bytes apart (the descriptor's leading offset). A block narrower than a panel
    // starts block % (panelCols / blockExtent) blocks into the row of panel block / (panelCols / blockExtent): the
    // start moves by a multiple of 16 bytes inside the 128-byte row, which the swizzle (applied to the address
    // bits of the 1024-byte-aligned atom) leaves where the copies put it, as a K-major k-step does.
    w.leadingBytes = rows * kPanelBytes;
    if (blockExtent % panelCols == 0 || block == "0") {
      w.base = offset(blockExtent / panelCols * rows * kPanelBytes);
    } else {
      std::string perPanel = std::to_string(panelCols / blockExtent);
      w.base = "(" + b.addrVar + " + (unsigned)(" + block + " / " + perPanel + ") * " +
               std::to_string(rows * kPanelBytes) + "u + (unsigned)(" + block + " % " + perPanel + ") * " +
               std::to_string(blockExtent * bytes) + "u)";
    }
    w.kStepUnits = "tc_kk * " + std::to_string(16 * kPanelBytes / 16);
  } else {
    // MN x K: a k-step moves 32 bytes within a 128-byte row of a panel; every `stepsPerPanel` steps the next panel.
    w.leadingBytes = 16;
    w.base = offset(blockExtent * kPanelBytes);
    w.kStepUnits = "(tc_kk / " + std::to_string(stepsPerPanel) + ") * " + std::to_string(rows * kPanelBytes / 16) +
                   " + (tc_kk % " + std::to_string(stepsPerPanel) + ") * 2";
  }
  return w;
}

} // namespace

LogicalResult KernelEmitter::emitWgmma(GemmOp gemm) {
  const Buffer &a = buffer(gemm.getA()), &b = buffer(gemm.getB()), &c = buffer(gemm.getC());
  std::optional<std::pair<int64_t, int64_t>> warps = gpu::mmaWarps(gemm);
  if (!warps)
    return gemm.emitError("gemm marked for wgmma has no warp partition");
  // Warps wm x wn: warpgroup g (warps 4g .. 4g+3) holds rows of M block g % (wm / 4) and the columns of N block
  // g / (wm / 4), as mma_c puts them (warp w: M index w % wm, N index w / wm).
  const auto [wm, wn] = *warps;
  int64_t m = c.shape[0], n = c.shape[1], tileN = wn > 0 ? n / wn : 0, groupsM = wm / 4;
  int64_t k = gemm.getTransposeA() ? a.shape[0] : a.shape[1], steps = k / 16;
  bool registerA = a.space != MemorySpace::Shared;
  if (wm % 4 || m != 16 * wm || tileN % 8 || tileN > 256 || k % 16 || c.layout->numSlots() != tileN / 2)
    return gemm.emitError("gemm marked for wgmma does not have one 64-row block per warpgroup");
  for (const Buffer *s : {&a, &b})
    if (s->space == MemorySpace::Shared && (s->shape.size() != 2 || s->swizzle.mask != 7 ||
                                            s->shape[1] * gpu::elementBytes(s->element) % kPanelBytes != 0))
      return gemm.emitError("a shared operand of a wgmma gemm is not in the 128-byte swizzle layout "
                            "(run tile-plan-shared-memory)");
  std::optional<SlotMap> aMap;
  if (registerA) {
    aMap = registerAccessMap(FragmentLayout::mmaOperandA(m, k, wm, wn), *a.layout, {0, 1});
    if (!aMap)
      return gemm.emitError("register A operand is not in the mma A layout");
  }
  std::string fn = wgmmaFunction(*functions, tileN, a.element.isF16(), registerA);
  bool transB = !gemm.getTransposeB(); // wgmma's "transposed" B is N-major: our K x N tile
  bool transA = gemm.getTransposeA();
  open("{ // gemm " + a.var + (gemm.getTransposeA() ? "^T" : "") + " x " + b.var + (gemm.getTransposeB() ? "^T" : "") +
       " -> " + c.var + ": wgmma m64n" + std::to_string(tileN) + "k16, warpgroups " + std::to_string(groupsM) + "x" +
       std::to_string(wn) + " of 64 x " + std::to_string(tileN) + (registerA ? ", A in registers" : ""));
  std::string blockM = groupsM == 1 ? "0" : wn == 1 ? "tc_group" : "(tc_group % " + std::to_string(groupsM) + ")";
  std::string blockN = wn == 1 ? "0" : groupsM == 1 ? "tc_group" : "(tc_group / " + std::to_string(groupsM) + ")";
  if (registerA)
    blockM = "0"; // A's registers are this warp's own rows
  if (blockM != "0" || blockN != "0")
    line() << "const int tc_group = tid / 128;\n";
  // `clear`: the first k-step ignores the accumulator (scale-d 0) rather than zeroing it first; zeroing registers
  // while an earlier gemm's wgmmas are in flight makes ptxas wait for those (C7517).
  std::string accumulate = gemm.getClear() ? "tc_kk > 0" : "1";
  if (registerA) {
    // Every k-step's A registers first: writing them between wgmmas would make ptxas fence (and wait) again.
    line() << "unsigned tc_a[" << steps << "][4];\n";
    line() << "#pragma unroll\n";
    open("for (int tc_kk = 0; tc_kk < " + std::to_string(steps) + "; ++tc_kk)");
    line() << "#pragma unroll\n";
    open("for (int tc_r = 0; tc_r < 4; ++tc_r)");
    std::string slot = "((tc_kk * 4 + tc_r) * 2";
    line() << "tc_a[tc_kk][tc_r] = tilec::device::pack2(" << a.var << "[" << slotMapExpr(*aMap, slot + ")") << "], "
           << a.var << "[" << slotMapExpr(*aMap, slot + " + 1)") << "]);\n";
    close();
    close();
  }
  line() << "tilec::device::wgmma_fence();\n";
  OperandWalk wb = walkOperand(b, transB, blockN, tileN);
  line() << "const unsigned long long tc_desc_b = tilec::device::wgmma_descriptor(" << wb.base << ", "
         << wb.leadingBytes << "u, " << kAtomBytes << "u);\n";
  std::optional<OperandWalk> wa;
  if (!registerA) {
    wa = walkOperand(a, transA, blockM, 64);
    line() << "const unsigned long long tc_desc_a = tilec::device::wgmma_descriptor(" << wa->base << ", "
           << wa->leadingBytes << "u, " << kAtomBytes << "u);\n";
  }
  line() << "#pragma unroll\n";
  open("for (int tc_kk = 0; tc_kk < " + std::to_string(steps) + "; ++tc_kk)");
  if (registerA) {
    line() << fn << "<" << transB << ">(" << c.var << ", tc_a[tc_kk], tc_desc_b + (" << wb.kStepUnits << "), "
           << accumulate << ");\n";
  } else {
    line() << fn << "<" << transA << ", " << transB << ">(" << c.var << ", tc_desc_a + (" << wa->kStepUnits
           << "), tc_desc_b + (" << wb.kStepUnits << "), " << accumulate << ");\n";
  }
  close();
  line() << "tilec::device::wgmma_commit_group(); // in flight until an op touches " << c.var
         << (registerA ? " or " + a.var : "") << ", a barrier, or the block's end\n";
  close();
  return success();
}

void KernelEmitter::emitBarrier() {
  // After the barrier other threads may write shared memory that wgmma reads through the async proxy: the fence
  // orders this thread's earlier shared-memory writes before those reads. (tile-schedule-wgmma-waits made the
  // wgmmas in flight complete before every barrier.)
  if (usesWgmma)
    line() << "tilec::device::fence_shared_for_wgmma();\n";
  line() << "__syncthreads();\n";
}

LogicalResult KernelEmitter::emitWgmmaWait(WgmmaWaitOp wait) {
  int64_t later = wait.getPending();
  auto accumulators = wait.getAccumulators();
  std::string last = accumulators.empty() ? std::string("none") : buffer(accumulators.back()).var;
  line() << "tilec::device::wgmma_wait_group<" << later << ">(); // "
         << (later == 0 ? std::string("the wgmmas in flight")
                        : "up to " + last + "'s; " + std::to_string(later) + " later group" +
                              (later == 1 ? " stays" : "s stay") + " in flight")
         << "\n";
  for (Value acc : accumulators) {
    const Buffer &c = buffer(acc);
    line() << "#pragma unroll\n"
           << "for (int tc_s = 0; tc_s < " << c.layout->numSlots()
           << "; ++tc_s) tilec::device::wgmma_fence_operand(" << c.var << "[tc_s]);\n";
  }
  return success();
}

} // namespace tilec::cuda
