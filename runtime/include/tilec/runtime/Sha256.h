// SHA-256 (FIPS 180-4), the section checksums of module files (.tcm, ModuleFile.h). Not for security: the point is
// that a damaged section is noticed. (The CUBIN cache hashes with XXH3-128 instead: runtime/lib/Hash.h.)
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace tilec::runtime {

class Sha256 {
public:
  using Digest = std::array<std::uint8_t, 32>;

  Sha256();
  Sha256 &update(const void *data, std::size_t size);
  Sha256 &update(std::string_view text) { return update(text.data(), text.size()); }
  // Hashes the length before the bytes, so that ("ab","c") and ("a","bc") give different keys.
  Sha256 &updateField(std::string_view text);
  Digest finish();

  static Digest of(std::string_view text) { return Sha256().update(text).finish(); }
  static std::string hex(const Digest &digest);

private:
  void compressBlock(const std::uint8_t *block);
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t totalBytes_ = 0;
};

} // namespace tilec::runtime
