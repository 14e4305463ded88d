#include "Hash.h"

// Header-only (every function inline and private to this file): neither the installed package nor a host needs
// libxxhash.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace tilec::runtime::detail {

Digest128 xxh3x128(std::string_view bytes) {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH3_128bits(bytes.data(), bytes.size()));
  Digest128 digest;
  static_assert(sizeof canonical.digest == sizeof digest);
  for (std::size_t i = 0; i < digest.size(); ++i)
    digest[i] = canonical.digest[i];
  return digest;
}

std::string hex(const Digest128 &digest) {
  static const char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(2 * digest.size());
  for (std::uint8_t byte : digest) {
    text += kDigits[byte >> 4];
    text += kDigits[byte & 15];
  }
  return text;
}

FieldHasher &FieldHasher::count(std::uint64_t value) {
  for (int i = 0; i < 8; ++i)
    buffer_ += static_cast<char>(value >> (8 * i));
  return *this;
}

FieldHasher &FieldHasher::field(std::string_view bytes) {
  count(bytes.size());
  buffer_.append(bytes.data(), bytes.size());
  return *this;
}

} // namespace tilec::runtime::detail
