// Everything emitted kernels may call. The compiler includes only this header.
#pragma once

#include "tilec/device/atomic_extrema.cuh"
#include "tilec/device/atomics.cuh"
#include "tilec/device/copy.cuh"
#include "tilec/device/cp_async.cuh"
#include "tilec/device/ldmatrix.cuh"
#include "tilec/device/mma_sm80.cuh"
#include "tilec/device/reduce.cuh"
#include "tilec/device/scalar.cuh"
#include "tilec/device/types.cuh"
#include "tilec/device/wgmma.cuh"

