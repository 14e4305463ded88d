// How colliding atomic_adds are realised (tile-legalize-atomics, docs/atomics.md): the one place that names the
// strategies and says what --deterministic implies. `tilec`, `tilec run`, the JIT library (and through it the C API
// and Python) and the pass all take the strategy from here.
#ifndef TILEC_TRANSFORMS_ATOMICSSTRATEGY_H
#define TILEC_TRANSFORMS_ATOMICSSTRATEGY_H

#include <optional>
#include <string>
#include <string_view>

namespace tilec {

enum class AtomicsStrategy { FP32, Split, Native };

/// "fp32", "split" or "native".
inline const char *strategyName(AtomicsStrategy s) {
  switch (s) {
  case AtomicsStrategy::FP32:
    return "fp32";
  case AtomicsStrategy::Split:
    return "split";
  case AtomicsStrategy::Native:
    return "native";
  }
  return "fp32";
}

/// The strategy a word names; nothing for another word.
inline std::optional<AtomicsStrategy> parseAtomicsStrategy(std::string_view word) {
  for (AtomicsStrategy s : {AtomicsStrategy::FP32, AtomicsStrategy::Split, AtomicsStrategy::Native})
    if (word == strategyName(s))
      return s;
  return std::nullopt;
}

/// What a compile uses for what its user asked: `requested` ("" when not given: `fallback`, which may be nothing,
/// for no legalization) and --deterministic, which implies split and contradicts any other strategy asked for.
/// Sets `error` (naming the options as a command line spells them) and returns nothing on a bad request.
inline std::optional<AtomicsStrategy> resolveAtomicsStrategy(std::string_view requested, bool deterministic,
                                                             std::optional<AtomicsStrategy> fallback,
                                                             std::string &error) {
  std::optional<AtomicsStrategy> asked;
  if (!requested.empty()) {
    asked = parseAtomicsStrategy(requested);
    if (!asked) {
      error = "--atomics expects fp32, split or native, got '" + std::string(requested) + "'";
      return std::nullopt;
    }
  }
  if (deterministic) {
    if (asked && *asked != AtomicsStrategy::Split) {
      error = "--deterministic needs --atomics=split, got --atomics=" + std::string(requested);
      return std::nullopt;
    }
    return AtomicsStrategy::Split;
  }
  if (asked)
    return asked;
  return fallback;
}

} // namespace tilec

#endif
