// The disk cache's size bound (least recently used entries evicted) and the cleanup of temporary files that killed
// processes leave behind.
#include "TempDir.h"
#include "tilec/runtime/Cache.h"
#include "tilec/runtime/Runtime.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>

using namespace tilec::runtime;
using tilec::testing::TempDir;

namespace {

Cubin cubinOfBytes(std::size_t bytes) { return Cubin{std::vector<char>(bytes, 'x'), "sm_90a", "", {}}; }

// Sets a file's modification time to `secondsAgo` seconds in the past.
void age(const std::string &path, long secondsAgo) {
  timespec times[2];
  times[0].tv_sec = times[1].tv_sec = time(nullptr) - secondsAgo;
  times[0].tv_nsec = times[1].tv_nsec = 0;
  REQUIRE(utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

std::uintmax_t entryBytes(const std::string &directory) {
  std::uintmax_t total = 0;
  for (const auto &item : std::filesystem::directory_iterator(directory))
    if (item.path().extension() == ".cubin")
      total += item.file_size();
  return total;
}

} // namespace

TEST_CASE("the disk cache stays under its size bound, evicting the least recently used entries", "[cache][trim]") {
  TempDir directory;
  const std::size_t entrySize = DiskCache::serialize("key-0", cubinOfBytes(10000)).size();
  DiskCache cache(directory.path(), 4 * entrySize + entrySize / 2); // room for four entries
  for (int i = 0; i < 4; ++i) {
    REQUIRE(cache.store("key-" + std::to_string(i), cubinOfBytes(10000)));
    age(cache.entryPath("key-" + std::to_string(i)), 1000 - i); // key-0 oldest
  }
  CHECK(entryBytes(directory.path()) == 4 * entrySize);
  REQUIRE(cache.load("key-0")); // a hit makes key-0 the most recently used

  REQUIRE(cache.store("key-4", cubinOfBytes(10000))); // over the bound: down to 90% of it, oldest first
  CHECK(entryBytes(directory.path()) <= cache.maxBytes() - cache.maxBytes() / 10);
  CHECK_FALSE(std::filesystem::exists(cache.entryPath("key-1"))); // the least recently used
  CHECK(std::filesystem::exists(cache.entryPath("key-2")));       // four entries fit in 90% of the bound
  CHECK(std::filesystem::exists(cache.entryPath("key-3")));
  CHECK(std::filesystem::exists(cache.entryPath("key-0"))); // used recently
  CHECK(std::filesystem::exists(cache.entryPath("key-4"))); // just stored
  CHECK(cache.load("key-0"));
  CHECK(cache.corruptEntries() == 0);

  // An entry larger than the whole bound is still kept while it is the newest (it was just compiled).
  DiskCache tiny(directory.path(), 100);
  REQUIRE(tiny.store("key-big", cubinOfBytes(20000)));
  CHECK(std::filesystem::exists(tiny.entryPath("key-big")));
  CHECK(entryBytes(directory.path()) == tiny.trim("key-big").entryBytes);
  CHECK(tiny.trim().evictedEntries == 1); // and evicted once something else may be kept instead
}

TEST_CASE("temporary files left by killed processes are removed, live ones kept", "[cache][trim]") {
  TempDir directory;
  DiskCache cache(directory.path());
  const std::string abandoned = directory.path() + "/.key-a.12345.678.0.tmp";
  const std::string live = directory.path() + "/.key-b.12346.678.0.tmp";
  const std::string foreign = directory.path() + "/notes.txt"; // not the cache's: never touched
  for (const std::string &path : {abandoned, live, foreign})
    std::ofstream(path) << "partial";
  age(abandoned, DiskCache::kStaleTemporarySeconds + 60);
  age(foreign, 10 * DiskCache::kStaleTemporarySeconds);
  REQUIRE(cache.store("key-c", cubinOfBytes(100)));
  CHECK_FALSE(std::filesystem::exists(abandoned));
  CHECK(std::filesystem::exists(live));
  CHECK(std::filesystem::exists(foreign));
  CHECK(cache.load("key-c"));
}

TEST_CASE("TILEC_CACHE_MAX_BYTES sets the bound and RuntimeOptions::cacheMaxBytes overrides it", "[cache][trim]") {
  const char *previous = std::getenv("TILEC_CACHE_MAX_BYTES");
  std::string saved = previous ? previous : "";
  auto boundFor = [](const char *value) {
    setenv("TILEC_CACHE_MAX_BYTES", value, 1);
    return defaultCacheMaxBytes();
  };
  const std::uint64_t gib = std::uint64_t{1} << 30;
  CHECK(boundFor("123456") == 123456);
  CHECK(boundFor("64K") == 64 * 1024);
  CHECK(boundFor("200M") == 200ull << 20);
  CHECK(boundFor("2G") == 2 * gib);
  CHECK(boundFor("") == gib);
  CHECK(boundFor("lots") == gib);
  CHECK(boundFor("5T") == gib);
  CHECK(boundFor("99999999999999999999") == gib);
  setenv("TILEC_CACHE_MAX_BYTES", "1M", 1);
  TempDir directory;
  RuntimeOptions options;
  options.cacheDirectory = directory.path();
  CHECK(Runtime(options).cache().disk()->maxBytes() == 1u << 20);
  options.cacheMaxBytes = 5000;
  CHECK(Runtime(options).cache().disk()->maxBytes() == 5000);
  if (previous)
    setenv("TILEC_CACHE_MAX_BYTES", saved.c_str(), 1);
  else
    unsetenv("TILEC_CACHE_MAX_BYTES");
}
