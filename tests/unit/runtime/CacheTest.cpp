// The CUBIN caches: keys, memory and disk hits, corrupt entries, TILEC_CACHE=0, in-process and cross-process races.
#include "CacheRaceSource.h"
#include "Hash.h" // runtime/lib: the runtime's private hashing
#include "TempDir.h"
#include "TestArtifacts.h"
#include "tilec/runtime/Cache.h"
#include "tilec/runtime/Error.h"
#include "tilec/runtime/Runtime.h"
#include "tilec/runtime/Sha256.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>

extern char **environ;

using namespace tilec::runtime;
using tilec::testing::TempDir;

namespace {

// Small, so that the many compiles of this file stay fast; still real NVRTC work.
const char *const kSmallKernel = R"cuda(
#include "tilec/device/atomics.cuh"
extern "C" __global__ void accumulate(float *out, const float *in) {
  tilec::device::atomic_add_f32(out + threadIdx.x % 4, in[threadIdx.x]);
}
)cuda";

RuntimeOptions cachedIn(const std::string &directory) {
  RuntimeOptions options;
  options.cacheDirectory = directory;
  return options;
}

std::string readFile(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << bytes;
}

int countTemporaryFiles(const std::string &directory) {
  int count = 0;
  for (const auto &item : std::filesystem::directory_iterator(directory))
    if (item.path().extension() == ".tmp")
      ++count;
  return count;
}

// The helper executable: $TILEC_CACHE_RACE_HELPER, else the build tree's, else the one beside this test binary
// (a GPU bundle moves both into one bin/ directory).
std::string raceHelperPath() {
  return tilec::testing::testArtifactPath("TILEC_CACHE_RACE_HELPER", TILEC_CACHE_RACE_HELPER, "tilec_cache_race_helper");
}

} // namespace

