// Shared pieces of the GPU tests: skipping without a driver, device buffers, bf16 on the host, error norms.
#pragma once

#include "tilec/runtime/DeviceBuffer.h"
#include "tilec/runtime/Driver.h"
#include "tilec/runtime/Error.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

namespace tilec::testing {

// The driver, or null when the machine has none (the caller then skips). Catch2 v2 has no SKIP, so a skipped test
// passes with a "SKIPPED: no CUDA driver" warning in its output.
inline std::shared_ptr<runtime::Driver> driverOrNull() {
  try {
    return runtime::Driver::load();
  } catch (const runtime::NoDriverError &error) {
    WARN("SKIPPED: no CUDA driver (" << error.what() << ")");
    return nullptr;
  }
}

#define TILEC_REQUIRE_GPU_OR_SKIP(driver)                                                                           \
  auto driver = ::tilec::testing::driverOrNull();                                                                   \
  if (!driver)                                                                                                      \
    return;                                                                                                         \
  driver->currentContext()

// The runtime's own: upload(vector) and download<T>() move the whole buffer.
using runtime::DeviceBuffer;

// bf16 as stored: the high 16 bits of an fp32, rounded to nearest even.
inline std::uint16_t toBf16(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<std::uint16_t>(bits >> 16);
}

inline float fromBf16(std::uint16_t value) {
  std::uint32_t bits = std::uint32_t(value) << 16;
  float result;
  std::memcpy(&result, &bits, 4);
  return result;
}

inline std::vector<std::uint16_t> randomBf16(std::size_t count, std::mt19937 &rng) {
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<std::uint16_t> values(count);
  for (auto &value : values)
    value = toBf16(uniform(rng));
  return values;
}

// ||actual - expected|| / ||expected|| in float64.
template <typename T> double relativeError(const std::vector<T> &actual, const std::vector<double> &expected) {
  double difference = 0;
  double norm = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    double a = static_cast<double>(actual[i]);
    difference += (a - expected[i]) * (a - expected[i]);
    norm += expected[i] * expected[i];
  }
  return std::sqrt(difference) / std::sqrt(norm);
}

} // namespace tilec::testing
