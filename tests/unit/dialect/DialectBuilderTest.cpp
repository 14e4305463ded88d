// Builds tile IR through the C++ builders (as MLIRGen and the passes do) and
// checks that the verifier accepts what is right and names what is wrong.
#include "tilec/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>

#include <string>

using namespace mlir;
using namespace tilec::tile;

namespace {

struct Fixture {
  MLIRContext context;
  OpBuilder builder{&context};
  Location loc = UnknownLoc::get(&context);
  OwningOpRef<ModuleOp> module;
  std::string diagnostics;
  ScopedDiagnosticHandler handler{&context, [this](Diagnostic &diag) {
                                    diagnostics += diag.str() + "\n";
                                    return success();
                                  }};

  Fixture() {
    context.loadDialect<TileDialect, arith::ArithDialect,
                        memref::MemRefDialect>();
    module = ModuleOp::create(builder, loc);
    builder.setInsertionPointToEnd(module->getBody());
  }

  MemRefType global(ArrayRef<int64_t> shape, Type element) {
    return getTileMemRefType(shape, element, MemorySpace::Global);
  }

  /// kernel @k(%X: ?x128xbf16, %Y: ?x128xf32) grid(%X[0]) (s0 ceildiv 64)
  KernelOp makeKernel() {
    Type bf16 = builder.getBF16Type(), f32 = builder.getF32Type();
    auto type = builder.getFunctionType(
        {global({ShapedType::kDynamic, 128}, bf16),
         global({ShapedType::kDynamic, 128}, f32)},
        {});
    AffineMap grid = AffineMap::get(
        0, 1, getAffineSymbolExpr(0, &context).ceilDiv(64));
    auto kernel = KernelOp::create(builder, loc, "k", type, grid,
                                   {{0, 0}}, 128);
    builder.setInsertionPointToStart(&kernel.getBodyBlock());
    return kernel;
  }
};

} // namespace

TEST_CASE("a kernel built with the C++ builders verifies and round-trips",
          "[dialect]") {
  Fixture f;
  KernelOp kernel = f.makeKernel();
  OpBuilder &b = f.builder;
  Type bf16 = b.getBF16Type(), f32 = b.getF32Type();
  Value x = kernel.getArgument(0), y = kernel.getArgument(1);
  Value bx = kernel.getBlockIndex(0);

  auto c0 = arith::ConstantIndexOp::create(b, f.loc, 0);
  auto c64 = arith::ConstantIndexOp::create(b, f.loc, 64);
  Value row = arith::MulIOp::create(b, f.loc, bx, c64);
  auto xs = AllocOp::create(
      b, f.loc, getTileMemRefType({64, 128}, bf16, MemorySpace::Shared));
  auto ws = AllocOp::create(
      b, f.loc, getTileMemRefType({128, 128}, bf16, MemorySpace::Shared));
  auto acc = AllocOp::create(
      b, f.loc, getTileMemRefType({64, 128}, f32, MemorySpace::Fragment));
  auto xr = RegionOp::create(b, f.loc, x, ValueRange{row, c0},
                             ArrayRef<int64_t>{64, 128});
  CopyOp::create(b, f.loc, xr, xs);
  auto wr = RegionOp::create(b, f.loc, x, ValueRange{c0, c0},
                             ArrayRef<int64_t>{128, 128});
  CopyOp::create(b, f.loc, wr, ws);
  auto zero = arith::ConstantOp::create(b, f.loc, b.getF32FloatAttr(0.0f));
  FillOp::create(b, f.loc, acc, zero);
  auto gemm = GemmOp::create(b, f.loc, xs, ws, acc);
  gemm.setTransposeB(true);
  auto yr = RegionOp::create(b, f.loc, y, ValueRange{row, c0},
                             ArrayRef<int64_t>{64, 128});
  AtomicAddOp::create(b, f.loc, acc, yr, ValueRange{});

  CHECK(xr.getType().getShape() == ArrayRef<int64_t>{64, 128});
  INFO(f.diagnostics);
  REQUIRE(succeeded(verify(*f.module)));
  INFO(f.diagnostics);
  CHECK(f.diagnostics.empty());

  // Printing and parsing again gives the same IR.
  std::string printed;
  llvm::raw_string_ostream os(printed);
  f.module->print(os);
  ParserConfig config(&f.context);
  OwningOpRef<ModuleOp> reparsed =
      parseSourceString<ModuleOp>(printed, config);
  INFO(printed << f.diagnostics);
  REQUIRE(reparsed);
  std::string again;
  llvm::raw_string_ostream os2(again);
  reparsed->print(os2);
  CHECK(printed == again);
  CHECK(printed.find("tile.gemm") != std::string::npos);
  CHECK(printed.find("transpose_b") != std::string::npos);
}

