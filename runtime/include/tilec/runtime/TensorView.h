// A non-owning view of a tensor in device memory, and its conversions to and from DLPack's DLTensor.
#pragma once

#include <dlpack/dlpack.h> // DLTensor is an anonymous-struct typedef: it cannot be forward-declared

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>


namespace tilec::runtime {

enum class DType : std::uint8_t { BF16, F16, F32, F64, I8, I32, I64, U8, Bool };

std::size_t dtypeSize(DType dtype);
const char *dtypeName(DType dtype); // "bf16", "f32", ...

enum class DeviceKind : std::uint8_t { CUDA, CUDAHost, CPU };

struct DeviceRef {
  DeviceKind kind = DeviceKind::CUDA;
  int ordinal = 0;
  bool operator==(const DeviceRef &other) const { return kind == other.kind && ordinal == other.ordinal; }
  bool operator!=(const DeviceRef &other) const { return !(*this == other); }
};

std::string describe(DeviceRef device); // "cuda:0"

// Shape and strides live inline (no allocation per argument per launch). Strides are in elements, as in DLPack.
class TensorView {
public:
  static constexpr int kMaxRank = 8;

  TensorView() = default;
  // A contiguous row-major tensor.
  TensorView(void *data, DType dtype, std::initializer_list<std::int64_t> shape, DeviceRef device = {});
  TensorView(void *data, DType dtype, int rank, const std::int64_t *shape, const std::int64_t *strides,
             DeviceRef device = {});

  // A view of `tensor` (byte_offset applied; null strides mean contiguous). Throws Error for dtypes or devices
  // tilec does not handle, or rank > kMaxRank.
  static TensorView fromDLPack(const DLTensor &tensor);
  // Fills `tensor` to describe this view. shape and strides point into this TensorView, which must outlive it.
  void toDLPack(DLTensor &tensor) const;

  void *data() const { return data_; }
  DType dtype() const { return dtype_; }
  int rank() const { return rank_; }
  std::int64_t dim(int axis) const { return shape_[axis]; }
  std::int64_t stride(int axis) const { return strides_[axis]; }
  const std::int64_t *shape() const { return shape_.data(); }
  const std::int64_t *strides() const { return strides_.data(); }
  DeviceRef device() const { return device_; }
  std::int64_t numel() const; // 0 if any extent is 0 (or negative); -1 if the product overflows int64
  bool isContiguous() const;
  std::string describe() const; // "bf16[128, 64] on cuda:0"

private:
  void *data_ = nullptr;
  DType dtype_ = DType::F32;
  int rank_ = 0;
  std::array<std::int64_t, kMaxRank> shape_{};
  std::array<std::int64_t, kMaxRank> strides_{};
  DeviceRef device_{};
};

} // namespace tilec::runtime
