// The source the cross-process cache test and its helper process both compile.
#pragma once

inline const char *const kTilecCacheRaceSource = R"cuda(
#include "tilec/device/types.cuh"
extern "C" __global__ void scale(tilec::device::bf16 *x, float factor) {
  x[threadIdx.x] = tilec::device::to_bf16(tilec::device::to_float(x[threadIdx.x]) * factor);
}
)cuda";
