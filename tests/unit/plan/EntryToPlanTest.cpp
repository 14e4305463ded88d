// The launch plan of a legalized kernel, lowered to the runtime's format and
// evaluated for concrete tensors (no GPU): flash-attention backward, GQA
// (groups 2) under --atomics=split.
#include "tilec/Driver/Driver.h"
#include "tilec/Target/Plan/EntryToPlan.h"
#include "tilec/runtime/TensorView.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <catch2/catch.hpp>

using namespace tilec;
namespace rt = tilec::runtime;

namespace {

mlir::OwningOpRef<mlir::ModuleOp> compile(mlir::MLIRContext &context,
                                          const std::string &atomics) {
  auto buffer = llvm::MemoryBuffer::getFile(
      TILEC_KERNELS_ROOT "/flash_attention/bwd.tile", /*IsText=*/true);
  REQUIRE(buffer);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  CompileOptions options;
  options.gen.defines = {{"groups", "2"}, {"block_m", "64"}}; // the plans of tests/gpu/data (64-row key blocks)
  options.atomics = parseAtomicsStrategy(atomics);
  REQUIRE(options.atomics);
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  auto module = compileToTileIR(context, sourceMgr, options, os);
  INFO(diagnostics);
  REQUIRE(module);
  return module;
}

} // namespace

TEST_CASE("a legalized entry lowers to the runtime's launch plan",
          "[plan]") {
  mlir::MLIRContext context;
  auto module = compile(context, "split");
  auto entry = *module->getOps<tile::EntryOp>().begin();
  REQUIRE(entry.getSymName() == "attn_bwd");
  auto plan = lowerEntryToPlan(entry);
  if (!plan)
    FAIL(llvm::toString(plan.takeError()));

  // batch 2, seq 100, heads 4 (2 kv heads), dim 128.
  static char dummy[16];
  std::vector<rt::TensorView> args = {
      rt::TensorView(dummy, rt::DType::BF16, {2, 100, 4, 128}),  // Q
      rt::TensorView(dummy, rt::DType::BF16, {2, 100, 2, 128}),  // K
      rt::TensorView(dummy, rt::DType::BF16, {2, 100, 2, 128}),  // V
      rt::TensorView(dummy, rt::DType::BF16, {2, 100, 4, 128}),  // dO
      rt::TensorView(dummy, rt::DType::F32, {2, 4, 100}),        // lse
      rt::TensorView(dummy, rt::DType::F32, {2, 4, 100}),        // delta
      rt::TensorView(dummy, rt::DType::BF16, {2, 100, 4, 128}),  // dQ
      rt::TensorView(dummy, rt::DType::BF16, {2, 100, 2, 128}),  // dK
      rt::TensorView(dummy, rt::DType::BF16, {2, 100, 2, 128})}; // dV
  auto eval = [&](const rt::Expr &e) { return e.evaluate(args.data(), args.size()); };

  std::vector<std::string> trace;
  for (const rt::PlanStep &step : plan->steps()) {
    if (auto *a = std::get_if<rt::AllocStep>(&step))
      trace.push_back("alloc " + std::to_string(a->workspace) + " " +
                      std::to_string(eval(a->bytes)) + (a->zeroFill ? " zeroed" : ""));
    else if (auto *l = std::get_if<rt::LaunchStep>(&step)) {
      std::string s = "launch " + l->function + " grid " +
                      std::to_string(eval(l->grid[0])) + "x" +
                      std::to_string(eval(l->grid[1])) + "x" +
                      std::to_string(eval(l->grid[2])) + " block " +
                      std::to_string(l->block[0]) + " args";
      // Each tensor or workspace is followed by its dynamic extents (i64).
      for (const rt::KernelArg &arg : l->args)
        s += arg.kind == rt::KernelArg::Kind::I64
                 ? " =" + std::to_string(eval(arg.value))
                 : (arg.kind == rt::KernelArg::Kind::Workspace ? " w" : " t") +
                       std::to_string(arg.index);
      trace.push_back(s);
    } else if (auto *f = std::get_if<rt::FreeStep>(&step))
      trace.push_back("free " + std::to_string(f->workspace));
  }
  int64_t f32Q = 2 * 100 * 4 * 128 * 4, partialK = 2 * 2 * 100 * 2 * 128 * 4;
  // The generated kernels take up to 16 heads (the dim before the last) of one (batch, row) per block: 2 x 100.
  std::vector<std::string> expected = {
      "alloc 0 " + std::to_string(f32Q),
      "launch attn_bwd_dQ_to_f32 grid 200x1x1 block 128 args t6 =2 =100 =4 w0 =2 =100 =4",
      // Not zeroed: every element of the partial slices is written (splitSlicesCovered).
      "alloc 1 " + std::to_string(partialK),
      "alloc 2 " + std::to_string(partialK),
      // One arrival counter per block of the 4x2x2 grid, zeroed, shared by dK and dV (the same pairs of blocks
      // write both): the last of the 2 blocks that write a tile adds the slices of both, so no sum kernel runs.
      "alloc 3 64 zeroed",
      "launch attn_bwd_main grid 4x2x2 block 256 args t0 =2 =100 =4 t1 =2 =100 =2 t2 =2 =100 =2 t3 =2 =100 =4 "
      "t4 =2 =4 =100 t5 =2 =4 =100 w0 =2 =100 =4 w1 =2 =100 =2 w2 =2 =100 =2 t7 =2 =100 =2 w3 =16 t8 =2 =100 =2",
      "launch attn_bwd_dQ_from_f32 grid 200x1x1 block 128 args w0 =2 =100 =4 t6 =2 =100 =4",
      "free 0",
      "free 1",
      "free 2",
      "free 3"};
  CHECK(trace == expected);
}

TEST_CASE("a native entry is one launch", "[plan]") {
  mlir::MLIRContext context;
  auto module = compile(context, "native");
  auto plan = lowerEntryToPlan(*module->getOps<tile::EntryOp>().begin());
  if (!plan)
    FAIL(llvm::toString(plan.takeError()));
  REQUIRE(plan->steps().size() == 1);
  CHECK(std::get<rt::LaunchStep>(plan->steps()[0]).function == "attn_bwd_main");
  CHECK(plan->workspaceCount() == 0);
}
