// Helper process for the cross-process cache test: compiles kTilecCacheRaceSource (tagged by argv[2]) with the disk
// cache in argv[1], checks the result and exits 0 on success. Prints where the CUBIN came from.
#include "CacheRaceSource.h"
#include "tilec/runtime/Error.h"
#include "tilec/runtime/Runtime.h"

#include <cstdio>
#include <cstring>

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s CACHE_DIR TAG\n", argv[0]);
    return 2;
  }
  try {
    tilec::runtime::RuntimeOptions options;
    options.cacheDirectory = argv[1];
    tilec::runtime::Runtime runtime(options);
    std::string source = std::string(kTilecCacheRaceSource) + "// " + argv[2] + "\n";
    auto result = runtime.compile(source, {"sm_90a"});
    const auto &image = result.cubin->image;
    if (image.size() < 4 || std::memcmp(image.data(), "\x7f" "ELF", 4) != 0) {
      std::fprintf(stderr, "not an ELF image\n");
      return 1;
    }
    std::printf("%s\n", result.source == tilec::runtime::CacheSource::Disk ? "disk" : "compiled");
    return 0;
  } catch (const std::exception &error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
}
