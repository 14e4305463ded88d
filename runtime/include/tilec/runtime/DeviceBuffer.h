// Device memory owned by the host, freed on destruction: what a host (or a test) allocates its tensors in without
// calling the driver's function table itself.
//
//   rt::DeviceBuffer x(runtime.driver(), n * sizeof(float));   // cuMemAlloc in the current context
//   x.upload(hostValues);                                      // the whole buffer, sizes checked
//   entry.launch(stream, x.view(rt::DType::F32, {n}));
//   std::vector<float> result = x.download<float>();
//
// Hosts with their own allocator (PyTorch's caching allocator, say) need none of this: they pass their pointers as
// TensorViews or DLTensors.
#pragma once

#include "tilec/runtime/Driver.h"
#include "tilec/runtime/TensorView.h"

#include <cstddef>
#include <initializer_list>
#include <vector>

namespace tilec::runtime {

class DeviceBuffer {
public:
  DeviceBuffer() = default; // empty: no memory, data() == nullptr
  // Allocates `bytes` (cuMemAlloc) in the current context, retaining device 0's primary context when there is none
  // (as Entry::launch does). Throws DriverError.
  DeviceBuffer(Driver &driver, std::size_t bytes);
  ~DeviceBuffer(); // cuMemFree; an error there (the context already gone at exit) is ignored
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  void *data() const { return reinterpret_cast<void *>(pointer_); }
  cu::DevicePtr pointer() const { return pointer_; }
  std::size_t bytes() const { return bytes_; }

  // Synchronous copies of `bytes` at `offset` (cuMemcpyHtoD / DtoH). Throw Error when they would leave the buffer.
  void upload(const void *host, std::size_t bytes, std::size_t offset = 0);
  void download(void *host, std::size_t bytes, std::size_t offset = 0) const;
  // The whole buffer: the vector's size in bytes must be the buffer's.
  template <typename T> void upload(const std::vector<T> &host) { uploadWhole(host.data(), host.size() * sizeof(T)); }
  template <typename T> std::vector<T> download() const {
    std::vector<T> host(bytes_ / sizeof(T));
    download(host.data(), host.size() * sizeof(T));
    return host;
  }

  // A contiguous view of the buffer's start; throws ArgumentError when the tensor does not fit in it.
  TensorView view(DType dtype, std::initializer_list<std::int64_t> shape) const;

private:
  void uploadWhole(const void *host, std::size_t bytes);
  void release();

  Driver *driver_ = nullptr; // drivers are never unloaded (Driver::load keeps them)
  cu::DevicePtr pointer_ = 0;
  std::size_t bytes_ = 0;
};

} // namespace tilec::runtime
