#include "tilec/runtime/TensorView.h"

#include "tilec/runtime/Error.h"

#include <dlpack/dlpack.h>
#include <fmt/format.h>

namespace tilec::runtime {

std::size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::BF16:
  case DType::F16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    return 1;
  }
  return 0;
}

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::BF16:
    return "bf16";
  case DType::F16:
    return "f16";
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::I8:
    return "i8";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::U8:
    return "u8";
  case DType::Bool:
    return "bool";
  }
  return "?";
}

std::string describe(DeviceRef device) {
  const char *kind = device.kind == DeviceKind::CUDA ? "cuda" : device.kind == DeviceKind::CUDAHost ? "cuda_host"
                                                                                                    : "cpu";
  return fmt::format("{}:{}", kind, device.ordinal);
}

static void checkRank(int rank) {
  if (rank < 0 || rank > TensorView::kMaxRank)
    throw Error(fmt::format("tensor rank {} is out of range: tilec handles ranks 0..{}", rank, TensorView::kMaxRank));
}

TensorView::TensorView(void *data, DType dtype, std::initializer_list<std::int64_t> shape, DeviceRef device)
    : data_(data), dtype_(dtype), rank_(static_cast<int>(shape.size())), device_(device) {
  checkRank(rank_);
  int axis = 0;
  for (std::int64_t extent : shape)
    shape_[axis++] = extent;
  std::uint64_t stride = 1; // unsigned: see the other constructor
  for (int i = rank_ - 1; i >= 0; --i) {
    strides_[i] = static_cast<std::int64_t>(stride);
    stride *= static_cast<std::uint64_t>(shape_[i]);
  }
}

TensorView::TensorView(void *data, DType dtype, int rank, const std::int64_t *shape, const std::int64_t *strides,
                       DeviceRef device)
    : data_(data), dtype_(dtype), rank_(rank), device_(device) {
  checkRank(rank);
  // Unsigned: an absurd shape wraps instead of overflowing (undefined); Signature::check rejects such tensors.
  std::uint64_t contiguousStride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    shape_[i] = shape[i];
    strides_[i] = strides ? strides[i] : static_cast<std::int64_t>(contiguousStride);
    contiguousStride *= static_cast<std::uint64_t>(shape[i]);
  }
}

std::int64_t TensorView::numel() const {
  std::int64_t count = 1;
  for (int i = 0; i < rank_; ++i)
    if (shape_[i] <= 0)
      return 0;
  for (int i = 0; i < rank_; ++i)
    if (__builtin_mul_overflow(count, shape_[i], &count))
      return -1;
  return count;
}

bool TensorView::isContiguous() const {
  std::int64_t expected = 1;
  for (int i = rank_ - 1; i >= 0; --i) {
    // Extent-1 axes may carry any stride (PyTorch gives them arbitrary ones) without affecting the layout.
    if (shape_[i] != 1 && strides_[i] != expected)
      return false;
    expected *= shape_[i];
  }
  return true;
}

std::string TensorView::describe() const {
  std::string dims;
  for (int i = 0; i < rank_; ++i)
    dims += fmt::format("{}{}", i ? ", " : "", shape_[i]);
  return fmt::format("{}[{}] on {}", dtypeName(dtype_), dims, runtime::describe(device_));
}

// kDLBool (DLPack 0.8 and later, what PyTorch exports bool tensors as); Debian's header is DLPack 0.6.
constexpr std::uint8_t kDLBoolCode = 6;

static DType dtypeFromDLPack(DLDataType type) {
  if (type.lanes != 1)
    throw Error(fmt::format("DLPack tensors with {} lanes are not supported", type.lanes));
  switch (type.code) {
  case kDLBfloat:
    if (type.bits == 16)
      return DType::BF16;
    break;
  case kDLFloat:
    if (type.bits == 16)
      return DType::F16;
    if (type.bits == 32)
      return DType::F32;
    if (type.bits == 64)
      return DType::F64;
    break;
  case kDLInt:
    if (type.bits == 8)
      return DType::I8;
    if (type.bits == 32)
      return DType::I32;
    if (type.bits == 64)
      return DType::I64;
    break;
  case kDLUInt:
    if (type.bits == 8)
      return DType::U8;
    if (type.bits == 1)
      return DType::Bool;
    break;
  case kDLBoolCode:
    if (type.bits == 8)
      return DType::Bool;
    break;
  default:
    break;
  }
  throw Error(fmt::format("DLPack dtype (code {}, {} bits) is not supported by tilec", type.code, type.bits));
}

static DLDataType dtypeToDLPack(DType dtype) {
  switch (dtype) {
  case DType::BF16:
    return {kDLBfloat, 16, 1};
  case DType::F16:
    return {kDLFloat, 16, 1};
  case DType::F32:
    return {kDLFloat, 32, 1};
  case DType::F64:
    return {kDLFloat, 64, 1};
  case DType::I8:
    return {kDLInt, 8, 1};
  case DType::I32:
    return {kDLInt, 32, 1};
  case DType::I64:
    return {kDLInt, 64, 1};
  case DType::U8:
    return {kDLUInt, 8, 1};
  case DType::Bool:
    return {kDLBoolCode, 8, 1};
  }
  return {kDLOpaqueHandle, 0, 1};
}

TensorView TensorView::fromDLPack(const DLTensor &tensor) {
  DeviceRef device;
  switch (tensor.device.device_type) {
  case kDLCUDA:
    device.kind = DeviceKind::CUDA;
    break;
  case kDLCUDAHost:
    device.kind = DeviceKind::CUDAHost;
    break;
  case kDLCPU:
    device.kind = DeviceKind::CPU;
    break;
  default:
    throw Error(fmt::format("DLPack device type {} is not supported by tilec", static_cast<int>(tensor.device.device_type)));
  }
  device.ordinal = tensor.device.device_id;
  if (tensor.ndim < 0 || tensor.ndim > kMaxRank)
    throw Error(fmt::format("tensor rank {} is out of range: tilec handles ranks 0..{}", tensor.ndim, kMaxRank));
  if (tensor.ndim > 0 && !tensor.shape)
    throw Error(fmt::format("DLPack tensor of rank {} has no shape (shape is NULL)", tensor.ndim));
  // A null data pointer stays null whatever the offset (null + 64 is not a tensor): Signature::check then rejects
  // it unless the tensor is empty.
  void *data = tensor.data ? static_cast<char *>(tensor.data) + tensor.byte_offset : nullptr;
  return TensorView(data, dtypeFromDLPack(tensor.dtype), tensor.ndim, tensor.shape, tensor.strides, device);
}

void TensorView::toDLPack(DLTensor &tensor) const {
  tensor.data = data_;
  tensor.byte_offset = 0;
  tensor.device.device_type = device_.kind == DeviceKind::CUDA       ? kDLCUDA
                              : device_.kind == DeviceKind::CUDAHost ? kDLCUDAHost
                                                                     : kDLCPU;
  tensor.device.device_id = device_.ordinal;
  tensor.ndim = rank_;
  tensor.dtype = dtypeToDLPack(dtype_);
  tensor.shape = const_cast<std::int64_t *>(shape_.data());
  tensor.strides = const_cast<std::int64_t *>(strides_.data());
}

} // namespace tilec::runtime
