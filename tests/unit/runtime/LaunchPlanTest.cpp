// Grid expressions and launch plans: parsing, exact evaluation, validation, resolution against arguments.
#include "TestKernels.h"
#include "tilec/runtime/Error.h"
#include "tilec/runtime/Module.h"

#include <catch2/catch.hpp>

using namespace tilec::runtime;

namespace {

alignas(256) char gDeviceMemory[1024];

std::shared_ptr<const Cubin> fakeCubin() { return std::make_shared<const Cubin>(Cubin{{'x'}, "sm_90a", "", {}}); }

std::int64_t eval(const std::string &text) { return Expr::parse(text).evaluate(); }

} // namespace

TEST_CASE("integer expressions evaluate exactly", "[plan]") {
  CHECK(eval("1 + 2 * 3") == 7);
  CHECK(eval("(1 + 2) * 3") == 9);
  CHECK(eval("10 - 3 - 2") == 5);
  CHECK(eval("-4 + 1") == -3);
  CHECK(eval("ceildiv(1000, 128)") == 8);
  CHECK(eval("ceildiv(1024, 128)") == 8);
  CHECK(eval("floordiv(1000, 128)") == 7);
  CHECK(eval("floordiv(-7, 2)") == -4); // floor, not truncation
  CHECK(eval("ceildiv(-7, 2)") == -3);
  CHECK(eval("mod(-7, 3)") == 2); // sign of the divisor
  CHECK(eval("mod(7, -3)") == -2);
  CHECK(eval("min(3, max(1, 5))") == 3);
  CHECK(eval("max(2 * 3, ceildiv(100, 7))") == 15);
  Expr built = ceildiv(Expr(1000) + 5, 16) * 2;
  CHECK(built.evaluate() == 126);
  CHECK(Expr::parse(built.toString()).evaluate() == 126); // toString is re-parseable
}

TEST_CASE("expressions reject division by zero, overflow and bad text", "[plan]") {
  CHECK_THROWS_WITH(eval("ceildiv(5, 0)"), Catch::Contains("division by zero"));
  CHECK_THROWS_WITH(eval("mod(5, 2 - 2)"), Catch::Contains("division by zero"));
  CHECK_THROWS_WITH(eval("4611686018427387904 * 4"), Catch::Contains("int64 overflow"));
  CHECK_THROWS_WITH(Expr::parse("1 +"), Catch::Contains("column 4"));
  CHECK_THROWS_WITH(Expr::parse("pow(2, 3)"), Catch::Contains("unknown function 'pow'"));
  CHECK_THROWS_WITH(Expr::parse("(1 + 2"), Catch::Contains("expected ')'"));
  CHECK_THROWS_WITH(Expr::parse("1 ) "), Catch::Contains("unexpected ')'"));
  CHECK_THROWS_AS(Expr::parse("N").evaluate(), PlanError); // unbound name
}

TEST_CASE("expression depth has one limit, checked when the text is parsed", "[plan]") {
  // Deep parentheses or unary minus used to recurse without bound (a stack overflow for long enough text).
  std::string deep = std::string(100000, '(') + "1" + std::string(100000, ')');
  CHECK_THROWS_WITH(Expr::parse(deep), Catch::Contains("nested deeper than 32"));
  CHECK_THROWS_WITH(Expr::parse(std::string(100000, '-') + "1"), Catch::Contains("nested deeper than 32"));
  std::string ok = std::string(30, '(') + "1" + std::string(30, ')');
  CHECK(Expr::parse(ok).evaluate() == 1);
  // An expression that needs more operands pending than evaluate() holds used to parse (and fail at launch): 1 + (1
  // + (1 + ...)) keeps one pending operand per level, so the nesting limit now refuses it when parsed, and what
  // parses evaluates.
  std::string wide = "1";
  for (int i = 0; i < 31; ++i)
    wide = "1 + (" + wide + ")";
  CHECK(Expr::parse(wide).evaluate() == 32);
  CHECK_THROWS_WITH(Expr::parse("1 + (" + wide + ")"), Catch::Contains("cannot parse expression"));
  std::string flat;
  for (int i = 0; i < 200; ++i)
    flat += (i ? " + " : "") + std::string("1");
  CHECK(Expr::parse(flat).evaluate() == 200); // long but shallow: fine
}

