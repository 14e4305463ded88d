#include "tilec/runtime/Signature.h"

#include "tilec/runtime/Error.h"

#include <fmt/format.h>

#include <cstdint>

namespace tilec::runtime {

std::string DimSpec::toString() const {
  switch (kind) {
  case Kind::Any:
    return "?";
  case Kind::Static:
    return std::to_string(extent);
  case Kind::Named:
    return name;
  }
  return "?";
}

std::string ParamSpec::toString() const {
  std::string shape;
  for (std::size_t i = 0; i < dims.size(); ++i)
    shape += (i ? ", " : "") + dims[i].toString();
  return fmt::format("{}: {}[{}] (align {}{})", name, dtypeName(dtype), shape, alignment,
                     contiguous ? ", contiguous" : "");
}

Signature::Signature(std::vector<ParamSpec> params) : params_(std::move(params)) {
  for (std::size_t p = 0; p < params_.size(); ++p) {
    const ParamSpec &param = params_[p];
    if (param.alignment == 0 || (param.alignment & (param.alignment - 1)) != 0)
      throw Error(fmt::format("parameter '{}': alignment {} is not a power of two", param.name, param.alignment));
    if (param.dims.size() > static_cast<std::size_t>(TensorView::kMaxRank))
      throw Error(fmt::format("parameter '{}': rank {} exceeds {}", param.name, param.dims.size(),
                              TensorView::kMaxRank));
    for (std::size_t axis = 0; axis < param.dims.size(); ++axis) {
      const DimSpec &dim = param.dims[axis];
      if (dim.kind == DimSpec::Kind::Named && findDim(dim.name).first < 0) {
        dimNames_.push_back(dim.name);
        dimOrigins_.emplace_back(static_cast<int>(p), static_cast<int>(axis));
      }
    }
  }
}

std::pair<int, int> Signature::findDim(const std::string &name) const {
  for (std::size_t i = 0; i < dimNames_.size(); ++i)
    if (dimNames_[i] == name)
      return dimOrigins_[i];
  return {-1, -1};
}

void Signature::check(const std::string &entryName, const TensorView *args, std::size_t count) const {
  if (count != params_.size()) {
    std::string expected;
    for (const ParamSpec &param : params_)
      expected += (expected.empty() ? "" : ", ") + param.name;
    throw ArgumentError("", fmt::format("entry '{}' takes {} arguments ({}), but {} were given", entryName,
                                        params_.size(), expected, count));
  }
  for (std::size_t p = 0; p < params_.size(); ++p) {
    const ParamSpec &param = params_[p];
    const TensorView &arg = args[p];
    auto reject = [&](const std::string &problem) {
      throw ArgumentError(param.name, fmt::format("entry '{}', argument #{} '{}' ({}): {}; expected {}", entryName,
                                                  p, param.name, arg.describe(), problem, param.toString()));
    };
    if (arg.device().kind != DeviceKind::CUDA)
      reject(fmt::format("tensor is on {}, not on a CUDA device", describe(arg.device())));
    if (arg.device() != args[0].device())
      reject(fmt::format("tensor is on {} but argument #0 '{}' is on {}", describe(arg.device()), params_[0].name,
                         describe(args[0].device())));
    if (arg.dtype() != param.dtype)
      reject(fmt::format("dtype is {}, not {}", dtypeName(arg.dtype()), dtypeName(param.dtype)));
    if (static_cast<std::size_t>(arg.rank()) != param.dims.size())
      reject(fmt::format("rank is {}, not {}", arg.rank(), param.dims.size()));
    for (int axis = 0; axis < arg.rank(); ++axis) {
      const DimSpec &dim = param.dims[axis];
      std::int64_t extent = arg.dim(axis);
      if (extent < 0)
        reject(fmt::format("axis {} has negative extent {}", axis, extent));
      if (dim.kind == DimSpec::Kind::Static && extent != dim.extent)
        reject(fmt::format("axis {} is {}, but the kernel is compiled for {}", axis, extent, dim.extent));
      if (dim.kind == DimSpec::Kind::Named) {
        auto [originParam, originAxis] = findDim(dim.name);
        std::int64_t bound = args[originParam].dim(originAxis);
        if (extent != bound)
          reject(fmt::format("axis {} ({}) is {}, but argument #{} '{}' axis {} binds {} = {}", axis, dim.name,
                             extent, originParam, params_[originParam].name, originAxis, dim.name, bound));
      }
    }
    if (arg.data() == nullptr && arg.numel() != 0)
      reject("data pointer is null");
    if (reinterpret_cast<std::uintptr_t>(arg.data()) % param.alignment != 0)
      reject(fmt::format("data pointer {} is not {}-byte aligned", arg.data(), param.alignment));
    if (param.contiguous && !arg.isContiguous()) {
      std::string strides;
      for (int axis = 0; axis < arg.rank(); ++axis)
        strides += fmt::format("{}{}", axis ? ", " : "", arg.stride(axis));
      reject(fmt::format("strides [{}] are not contiguous row-major", strides));
    }
  }
}

} // namespace tilec::runtime
