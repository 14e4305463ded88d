#!/usr/bin/env bash
# The sanitizer job: builds the whole project with clang 22 under AddressSanitizer + UndefinedBehaviorSanitizer
# (TILEC_SANITIZE=ON, non-recoverable UB checks, LeakSanitizer on) in build-sanitize/, checks that the gate is live
# (the canary's use-after-free, signed overflow and leak must each fail with their report), then runs every ctest
# test under it, then replays the front-end fuzzer's seeds and a fixed fuzzing run (TILEC_FUZZ_RUNS, 0 skips).
# Installs what is missing (clang-22 and its runtimes come with scripts/setup.sh).
#
#   scripts/sanitize.sh [ctest args...]            SANITIZE_BUILD_DIR overrides build-sanitize/
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The normal build (scripts/test.sh exports BUILD_DIR) provides the fuzzer's uninstrumented static libraries.
NORMAL_BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
BUILD_DIR="${SANITIZE_BUILD_DIR:-$ROOT/build-sanitize}"

bash "$ROOT/scripts/setup.sh"
export CCACHE_BASEDIR="$ROOT"
if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DTILEC_SANITIZE=ON \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -g1 -DNDEBUG"
fi
cmake --build "$BUILD_DIR"
# scripts/gpu-bundle-asan.sh wants the build only.
[[ "${TILEC_SANITIZE_BUILD_ONLY:-0}" == 0 ]] || exit 0

# Debian's LLVM/MLIR libraries are not instrumented, but their headers' allocators (llvm::BumpPtrAllocator, compiled
# into our code) poison and unpoison memory with ASan's user-poisoning calls; memory handed out by the uninstrumented
# library half then reads as poisoned ("use-after-poison" inside e.g. mlir::Dialect::addType). allow_user_poisoning=0
# ignores exactly those calls: every other check stays on. abort_on_error=1 makes every report (leaks included) a
# crash, which `not` in lit tests does not invert into a pass.
export ASAN_OPTIONS="allow_user_poisoning=0:abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:abort_on_error=1:halt_on_error=1"
export LSAN_OPTIONS="report_objects=1"

# The gate is live: each defect of the canary must be reported and must fail the run.
canary="$BUILD_DIR/bin/tilec-sanitizer-canary"
[[ -x "$canary" ]] || canary="$(find "$BUILD_DIR" -name tilec-sanitizer-canary -type f -perm -u+x | head -n 1)"
for defect in use-after-free:heap-use-after-free signed-overflow:"signed integer overflow" leak:"detected memory leaks"; do
  name="${defect%%:*}" report="${defect#*:}"
  if output="$("$canary" "$name" 2>&1)"; then
    echo "sanitize: the canary's $name ran clean: the sanitizers are not live" >&2
    exit 1
  fi
  if ! grep -q "$report" <<<"$output"; then
    echo "sanitize: the canary's $name failed without the expected report ('$report'):" >&2
    echo "$output" >&2
    exit 1
  fi
  echo "sanitize: canary $name -> $report (as required)"
done

ctest --test-dir "$BUILD_DIR" --output-on-failure -j2 "$@"

# The front end under libFuzzer + ASan + UBSan: every seed once (the kernels and every .tile file of the
# lit corpus, which keeps each input that ever crashed the front end), then a fixed number of mutations from a
# fixed seed, so a red run reproduces. The --gpu variant takes every input the front end accepts on through the GPU
# lowering and the CUDA emitter (those come uninstrumented from build/: a crash there still ends the run). Needs
# build/'s static libraries (scripts/test.sh builds them first).
if [[ "${TILEC_FUZZ_RUNS:-50000}" != 0 ]]; then
  [[ -f "$NORMAL_BUILD_DIR/lib/libTilecPipeline.a" && -f "$NORMAL_BUILD_DIR/lib/libTilecCudaEmitter.a" ]] ||
    { echo "sanitize: $NORMAL_BUILD_DIR lacks the fuzzer's static libraries: run scripts/build.sh first" >&2; exit 1; }
  TILEC_BUILD_DIR="$NORMAL_BUILD_DIR" TILEC_FUZZ_RUNS="${TILEC_FUZZ_RUNS:-50000}" \
    bash "$ROOT/scripts/fuzz-parser.sh" --gpu --replay 0 "$BUILD_DIR/fuzz"
fi