TEST_CASE("expressions read argument dims and strides", "[plan]") {
  std::int64_t shape[] = {300, 64};
  std::int64_t strides[] = {128, 1};
  TensorView args[] = {TensorView(gDeviceMemory, DType::F32, {7}),
                       TensorView(gDeviceMemory, DType::BF16, 2, shape, strides)};
  CHECK(Expr::parse("ceildiv(dim(1, 0), 128) * dim(0, 0)").evaluate(args, 2) == 21);
  CHECK(Expr::parse("stride(1, 0)").evaluate(args, 2) == 128);
  CHECK_THROWS_WITH(Expr::parse("dim(2, 0)").evaluate(args, 2), Catch::Contains("argument #2, but only 2"));
  CHECK_THROWS_WITH(Expr::parse("dim(0, 1)").evaluate(args, 2), Catch::Contains("axis 1 of argument #0"));
}

TEST_CASE("a plan resolves to workspace sizes and grids computed from the arguments", "[plan]") {
  std::vector<EntrySpec> entries;
  entries.push_back(tilec::testing::splitKGemmEntry());
  Module module({fakeCubin()}, std::move(entries), "/nonexistent/libcuda.so.1");
  const Entry &gemm = module.entry("splitk_gemm");
  // M = 100, K = 200, N = 30
  TensorView a(gDeviceMemory, DType::BF16, {100, 200});
  TensorView b(gDeviceMemory, DType::BF16, {200, 30});
  TensorView c(gDeviceMemory, DType::BF16, {100, 30});
  std::vector<ResolvedStep> steps = gemm.resolve({a, b, c});
  REQUIRE(steps.size() == 5);
  CHECK(steps[0].kind == ResolvedStep::Kind::Alloc);
  CHECK(steps[0].bytes == 100 * 30 * 4);
  CHECK(steps[1].kind == ResolvedStep::Kind::Launch);
  CHECK(steps[1].launch->function == "bf16_to_f32");
  CHECK(steps[1].grid == std::array<std::int64_t, 3>{2, 1, 1}); // ceildiv(3000, 2048)
  CHECK(steps[2].launch->function == "splitk_mma");
  CHECK(steps[2].grid == std::array<std::int64_t, 3>{4, 7, 4}); // ceildiv(30,8), ceildiv(100,16), ceildiv(200,64)
  CHECK(steps[3].launch->function == "f32_to_bf16");
  CHECK(steps[4].kind == ResolvedStep::Kind::Free);
  CHECK(steps[4].workspace == steps[0].workspace);
  // Bad arguments fail resolution exactly as they fail launch.
  CHECK_THROWS_AS(gemm.resolve({a, c, c}), ArgumentError);
}

TEST_CASE("grid extents out of the hardware's range are rejected", "[plan]") {
  EntrySpec spec;
  spec.name = "wide";
  spec.signature = Signature({{"x", DType::F32, {"N"}, 4}});
  spec.plan.launch({0, "k", {1, Expr::symbol("N"), 1}, {32, 1, 1}, 0, {KernelArg::tensor(0)}});
  std::vector<EntrySpec> entries;
  entries.push_back(std::move(spec));
  Module module({fakeCubin()}, std::move(entries), "/nonexistent/libcuda.so.1");
  CHECK_NOTHROW(module.entry("wide").resolve({TensorView(gDeviceMemory, DType::F32, {65535})}));
  CHECK_THROWS_WITH(module.entry("wide").resolve({TensorView(gDeviceMemory, DType::F32, {65536})}),
                    Catch::Contains("grid.y = 'N' evaluates to 65536, outside 0..65535"));
}

