// Helper process for the cross-process cache tests: compiles kTilecCacheRaceSource (tagged by argv[2]) with the disk
// cache in argv[1], checks the result and exits 0 on success. Prints where the CUBIN came from; with --report also
// whether NVRTC got mapped into the process and how long the compile() call took (the first one of a process).
#include "CacheRaceSource.h"
#include "tilec/runtime/Error.h"
#include "tilec/runtime/Runtime.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace {

bool nvrtcMapped() {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str().find("libnvrtc") != std::string::npos;
}

} // namespace

int main(int argc, char **argv) {
  const bool report = argc == 4 && std::strcmp(argv[3], "--report") == 0;
  if (argc != 3 && !report) {
    std::fprintf(stderr, "usage: %s CACHE_DIR TAG [--report]\n", argv[0]);
    return 2;
  }
  try {
    tilec::runtime::RuntimeOptions options;
    options.cacheDirectory = argv[1];
    tilec::runtime::Runtime runtime(options);
    std::string source = std::string(kTilecCacheRaceSource) + "// " + argv[2] + "\n";
    auto start = std::chrono::steady_clock::now();
    auto result = runtime.compile(source, {"sm_90a"});
    auto elapsed = std::chrono::steady_clock::now() - start;
    const auto &image = result.cubin->image;
    if (image.size() < 4 || std::memcmp(image.data(), "\x7f" "ELF", 4) != 0) {
      std::fprintf(stderr, "not an ELF image\n");
      return 1;
    }
    std::printf("%s", result.source == tilec::runtime::CacheSource::Disk ? "disk" : "compiled");
    if (report)
      std::printf(" nvrtc=%s microseconds=%lld", nvrtcMapped() ? "mapped" : "unmapped",
                  static_cast<long long>(std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count()));
    std::printf("\n");
    return 0;
  } catch (const std::exception &error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
}
