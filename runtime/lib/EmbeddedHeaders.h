// The device headers, embedded at build time by cmake/EmbedFiles.cmake into EmbeddedDeviceHeaders.cpp.
#pragma once

#include <cstddef>

namespace tilec::runtime::detail {

struct EmbeddedFile {
  const char *name;     // include name, relative to runtime/include
  const char *contents; // not NUL-terminated in general: use size
  std::size_t size;
};

extern const EmbeddedFile kEmbeddedDeviceHeaders[];
extern const std::size_t kEmbeddedDeviceHeaderCount;

} // namespace tilec::runtime::detail