TEST_CASE("malformed plans are rejected when the module is built", "[plan]") {
  auto build = [](EntrySpec spec) {
    std::vector<EntrySpec> entries;
    entries.push_back(std::move(spec));
    return Module({fakeCubin()}, std::move(entries), "/nonexistent/libcuda.so.1");
  };
  auto base = [] {
    EntrySpec spec;
    spec.name = "e";
    spec.signature = Signature({{"x", DType::F32, {"N"}, 4}});
    return spec;
  };
  SECTION("unknown dim name") {
    EntrySpec spec = base();
    spec.plan.launch({0, "k", {Expr::symbol("M"), 1, 1}, {32, 1, 1}, 0, {}});
    CHECK_THROWS_WITH(build(std::move(spec)), Catch::Contains("dim name 'M'"));
  }
  SECTION("workspace used after free") {
    EntrySpec spec = base();
    int ws = spec.plan.alloc(Expr(64));
    spec.plan.free(ws);
    spec.plan.launch({0, "k", {1, 1, 1}, {32, 1, 1}, 0, {KernelArg::workspace(ws)}});
    CHECK_THROWS_WITH(build(std::move(spec)), Catch::Contains("uses workspace 0, which is not live"));
  }
  SECTION("workspace never freed") {
    EntrySpec spec = base();
    spec.plan.alloc(Expr(64));
    CHECK_THROWS_WITH(build(std::move(spec)), Catch::Contains("workspace 0 is never freed"));
  }
  SECTION("argument index out of range") {
    EntrySpec spec = base();
    spec.plan.launch({0, "k", {1, 1, 1}, {32, 1, 1}, 0, {KernelArg::tensor(3)}});
    CHECK_THROWS_WITH(build(std::move(spec)), Catch::Contains("passes argument #3, but the signature has 1"));
  }
  SECTION("CUBIN index out of range") {
    EntrySpec spec = base();
    spec.plan.launch({2, "k", {1, 1, 1}, {32, 1, 1}, 0, {}});
    CHECK_THROWS_WITH(build(std::move(spec)), Catch::Contains("refers to CUBIN 2, but the module has 1"));
  }
  SECTION("block too large") {
    EntrySpec spec = base();
    spec.plan.launch({0, "k", {1, 1, 1}, {1024, 2, 1}, 0, {}});
    CHECK_THROWS_WITH(build(std::move(spec)), Catch::Contains("block of 2048 threads"));
  }
}

TEST_CASE("a module lists its entries when asked for a missing one", "[plan]") {
  std::vector<EntrySpec> entries;
  entries.push_back(tilec::testing::splitKGemmEntry());
  Module module({fakeCubin()}, std::move(entries), "/nonexistent/libcuda.so.1");
  CHECK_THROWS_WITH(module.entry("gemm"), Catch::Contains("no entry 'gemm' (entries: splitk_gemm)"));
}

// Regression: i32 kernel arguments were evaluated only while launching, after earlier steps (a workspace,
// a kernel) were enqueued. resolve() evaluates and checks them now, so launch() fails before its first enqueue.
TEST_CASE("scalar kernel arguments are evaluated and range-checked by resolve", "[plan]") {
  EntrySpec spec;
  spec.name = "scaled";
  spec.signature = Signature({{"x", DType::F32, {"N"}}});
  int ws = spec.plan.alloc("N * 4");
  spec.plan.launch({0, "first", {1, 1, 1}, {32, 1, 1}, 0, {KernelArg::tensor(0), KernelArg::workspace(ws)}});
  spec.plan.launch({0, "second", {1, 1, 1}, {32, 1, 1}, 0,
                    {KernelArg::i64(Expr::parse("N * 3")), KernelArg::tensor(0), KernelArg::i32(Expr::parse("N * 4096"))}});
  spec.plan.free(ws);
  std::vector<EntrySpec> entries;
  entries.push_back(std::move(spec));
  Module module({fakeCubin()}, std::move(entries), "/nonexistent/libcuda.so.1");
  const Entry &entry = module.entry("scaled");
  auto steps = entry.resolve({TensorView(gDeviceMemory, DType::F32, {1000})});
  CHECK(steps[2].scalars == std::vector<std::int64_t>{3000, 4096000});
  CHECK_THROWS_WITH(entry.resolve({TensorView(gDeviceMemory, DType::F32, {1000000})}),
                    Catch::Contains("i32 argument 2 = '(N * 4096)' is 4096000000, out of range"));
  // launch() resolves first: the plan error comes before any driver work (no driver here at all).
  CHECK_THROWS_AS(entry.launch(nullptr, {TensorView(gDeviceMemory, DType::F32, {1000000})}), PlanError);
}
