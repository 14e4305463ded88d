// Every kind of bad argument is rejected before launch, with the parameter named; DLPack views convert both ways.
#include "TestKernels.h"
#include "tilec/runtime/Error.h"
#include "tilec/runtime/Module.h"

#include <catch2/catch.hpp>

using namespace tilec::runtime;

namespace {

alignas(256) char gDeviceMemory[1 << 16]; // stands in for device memory: never dereferenced

std::shared_ptr<const Cubin> fakeCubin() { return std::make_shared<const Cubin>(Cubin{{'x'}, "sm_90a", "", {}}); }

// q: bf16[N, 64] (align 16), k: bf16[N, 64], out: f32[N] (align 4, strided allowed).
Module attentionLikeModule() {
  EntrySpec spec;
  spec.name = "rowdot";
  ParamSpec out{"out", DType::F32, {"N"}, 4};
  out.contiguous = false;
  spec.signature = Signature({{"q", DType::BF16, {"N", 64}}, {"k", DType::BF16, {"N", 64}}, out});
  spec.plan.launch({0, "rowdot", {Expr::parse("ceildiv(N, 128)"), 1, 1}, {128, 1, 1}, 0,
                    {KernelArg::tensor(0), KernelArg::tensor(1), KernelArg::tensor(2), KernelArg::i32(Expr::symbol("N"))}});
  std::vector<EntrySpec> entries;
  entries.push_back(std::move(spec));
  return Module({fakeCubin()}, std::move(entries), "/nonexistent/libcuda.so.1");
}

TensorView bf16(std::int64_t rows, std::int64_t cols, std::size_t offset = 0) {
  return TensorView(gDeviceMemory + offset, DType::BF16, {rows, cols});
}

TensorView f32(std::int64_t n) { return TensorView(gDeviceMemory, DType::F32, {n}); }

// Checks that the arguments are rejected for `parameter` with a message containing `problem`.
void requireRejected(const Entry &entry, std::initializer_list<TensorView> args, const std::string &parameter,
                     const std::string &problem) {
  try {
    entry.check(args);
    FAIL("arguments were accepted; expected a rejection of '" << parameter << "' for: " << problem);
  } catch (const ArgumentError &error) {
    CHECK(error.parameter() == parameter);
    CHECK_THAT(error.what(), Catch::Contains(problem));
    if (!parameter.empty())
      CHECK_THAT(error.what(), Catch::Contains("'" + parameter + "'"));
  }
}

} // namespace

TEST_CASE("well-formed arguments pass the signature check", "[signature]") {
  Module module = attentionLikeModule();
  const Entry &entry = module.entry("rowdot");
  CHECK_NOTHROW(entry.check({bf16(100, 64), bf16(100, 64), f32(100)}));
  // Zero-sized tensors are valid (their grid is empty).
  CHECK_NOTHROW(entry.check({bf16(0, 64), bf16(0, 64), f32(0)}));
}

TEST_CASE("each kind of bad argument is rejected, naming the parameter", "[signature]") {
  Module module = attentionLikeModule();
  const Entry &entry = module.entry("rowdot");
  const TensorView q = bf16(100, 64), k = bf16(100, 64), out = f32(100);

  SECTION("too few arguments") { requireRejected(entry, {q, k}, "", "takes 3 arguments (q, k, out), but 2"); }
  SECTION("too many arguments") { requireRejected(entry, {q, k, out, out}, "", "but 4 were given"); }
  SECTION("wrong dtype") {
    requireRejected(entry, {q, TensorView(gDeviceMemory, DType::F16, {100, 64}), out}, "k", "dtype is f16, not bf16");
  }
  SECTION("wrong rank") {
    requireRejected(entry, {TensorView(gDeviceMemory, DType::BF16, {100, 64, 1}), k, out}, "q", "rank is 3, not 2");
  }
  SECTION("wrong static dim") { requireRejected(entry, {q, bf16(100, 32), out}, "k", "axis 1 is 32, but the kernel is compiled for 64"); }
  SECTION("inconsistent named dim") {
    requireRejected(entry, {q, k, f32(99)}, "out", "axis 0 (N) is 99, but argument #0 'q' axis 0 binds N = 100");
  }
  SECTION("misaligned pointer") { requireRejected(entry, {bf16(100, 64, 2), k, out}, "q", "is not 16-byte aligned"); }
  SECTION("non-contiguous where the kernel needs contiguous") {
    std::int64_t shape[] = {100, 64};
    std::int64_t strides[] = {128, 1};
    requireRejected(entry, {q, TensorView(gDeviceMemory, DType::BF16, 2, shape, strides), out}, "k",
                    "strides [128, 1] are not contiguous row-major");
  }
  SECTION("strided output is fine where allowed") {
    std::int64_t shape[] = {100};
    std::int64_t strides[] = {2};
    CHECK_NOTHROW(entry.check({q, k, TensorView(gDeviceMemory, DType::F32, 1, shape, strides)}));
  }
  SECTION("host tensor") {
    requireRejected(entry, {q, k, TensorView(gDeviceMemory, DType::F32, {100}, {DeviceKind::CPU, 0})}, "out",
                    "tensor is on cpu:0, not on a CUDA device");
  }
  SECTION("tensors on different devices") {
    requireRejected(entry, {q, TensorView(gDeviceMemory, DType::BF16, {100, 64}, {DeviceKind::CUDA, 1}), out}, "k",
                    "tensor is on cuda:1 but argument #0 'q' is on cuda:0");
  }
  SECTION("null data") {
    requireRejected(entry, {TensorView(nullptr, DType::BF16, {100, 64}), k, out}, "q", "data pointer is null");
  }
  SECTION("negative extent") { requireRejected(entry, {q, k, f32(-1)}, "out", "axis 0 has negative extent -1"); }
}

