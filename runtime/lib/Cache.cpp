#include "tilec/runtime/Cache.h"

#include "Hash.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#ifndef TILEC_VERSION
#error "TILEC_VERSION must be defined by the build"
#endif

namespace tilec::runtime {

namespace {

constexpr char kMagic[8] = {'T', 'I', 'L', 'E', 'C', 'B', 'I', 'N'};
// Bump when the payload layout changes; older entries then read as misses and are overwritten.
constexpr std::uint32_t kFormatVersion = 3; // 2: the toolchain field; 3: XXH3-128 checksum
constexpr std::size_t kHeaderSize = 8 + 4 + 4 + 8 + 16;

void appendU64(std::string &out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out += static_cast<char>(value >> (8 * i));
}

void appendU32(std::string &out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i)
    out += static_cast<char>(value >> (8 * i));
}

std::uint64_t readU64(const char *data) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= std::uint64_t(static_cast<unsigned char>(data[i])) << (8 * i);
  return value;
}

void appendField(std::string &out, std::string_view field) {
  appendU64(out, field.size());
  out.append(field.data(), field.size());
}

// Reads length-prefixed fields from a payload whose overall checksum has already been verified; still bounds
// checked, since a valid checksum over a payload from a future format must not crash us.
struct FieldReader {
  std::string_view payload;
  std::size_t offset = 0;
  bool read(std::string &field) {
    if (payload.size() - offset < 8)
      return false;
    std::uint64_t length = readU64(payload.data() + offset);
    offset += 8;
    if (payload.size() - offset < length)
      return false;
    field.assign(payload.data() + offset, length);
    offset += length;
    return true;
  }
};

bool makeDirectories(const std::string &path) {
  std::string partial;
  std::size_t position = 0;
  while (position != std::string::npos) {
    position = path.find('/', position + 1);
    partial = path.substr(0, position);
    if (partial.empty())
      continue;
    if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
      return false;
  }
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

std::string environment(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}

} // namespace

std::string cacheKey(const std::string &source, const std::vector<std::string> &nvrtcOptions, const std::string &arch) {
  // The embedded headers never change within a process: their digest is computed once, not per lookup.
  static const std::string headersDigest = [] {
    detail::FieldHasher headers;
    for (const DeviceHeader &header : Compiler::deviceHeaders())
      headers.field(header.includeName).field(header.contents);
    return detail::hex(headers.finish());
  }();
  detail::FieldHasher hash;
  hash.field("tilec-cubin-key-v3").field(TILEC_VERSION).field(arch).field(source).field(headersDigest);
  // The option count is hashed too: options are length-prefixed individually, so {"a b"} and {"a","b"} differ.
  hash.count(nvrtcOptions.size());
  for (const std::string &option : nvrtcOptions)
    hash.field(option);
  return detail::hex(hash.finish());
}

std::optional<std::string> defaultCacheDirectory() {
  if (environment("TILEC_CACHE") == "0")
    return std::nullopt;
  if (std::string dir = environment("TILEC_CACHE_DIR"); !dir.empty())
    return dir;
  if (std::string xdg = environment("XDG_CACHE_HOME"); !xdg.empty())
    return xdg + "/tilec";
  if (std::string home = environment("HOME"); !home.empty())
    return home + "/.cache/tilec";
  return std::nullopt;
}

std::uint64_t defaultCacheMaxBytes() {
  constexpr std::uint64_t kDefault = std::uint64_t{1} << 30;
  const std::string text = environment("TILEC_CACHE_MAX_BYTES");
  const std::size_t digits = std::min(text.find_first_not_of("0123456789"), text.size());
  const std::string suffix = text.substr(digits);
  const int shift = suffix.empty() ? 0 : suffix == "K" ? 10 : suffix == "M" ? 20 : suffix == "G" ? 30 : -1;
  if (digits == 0 || digits > 12 || shift < 0) // empty, no number, absurdly large or an unknown unit
    return kDefault;
  return std::stoull(text.substr(0, digits)) << shift;
}

DiskCache::DiskCache(std::string directory, std::uint64_t maxBytes)
    : directory_(std::move(directory)), maxBytes_(maxBytes) {}

