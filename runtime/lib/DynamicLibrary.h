// A dlopen'ed shared library, closed on destruction unless released.
#pragma once

#include <string>

namespace tilec::runtime::detail {

class DynamicLibrary {
public:
  DynamicLibrary() = default;
  // Returns an empty library (loaded() == false) and fills `error` with dlerror() when `path` cannot be loaded.
  static DynamicLibrary open(const std::string &path, std::string &error);

  DynamicLibrary(DynamicLibrary &&other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  DynamicLibrary &operator=(DynamicLibrary &&other) noexcept;
  DynamicLibrary(const DynamicLibrary &) = delete;
  DynamicLibrary &operator=(const DynamicLibrary &) = delete;
  ~DynamicLibrary();

  bool loaded() const { return handle_ != nullptr; }
  void *symbol(const char *name) const;
  // Gives up ownership: the library stays loaded for the life of the process (libcuda and NVRTC must never be
  // unloaded while modules or programs created through them may still exist).
  void *release() {
    void *handle = handle_;
    handle_ = nullptr;
    return handle;
  }

private:
  explicit DynamicLibrary(void *handle) : handle_(handle) {}
  void *handle_ = nullptr;
};

} // namespace tilec::runtime::detail
