#include "tilec/runtime/DeviceBuffer.h"

#include "tilec/runtime/Error.h"

#include <fmt/format.h>

namespace tilec::runtime {

DeviceBuffer::DeviceBuffer(Driver &driver, std::size_t bytes) : driver_(&driver), bytes_(bytes) {
  driver.currentContext();
  // cuMemAlloc rejects 0 bytes; an empty buffer still gets a valid pointer, as empty workspaces do.
  driver.check(driver.api().cuMemAlloc(&pointer_, bytes ? bytes : 1), "cuMemAlloc");
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept
    : driver_(other.driver_), pointer_(other.pointer_), bytes_(other.bytes_) {
  other.pointer_ = 0;
  other.bytes_ = 0;
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    release();
    driver_ = other.driver_;
    pointer_ = other.pointer_;
    bytes_ = other.bytes_;
    other.pointer_ = 0;
    other.bytes_ = 0;
  }
  return *this;
}

void DeviceBuffer::release() {
  if (pointer_ && driver_)
    driver_->api().cuMemFree(pointer_);
  pointer_ = 0;
  bytes_ = 0;
}

// Overflow-safe: offset + bytes may not wrap around.
static void checkRange(std::size_t offset, std::size_t bytes, std::size_t size, const char *what) {
  if (offset > size || bytes > size - offset)
    throw Error(fmt::format("DeviceBuffer::{}: {} bytes at offset {} leave the {}-byte buffer", what, bytes, offset,
                            size));
}

void DeviceBuffer::upload(const void *host, std::size_t bytes, std::size_t offset) {
  checkRange(offset, bytes, bytes_, "upload");
  if (bytes)
    driver_->check(driver_->api().cuMemcpyHtoD(pointer_ + offset, host, bytes), "cuMemcpyHtoD");
}

void DeviceBuffer::download(void *host, std::size_t bytes, std::size_t offset) const {
  checkRange(offset, bytes, bytes_, "download");
  if (bytes)
    driver_->check(driver_->api().cuMemcpyDtoH(host, pointer_ + offset, bytes), "cuMemcpyDtoH");
}

void DeviceBuffer::uploadWhole(const void *host, std::size_t bytes) {
  if (bytes != bytes_)
    throw Error(fmt::format("DeviceBuffer::upload: {} bytes given for a {}-byte buffer", bytes, bytes_));
  upload(host, bytes);
}

TensorView DeviceBuffer::view(DType dtype, std::initializer_list<std::int64_t> shape) const {
  TensorView view(data(), dtype, shape);
  std::int64_t elements = view.numel();
  if (elements < 0 || static_cast<std::uint64_t>(elements) > bytes_ / dtypeSize(dtype))
    throw ArgumentError("", fmt::format("DeviceBuffer::view: a tensor of {} elements of {} bytes does not fit in "
                                        "{} bytes",
                                        elements, dtypeSize(dtype), bytes_));
  return view;
}

} // namespace tilec::runtime
