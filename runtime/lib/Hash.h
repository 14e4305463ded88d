// XXH3-128 (the xxHash library, compiled into the runtime header-only): cache keys and cache-entry checksums.
// Not cryptographic: a key needs inputs that differ to give keys that differ, and a checksum needs a damaged entry
// to be noticed; an entry is also checked against its key on load. About 20x faster than the SHA-256 used before,
// which a memory-cache hit paid for over the whole source on every compile().
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace tilec::runtime::detail {

using Digest128 = std::array<std::uint8_t, 16>; // XXH3-128's canonical (big-endian) form

Digest128 xxh3x128(std::string_view bytes);
std::string hex(const Digest128 &digest);

// Builds one buffer of length-prefixed fields, so that ("ab", "c") and ("a", "bc") hash differently.
class FieldHasher {
public:
  FieldHasher &field(std::string_view bytes);
  FieldHasher &count(std::uint64_t value);
  Digest128 finish() const { return xxh3x128(buffer_); }

private:
  std::string buffer_;
};

} // namespace tilec::runtime::detail
