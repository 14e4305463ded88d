#include "tilec/runtime/Signature.h"

#include "tilec/runtime/Error.h"

#include <fmt/format.h>

#include <algorithm>
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
  case Kind::Derived:
    return "{" + expr.toString() + "}";
  }
  return "?";
}

DimSpec DimSpec::derived(Expr expr) {
  DimSpec dim;
  dim.kind = Kind::Derived;
  dim.expr = std::move(expr);
  return dim;
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
  // Derived dims last: their names may be declared by later parameters.
  for (const ParamSpec &param : params_)
    for (const DimSpec &dim : param.dims) {
      if (dim.kind != DimSpec::Kind::Derived)
        continue;
      Expr bound = dim.expr;
      for (const Expr::Token &token : bound.tokens())
        if (token.op == Expr::Op::Dim || token.op == Expr::Op::Stride)
          throw Error(fmt::format("parameter '{}': derived dim '{}' may use dim names only, not dim() or stride()",
                                  param.name, dim.toString()));
      try {
        bound.bindSymbols([&](const std::string &name) { return findDim(name); });
      } catch (const PlanError &) {
        throw Error(fmt::format("parameter '{}': derived dim '{}' uses a name that no parameter declares",
                                param.name, dim.toString()));
      }
      boundDerived_.push_back(std::move(bound));
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
    auto reject = [&](const std::string &problem) { rejectArgument(entryName, args, p, problem); };
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
    if (arg.numel() < 0)
      reject("its element count overflows 64 bits");
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
  checkDerived(entryName, args); // every rank is right by now: the expressions may read any argument's dims
}

void Signature::rejectArgument(const std::string &entryName, const TensorView *args, std::size_t p,
                               const std::string &problem) const {
  const ParamSpec &param = params_[p];
  throw ArgumentError(param.name, fmt::format("entry '{}', argument #{} '{}' ({}): {}; expected {}", entryName, p,
                                              param.name, args[p].describe(), problem, param.toString()));
}

void Signature::checkDerived(const std::string &entryName, const TensorView *args) const {
  std::size_t next = 0;
  for (std::size_t p = 0; p < params_.size(); ++p)
    for (std::size_t axis = 0; axis < params_[p].dims.size(); ++axis) {
      const DimSpec &dim = params_[p].dims[axis];
      if (dim.kind != DimSpec::Kind::Derived)
        continue;
      const Expr &bound = boundDerived_[next++];
      auto reject = [&](const std::string &problem) { rejectArgument(entryName, args, p, problem); };
      std::int64_t want = 0;
      try {
        want = bound.evaluate(args, params_.size());
      } catch (const PlanError &error) {
        reject(fmt::format("axis {} ({}) cannot be derived: {}", axis, dim.expr.toString(), error.what()));
      }
      std::int64_t extent = args[p].dim(static_cast<int>(axis));
      if (extent != want)
        reject(fmt::format("axis {} is {}, but {} = {}", axis, extent, dim.expr.toString(), want));
    }
}

std::vector<std::vector<std::int64_t>> Signature::shapesFor(const std::vector<std::int64_t> &dimValues) const {
  if (dimValues.size() != dimNames_.size())
    throw ArgumentError("", fmt::format("{} dim values for {} named dims", dimValues.size(), dimNames_.size()));
  std::vector<std::vector<std::int64_t>> shapes(params_.size());
  for (std::size_t p = 0; p < params_.size(); ++p)
    for (const DimSpec &dim : params_[p].dims) {
      std::int64_t extent = 0;
      if (dim.kind == DimSpec::Kind::Static)
        extent = dim.extent;
      else if (dim.kind == DimSpec::Kind::Named)
        extent = dimValues[static_cast<std::size_t>(
            std::find(dimNames_.begin(), dimNames_.end(), dim.name) - dimNames_.begin())];
      else if (dim.kind == DimSpec::Kind::Any)
        throw ArgumentError(params_[p].name, fmt::format("parameter '{}': an axis of unknown extent ('?') in {}",
                                                         params_[p].name, params_[p].toString()));
      if (extent < 0)
        throw ArgumentError(params_[p].name, fmt::format("parameter '{}': negative extent {}", params_[p].name,
                                                         extent));
      shapes[p].push_back(extent);
    }
  // Derived extents from views of the shapes so far (named dims are read at their origins, never derived ones).
  std::vector<TensorView> views;
  for (std::size_t p = 0; p < params_.size(); ++p)
    views.emplace_back(nullptr, params_[p].dtype, static_cast<int>(shapes[p].size()), shapes[p].data(), nullptr,
                       DeviceRef{DeviceKind::CPU, 0});
  std::size_t next = 0;
  for (std::size_t p = 0; p < params_.size(); ++p)
    for (std::size_t axis = 0; axis < params_[p].dims.size(); ++axis) {
      const DimSpec &dim = params_[p].dims[axis];
      if (dim.kind != DimSpec::Kind::Derived)
        continue;
      std::int64_t extent = 0;
      try {
        extent = boundDerived_[next++].evaluate(views.data(), views.size());
      } catch (const PlanError &error) {
        throw ArgumentError(params_[p].name, fmt::format("parameter '{}', axis {} ({}): {}", params_[p].name, axis,
                                                         dim.expr.toString(), error.what()));
      }
      if (extent < 0)
        throw ArgumentError(params_[p].name, fmt::format("parameter '{}', axis {} ({}) is negative: {}",
                                                         params_[p].name, axis, dim.expr.toString(), extent));
      shapes[p][axis] = extent;
    }
  return shapes;
}

} // namespace tilec::runtime
