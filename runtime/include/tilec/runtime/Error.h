// Errors thrown by the tilec runtime.
//
// Every failure is a tilec::runtime::Error whose what() is a complete, human-readable message; the subclasses carry
// the structured details a host may want to act on (the driver's error code, NVRTC's log, the offending parameter).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace tilec::runtime {

class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// libcuda.so.1 could not be loaded or initialized: the process has no usable CUDA driver. Thrown only when something
// needs the driver (a launch, a device query), never at start-up or for compiling with an explicit arch.
class NoDriverError : public Error {
public:
  using Error::Error;
};

// A CUDA driver call returned an error. Carries the call, the numeric code and the driver's own name and text for it.
class DriverError : public Error {
public:
  DriverError(std::string call, int code, std::string name, std::string description);
  const std::string &call() const { return call_; }
  int code() const { return code_; }
  const std::string &name() const { return name_; }
  const std::string &description() const { return description_; }

private:
  std::string call_;
  int code_;
  std::string name_;
  std::string description_;
};

// NVRTC could not be loaded, or rejected a program. Carries NVRTC's full log and the exact options it was given.
class CompileError : public Error {
public:
  CompileError(std::string message, std::string log, std::vector<std::string> options);
  const std::string &log() const { return log_; }
  const std::vector<std::string> &options() const { return options_; }

private:
  std::string log_;
  std::vector<std::string> options_;
};

// An argument passed to Entry::check / Entry::launch does not match the entry's signature. Nothing was launched.
class ArgumentError : public Error {
public:
  ArgumentError(std::string parameter, const std::string &message);
  // The name of the offending parameter as declared in the signature ("" for arity errors).
  const std::string &parameter() const { return parameter_; }

private:
  std::string parameter_;
};

// A launch plan could not be evaluated (division by zero, negative grid extent, unknown symbol, ...).
class PlanError : public Error {
public:
  using Error::Error;
};

} // namespace tilec::runtime
