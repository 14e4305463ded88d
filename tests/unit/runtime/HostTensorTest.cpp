// Host tensors, .npy files and the arguments of an entry made from a signature (what `tilec run` and the tests
// share): every dtype round-trips, bad files and contradicting requests are errors naming the parameter.
#include "TempDir.h"
#include "tilec/runtime/Error.h"
#include "tilec/runtime/HostTensor.h"
#include "tilec/runtime/Npy.h"

#include <catch2/catch.hpp>

#include <limits>

#include <cmath>
#include <fstream>

using namespace tilec::runtime;
using tilec::testing::TempDir;

namespace {

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// q: f32[h, n], k: f32[floordiv(h, 2), n], c: i32[4]
Signature gqaSignature() {
  return Signature({{"q", DType::F32, {"h", "n"}},
                    {"k", DType::F32, {DimSpec::derived(Expr::parse("floordiv(h, 2)")), "n"}},
                    {"c", DType::I32, {4}}});
}

} // namespace

TEST_CASE("every dtype round-trips through .npy, bf16 as float32", "[host]") {
  TempDir dir;
  for (DType dtype : {DType::BF16, DType::F16, DType::F32, DType::F64, DType::I8, DType::I32, DType::I64, DType::U8,
                      DType::Bool}) {
    INFO(dtypeName(dtype));
    HostTensor tensor(dtype, {3, 5});
    for (std::int64_t i = 0; i < tensor.numel(); ++i)
      tensor.set(i, dtype == DType::Bool ? double(i % 2) : double(i % 7) - (dtype == DType::U8 ? 0 : 3) + 0.0);
    std::string path = dir.path() + "/t.npy";
    writeNpy(path, tensor);
    HostTensor back = readNpy(path, dtype);
    CHECK(back.shape == tensor.shape);
    CHECK(back.bytes == tensor.bytes);
  }
  // A float32 file feeds a bf16 parameter, rounded to nearest even.
  HostTensor f(DType::F32, {2});
  f.set(0, 1.00390625); // 1 + 2^-8: halfway between two bf16 values, rounds to even (1.0)
  f.set(1, -2.5);
  writeNpy(dir.path() + "/f.npy", f);
  HostTensor b = readNpy(dir.path() + "/f.npy", DType::BF16);
  CHECK(b.get(0) == 1.0);
  CHECK(b.get(1) == -2.5);
}

TEST_CASE("bad .npy files are errors that say what is wrong", "[host]") {
  TempDir dir;
  std::string path = dir.path() + "/bad.npy";
  auto errorOf = [&](DType want) -> std::string {
    try {
      readNpy(path, want);
    } catch (const Error &error) {
      return error.what();
    }
    return "accepted";
  };
  CHECK_THAT(errorOf(DType::F32), Catch::Contains("cannot read"));
  writeFile(path, "hello, world");
  CHECK_THAT(errorOf(DType::F32), Catch::Contains("is not a .npy file"));
  HostTensor t(DType::F32, {4});
  writeNpy(path, t);
  CHECK_THAT(errorOf(DType::I32), Catch::Contains("holds '<f4' but the parameter is i32"));
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  writeFile(path, bytes.substr(0, bytes.size() - 1));
  CHECK_THAT(errorOf(DType::F32), Catch::Contains("truncated data (15 bytes for 4 elements)"));
  std::string huge = bytes;
  huge.replace(huge.find("(4,)"), 4, "(4611686018427387904, 4)");
  writeFile(path, huge.substr(0, 128));
  CHECK_THAT(errorOf(DType::F32), Catch::Contains("too large"));
  std::string fortran = bytes;
  fortran.replace(fortran.find("False"), 5, "True ");
  writeFile(path, fortran);
  CHECK_THAT(errorOf(DType::F32), Catch::Contains("Fortran-order arrays are not supported"));
}

