// The CUDA emitter prints the decisions of the GPU lowering passes; where one it needs is missing, it refuses the
// kernel rather than emit code that decides for itself (or is wrong).
#include "tilec/Dialect/Tile/IR/TileOps.h"
#include "tilec/Driver/Driver.h"
#include "tilec/Target/CUDA/CudaEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <string>

namespace {

struct Emitted {
  bool ok = false;
  std::string cuda, diagnostics;
};

/// Compiles `file` (relative to the source tree) through the GPU lowering, lets `edit` change the lowered module,
/// then emits CUDA.
template <typename Edit>
Emitted emitAfter(const std::string &file, Edit edit) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  llvm::SourceMgr sourceMgr;
  auto buffer = llvm::MemoryBuffer::getFile(std::string(TILEC_SOURCE_DIR) + "/" + file);
  REQUIRE(buffer);
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  Emitted out;
  llvm::raw_string_ostream diagOS(out.diagnostics);
  tilec::CompileOptions options;
  options.atomics = tilec::AtomicsStrategy::FP32;
  options.lowerForGpu = true;
  mlir::OwningOpRef<mlir::ModuleOp> module = tilec::compileToTileIR(context, sourceMgr, options, diagOS);
  REQUIRE(module);
  edit(*module);
  llvm::raw_string_ostream cudaOS(out.cuda);
  mlir::ScopedDiagnosticHandler collect(&context, [&](mlir::Diagnostic &d) {
    diagOS << d.str() << "\n";
    return mlir::success();
  });
  out.ok = mlir::succeeded(tilec::emitCuda(*module, cudaOS));
  return out;
}

} // namespace

TEST_CASE("the emitter prints the wgmma waits tile-schedule-wgmma-waits placed", "[emitter]") {
  Emitted e = emitAfter("kernels/examples/gemm.tile", [](mlir::ModuleOp) {});
  REQUIRE(e.ok);
  CHECK(e.cuda.find("tilec::device::wgmma_wait_group<0>(); // the wgmmas in flight") != std::string::npos);
}

TEST_CASE("the emitter refuses a wgmma gemm whose waits were not scheduled", "[emitter]") {
  Emitted e = emitAfter("kernels/examples/gemm.tile", [](mlir::ModuleOp module) {
    module.walk([](tilec::tile::WgmmaWaitOp wait) { wait.erase(); });
  });
  CHECK_FALSE(e.ok);
  CHECK(e.diagnostics.find("a gemm runs on wgmma but the kernel has no tile.wgmma_wait (run "
                           "tile-schedule-wgmma-waits)") != std::string::npos);
}

TEST_CASE("the emitter prints the software pipeline tile-expand-pipelines wrote", "[emitter]") {
  Emitted e = emitAfter("kernels/examples/gemm.tile", [](mlir::ModuleOp) {});
  REQUIRE(e.ok);
  CHECK(e.cuda.find("tilec::device::cp_async_wait<1>();") != std::string::npos);
  CHECK(e.cuda.find("tilec::device::cp_async_commit();") != std::string::npos);
}

TEST_CASE("the emitter refuses a pipelined loop that tile-expand-pipelines did not expand", "[emitter]") {
  Emitted e = emitAfter("kernels/examples/gemm.tile", [](mlir::ModuleOp module) {
    module.walk([](tilec::tile::KernelOp kernel) {
      mlir::Block &body = kernel.getBodyBlock();
      mlir::OpBuilder b(&body, body.begin());
      mlir::Value zero = mlir::arith::ConstantIndexOp::create(b, kernel.getLoc(), 0);
      tilec::tile::PipelinedOp::create(b, kernel.getLoc(), zero, zero, 2);
    });
  });
  CHECK_FALSE(e.ok);
  CHECK(e.diagnostics.find("a tile.pipelined loop reached the CUDA emitter (run tile-expand-pipelines)") !=
        std::string::npos);
}

TEST_CASE("the emitter refuses a prefetched copy left where it stood", "[emitter]") {
  Emitted e = emitAfter("kernels/examples/gemm.tile", [](mlir::ModuleOp module) {
    module.walk([](tilec::tile::CopyOp copy) { copy->setAttr("tile.prefetch", mlir::UnitAttr::get(copy.getContext())); });
  });
  CHECK_FALSE(e.ok);
  CHECK(e.diagnostics.find("a copy marked tile.prefetch is left in the kernel") != std::string::npos);
}

TEST_CASE("the emitter prints the copy forms tile-plan-copies chose and refuses a copy without one", "[emitter]") {
  Emitted planned = emitAfter("kernels/examples/gemm.tile", [](mlir::ModuleOp) {});
  REQUIRE(planned.ok);
  CHECK(planned.cuda.find("16-byte vectors, 1024 chunks, 32 rows per step") != std::string::npos); // row_chunks
  Emitted e = emitAfter("kernels/examples/gemm.tile", [](mlir::ModuleOp module) {
    module.walk([](tilec::tile::CopyOp copy) { copy->removeAttr("tile.copy_plan"); });
  });
  CHECK_FALSE(e.ok);
  CHECK(e.diagnostics.find("copy has no plan (run tile-plan-copies)") != std::string::npos);
}

TEST_CASE("the emitter prints the atomic forms tile-plan-atomics chose and refuses an atomic without one", "[emitter]") {
  Emitted planned = emitAfter("kernels/flash_attention/bwd.tile", [](mlir::ModuleOp) {});
  REQUIRE(planned.ok);
  CHECK(planned.cuda.find("atomic_add dk -> dK: exclusive, every read first, 2-element vectors") != std::string::npos);
  Emitted e = emitAfter("kernels/flash_attention/bwd.tile", [](mlir::ModuleOp module) {
    module.walk([](tilec::tile::AtomicAddOp add) { add->removeAttr("tile.atomic_plan"); });
  });
  CHECK_FALSE(e.ok);
  CHECK(e.diagnostics.find("atomic has no plan (run tile-plan-atomics)") != std::string::npos);
}

// Regression: a value the emitter had printed no definition for came out as the literal `0` (with a comment), so a
// use before its definition compiled into wrong code instead of failing.
TEST_CASE("the emitter refuses a use of a value it has not defined", "[emitter]") {
  Emitted e = emitAfter("kernels/examples/gemm.tile", [](mlir::ModuleOp module) {
    module.walk([](tilec::tile::KernelOp kernel) {
      mlir::Block &body = kernel.getBodyBlock();
      mlir::OpBuilder atEnd = mlir::OpBuilder::atBlockEnd(&body);
      mlir::Value late = mlir::arith::ConstantIndexOp::create(atEnd, kernel.getLoc(), 7);
      mlir::OpBuilder atBegin(&body, body.begin());
      mlir::arith::AddIOp::create(atBegin, kernel.getLoc(), late, late);
    });
  });
  CHECK_FALSE(e.ok);
  CHECK(e.diagnostics.find("the CUDA emitter cannot lower this op (a value it has not defined in this scope)") !=
        std::string::npos);
}