TEST_CASE("the launch of a rejected argument list fails before any driver work", "[signature]") {
  Module module = attentionLikeModule(); // its driver library does not exist
  const Entry &entry = module.entry("rowdot");
  // ArgumentError, not NoDriverError: validation runs first and nothing is attempted.
  CHECK_THROWS_AS(entry.launch(nullptr, bf16(100, 64), bf16(100, 32), f32(100)), ArgumentError);
  CHECK_THROWS_AS(entry.launch(nullptr, bf16(100, 64), bf16(100, 64), f32(100)), NoDriverError);
}

TEST_CASE("DLPack tensors convert to views and back", "[signature][dlpack]") {
  std::int64_t shape[] = {4, 8};
  std::int64_t strides[] = {16, 1};
  DLTensor tensor{};
  tensor.data = gDeviceMemory;
  tensor.byte_offset = 32;
  tensor.device = {kDLCUDA, 0};
  tensor.ndim = 2;
  tensor.dtype = {kDLBfloat, 16, 1};
  tensor.shape = shape;
  tensor.strides = strides;
  TensorView view = TensorView::fromDLPack(tensor);
  CHECK(view.data() == gDeviceMemory + 32);
  CHECK(view.dtype() == DType::BF16);
  CHECK(view.rank() == 2);
  CHECK(view.dim(1) == 8);
  CHECK(view.stride(0) == 16);
  CHECK(!view.isContiguous());
  CHECK(view.describe() == "bf16[4, 8] on cuda:0");

  tensor.strides = nullptr; // compact row-major
  CHECK(TensorView::fromDLPack(tensor).isContiguous());
  CHECK(TensorView::fromDLPack(tensor).stride(0) == 8);

  DLTensor back{};
  view.toDLPack(back);
  CHECK(back.data == gDeviceMemory + 32);
  CHECK(back.dtype.code == kDLBfloat);
  CHECK(back.dtype.bits == 16);
  CHECK(back.device.device_type == kDLCUDA);
  CHECK(back.shape[0] == 4);
  CHECK(back.strides[0] == 16);

  DLTensor unsupported = tensor;
  unsupported.dtype = {kDLFloat, 32, 4};
  CHECK_THROWS_WITH(TensorView::fromDLPack(unsupported), Catch::Contains("4 lanes"));
  unsupported = tensor;
  unsupported.device = {kDLOpenCL, 0};
  CHECK_THROWS_WITH(TensorView::fromDLPack(unsupported), Catch::Contains("device type"));
}

TEST_CASE("Entry::launch accepts DLTensors directly and checks them", "[signature][dlpack]") {
  Module module = attentionLikeModule();
  std::int64_t qShape[] = {100, 64};
  std::int64_t outShape[] = {100};
  DLTensor q{gDeviceMemory, {kDLCUDA, 0}, 2, {kDLBfloat, 16, 1}, qShape, nullptr, 0};
  DLTensor out{gDeviceMemory, {kDLCUDA, 0}, 1, {kDLFloat, 32, 1}, outShape, nullptr, 0};
  DLTensor wrong = out;
  wrong.dtype = {kDLFloat, 16, 1};
  CHECK_THROWS_AS(module.entry("rowdot").launch(nullptr, q, &q, &wrong), ArgumentError);
  CHECK_THROWS_AS(module.entry("rowdot").launch(nullptr, q, &q, &out), NoDriverError);

  // A DLTensor tilec cannot take is an ArgumentError naming the parameter (it used to be a plain Error).
  DLTensor lanes = out;
  lanes.dtype = {kDLFloat, 32, 4};
  try {
    module.entry("rowdot").launch(nullptr, q, q, lanes);
    FAIL("accepted");
  } catch (const ArgumentError &error) {
    CHECK(error.parameter() == "out");
    CHECK_THAT(error.what(), Catch::Contains("argument #2 'out': DLPack tensors with 4 lanes"));
  }
  try {
    module.entry("rowdot").launch(nullptr, q, static_cast<const DLTensor *>(nullptr), &out);
    FAIL("accepted");
  } catch (const ArgumentError &error) {
    CHECK(error.parameter() == "k");
  }
}

