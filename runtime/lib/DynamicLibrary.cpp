#include "DynamicLibrary.h"

#include <dlfcn.h>

namespace tilec::runtime::detail {

DynamicLibrary DynamicLibrary::open(const std::string &path, std::string &error) {
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *message = dlerror();
    error = message ? message : "unknown dlopen error";
  }
  return DynamicLibrary(handle);
}

DynamicLibrary &DynamicLibrary::operator=(DynamicLibrary &&other) noexcept {
  if (this != &other) {
    if (handle_)
      dlclose(handle_);
    handle_ = other.handle_;
    other.handle_ = nullptr;
  }
  return *this;
}

DynamicLibrary::~DynamicLibrary() {
  if (handle_)
    dlclose(handle_);
}

void *DynamicLibrary::symbol(const char *name) const { return handle_ ? dlsym(handle_, name) : nullptr; }

} // namespace tilec::runtime::detail
