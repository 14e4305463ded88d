#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>

int main(int argc, char *argv[]) {
  // Where a driver is present, NVRTC (>= 12.9) serves repeated programs from the CUDA compute cache: no ptxas -v
  // output for the tests that check it, and "cold" compiles that are not. Set here for every test binary, run by
  // ctest or by hand, rather than in ctest's ENVIRONMENT: catch_discover_tests splits that list at ';' and kept only
  // its first variable (TILEC_CACHE=0), so this never reached the tests through it. A caller's value stays.
  setenv("CUDA_CACHE_DISABLE", "1", /*overwrite=*/0);
  return Catch::Session().run(argc, argv);
}