TEST_CASE("null data, overflowing shapes and missing DLPack shapes are rejected, not crashes", "[signature][dlpack]") {
  Module module = attentionLikeModule();
  const Entry &entry = module.entry("rowdot");
  const TensorView k = bf16(100, 64), out = f32(100);
  // [2^32, 2^32] elements: the count overflows int64 (it used to wrap to 0, so a null pointer passed).
  std::int64_t huge[] = {std::int64_t(1) << 32, std::int64_t(1) << 32};
  Signature anyShape({{"x", DType::F32, {DimSpec::any(), DimSpec::any()}}});
  TensorView overflowing(nullptr, DType::F32, 2, huge, nullptr);
  CHECK_THROWS_WITH(anyShape.check("e", &overflowing, 1), Catch::Contains("element count overflows"));
  // data = NULL with a byte offset used to become pointer 0x40 and pass.
  std::int64_t shape[] = {100, 64};
  DLTensor offsetNull{nullptr, {kDLCUDA, 0}, 2, {kDLBfloat, 16, 1}, shape, nullptr, 64};
  CHECK(TensorView::fromDLPack(offsetNull).data() == nullptr);
  requireRejected(entry, {TensorView::fromDLPack(offsetNull), k, out}, "q", "data pointer is null");
  // shape = NULL with ndim > 0 used to crash.
  DLTensor noShape = offsetNull;
  noShape.data = gDeviceMemory;
  noShape.shape = nullptr;
  CHECK_THROWS_WITH(TensorView::fromDLPack(noShape), Catch::Contains("has no shape"));
  DLTensor badRank = noShape;
  badRank.ndim = -1;
  CHECK_THROWS_WITH(TensorView::fromDLPack(badRank), Catch::Contains("rank -1 is out of range"));
}

TEST_CASE("bool tensors travel as DLPack kDLBool (what PyTorch exports)", "[signature][dlpack]") {
  std::int64_t shape[] = {8};
  DLTensor flags{gDeviceMemory, {kDLCUDA, 0}, 1, {6 /* kDLBool, DLPack >= 0.8 */, 8, 1}, shape, nullptr, 0};
  TensorView view = TensorView::fromDLPack(flags); // was rejected
  CHECK(view.dtype() == DType::Bool);
  DLTensor back{};
  view.toDLPack(back);
  CHECK(back.dtype.code == 6); // was exported as kDLUInt 8
  CHECK(back.dtype.bits == 8);
  flags.dtype = {kDLUInt, 1, 1}; // the older 1-bit unsigned spelling still reads as bool
  CHECK(TensorView::fromDLPack(flags).dtype() == DType::Bool);
}

// GQA: q: bf16[B, kv * 4, 64], k: bf16[B, kv, 64] (what flash attention's `kv_heads * groups` lowers to), and a
// rounding-down derived dim h: bf16[floordiv(B, 4)].
TEST_CASE("derived dims are checked against their expression's value", "[signature]") {
  Signature signature({{"q", DType::BF16, {"B", DimSpec::derived(Expr::parse("kv * 4")), 64}},
                       {"k", DType::BF16, {"B", "kv", 64}},
                       {"h", DType::BF16, {DimSpec::derived(Expr::parse("floordiv(B, 4)"))}}});
  CHECK(signature.params()[0].toString() == "q: bf16[B, {(kv * 4)}, 64] (align 16, contiguous)");
  auto view = [](std::int64_t b, std::int64_t h) { return TensorView(gDeviceMemory, DType::BF16, {b, h, 64}); };
  auto rejectionOf = [&](std::initializer_list<TensorView> args, const std::string &parameter) -> std::string {
    try {
      signature.check("attn", args.begin(), args.size());
    } catch (const ArgumentError &error) {
      CHECK(error.parameter() == parameter);
      return error.what();
    }
    return "accepted";
  };
  auto h = [](std::int64_t n) { return TensorView(gDeviceMemory, DType::BF16, {n}); };
  CHECK(rejectionOf({view(9, 8), view(9, 2), h(2)}, "") == "accepted");
  // Before derived dims were checked, q or k with the wrong number of heads passed (and the kernel read past k's
  // end): 6 query heads cannot share 4-way.
  CHECK_THAT(rejectionOf({view(9, 6), view(9, 2), h(2)}, "q"), Catch::Contains("axis 1 is 6, but (kv * 4) = 8"));
  CHECK_THAT(rejectionOf({view(9, 8), view(9, 2), h(3)}, "h"), Catch::Contains("axis 0 is 3, but floordiv(B, 4) = 2"));

  // The shapes a host allocates for given dim values (B, kv).
  auto shapes = signature.shapesFor({9, 2});
  CHECK(shapes == std::vector<std::vector<std::int64_t>>{{9, 8, 64}, {9, 2, 64}, {2}});
  CHECK_THROWS_AS(Signature({{"q", DType::BF16, {DimSpec::any()}}}).shapesFor({}), ArgumentError);

  // A derived dim may only use declared names.
  CHECK_THROWS_WITH(Signature({{"k", DType::BF16, {DimSpec::derived(Expr::parse("floordiv(heads, 4)"))}}}),
                    Catch::Contains("uses a name that no parameter declares"));
}