TrimResult DiskCache::trim(const std::string &keep) const {
  TrimResult result;
  DIR *directory = opendir(directory_.c_str());
  if (!directory)
    return result;
  struct Entry {
    std::string path;
    std::uint64_t bytes;
    timespec used;
  };
  std::vector<Entry> entries;
  const std::string keptName = keep.empty() ? "" : keep + ".cubin";
  const time_t staleBefore = time(nullptr) - kStaleTemporarySeconds;
  while (dirent *item = readdir(directory)) {
    std::string name = item->d_name;
    struct stat info {};
    std::string path = directory_ + "/" + name;
    if (lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode))
      continue;
    auto endsWith = [&](const char *suffix) {
      std::size_t length = std::strlen(suffix);
      return name.size() > length && name.compare(name.size() - length, length, suffix) == 0;
    };
    if (name[0] == '.' && endsWith(".tmp")) {
      // A temporary of store() whose writer died between open and rename.
      if (info.st_mtime < staleBefore && unlink(path.c_str()) == 0)
        ++result.removedTemporaries;
    } else if (endsWith(".cubin")) {
      result.entryBytes += static_cast<std::uint64_t>(info.st_size);
      if (name != keptName)
        entries.push_back({std::move(path), static_cast<std::uint64_t>(info.st_size), info.st_mtim});
    }
  }
  closedir(directory);
  if (result.entryBytes <= maxBytes_)
    return result;
  // Down to 90% of the bound, so that the next few stores do not each evict again.
  const std::uint64_t target = maxBytes_ - maxBytes_ / 10;
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return a.used.tv_sec != b.used.tv_sec ? a.used.tv_sec < b.used.tv_sec : a.used.tv_nsec < b.used.tv_nsec;
  });
  for (const Entry &entry : entries) {
    if (result.entryBytes <= target)
      break;
    // Another process may have evicted it already: it is gone either way.
    if (unlink(entry.path.c_str()) == 0 || errno == ENOENT) {
      result.entryBytes -= entry.bytes;
      ++result.evictedEntries;
    }
  }
  return result;
}

std::string DiskCache::entryPath(const std::string &key) const { return directory_ + "/" + key + ".cubin"; }

std::string DiskCache::serialize(const std::string &key, const Cubin &cubin) {
  std::string payload;
  appendField(payload, key);
  appendField(payload, cubin.arch);
  appendField(payload, cubin.log);
  std::string options;
  for (const std::string &option : cubin.options)
    options += option + '\n';
  appendField(payload, options);
  appendField(payload, std::string_view(cubin.image.data(), cubin.image.size()));
  appendField(payload, cubin.toolchain);

  std::string entry(kMagic, sizeof kMagic);
  appendU32(entry, kFormatVersion);
  appendU32(entry, 0);
  appendU64(entry, payload.size());
  detail::Digest128 checksum = detail::xxh3x128(payload);
  entry.append(reinterpret_cast<const char *>(checksum.data()), checksum.size());
  entry += payload;
  return entry;
}

std::optional<Cubin> DiskCache::deserialize(const std::string &bytes, const std::string &key, std::string &problem) {
  if (bytes.size() < kHeaderSize) {
    problem = fmt::format("truncated header ({} bytes)", bytes.size());
    return std::nullopt;
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    problem = "bad magic";
    return std::nullopt;
  }
  std::uint32_t version = static_cast<std::uint32_t>(readU64(bytes.data() + 8) & 0xffffffffu);
  if (version != kFormatVersion) {
    problem = fmt::format("format version {} (expected {})", version, kFormatVersion);
    return std::nullopt;
  }
  std::uint64_t payloadLength = readU64(bytes.data() + 16);
  if (payloadLength != bytes.size() - kHeaderSize) {
    problem = fmt::format("payload is {} bytes, header says {}", bytes.size() - kHeaderSize, payloadLength);
    return std::nullopt;
  }
  std::string_view payload(bytes.data() + kHeaderSize, payloadLength);
  detail::Digest128 checksum = detail::xxh3x128(payload);
  if (std::memcmp(checksum.data(), bytes.data() + 24, checksum.size()) != 0) {
    problem = "checksum mismatch";
    return std::nullopt;
  }
  FieldReader reader{payload};
  std::string storedKey, options, image;
  Cubin cubin;
  if (!reader.read(storedKey) || !reader.read(cubin.arch) || !reader.read(cubin.log) || !reader.read(options) ||
      !reader.read(image) || !reader.read(cubin.toolchain)) {
    problem = "malformed payload";
    return std::nullopt;
  }
  if (storedKey != key) {
    problem = "entry belongs to another key";
    return std::nullopt;
  }
  std::istringstream optionLines(options);
  for (std::string option; std::getline(optionLines, option);)
    cubin.options.push_back(option);
  cubin.image.assign(image.begin(), image.end());
  return cubin;
}

