// NumPy .npy files (format 1.0-3.0, C order, little-endian) for host tensors. NumPy has no bf16: bf16 tensors are
// written as float32, and a float32 file is accepted for a bf16 parameter (rounded to nearest even).
#pragma once

#include "tilec/runtime/HostTensor.h"

#include <string>

namespace tilec::runtime {

// Reads `path` as a tensor of dtype `want` (an exact dtype match, or f32 data for bf16). Throws Error saying what
// is wrong with the file.
HostTensor readNpy(const std::string &path, DType want);

// Throws Error when the file cannot be written.
void writeNpy(const std::string &path, const HostTensor &tensor);

} // namespace tilec::runtime
