#include "tilec/runtime/Error.h"

#include <fmt/format.h>

namespace tilec::runtime {

DriverError::DriverError(std::string call, int code, std::string name, std::string description)
    : Error(fmt::format("CUDA driver call {} failed: {} ({}): {}", call, name, code, description)),
      call_(std::move(call)), code_(code), name_(std::move(name)), description_(std::move(description)) {}

static std::string joinOptions(const std::vector<std::string> &options) {
  std::string joined;
  for (const std::string &option : options) {
    if (!joined.empty())
      joined += ' ';
    joined += option;
  }
  return joined;
}

CompileError::CompileError(std::string message, std::string log, std::vector<std::string> options)
    : Error(fmt::format("{}\n  options: {}\n  log:\n{}", message, joinOptions(options), log)), log_(std::move(log)),
      options_(std::move(options)) {}

ArgumentError::ArgumentError(std::string parameter, const std::string &message)
    : Error(message), parameter_(std::move(parameter)) {}

} // namespace tilec::runtime