TEST_CASE("arguments are made from the signature: files fix dims, derived dims follow, seeds repeat", "[host]") {
  TempDir dir;
  Signature signature = gqaSignature();
  HostArgumentRequest request;
  request.dims = {{"h", 4}, {"n", 3}};
  request.zeros = {"c"};
  request.seed = 7;
  std::vector<HostTensor> args = makeHostArguments(signature, request);
  REQUIRE(args.size() == 3);
  CHECK(args[0].shape == std::vector<std::int64_t>{4, 3});
  CHECK(args[1].shape == std::vector<std::int64_t>{2, 3});
  CHECK(args[2].shape == std::vector<std::int64_t>{4});
  CHECK(args[2].get(0) == 0);
  bool anyNonZero = false;
  for (std::int64_t i = 0; i < args[0].numel(); ++i)
    anyNonZero |= args[0].get(i) != 0;
  CHECK(anyNonZero);
  CHECK(makeHostArguments(signature, request)[0].bytes == args[0].bytes); // same seed, same values
  request.seed = 8;
  CHECK(makeHostArguments(signature, request)[0].bytes != args[0].bytes);

  // A file fixes h and n; a --dim that disagrees is an error naming the parameter.
  writeNpy(dir.path() + "/q.npy", args[0]);
  HostArgumentRequest fromFile;
  fromFile.inputs = {{"q", dir.path() + "/q.npy"}};
  std::vector<HostTensor> again = makeHostArguments(signature, fromFile);
  CHECK(again[0].bytes == args[0].bytes);
  CHECK(again[1].shape == std::vector<std::int64_t>{2, 3});
  auto rejection = [&](const HostArgumentRequest &r) -> std::pair<std::string, std::string> {
    try {
      makeHostArguments(signature, r);
    } catch (const ArgumentError &error) {
      return {error.parameter(), error.what()};
    }
    return {"", "accepted"};
  };
  HostArgumentRequest contradict = fromFile;
  contradict.dims = {{"h", 5}};
  CHECK(rejection(contradict).first == "q");
  CHECK_THAT(rejection(contradict).second, Catch::Contains("dim 'h' = 5 contradicts parameter 'q'"));
  HostArgumentRequest wrongK = fromFile;
  wrongK.inputs["k"] = dir.path() + "/q.npy"; // 4 heads where 2 are expected
  CHECK(rejection(wrongK).first == "k");
  CHECK_THAT(rejection(wrongK).second, Catch::Contains("the file's shape is [4, 3], but the other arguments make it [2, 3]"));
  HostArgumentRequest odd;
  odd.dims = {{"h", 3}, {"n", 1}};
  CHECK(makeHostArguments(signature, odd)[1].shape == std::vector<std::int64_t>{1, 1}); // floordiv rounds down
  HostArgumentRequest missing;
  missing.dims = {{"h", 4}};
  CHECK_THAT(rejection(missing).second, Catch::Contains("dim 'n' is unknown"));
  HostArgumentRequest unknown = request;
  unknown.zeros = {"z"};
  CHECK(rejection(unknown).first == "z");
}

TEST_CASE("relative error is a norm ratio, and NaN never passes", "[host]") {
  HostTensor a(DType::F32, {3}), b(DType::F32, {3});
  for (int i = 0; i < 3; ++i) {
    a.set(i, i + 1.0);
    b.set(i, i + 1.0);
  }
  CHECK(relativeError(a, b) == 0);
  a.set(2, 3.0 + 0.14);
  CHECK(relativeError(a, b) == Approx(0.14 / std::sqrt(14.0)).epsilon(1e-5));
  a.set(0, std::nan(""));
  CHECK(std::isnan(relativeError(a, b)));
  CHECK_THROWS_AS(relativeError(a, HostTensor(DType::F32, {4})), Error);
}

TEST_CASE("the worst row's error catches a wrong row that the whole norm hides", "[host]") {
  // 4000 rows of 64: zeroing one row moves the whole norm by about 1.6 %, within bf16's bound, but that row is off
  // by 1.
  HostTensor a(DType::F32, {4000, 64}), b(DType::F32, {4000, 64});
  for (std::int64_t i = 0; i < b.numel(); ++i) {
    b.set(i, std::sin(double(i)) + 0.5);
    a.set(i, b.get(i));
  }
  CHECK(worstRowError(a, b) == 0);
  for (int j = 0; j < 64; ++j)
    a.set(500 * 64 + j, 0.0);
  CHECK(relativeError(a, b) < defaultComparisonTolerance(DType::BF16));
  CHECK(worstRowError(a, b) == Approx(1.0).epsilon(0.05));
  CHECK(worstRowError(a, b) > defaultComparisonTolerance(DType::BF16) * kRowToleranceFactor);
  // A row that is nearly zero in the reference is measured against the typical row, not its own tiny norm.
  HostTensor c(DType::F32, {2, 4}), d(DType::F32, {2, 4});
  for (int j = 0; j < 4; ++j) {
    d.set(j, 1.0);
    c.set(j, 1.0);
    d.set(4 + j, 1e-9);
    c.set(4 + j, 2e-9);
  }
  CHECK(worstRowError(c, d) < 1e-8);
  c.set(5, std::nan(""));
  CHECK(std::isnan(worstRowError(c, d)));
  CHECK_THROWS_AS(worstRowError(a, HostTensor(DType::F32, {4})), Error);
}

TEST_CASE("random integer arguments take both signs", "[host]") {
  Signature signature({{"x", DType::I32, {"n"}}});
  HostArgumentRequest request;
  request.dims = {{"n", 1000}};
  request.seed = 3;
  HostTensor x = makeHostArguments(signature, request)[0];
  bool negative = false, positive = false;
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    negative |= x.get(i) < 0;
    positive |= x.get(i) > 0;
    CHECK((x.get(i) >= -64 && x.get(i) < 64));
  }
  CHECK(negative);
  CHECK(positive);
}

TEST_CASE("equal infinities agree, an infinity on one side does not", "[host]") {
  HostTensor a(DType::F32, {2, 2}), b(DType::F32, {2, 2});
  const double inf = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 4; ++i) {
    a.set(i, i + 1.0);
    b.set(i, i + 1.0);
  }
  a.set(1, inf);
  b.set(1, inf);
  a.set(2, -inf);
  b.set(2, -inf);
  CHECK(relativeError(a, b) == 0); // inf - inf would be NaN
  CHECK(worstRowError(a, b) == 0);
  a.set(2, inf);
  CHECK(std::isinf(relativeError(a, b)));
  CHECK(std::isinf(worstRowError(a, b)));
  a.set(2, 3.0);
  CHECK(std::isinf(relativeError(a, b)));
}
