// The CUBIN caches: one in memory (per KernelCache object) and one on disk, shared by all processes of a user.
//
// Disk layout: <dir>/<key>.cubin, where key = XXH3-128 (hex) of every input that can change the binary but the
// local toolkit (see cacheKey), which each entry records and load() checks. Each entry starts with a header —
// magic, format version, payload length, XXH3-128 of the payload — so a truncated, corrupted or foreign file is
// detected and recompiled, never trusted. Entries are written to a unique temporary file and renamed into place,
// which is atomic on POSIX file systems: concurrent processes see either no entry or a complete one, and two
// processes racing to compile the same key both succeed (the last rename wins with identical content).
#pragma once

#include "tilec/runtime/Compiler.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tilec::runtime {

// The cache key of a compilation: XXH3-128 over the source, the embedded device headers, the NVRTC option list
// (without the CUDA include directory, which names the local toolkit), the arch and the tilec version, each
// length-prefixed. The toolkit that compiles (Compiler::toolchain) is not in the key but recorded in each entry and
// checked on load, so that a cache warmed elsewhere still serves a machine without NVRTC.
std::string cacheKey(const std::string &source, const std::vector<std::string> &nvrtcOptions, const std::string &arch);

// The disk cache directory: $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else $HOME/.cache/tilec; nullopt when
// $TILEC_CACHE is "0" (disk cache disabled) or no directory can be derived.
std::optional<std::string> defaultCacheDirectory();

// The disk cache's size bound: $TILEC_CACHE_MAX_BYTES (a byte count; a K, M or G suffix multiplies by 2^10, 2^20,
// 2^30), else 1 GiB. An unparsable value is the default.
std::uint64_t defaultCacheMaxBytes();

// What one DiskCache::trim() did.
struct TrimResult {
  std::uint64_t entryBytes = 0;        // the entries' total size afterwards
  std::uint64_t evictedEntries = 0;
  std::uint64_t removedTemporaries = 0;
};

class DiskCache {
public:
  // Temporary files older than this are left by killed processes (a live writer renames within milliseconds).
  static constexpr long kStaleTemporarySeconds = 3600;

  explicit DiskCache(std::string directory, std::uint64_t maxBytes = defaultCacheMaxBytes());

  const std::string &directory() const { return directory_; }
  std::string entryPath(const std::string &key) const;

  // The entry for `key`, or nullopt when absent or invalid. An invalid entry (truncated, bad checksum, wrong magic,
  // another key) counts in corruptEntries() and is left to be overwritten by the next store(). With a `toolchain`,
  // an entry made by another one is a miss too (counted in staleEntries()); without one (no NVRTC here), any
  // toolchain's entry is served.
  std::optional<Cubin> load(const std::string &key, const std::optional<std::string> &toolchain = std::nullopt) const;
  // Writes the entry atomically, then trims the directory. Returns false (and leaves no partial file) when the
  // directory is not writable: a cache that cannot be written only costs time.
  bool store(const std::string &key, const Cubin &cubin) const;
  // Evicts least recently used entries (by modification time; load() refreshes it on every hit) until the entries
  // total at most 90% of maxBytes, when they exceed maxBytes, and removes temporary files older than
  // kStaleTemporarySeconds. `keep` (the entry just stored) is never evicted. Errors (another process trimming at the
  // same time, an unreadable directory) only make it do less. store() calls it.
  TrimResult trim(const std::string &keep = "") const;
  std::uint64_t maxBytes() const { return maxBytes_; }

  std::uint64_t corruptEntries() const { return corruptEntries_.load(); }
  std::uint64_t staleEntries() const { return staleEntries_.load(); }

  // The serialized form, exposed so that tests can forge and damage entries.
  static std::string serialize(const std::string &key, const Cubin &cubin);
  // Parses an entry; returns nullopt and says why in `problem` when it is not a valid entry for `key`.
  static std::optional<Cubin> deserialize(const std::string &bytes, const std::string &key, std::string &problem);

private:
  std::string directory_;
  std::uint64_t maxBytes_;
  mutable std::atomic<std::uint64_t> corruptEntries_{0};
  mutable std::atomic<std::uint64_t> staleEntries_{0};
};

enum class CacheSource { Compiled, Memory, Disk, WaitedForConcurrentCompile };

struct CacheStats {
  std::uint64_t memoryHits = 0;
  std::uint64_t diskHits = 0;
  std::uint64_t compiles = 0;
  std::uint64_t waitedForConcurrentCompile = 0;
};

// In-memory map in front of an optional DiskCache, with per-key de-duplication: while one thread compiles a key,
// other threads asking for the same key wait for that result instead of compiling it again.
class KernelCache {
public:
  // `disk` may be null: memory cache only.
  explicit KernelCache(std::unique_ptr<DiskCache> disk);

  struct Lookup {
    std::shared_ptr<const Cubin> cubin;
    CacheSource source;
  };
  // `toolchain`: what DiskCache::load checks entries against (nullopt: no NVRTC here, any entry will do).
  Lookup getOrCompile(const std::string &key, const std::function<Cubin()> &compile,
                      const std::optional<std::string> &toolchain = std::nullopt);

  CacheStats stats() const;
  const DiskCache *disk() const { return disk_.get(); }
  // Drops the in-memory entries (the disk cache is untouched): the next lookup of each key reads the disk.
  void clearMemory();

private:
  std::unique_ptr<DiskCache> disk_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const Cubin>> memory_;
  std::map<std::string, std::shared_future<std::shared_ptr<const Cubin>>> inFlight_;
  CacheStats stats_;
};

} // namespace tilec::runtime
