// Dense row-major tensors in host memory, and how hosts such as `tilec run` make the arguments of an entry from
// .npy files, dim values and random numbers, then run the entry on the GPU: one path for every tool, test and
// binding, driven by the entry's Signature.
#pragma once

#include "tilec/runtime/Module.h"
#include "tilec/runtime/Signature.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tilec::runtime {

struct HostTensor {
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> bytes;

  HostTensor() = default;
  HostTensor(DType dtype, std::vector<std::int64_t> shape); // zero-filled; throws Error on overflowing sizes
  std::int64_t numel() const;
  // Element access through double. Stores round to nearest even (bf16, f16) or convert as C++ does (integers,
  // which must be in range); bool stores v != 0.
  double get(std::int64_t i) const;
  void set(std::int64_t i, double v);
  // A view of this tensor's bytes on the host (DeviceKind::CPU).
  TensorView view();
};

// What a host asks for: tensors from .npy files, extents of named dims, parameters that start at zero.
struct HostArgumentRequest {
  std::map<std::string, std::string> inputs; // parameter -> .npy path
  std::map<std::string, std::int64_t> dims;  // named dim -> extent (for parameters not read from files)
  std::vector<std::string> zeros;            // parameters that start at zero instead of random values
  std::uint64_t seed = 0;                    // of the random values: normal floats, integers in [0, 16), bools
};

// One tensor per parameter of `signature`, in order. Named dims are read from the files first (at each name's
// first bare occurrence, as the front end binds them), then from `dims`; every other shape follows from the
// signature (derived dims included). Throws ArgumentError naming the parameter or dim: an unknown name, a file
// whose shape disagrees with the signature or with `dims`, a dim no one gives.
std::vector<HostTensor> makeHostArguments(const Signature &signature, const HostArgumentRequest &request);

// Copies `args` to fresh device memory on the current context, launches `entry` on the default stream, waits and
// copies every tensor back into `args`. Arguments that do not fit the signature or plan launch nothing (ArgumentError
// or PlanError from Entry::launch).
// Returns the launch's wall time in seconds (from the launch call to the end of the synchronisation).
double runOnDevice(const Entry &entry, std::vector<HostTensor> &args);

// ||a - b|| / ||b|| over all elements (0 when both are zero); NaN when either holds a NaN. Throws Error when the
// shapes differ.
double relativeError(const HostTensor &a, const HostTensor &b);

// The largest relative error of one row (the last dim) of `a` against `b`, each row's difference measured against
// the larger of its own norm and the RMS norm of `b`'s rows; NaN when either holds a NaN. Beside relativeError it
// catches a wrong row of a large tensor (a zeroed row of a seq-1000 attention output changes the whole norm by 3 %).
double worstRowError(const HostTensor &a, const HostTensor &b);

// A row's error may exceed the whole tensor's: its bound is this many times the tensor's.
inline constexpr double kRowToleranceFactor = 5;

// The default bound on relativeError when a result of dtype `dtype` is compared with another target's (`tilec run
// --check`, `--reference`, the GPU-vs-CPU tests): a few roundings of the dtype (bf16 keeps 8 bits, f16 11), and for
// wider floats what differing summation orders and exp approximations leave. Integers and bools are exact (0).
double defaultComparisonTolerance(DType dtype);

} // namespace tilec::runtime