std::optional<Cubin> DiskCache::load(const std::string &key, const std::optional<std::string> &toolchain) const {
  // Plain POSIX reads of regular files only: an entry that is a directory made std::ifstream throw past Error
  // (terminate), and a FIFO blocked the open forever. O_NONBLOCK keeps a FIFO's open from waiting for a writer; it
  // is then refused by the regular-file check. Any odd or unreadable entry only costs the cache.
  int fd = open(entryPath(key).c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  struct stat info {};
  constexpr off_t kMaxEntryBytes = off_t{1} << 30;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size > kMaxEntryBytes) {
    close(fd);
    ++corruptEntries_;
    return std::nullopt;
  }
  std::string bytes;
  bytes.reserve(static_cast<std::size_t>(info.st_size));
  char buffer[1 << 16];
  for (;;) {
    ssize_t got = read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0 || static_cast<off_t>(bytes.size()) + got > kMaxEntryBytes) {
      close(fd);
      ++corruptEntries_;
      return std::nullopt;
    }
    if (got == 0)
      break;
    bytes.append(buffer, static_cast<std::size_t>(got));
  }
  close(fd);
  std::string problem;
  std::optional<Cubin> cubin = deserialize(bytes, key, problem);
  if (!cubin) {
    ++corruptEntries_;
  } else if (toolchain && cubin->toolchain != *toolchain) {
    ++staleEntries_; // another toolkit made it: recompiled here, and the entry replaced
    cubin.reset();
  } else {
    // The modification time is the entry's last use: trim() evicts the least recently used first.
    utimensat(AT_FDCWD, entryPath(key).c_str(), nullptr, 0);
  }
  return cubin;
}

bool DiskCache::store(const std::string &key, const Cubin &cubin) const {
  if (!makeDirectories(directory_))
    return false;
  static std::atomic<std::uint64_t> counter{0};
  // Unique per process, thread and call, so concurrent writers never share a temporary file.
  std::string temporary =
      fmt::format("{}/.{}.{}.{}.{}.tmp", directory_, key, getpid(),
                  std::hash<std::thread::id>()(std::this_thread::get_id()), counter.fetch_add(1));
  std::string bytes = serialize(key, cubin);
  int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return false;
  std::size_t written = 0;
  while (written < bytes.size()) {
    ssize_t result = write(fd, bytes.data() + written, bytes.size() - written);
    if (result < 0 && errno == EINTR)
      continue;
    if (result <= 0)
      break;
    written += static_cast<std::size_t>(result);
  }
  // fsync before rename: after a crash the entry is either absent or complete, never a renamed partial file.
  bool ok = written == bytes.size() && fsync(fd) == 0;
  ok = (close(fd) == 0) && ok;
  if (ok && std::rename(temporary.c_str(), entryPath(key).c_str()) == 0) {
    trim(key);
    return true;
  }
  std::remove(temporary.c_str());
  return false;
}

KernelCache::KernelCache(std::unique_ptr<DiskCache> disk) : disk_(std::move(disk)) {}

KernelCache::Lookup KernelCache::getOrCompile(const std::string &key, const std::function<Cubin()> &compile,
                                              const std::optional<std::string> &toolchain) {
  std::promise<std::shared_ptr<const Cubin>> promise;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (auto found = memory_.find(key); found != memory_.end()) {
      ++stats_.memoryHits;
      return {found->second, CacheSource::Memory};
    }
    if (auto pending = inFlight_.find(key); pending != inFlight_.end()) {
      std::shared_future<std::shared_ptr<const Cubin>> result = pending->second;
      ++stats_.waitedForConcurrentCompile;
      lock.unlock();
      return {result.get(), CacheSource::WaitedForConcurrentCompile}; // rethrows the compiler's error, if any
    }
    inFlight_.emplace(key, promise.get_future().share());
  }

  std::shared_ptr<const Cubin> cubin;
  CacheSource source = CacheSource::Compiled;
  try {
    if (disk_)
      if (std::optional<Cubin> stored = disk_->load(key, toolchain)) {
        cubin = std::make_shared<const Cubin>(std::move(*stored));
        source = CacheSource::Disk;
      }
    if (!cubin) {
      cubin = std::make_shared<const Cubin>(compile());
      if (disk_)
        disk_->store(key, *cubin);
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    inFlight_.erase(key);
    promise.set_exception(std::current_exception());
    throw;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  memory_.emplace(key, cubin);
  inFlight_.erase(key);
  if (source == CacheSource::Disk)
    ++stats_.diskHits;
  else
    ++stats_.compiles;
  promise.set_value(cubin);
  return {cubin, source};
}

CacheStats KernelCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void KernelCache::clearMemory() {
  std::lock_guard<std::mutex> lock(mutex_);
  memory_.clear();
}

} // namespace tilec::runtime
