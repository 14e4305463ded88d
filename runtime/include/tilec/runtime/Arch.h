// GPU architecture names, real (sm_90a, sm_80, sm_100f) and virtual (compute_90a): the one grammar that the
// runtime's compiler and tilec's front end (`--arch`, the builtin SM) accept. Header-only and exception-free, as
// the compiler is built without exceptions.
#pragma once

#include <optional>
#include <string_view>

namespace tilec::runtime {

struct ArchName {
  int number = 0;   // the compute capability as major * 10 + minor: 90 for sm_90a
  char suffix = 0;  // 'a' for sm_90a, 'f' for sm_100f, 0 for none
};

// `prefix` ("sm_" or "compute_") followed by two or three digits and at most one lower-case letter; nullopt for
// anything else.
inline std::optional<ArchName> parseArch(std::string_view arch, std::string_view prefix) {
  if (arch.substr(0, prefix.size()) != prefix)
    return std::nullopt;
  arch.remove_prefix(prefix.size());
  ArchName name;
  std::size_t digits = 0;
  while (digits < arch.size() && arch[digits] >= '0' && arch[digits] <= '9')
    name.number = name.number * 10 + (arch[digits++] - '0');
  std::string_view suffix = arch.substr(digits);
  if (digits < 2 || digits > 3 || suffix.size() > 1 || (suffix.size() == 1 && (suffix[0] < 'a' || suffix[0] > 'z')))
    return std::nullopt;
  name.suffix = suffix.empty() ? 0 : suffix[0];
  return name;
}

// Whether the driver can load a CUBIN built for `cubin` on a GPU of compute capability `major`.`minor`: an arch-
// specific one (sm_90a) only on its own compute capability; a family one (sm_100f) or a plain one (sm_90) on the
// same major revision with the same or a higher minor (CUDA's binary compatibility rule for SASS).
inline bool cubinRunsOn(ArchName cubin, int major, int minor) {
  if (cubin.suffix == 'a')
    return cubin.number == major * 10 + minor;
  return cubin.number / 10 == major && cubin.number % 10 <= minor;
}

} // namespace tilec::runtime