TEST_CASE("the verifier names the operand and shapes of a bad gemm",
          "[dialect]") {
  Fixture f;
  f.makeKernel();
  OpBuilder &b = f.builder;
  Type bf16 = b.getBF16Type(), f32 = b.getF32Type();
  auto a = AllocOp::create(
      b, f.loc, getTileMemRefType({64, 32}, bf16, MemorySpace::Shared));
  auto bt = AllocOp::create(
      b, f.loc, getTileMemRefType({64, 64}, bf16, MemorySpace::Shared));
  auto c = AllocOp::create(
      b, f.loc, getTileMemRefType({64, 64}, f32, MemorySpace::Fragment));
  GemmOp::create(b, f.loc, a, bt, c);
  CHECK(failed(verify(*f.module)));
  CHECK(f.diagnostics.find("reduction extents differ: op(A) is 64x32 and "
                           "op(B) is 64x64") != std::string::npos);
}

TEST_CASE("a fragment cannot be allocated outside a kernel", "[dialect]") {
  Fixture f;
  AllocOp::create(f.builder, f.loc,
                  getTileMemRefType({16}, f.builder.getF32Type(),
                                    MemorySpace::Fragment));
  CHECK(failed(verify(*f.module)));
  CHECK(f.diagnostics.find("outside a tile.kernel") != std::string::npos);
}

TEST_CASE("region builder drops unit dimensions", "[dialect]") {
  Fixture f;
  KernelOp kernel = f.makeKernel();
  auto c0 = arith::ConstantIndexOp::create(f.builder, f.loc, 0);
  auto r = RegionOp::create(f.builder, f.loc, kernel.getArgument(0),
                            ValueRange{c0, c0}, ArrayRef<int64_t>{1, 128});
  CHECK(r.getType().getShape() == ArrayRef<int64_t>{128});
  CHECK(r.getType().getSpace() == MemorySpace::Global);
  CHECK(succeeded(verify(*f.module)));
}

// The region form reads its value tile, and passes that move or erase ops by their effects must see
// it (a copy into the tile has to stay before the atomic). Before getEffects, only `dest` had effects.
TEST_CASE("atomic_add declares a read of its value tile and a read-write of its destination", "[dialect]") {
  Fixture f;
  KernelOp kernel = f.makeKernel();
  OpBuilder &b = f.builder;
  Type f32 = b.getF32Type();
  auto c0 = arith::ConstantIndexOp::create(b, f.loc, 0);
  auto tile = AllocOp::create(b, f.loc, getTileMemRefType({64, 128}, f32, MemorySpace::Fragment));
  auto region = RegionOp::create(b, f.loc, kernel.getArgument(1), ValueRange{c0, c0}, ArrayRef<int64_t>{64, 128});
  auto regionForm = AtomicAddOp::create(b, f.loc, tile, region, ValueRange{});
  auto one = arith::ConstantOp::create(b, f.loc, b.getF32FloatAttr(1.0f));
  auto elementForm = AtomicAddOp::create(b, f.loc, one, kernel.getArgument(1), ValueRange{c0, c0});
  REQUIRE(succeeded(verify(*f.module)));

  auto effectsOn = [](Operation *op, Value v) {
    SmallVector<MemoryEffects::EffectInstance> effects;
    cast<MemoryEffectOpInterface>(op).getEffectsOnValue(v, effects);
    bool read = false, write = false;
    for (auto &e : effects) {
      read |= isa<MemoryEffects::Read>(e.getEffect());
      write |= isa<MemoryEffects::Write>(e.getEffect());
    }
    return std::make_pair(read, write);
  };
  CHECK(effectsOn(regionForm, tile) == std::make_pair(true, false));
  CHECK(effectsOn(regionForm, region) == std::make_pair(true, true));
  CHECK(effectsOn(elementForm, kernel.getArgument(1)) == std::make_pair(true, true));
  CHECK(effectsOn(elementForm, one) == std::make_pair(false, false)); // a scalar is not memory
}

// Effects: tile.parallel and tile.pipelined have exactly the effects of their bodies
// (RecursiveMemoryEffects), so a loop that only reads is trivially dead and one that writes is not. Before, the
// loops declared nothing and counted as having every effect.
TEST_CASE("parallel loops have the memory effects of their bodies", "[dialect]") {
  Fixture f;
  f.makeKernel();
  OpBuilder &b = f.builder;
  auto tile = AllocOp::create(b, f.loc, getTileMemRefType({64}, b.getF32Type(), MemorySpace::Fragment));
  auto reads = ParallelOp::create(b, f.loc, ArrayRef<int64_t>{64});
  auto writes = ParallelOp::create(b, f.loc, ArrayRef<int64_t>{64});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&reads.getBodyBlock());
    memref::LoadOp::create(b, f.loc, tile, ValueRange{reads.getBodyBlock().getArgument(0)});
    b.setInsertionPointToStart(&writes.getBodyBlock());
    auto one = arith::ConstantOp::create(b, f.loc, b.getF32FloatAttr(1.0f));
    memref::StoreOp::create(b, f.loc, one, tile, ValueRange{writes.getBodyBlock().getArgument(0)});
  }
  REQUIRE(succeeded(verify(*f.module)));
  CHECK(wouldOpBeTriviallyDead(reads));
  CHECK_FALSE(wouldOpBeTriviallyDead(writes));
  auto effects = getEffectsRecursively(writes);
  REQUIRE(effects.has_value());
  CHECK(llvm::any_of(*effects, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Write>(e.getEffect());
  }));
}