TEST_CASE("SHA-256 matches the FIPS 180-4 test vectors", "[cache]") {
  CHECK(Sha256::hex(Sha256::of("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Sha256::hex(Sha256::of("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Sha256::hex(Sha256::of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // Incremental updates across block boundaries agree with one-shot hashing.
  std::string million(1000000, 'a');
  Sha256 incremental;
  for (std::size_t offset = 0; offset < million.size(); offset += 777)
    incremental.update(std::string_view(million).substr(offset, 777));
  CHECK(Sha256::hex(incremental.finish()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("cache keys and entry checksums are XXH3-128", "[cache]") {
  // The reference vectors of xxHash (xxhsum -H2).
  CHECK(detail::hex(detail::xxh3x128("")) == "99aa06d3014798d86001c324468d497f");
  CHECK(detail::hex(detail::xxh3x128("abc")) == "06b05ab6733a618578af5f94892f3950");
  // Fields are length-prefixed: moving a boundary changes the digest.
  CHECK(detail::FieldHasher().field("ab").field("c").finish() != detail::FieldHasher().field("a").field("bc").finish());
}

TEST_CASE("the cache key changes with every input", "[cache]") {
  const std::vector<std::string> options = {"--gpu-architecture=sm_90a", "-DX=1"};
  const std::string base = cacheKey("src", options, "sm_90a");
  CHECK(base.size() == 32); // XXH3-128, hex
  CHECK(base == cacheKey("src", options, "sm_90a"));
  CHECK(base != cacheKey("src2", options, "sm_90a"));
  CHECK(base != cacheKey("src", {"--gpu-architecture=sm_90a", "-DX=2"}, "sm_90a"));
  CHECK(base != cacheKey("src", options, "sm_80"));
  // Field boundaries matter: options {"a b"} and {"a", "b"} are different compilations.
  CHECK(cacheKey("s", {"a b"}, "sm_90a") != cacheKey("s", {"a", "b"}, "sm_90a"));
}

TEST_CASE("memory hit, disk hit and miss", "[cache]") {
  TempDir directory;
  {
    Runtime runtime(cachedIn(directory.path()));
    CompileResult first = runtime.compile(kSmallKernel, {"sm_90a"});
    CHECK(first.source == CacheSource::Compiled);
    CompileResult second = runtime.compile(kSmallKernel, {"sm_90a"});
    CHECK(second.source == CacheSource::Memory);
    CHECK(second.cubin == first.cubin);
    CHECK(std::filesystem::exists(runtime.cache().disk()->entryPath(first.key)));
    // Another arch or other flags are other keys.
    CHECK(runtime.compile(kSmallKernel, {"sm_80"}).source == CacheSource::Compiled);
    CHECK(runtime.compile(kSmallKernel, {"sm_90a", {"-DVARIANT=2"}}).source == CacheSource::Compiled);
    CacheStats stats = runtime.cache().stats();
    CHECK(stats.compiles == 3);
    CHECK(stats.memoryHits == 1);
  }
  Runtime fresh(cachedIn(directory.path())); // a new process, as far as the memory cache is concerned
  CompileResult fromDisk = fresh.compile(kSmallKernel, {"sm_90a"});
  CHECK(fromDisk.source == CacheSource::Disk);
  CHECK(fromDisk.cubin->log.find("registers") != std::string::npos); // the ptxas log survives the round trip
  CHECK(fromDisk.cubin->options == fresh.compiler().nvrtcOptions({"sm_90a"}));
  CHECK(countTemporaryFiles(directory.path()) == 0);
}

TEST_CASE("truncated and corrupted entries are detected and recompiled", "[cache]") {
  TempDir directory;
  std::string entryPath;
  std::vector<char> goodImage;
  {
    Runtime runtime(cachedIn(directory.path()));
    CompileResult compiled = runtime.compile(kSmallKernel, {"sm_90a"});
    entryPath = runtime.cache().disk()->entryPath(compiled.key);
    goodImage = compiled.cubin->image;
  }
  const std::string intact = readFile(entryPath);
  REQUIRE(intact.size() > 200);

  auto damageThenCompile = [&](const std::string &damaged) {
    writeFile(entryPath, damaged);
    Runtime runtime(cachedIn(directory.path()));
    CompileResult result = runtime.compile(kSmallKernel, {"sm_90a"});
    CHECK(result.source == CacheSource::Compiled);
    CHECK(result.cubin->image == goodImage);
    CHECK(runtime.cache().disk()->corruptEntries() == 1);
    // The recompiled entry replaced the damaged one (not byte-identical: the log records ptxas's compile time).
    std::optional<Cubin> rewritten = runtime.cache().disk()->load(result.key);
    REQUIRE(rewritten);
    CHECK(rewritten->image == goodImage);
  };
  SECTION("truncated payload") { damageThenCompile(intact.substr(0, intact.size() / 2)); }
  SECTION("truncated header") { damageThenCompile(intact.substr(0, 10)); }
  SECTION("empty file") { damageThenCompile(""); }
  SECTION("flipped byte in the CUBIN") {
    std::string damaged = intact;
    damaged[damaged.size() - 100] ^= 0x5a;
    damageThenCompile(damaged);
  }
  SECTION("flipped byte in the magic") {
    std::string damaged = intact;
    damaged[0] ^= 0x01;
    damageThenCompile(damaged);
  }
  SECTION("appended garbage") { damageThenCompile(intact + "garbage"); }
}

TEST_CASE("an entry stored under another key's name is rejected", "[cache]") {
  Cubin cubin{{'\x7f', 'E', 'L', 'F'}, "sm_90a", "log", {"--gpu-architecture=sm_90a"}};
  std::string bytes = DiskCache::serialize("key-a", cubin);
  std::string problem;
  CHECK(DiskCache::deserialize(bytes, "key-a", problem));
  CHECK(!DiskCache::deserialize(bytes, "key-b", problem));
  CHECK(problem == "entry belongs to another key");
}

TEST_CASE("TILEC_CACHE=0 disables the disk cache, TILEC_CACHE_DIR and XDG_CACHE_HOME choose it", "[cache]") {
  struct Restore {
    std::vector<std::pair<std::string, std::optional<std::string>>> saved;
    void set(const char *name, const char *value) {
      const char *old = std::getenv(name);
      saved.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      if (value)
        setenv(name, value, 1);
      else
        unsetenv(name);
    }
    ~Restore() {
      for (auto it = saved.rbegin(); it != saved.rend(); ++it)
        if (it->second)
          setenv(it->first.c_str(), it->second->c_str(), 1);
        else
          unsetenv(it->first.c_str());
    }
  } restore;
  restore.set("TILEC_CACHE", nullptr);
  restore.set("TILEC_CACHE_DIR", "/some/cache");
  restore.set("XDG_CACHE_HOME", "/xdg");
  CHECK(defaultCacheDirectory() == std::optional<std::string>("/some/cache"));
  restore.set("TILEC_CACHE_DIR", nullptr);
  CHECK(defaultCacheDirectory() == std::optional<std::string>("/xdg/tilec"));
  restore.set("XDG_CACHE_HOME", nullptr);
  restore.set("HOME", "/home/someone");
  CHECK(defaultCacheDirectory() == std::optional<std::string>("/home/someone/.cache/tilec"));
  restore.set("TILEC_CACHE", "0");
  CHECK(!defaultCacheDirectory());

  TempDir directory;
  restore.set("TILEC_CACHE_DIR", directory.path().c_str());
  Runtime runtime; // default options: environment decides
  CHECK(runtime.cache().disk() == nullptr);
  CHECK(runtime.compile(kSmallKernel, {"sm_90a"}).source == CacheSource::Compiled);
  CHECK(std::filesystem::is_empty(directory.path()));
}

TEST_CASE("an unwritable cache directory costs only the cache", "[cache]") {
  Runtime runtime(cachedIn("/proc/tilec-cannot-create-this"));
  CHECK(runtime.compile(kSmallKernel, {"sm_90a"}).source == CacheSource::Compiled);
  CHECK(runtime.compile(kSmallKernel, {"sm_90a"}).source == CacheSource::Memory);
}

TEST_CASE("a key being compiled is not compiled again by a concurrent thread", "[cache]") {
  KernelCache cache(nullptr);
  std::atomic<int> compiles{0};
  auto slowCompile = [&] {
    ++compiles;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    return Cubin{{'c'}, "sm_90a", "", {}};
  };
  std::vector<CacheSource> sources(4);
  std::vector<std::shared_ptr<const Cubin>> results(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      auto lookup = cache.getOrCompile("same-key", slowCompile);
      sources[i] = lookup.source;
      results[i] = lookup.cubin;
    });
  for (auto &thread : threads)
    thread.join();
  CHECK(compiles == 1);
  CHECK(std::count(sources.begin(), sources.end(), CacheSource::Compiled) == 1);
  for (const auto &result : results)
    CHECK(result == results[0]);
  CacheStats stats = cache.stats();
  CHECK(stats.compiles == 1);
  CHECK(stats.waitedForConcurrentCompile + stats.memoryHits == 3);
}

TEST_CASE("a failed compile is reported to every waiter and not cached", "[cache]") {
  KernelCache cache(nullptr);
  std::atomic<int> attempts{0};
  auto failing = [&]() -> Cubin {
    ++attempts;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    throw CompileError("deliberate failure", "log", {});
  };
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i)
    threads.emplace_back([&] {
      try {
        cache.getOrCompile("bad-key", failing);
      } catch (const CompileError &) {
        ++failures;
      }
    });
  for (auto &thread : threads)
    thread.join();
  CHECK(failures == 3);
  // A later request tries again rather than replaying a cached failure.
  int before = attempts;
  CHECK_THROWS_AS(cache.getOrCompile("bad-key", failing), CompileError);
  CHECK(attempts == before + 1);
}

TEST_CASE("two processes compiling the same key into one cache directory both succeed", "[cache]") {
  TempDir directory;
  auto spawnHelper = [&](const std::string &tag) {
    std::vector<std::string> arguments = {raceHelperPath(), directory.path(), tag};
    std::vector<char *> argv;
    for (std::string &argument : arguments)
      argv.push_back(argument.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    REQUIRE(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) == 0);
    return pid;
  };
  pid_t first = spawnHelper("race");
  pid_t second = spawnHelper("race");
  for (pid_t pid : {first, second}) {
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  CHECK(countTemporaryFiles(directory.path()) == 0);
  // The surviving entry is valid: a third process reads it without compiling.
  Runtime runtime(cachedIn(directory.path()));
  CompileResult result = runtime.compile(std::string(kTilecCacheRaceSource) + "// race\n", {"sm_90a"});
  CHECK(result.source == CacheSource::Disk);
  CHECK(runtime.cache().disk()->corruptEntries() == 0);
}

// Regression: an entry that is a directory made load() throw std::ios_base::failure past Error (the
// process terminated), and an entry that is a FIFO blocked it forever. Odd entries are misses now.
TEST_CASE("odd disk-cache entries (a directory, a FIFO) are misses, not crashes or hangs", "[cache]") {
  tilec::testing::TempDir dir;
  DiskCache cache(dir.path());
  Cubin cubin{{'\x7f', 'E', 'L', 'F'}, "sm_90a", "log", {"--gpu-architecture=sm_90a"}};
  REQUIRE(std::filesystem::create_directories(cache.entryPath("key-dir")));
  CHECK_FALSE(cache.load("key-dir"));
  REQUIRE(mkfifo(cache.entryPath("key-fifo").c_str(), 0600) == 0);
  CHECK_FALSE(cache.load("key-fifo")); // returns at once: no writer is waited for
  CHECK(cache.corruptEntries() == 2);
  // A regular entry next to them still round-trips.
  REQUIRE(cache.store("key-ok", cubin));
  auto loaded = cache.load("key-ok");
  REQUIRE(loaded);
  CHECK(loaded->image == cubin.image);
}

// Regression: a header included from the host's disk (-I dir) is not in the cache key, so changing it
// returned the old CUBIN byte for byte. Such compiles bypass the caches now.
TEST_CASE("compiles that read headers from disk are never served stale", "[cache]") {
  TempDir directory, headers;
  auto writeHeader = [&](int value) {
    std::ofstream(headers.path() + "/scale.h") << "#define SCALE " << value << "\n";
  };
  const std::string source = "#include \"scale.h\"\n"
                             "extern \"C\" __global__ void scale(float *x) { x[threadIdx.x] *= SCALE; }\n";
  Runtime runtime(cachedIn(directory.path()));
  CompileOptions options{"sm_90a", {"-I" + headers.path()}};
  writeHeader(3);
  CompileResult first = runtime.compile(source, options);
  writeHeader(5);
  CompileResult second = runtime.compile(source, options);
  CHECK(first.source == CacheSource::Compiled);
  CHECK(second.source == CacheSource::Compiled);
  CHECK(second.key.empty());
  CHECK(first.cubin->image != second.cubin->image); // SCALE changed, so the code did
  CHECK(runtime.cache().stats().compiles == 0);      // nothing went through the caches
}

