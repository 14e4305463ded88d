// tile.gemm: mma.sync m16n8k16 with operands loaded by ldmatrix from swizzled shared tiles (A may instead come from
// a fragment already in the A-operand layout), or a plain per-element loop ("simt") where the tensor cores do not
// apply (f32 operands, extents that are not multiples of the mma atom, accumulators that are not in its layout).
// Gemms marked `tile.wgmma` get Hopper's wgmma as well (EmitWgmma.cpp), chosen when the compile targets sm_90a.
#include "EmitterImpl.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::tile;

namespace tilec::cuda {

/// The coordinates among `coords` whose extent is not 1: readElement takes squeezed window coordinates, and an
/// operand with a unit dim (K = 1, or a 1-row tile) has fewer of them than the gemm's two.
static std::vector<std::string> squeezeOperandCoords(std::vector<std::string> coords, std::vector<int64_t> extents) {
  std::vector<std::string> out;
  for (size_t d = 0; d < coords.size(); ++d)
    if (extents[d] != 1)
      out.push_back(coords[d]);
  return out;
}

static LogicalResult emitSimtGemm(KernelEmitter &e, GemmOp gemm) {
  TileRef a = e.ref(gemm.getA()), b = e.ref(gemm.getB());
  const Buffer &c = e.buffer(gemm.getC());
  Type f32 = Float32Type::get(gemm.getContext());
  if (c.shape.size() != 2)
    return gemm.emitError("gemm accumulator must be a 2-d fragment");
  // M and N from the accumulator, K from A's element count (its window may carry unit dims).
  int64_t m = c.shape[0], n = c.shape[1], aElements = 1;
  for (int64_t x : a.squeezed())
    aElements *= x;
  int64_t k = m > 0 ? aElements / m : 0;
  SlotLoop none;
  SlotLoop sl = e.openSlotLoop(*c.layout, "gemm (simt) " + a.buffer->var + " x " + b.buffer->var + " -> " + c.var);
  std::string acc = e.fresh("tc_acc"), kk = e.fresh("k");
  e.line() << "float " << acc << " = " << (gemm.getClear() ? "0.0f" : c.var + "[" + sl.slot + "]") << ";\n";
  e.open("for (int " + kk + " = 0; " + kk + " < " + std::to_string(k) + "; ++" + kk + ")");
  std::string mi = sl.coords[0], ni = sl.coords[1];
  bool ta = gemm.getTransposeA(), tb = gemm.getTransposeB();
  std::string av = e.readElement(
      a, ta ? squeezeOperandCoords({kk, mi}, {k, m}) : squeezeOperandCoords({mi, kk}, {m, k}), none);
  std::string bv = e.readElement(
      b, tb ? squeezeOperandCoords({ni, kk}, {n, k}) : squeezeOperandCoords({kk, ni}, {k, n}), none);
  e.line() << acc << " += " << e.convert(av, a.buffer->element, f32) << " * " << e.convert(bv, b.buffer->element, f32)
           << ";\n";
  e.close();
  e.line() << c.var << "[" << sl.slot << "] = " << acc << ";\n";
  e.closeSlotLoop(*c.layout);
  return success();
}

namespace {
/// Element index of an ldmatrix row address in a shared operand at k-step `tc_kk` and warp-tile step `tile` (`tc_i` of
/// A, `tc_j` of B), written so that each step is one XOR or one add on an index computed once per thread. Written
/// plainly (swizzled_index of `tc_kk * 16 + ...`), NVVM hoists a separately computed index per (step, step) pair out
/// of the loop over the pipelined iterations: dozens of live registers per gemm, which at 255 registers become
/// spills (flash attention's backward pass at d=128; the tile steps alone cost 56 bytes of spill there).
///
/// `row` and `col` are the coordinates without either step (no `tile`: no tile step). The k-step adds `tc_kk * 16` to the column
/// (`kAlongColumns`) or to the row, the tile step `tile * 16` to the other one: an XOR (columns) or an add (rows)
/// where Swizzle::columnStepIsXor / columnTileStepIsXor / rowStepIsAdd say so (the conditions and why are there;
/// tests/unit/layout checks the identities), else the step stays inside the swizzled coordinates. An XOR touches
/// only bits below a row's width and an add only whole rows, so the two commute.
struct StepIndex {
  const KernelEmitter &e;
  const Buffer &b;
  int64_t k;
  std::string operator()(std::string row, std::string col, bool kAlongColumns, const std::string &tile = "",
                         int64_t tileSpan = 0) const {
    int64_t cols = b.shape.back(), bytes = gpu::elementBytes(b.element);
    bool kSeparate = kAlongColumns ? b.swizzle.columnStepIsXor(cols, bytes, k) : b.swizzle.rowStepIsAdd();
    bool tileSeparate = !tile.empty() && (kAlongColumns ? b.swizzle.rowStepIsAdd()
                                                        : b.swizzle.columnTileStepIsXor(cols, bytes, tileSpan));
    std::string &kCoord = kAlongColumns ? col : row, &tileCoord = kAlongColumns ? row : col;
    if (!kSeparate)
      kCoord = "tc_kk * 16 + " + kCoord;
    if (!tileSeparate && !tile.empty())
      tileCoord = tile + " * 16 + " + tileCoord;
    std::string index = e.sharedIndex(b, {row, col});
    auto step = [&](const std::string &var, bool alongColumns) {
      index = alongColumns ? "(" + index + " ^ (" + var + " * 16))"
                           : "(" + index + " + " + var + " * " + std::to_string(16 * cols) + ")";
    };
    // XORs first: the adds are then constants after unrolling, which fold into the ldmatrix address's immediate.
    if (kSeparate && kAlongColumns)
      step("tc_kk", true);
    if (tileSeparate && kAlongColumns)
      step(tile, false);
    if (tileSeparate && !kAlongColumns)
      step(tile, true);
    if (kSeparate && !kAlongColumns)
      step("tc_kk", false);
    return index;
  }
};
} // namespace

LogicalResult KernelEmitter::emitGemm(GemmOp gemm) {
  if (!gemm->getAttrOfType<MmaSyncPlanAttr>(gpu::kMmaAttr) && !gemm->getAttrOfType<SimtPlanAttr>(gpu::kMmaAttr))
    return gemm.emitError("gemm has no tensor-core plan (run tile-infer-layouts)");
  const Buffer &c = buffer(gemm.getC());
  if (!c.layout)
    return gemm.emitError("gemm accumulator is not a fragment");
  std::optional<std::pair<int64_t, int64_t>> warps = gpu::mmaWarps(gemm);
  bool onTensorCores = warps.has_value();
  bool sharedOperands = gpu::isWholeTile(gemm.getB()) && gpu::isIn(gemm.getB(), MemorySpace::Shared) &&
                        gpu::isWholeTile(gemm.getA());
  if (!onTensorCores || !sharedOperands)
    return emitSimtGemm(*this, gemm);
  const auto [wm, wn] = *warps;
  const Buffer &a = buffer(gemm.getA()), &b = buffer(gemm.getB());
  int64_t m = c.shape[0], n = c.shape[1];
  int64_t k = gemm.getTransposeA() ? a.shape[0] : a.shape[1];
  if (*c.layout != FragmentLayout::mmaAccumulator(m, n, wm, wn))
    return gemm.emitError("gemm accumulator is not in the layout of its tensor-core plan");
  int64_t tileM = m / wm, tileN = n / wn, atomsM = tileM / 16, atomsN = tileN / 8, steps = k / 16;
  bool registerA = a.space != MemorySpace::Shared;
  std::optional<SlotMap> aMap;
  if (registerA) {
    aMap = registerAccessMap(FragmentLayout::mmaOperandA(m, k, wm, wn), *a.layout, {0, 1});
    if (!aMap)
      return gemm.emitError("register A operand is not in the mma A layout (tile-infer-layouts stages such operands)");
  }
  bool wgmma = gemm->hasAttr(gpu::kWgmmaAttr);
  if (wgmma) {
    os << "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n";
    if (failed(emitWgmma(gemm)))
      return failure();
    os << "#else\n";
  }
  StepIndex aIndex{*this, a, k}, bIndex{*this, b, k};
  std::string mma = a.element.isF16() ? "tilec::device::mma_m16n8k16_f16_f32" : "tilec::device::mma_m16n8k16_bf16_f32";
  open("{ // gemm " + a.var + (gemm.getTransposeA() ? "^T" : "") + " x " + b.var + (gemm.getTransposeB() ? "^T" : "") +
       " -> " + c.var + ": mma.sync m16n8k16, warps " + std::to_string(wm) + "x" + std::to_string(wn) + ", warp tile " +
       std::to_string(tileM) + "x" + std::to_string(tileN) + (registerA ? ", A in registers" : ""));
  line() << "const int tc_lane = tid % 32, tc_warp = tid / 32;\n";
  line() << "const int tc_row0 = (tc_warp % " << wm << ") * " << tileM << ", tc_col0 = (tc_warp / " << wm << ") * " << tileN
         << ";\n";
  if (gemm.getClear()) {
    line() << "#pragma unroll\n";
    line() << "for (int tc_s = 0; tc_s < " << c.layout->numSlots() << "; ++tc_s) " << c.var << "[tc_s] = 0.0f;\n";
  }
  line() << "#pragma unroll\n";
  open("for (int tc_kk = 0; tc_kk < " + std::to_string(steps) + "; ++tc_kk)");
  line() << "unsigned tc_a_frag[" << atomsM << "][4];\n";
  line() << "unsigned tc_b_frag[" << atomsN << "][2];\n";
  line() << "#pragma unroll\n";
  open("for (int tc_i = 0; tc_i < " + std::to_string(atomsM) + "; ++tc_i)");
  if (registerA) {
    line() << "#pragma unroll\n";
    open("for (int tc_r = 0; tc_r < 4; ++tc_r)");
    std::string slot = "(((tc_i * " + std::to_string(steps) + " + tc_kk) * 4 + tc_r) * 2";
    line() << "tc_a_frag[tc_i][tc_r] = tilec::device::pack2(" << a.var << "[" << slotMapExpr(*aMap, slot + ")") << "], "
           << a.var << "[" << slotMapExpr(*aMap, slot + " + 1)") << "]);\n";
    close();
  } else if (!gemm.getTransposeA()) {
    line() << "tilec::device::ldmatrix_x4(tc_a_frag[tc_i], " << sharedAddress(a,
           aIndex("tc_row0 + tc_lane % 16", "(tc_lane / 16) * 8", true, "tc_i", tileM)) << ");\n";
  } else {
    line() << "tilec::device::ldmatrix_x4_trans(tc_a_frag[tc_i], " << sharedAddress(a,
           aIndex("(tc_lane / 16) * 8 + tc_lane % 8", "tc_row0 + ((tc_lane / 8) % 2) * 8", false, "tc_i", tileM)) << ");\n";
  }
  close();
  // B: two n8 atoms per ldmatrix.x4, the last odd one with .x2.
  line() << "#pragma unroll\n";
  open("for (int tc_j = 0; tc_j < " + std::to_string(atomsN / 2) + "; ++tc_j)");
  line() << "unsigned tc_t[4];\n";
  if (gemm.getTransposeB())
    line() << "tilec::device::ldmatrix_x4(tc_t, " << sharedAddress(b,
           bIndex("tc_col0 + (tc_lane / 16) * 8 + tc_lane % 8", "((tc_lane / 8) % 2) * 8", true, "tc_j", tileN)) << ");\n";
  else
    line() << "tilec::device::ldmatrix_x4_trans(tc_t, " << sharedAddress(b,
           bIndex("((tc_lane / 8) % 2) * 8 + tc_lane % 8", "tc_col0 + (tc_lane / 16) * 8", false, "tc_j", tileN)) << ");\n";
  line() << "tc_b_frag[2 * tc_j][0] = tc_t[0]; tc_b_frag[2 * tc_j][1] = tc_t[1]; tc_b_frag[2 * tc_j + 1][0] = tc_t[2]; tc_b_frag[2 * tc_j + 1][1] = "
            "tc_t[3];\n";
  close();
  if (atomsN % 2) {
    std::string j = std::to_string(atomsN - 1);
    if (gemm.getTransposeB())
      line() << "tilec::device::ldmatrix_x2(tc_b_frag[" << j << "], " << sharedAddress(b,
             bIndex("tc_col0 + " + j + " * 8 + tc_lane % 8", "((tc_lane / 8) % 2) * 8", true)) << ");\n";
    else
      line() << "tilec::device::ldmatrix_x2_trans(tc_b_frag[" << j << "], " << sharedAddress(b,
             bIndex("((tc_lane / 8) % 2) * 8 + tc_lane % 8", "tc_col0 + " + j + " * 8", false)) << ");\n";
  }
  line() << "#pragma unroll\n";
  open("for (int tc_i = 0; tc_i < " + std::to_string(atomsM) + "; ++tc_i)");
  line() << "#pragma unroll\n";
  open("for (int tc_j = 0; tc_j < " + std::to_string(atomsN) + "; ++tc_j)");
  line() << "float (&tc_acc)[4] = *reinterpret_cast<float (*)[4]>(&" << c.var << "[(tc_i * " << atomsN << " + tc_j) * 4]);\n";
  line() << mma << "(tc_acc, tc_a_frag[tc_i], tc_b_frag[tc_j], tc_acc);\n";
  close();
  close();
  close(); // kk
  close();
  if (wgmma)
    os << "#endif\n";
  return success();
}

} // namespace tilec::cuda
