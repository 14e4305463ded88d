#include "AttentionReference.h"

#include <cmath>
#include <limits>
#include <random>

namespace tilec::reference {

std::string AttentionShape::str() const {
  return "b" + std::to_string(batch) + " s" + std::to_string(seq) + " h" +
         std::to_string(heads) + (groups > 1 ? "/g" + std::to_string(groups) : "") +
         " d" + std::to_string(dim) + (causal ? " causal" : "");
}

AttentionResult attention(const AttentionShape &sh,
                          const std::vector<double> &Q,
                          const std::vector<double> &K,
                          const std::vector<double> &V,
                          const std::vector<double> &dO) {
  const int64_t B = sh.batch, S = sh.seq, H = sh.heads, HK = sh.kvHeads(),
                D = sh.dim;
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  auto q = [&](int64_t b, int64_t s, int64_t h) { return ((b * S + s) * H + h) * D; };
  auto k = [&](int64_t b, int64_t s, int64_t h) { return ((b * S + s) * HK + h) * D; };
  AttentionResult r;
  r.O.assign(B * S * H * D, 0);
  r.dQ.assign(B * S * H * D, 0);
  r.dK.assign(B * S * HK * D, 0);
  r.dV.assign(B * S * HK * D, 0);
  r.lse.assign(B * H * S, 0);
  std::vector<double> P(S * S), dP(S * S);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      int64_t hk = h / sh.groups;
      // P = softmax(Q·Kᵀ·scale) with the causal mask.
      for (int64_t i = 0; i < S; ++i) {
        double maxv = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < S; ++j) {
          double s = 0;
          for (int64_t d = 0; d < D; ++d)
            s += Q[q(b, i, h) + d] * K[k(b, j, hk) + d];
          s *= scale;
          if (sh.causal && j > i)
            s = -std::numeric_limits<double>::infinity();
          P[i * S + j] = s;
          maxv = std::max(maxv, s);
        }
        double sum = 0;
        for (int64_t j = 0; j < S; ++j)
          sum += P[i * S + j] = std::exp(P[i * S + j] - maxv);
        for (int64_t j = 0; j < S; ++j)
          P[i * S + j] /= sum;
        r.lse[(b * H + h) * S + i] = (maxv + std::log(sum)) / std::log(2.0);
      }
      // O = P·V
      for (int64_t i = 0; i < S; ++i)
        for (int64_t j = 0; j < S; ++j)
          for (int64_t d = 0; d < D; ++d)
            r.O[q(b, i, h) + d] += P[i * S + j] * V[k(b, j, hk) + d];
      // dV += Pᵀ·dO ; dP = dO·Vᵀ
      for (int64_t i = 0; i < S; ++i)
        for (int64_t j = 0; j < S; ++j) {
          double dp = 0;
          for (int64_t d = 0; d < D; ++d) {
            r.dV[k(b, j, hk) + d] += P[i * S + j] * dO[q(b, i, h) + d];
            dp += dO[q(b, i, h) + d] * V[k(b, j, hk) + d];
          }
          dP[i * S + j] = dp;
        }
      // dS = P ⊙ (dP − rowsum(dO ⊙ O)); dQ = dS·K·scale; dK += dSᵀ·Q·scale
      for (int64_t i = 0; i < S; ++i) {
        double delta = 0;
        for (int64_t d = 0; d < D; ++d)
          delta += dO[q(b, i, h) + d] * r.O[q(b, i, h) + d];
        for (int64_t j = 0; j < S; ++j) {
          double ds = P[i * S + j] * (dP[i * S + j] - delta) * scale;
          if (ds == 0)
            continue;
          for (int64_t d = 0; d < D; ++d) {
            r.dQ[q(b, i, h) + d] += ds * K[k(b, j, hk) + d];
            r.dK[k(b, j, hk) + d] += ds * Q[q(b, i, h) + d];
          }
        }
      }
    }
  }
  return r;
}

double relativeError(const std::vector<double> &out,
                     const std::vector<double> &ref) {
  if (out.size() != ref.size())
    return std::numeric_limits<double>::infinity();
  double num = 0, den = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i]))
      return std::numeric_limits<double>::infinity();
    num += (out[i] - ref[i]) * (out[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  if (den == 0)
    return std::numeric_limits<double>::infinity();
  return std::sqrt(num / den);
}

std::vector<double> randomNormal(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> dist(0.0, 1.0);
  std::vector<double> v(n);
  for (auto &x : v)
    x = dist(rng);
  return v;
}

} // namespace tilec::reference
