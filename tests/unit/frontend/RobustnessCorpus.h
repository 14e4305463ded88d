// The robustness corpus of the .tile front end (see RobustnessTest.cpp):
// mangled sources generated deterministically from the kernels in kernels/,
// one generator per category. Same inputs on every platform and every run.
#ifndef TILEC_TESTS_FRONTEND_ROBUSTNESSCORPUS_H
#define TILEC_TESTS_FRONTEND_ROBUSTNESSCORPUS_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tilec::robustness {

struct Case {
  std::string name;
  std::string source;
};

struct Kernel {
  std::string name; // file name, e.g. fwd.tile
  std::string source;
};

/// Every .tile file under kernels/, sorted by name.
const std::vector<Kernel> &kernels();

/// Mutations of the real kernels (RobustnessCorpus.cpp).
std::vector<Case> pristine();
std::vector<Case> truncations();
std::vector<Case> byteMutations();
std::vector<Case> lineMutations();

/// Synthesized inputs (RobustnessSynthetic.cpp).
std::vector<Case> deepNesting();
std::vector<Case> hugeNumbers();
std::vector<Case> nonUtf8();
std::vector<Case> degenerate();
std::vector<Case> longLines();
std::vector<Case> manyKernels();

namespace detail {
/// Deterministic PRNG (SplitMix64: same stream on every platform, unlike the
/// std distributions).
class Rng {
public:
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n); n > 0.
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }

private:
  uint64_t state;
};

/// How many mutations of one kind to make per kernel: `n` for up to three
/// kernels, fewer each when kernels/ holds more, so the suite's time stays
/// bounded as kernels are added (never below n / 4).
int perKernel(int n);
std::vector<std::string> splitLines(const std::string &s);
std::string joinLines(const std::vector<std::string> &lines);
std::string repeat(llvm::StringRef s, size_t n);
/// A one-kernel file whose body is `body` (lines indented by 4).
std::string tinyKernel(const std::string &body, const std::string &name = "k");
} // namespace detail

} // namespace tilec::robustness

#endif // TILEC_TESTS_FRONTEND_ROBUSTNESSCORPUS_H
