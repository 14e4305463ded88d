// Flash attention computed plainly in float64: the reference that the CPU
// backend's and the GPU's results are compared against. No MLIR here.
#ifndef TILEC_KERNELS_ATTENTION_REFERENCE_H
#define TILEC_KERNELS_ATTENTION_REFERENCE_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tilec::reference {

struct AttentionShape {
  int64_t batch = 1, seq = 128, heads = 2, groups = 1, dim = 64;
  bool causal = false;
  int64_t kvHeads() const { return heads / groups; }
  std::string str() const;
};

/// Row-major [batch, seq, heads, dim] (Q, O, dO, dQ) and
/// [batch, seq, heads / groups, dim] (K, V, dK, dV); lse and delta are
/// [batch, heads, seq]. lse is in the kernels' scaled log2 units:
/// lse = log2(Σ_k exp2(s_k)) with s = Q·Kᵀ · LOG2E / √dim.
struct AttentionResult {
  std::vector<double> O, lse, dQ, dK, dV;
};

/// Inputs as doubles (callers round them to bf16 first, so the reference
/// sees exactly what the kernels see).
AttentionResult attention(const AttentionShape &shape,
                          const std::vector<double> &Q,
                          const std::vector<double> &K,
                          const std::vector<double> &V,
                          const std::vector<double> &dO);

/// ‖out − ref‖₂ / ‖ref‖₂; +inf if any element of `out` is NaN or inf, or
/// if ref is all zeros (a comparison against zeros proves nothing).
double relativeError(const std::vector<double> &out,
                     const std::vector<double> &ref);

/// Fresh normal(0, 1) values from a seeded generator.
std::vector<double> randomNormal(int64_t n, uint64_t seed);

} // namespace tilec::reference

#endif
