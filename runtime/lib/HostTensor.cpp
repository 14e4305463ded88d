#include "tilec/runtime/HostTensor.h"

#include "tilec/runtime/Error.h"
#include "tilec/runtime/Npy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>

namespace tilec::runtime {

namespace {

float bitsToFloat(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::uint32_t floatToBits(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

std::uint16_t floatToBF16(float f) {
  std::uint32_t bits = floatToBits(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN stays NaN (quiet)
    return static_cast<std::uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u); // round to nearest even
  return static_cast<std::uint16_t>(bits >> 16);
}

float halfToFloat(std::uint16_t h) {
  std::uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0x1f)
    return bitsToFloat(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    float f = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -f : f;
  }
  return bitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

std::uint16_t floatToHalf(float f) {
  // The compiler's conversion rounds to nearest even, with subnormals, infinities and NaN.
  _Float16 h = static_cast<_Float16>(f);
  std::uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}

template <typename T> T load(const std::uint8_t *p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

template <typename T> void store(std::uint8_t *p, T value) { std::memcpy(p, &value, sizeof(T)); }

} // namespace

HostTensor::HostTensor(DType dtype, std::vector<std::int64_t> shape) : dtype(dtype), shape(std::move(shape)) {
  std::int64_t bytesNeeded = static_cast<std::int64_t>(dtypeSize(dtype));
  for (std::int64_t extent : this->shape)
    if (extent < 0 || __builtin_mul_overflow(bytesNeeded, extent, &bytesNeeded))
      throw Error(fmt::format("a host tensor of shape [{}] is too large or negative",
                              fmt::join(this->shape, ", ")));
  bytes.assign(static_cast<std::size_t>(bytesNeeded), 0);
}

std::int64_t HostTensor::numel() const {
  std::int64_t count = 1;
  for (std::int64_t extent : shape)
    count *= extent; // bounded by the constructor's check
  return count;
}

double HostTensor::get(std::int64_t i) const {
  const std::uint8_t *p = bytes.data() + i * static_cast<std::int64_t>(dtypeSize(dtype));
  switch (dtype) {
  case DType::BF16:
    return bitsToFloat(static_cast<std::uint32_t>(load<std::uint16_t>(p)) << 16);
  case DType::F16:
    return halfToFloat(load<std::uint16_t>(p));
  case DType::F32:
    return load<float>(p);
  case DType::F64:
    return load<double>(p);
  case DType::I8:
    return load<std::int8_t>(p);
  case DType::I32:
    return load<std::int32_t>(p);
  case DType::I64:
    return static_cast<double>(load<std::int64_t>(p));
  case DType::U8:
    return *p;
  case DType::Bool:
    return *p ? 1.0 : 0.0;
  }
  return 0;
}

void HostTensor::set(std::int64_t i, double v) {
  std::uint8_t *p = bytes.data() + i * static_cast<std::int64_t>(dtypeSize(dtype));
  switch (dtype) {
  case DType::BF16:
    return store(p, floatToBF16(static_cast<float>(v)));
  case DType::F16:
    return store(p, floatToHalf(static_cast<float>(v)));
  case DType::F32:
    return store(p, static_cast<float>(v));
  case DType::F64:
    return store(p, v);
  case DType::I8:
    return store(p, static_cast<std::int8_t>(v));
  case DType::I32:
    return store(p, static_cast<std::int32_t>(v));
  case DType::I64:
    return store(p, static_cast<std::int64_t>(v));
  case DType::U8:
    return store(p, static_cast<std::uint8_t>(v));
  case DType::Bool:
    *p = v != 0;
    return;
  }
}

TensorView HostTensor::view() {
  return TensorView(bytes.data(), dtype, static_cast<int>(shape.size()), shape.data(), nullptr,
                    DeviceRef{DeviceKind::CPU, 0});
}

std::vector<HostTensor> makeHostArguments(const Signature &signature, const HostArgumentRequest &request) {
  const std::vector<ParamSpec> &params = signature.params();
  auto paramIndex = [&](const std::string &name) -> int {
    for (std::size_t p = 0; p < params.size(); ++p)
      if (params[p].name == name)
        return static_cast<int>(p);
    return -1;
  };
  std::string paramList;
  for (const ParamSpec &param : params)
    paramList += (paramList.empty() ? "" : ", ") + param.name;
  for (const auto &[name, path] : request.inputs)
    if (paramIndex(name) < 0)
      throw ArgumentError(name, fmt::format("input '{}' ({}): there is no parameter '{}' (parameters: {})", name,
                                            path, name, paramList));
  for (const std::string &name : request.zeros)
    if (paramIndex(name) < 0)
      throw ArgumentError(name, fmt::format("zero '{}': there is no parameter '{}' (parameters: {})", name, name,
                                            paramList));
  const std::vector<std::string> &dimNames = signature.dimNames();
  for (const auto &[name, value] : request.dims) {
    if (std::find(dimNames.begin(), dimNames.end(), name) == dimNames.end())
      throw ArgumentError("", fmt::format("dim '{}': there is no named dim '{}' (named dims: {})", name, name,
                                          fmt::join(dimNames, ", ")));
    if (value < 0)
      throw ArgumentError("", fmt::format("dim '{}' = {}: extents are not negative", name, value));
  }

  // Files first: they fix the named dims they declare.
  std::vector<HostTensor> tensors(params.size());
  std::vector<bool> loaded(params.size(), false);
  for (const auto &[name, path] : request.inputs) {
    int p = paramIndex(name);
    try {
      tensors[p] = readNpy(path, params[p].dtype);
    } catch (const Error &error) {
      throw ArgumentError(name, fmt::format("parameter '{}': {}", name, error.what()));
    }
    if (tensors[p].shape.size() != params[p].dims.size())
      throw ArgumentError(name, fmt::format("parameter '{}' ({}): '{}' has rank {}, not {}", name,
                                            params[p].toString(), path, tensors[p].shape.size(),
                                            params[p].dims.size()));
    loaded[p] = true;
  }
  std::vector<std::int64_t> dimValues(dimNames.size(), -1);
  for (std::size_t d = 0; d < dimNames.size(); ++d) {
    const std::string &name = dimNames[d];
    auto [origin, axis] = signature.findDim(name);
    auto given = request.dims.find(name);
    if (loaded[origin]) {
      dimValues[d] = tensors[origin].shape[axis];
      if (given != request.dims.end() && given->second != dimValues[d])
        throw ArgumentError(params[origin].name,
                            fmt::format("dim '{}' = {} contradicts parameter '{}', whose axis {} ({}) is {}", name,
                                        given->second, params[origin].name, axis, name, dimValues[d]));
    } else if (given != request.dims.end()) {
      dimValues[d] = given->second;
    } else {
      throw ArgumentError(params[origin].name,
                          fmt::format("dim '{}' is unknown: give its extent, or a file for parameter '{}'", name,
                                      params[origin].name));
    }
  }
  std::vector<std::vector<std::int64_t>> shapes = signature.shapesFor(dimValues);

  std::mt19937_64 rng(request.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (std::size_t p = 0; p < params.size(); ++p) {
    if (loaded[p]) {
      if (tensors[p].shape != shapes[p])
        throw ArgumentError(params[p].name,
                            fmt::format("parameter '{}' ({}): the file's shape is [{}], but the other arguments "
                                        "make it [{}]",
                                        params[p].name, params[p].toString(), fmt::join(tensors[p].shape, ", "),
                                        fmt::join(shapes[p], ", ")));
      continue;
    }
    tensors[p] = HostTensor(params[p].dtype, shapes[p]);
    if (std::find(request.zeros.begin(), request.zeros.end(), params[p].name) != request.zeros.end())
      continue;
    DType dtype = params[p].dtype;
    bool integer = dtype == DType::I8 || dtype == DType::I32 || dtype == DType::I64 || dtype == DType::U8;
    for (std::int64_t i = 0; i < tensors[p].numel(); ++i)
      tensors[p].set(i, dtype == DType::Bool ? double(rng() & 1)
                        : dtype == DType::U8 ? double(rng() % 16)
                        : integer ? double(std::int64_t(rng() % 128) - 64) // negative too: signed / and %
                                  : normal(rng));
  }
  return tensors;
}

double runOnDevice(const Entry &entry, std::vector<HostTensor> &args) {
  std::shared_ptr<Driver> driver = Driver::load();
  const DriverApi &api = driver->api();
  driver->currentContext();
  struct DeviceMemory {
    const DriverApi *api = nullptr;
    cu::DevicePtr pointer = 0;
    ~DeviceMemory() {
      if (pointer)
        api->cuMemFree(pointer);
    }
  };
  std::vector<DeviceMemory> memory(args.size());
  std::vector<TensorView> views;
  for (std::size_t i = 0; i < args.size(); ++i) {
    memory[i].api = &api;
    // 256-byte aligned by cuMemAlloc; one byte for empty tensors so that every pointer is valid.
    driver->check(api.cuMemAlloc(&memory[i].pointer, std::max<std::size_t>(args[i].bytes.size(), 1)), "cuMemAlloc");
    if (!args[i].bytes.empty())
      driver->check(api.cuMemcpyHtoD(memory[i].pointer, args[i].bytes.data(), args[i].bytes.size()), "cuMemcpyHtoD");
    views.emplace_back(reinterpret_cast<void *>(memory[i].pointer), args[i].dtype,
                       static_cast<int>(args[i].shape.size()), args[i].shape.data(), nullptr, DeviceRef{});
  }
  driver->check(api.cuCtxSynchronize(), "cuCtxSynchronize");
  // Entry::launch checks the arguments and evaluates the whole plan before it enqueues anything.
  auto start = std::chrono::steady_clock::now();
  entry.launch(nullptr, views.data(), views.size());
  driver->check(api.cuCtxSynchronize(), "cuCtxSynchronize");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (std::size_t i = 0; i < args.size(); ++i)
    if (!args[i].bytes.empty())
      driver->check(api.cuMemcpyDtoH(args[i].bytes.data(), memory[i].pointer, args[i].bytes.size()), "cuMemcpyDtoH");
  return seconds;
}

namespace {
/// (x - y)^2 and y^2 for the norms, where equal infinities (inf - inf is NaN) count as no difference: a result that
/// overflows to the same infinity on both sides agrees. An infinity on one side only is an infinite difference.
struct SquaredTerms {
  double difference, reference;
};
SquaredTerms squaredTerms(double x, double y) {
  if (std::isinf(x) || std::isinf(y))
    return {x == y ? 0.0 : std::numeric_limits<double>::infinity(), 0.0};
  return {(x - y) * (x - y), y * y};
}

void requireSameShape(const HostTensor &a, const HostTensor &b) {
  if (a.shape != b.shape)
    throw Error(fmt::format("cannot compare tensors of shapes [{}] and [{}]", fmt::join(a.shape, ", "),
                            fmt::join(b.shape, ", ")));
}

/// The squared difference of a and b and the squared norm of b over the elements [begin, end); false if either
/// holds a NaN there (no comparison then passes).
bool sumSquares(const HostTensor &a, const HostTensor &b, std::int64_t begin, std::int64_t end, double &difference,
                double &norm) {
  difference = norm = 0;
  for (std::int64_t i = begin; i < end; ++i) {
    double x = a.get(i), y = b.get(i);
    if (std::isnan(x) || std::isnan(y))
      return false;
    SquaredTerms t = squaredTerms(x, y);
    difference += t.difference;
    norm += t.reference;
  }
  return true;
}

} // namespace

double relativeError(const HostTensor &a, const HostTensor &b) {
  requireSameShape(a, b);
  double difference, norm;
  if (!sumSquares(a, b, 0, a.numel(), difference, norm))
    return std::numeric_limits<double>::quiet_NaN();
  if (norm == 0)
    return difference == 0 ? 0 : std::numeric_limits<double>::infinity();
  return std::sqrt(difference / norm);
}

double worstRowError(const HostTensor &a, const HostTensor &b) {
  requireSameShape(a, b);
  const std::int64_t n = a.numel();
  if (n == 0)
    return 0;
  const std::int64_t row = a.shape.empty() || a.shape.back() == 0 ? 1 : a.shape.back(), rows = n / row;
  // A row's difference is measured against the larger of its own norm and the tensor's RMS row norm, so that rows
  // that are nearly zero (a masked row, a tail) do not turn rounding into large relative errors.
  double difference, total;
  if (!sumSquares(a, b, 0, n, difference, total))
    return std::numeric_limits<double>::quiet_NaN();
  const double typicalRow = std::sqrt(total / double(rows));
  double worst = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    double norm;
    sumSquares(a, b, r * row, (r + 1) * row, difference, norm);
    double scale = std::max(std::sqrt(norm), typicalRow);
    double error = scale == 0 ? (difference == 0 ? 0 : std::numeric_limits<double>::infinity())
                              : std::sqrt(difference) / scale;
    worst = std::max(worst, error);
  }
  return worst;
}

double defaultComparisonTolerance(DType dtype) {
  switch (dtype) {
  case DType::BF16:
    return 2e-2;
  case DType::F16:
    return 5e-3;
  case DType::F32:
  case DType::F64:
    return 1e-4;
  default:
    return 0;
  }
}

} // namespace tilec::runtime
