// Reading and writing NumPy .npy files (format 1.0/2.0, C order) for
// `tilec run`. numpy has no bf16: bf16 tensors are written as float32 and a
// float32 file is accepted for a bf16 parameter (rounded to nearest even).
#ifndef TILEC_TARGET_CPU_NPY_H
#define TILEC_TARGET_CPU_NPY_H

#include "tilec/Target/CPU/CPURunner.h"

#include "llvm/Support/Error.h"

namespace tilec::cpu {

/// Reads `path`; converts to `want` where that is exact or is f32 -> bf16.
llvm::Expected<HostTensor> readNpy(const std::string &path, DType want);

llvm::Error writeNpy(const std::string &path, const HostTensor &tensor);

} // namespace tilec::cpu

#endif
