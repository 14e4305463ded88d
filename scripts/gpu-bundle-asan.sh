#!/usr/bin/env bash
# The GPU test binaries whose host code is plain C++ (tilec_gpu_tests, tilec_runtime_tests: the runtime, modules,
# plans, launches) built under AddressSanitizer + UBSan by scripts/sanitize.sh, for the GPU machine: a second, small
# bundle (the main one is near the carry limit), run by `TILEC_GPU_STEPS=asan scripts/gpu-run.sh OUT bundle` when
# it sits at bundle-asan/. Device code stays with compute-sanitizer (the `sanitize` step).
#
#   scripts/gpu-bundle-asan.sh [OUT_DIR]     default: bundle-asan; needs bundle/ (its data/ is copied)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$repo/bundle-asan}"
build="${SANITIZE_BUILD_DIR:-$repo/build-sanitize}"
[[ -d "$repo/bundle/data" ]] || { echo "gpu-bundle-asan: run scripts/gpu-bundle.sh first (data/ comes from it)" >&2; exit 1; }
TILEC_SANITIZE_BUILD_ONLY=1 bash "$repo/scripts/sanitize.sh"
cmake --build "$build" --target tilec_gpu_tests tilec_runtime_tests tilec_cache_race_helper
rm -rf "$out"
mkdir -p "$out/bin"
for name in tilec_gpu_tests tilec_runtime_tests tilec_cache_race_helper; do
  found="$(find "$build" -type f -name "$name" -perm -u+x | head -n 1)"
  cp "$found" "$out/bin/$name"
  strip --strip-debug "$out/bin/$name" # symbols stay: reports name functions; line numbers come from build-sanitize
done
# The sanitizer runtime they are linked against (-shared-libsan); the GPU machine has no clang.
cp "$(clang++-22 -print-runtime-dir)/libclang_rt.asan-x86_64.so" "$out/bin/"
cp -r "$repo/bundle/data" "$out/data"
# Empty lists, so that gpu-run.sh accepts this directory as its bundle on a call that carries only it.
: >"$out/tests.list"
: >"$out/benchmarks.list"
echo "gpu-bundle-asan: $out ready ($(du -sh "$out" | cut -f1))"
