#!/usr/bin/env bash
# Fuzz the .tile front end with libFuzzer (clang from Debian). CI runs `--full --replay` (scripts/sanitize.sh).
#
#   scripts/fuzz-parser.sh [--full] [--build-only] [--replay] [SECONDS] [WORKDIR]
#
#   (default)  lexer + parser + AST dump; links only LLVM Support.
#   --full     the whole compileToTileIR pipeline (MLIRGen, dialect verifier,
#              canonicalize + cse); needs the tilec static libraries from
#              build/ (ninja -C build TilecPipeline TilecTransforms TilecTileDialect).
#   --gpu      --full, then atomic legalization (fp32), the GPU lowering and
#              the CUDA emitter (what `tilec --emit=cuda` runs); also needs
#              build/'s TilecCudaEmitter.
#   --build-only  build the fuzzer, don't run it.
#   --replay   deterministic, for CI: run every seed once (the kernels and every
#              .tile file of the lit corpus, which keeps each input that ever
#              crashed the front end), then $TILEC_FUZZ_RUNS (default 20000)
#              mutations from a fixed seed; SECONDS is ignored.
#   SECONDS    how long to fuzz (default 600).
#   WORKDIR    build outputs, corpus and crashes (default build-fuzz/).
#
# Setup once:  apt-get install -y clang-22 libclang-rt-22-dev
# One process, -max_len=4096, -timeout=5, the dictionary tests/fuzz/tile.dict;
# the kernels in kernels/ seed the corpus (grown in WORKDIR/<variant>/corpus);
# crashes, timeouts and leaks land in WORKDIR/<variant>/crashes/.
# Reproduce one:  WORKDIR/<variant>/fuzzer WORKDIR/<variant>/crashes/crash-...
# Minimize one:   WORKDIR/<variant>/fuzzer -minimize_crash=1 -runs=20000 FILE
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VARIANT=parser
BUILD_ONLY=0
REPLAY=0
while [[ "${1:-}" == --* ]]; do
  case "$1" in
    --full) VARIANT=full ;;
    --gpu) VARIANT=gpu ;;
    --build-only) BUILD_ONLY=1 ;;
    --replay) REPLAY=1 ;;
    *) echo "error: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
SECONDS_TO_RUN="${1:-600}"
WORK="${2:-$ROOT/build-fuzz}"
CXX="${CXX:-clang++-22}"
LLVM_CONFIG="${LLVM_CONFIG:-llvm-config-22}"

command -v "$CXX" >/dev/null || {
  echo "error: $CXX not found; apt-get install -y clang-22 libclang-rt-22-dev" >&2
  exit 1
}

OUT="$WORK/$VARIANT"
mkdir -p "$OUT/corpus" "$OUT/crashes" "$OUT/obj"
SAN="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
# LLVM's own flags (C++17, -fno-exceptions; LLVM 22 from Debian has RTTI).
# shellcheck disable=SC2207
LLVM_CXXFLAGS=($("$LLVM_CONFIG" --cxxflags))
CXXFLAGS=(-g -O1 -fno-omit-frame-pointer "${LLVM_CXXFLAGS[@]}"
          -I"$ROOT/compiler/include" -I"$ROOT/runtime/include") # runtime: the header-only Arch.h

FE="$ROOT/compiler/Frontend"
if [[ $VARIANT == parser ]]; then
  # The parser is split over Parser*.cpp.
  SOURCES=("$FE/Diagnostics.cpp" "$FE/Lexer.cpp" "$FE"/Parser*.cpp
           "$FE/ASTDump.cpp" "$ROOT/tests/fuzz/ParserFuzzer.cpp")
  # shellcheck disable=SC2207  (llvm-config prints several lines)
  LIBS=($("$LLVM_CONFIG" --ldflags --libs support --system-libs))
else
  BUILD="${TILEC_BUILD_DIR:-$ROOT/build}"
  for lib in TilecPipeline TilecTransforms TilecTileDialect; do
    [[ -f "$BUILD/lib/lib$lib.a" ]] || {
      echo "error: $BUILD/lib/lib$lib.a missing; ninja -C $BUILD $lib" >&2
      exit 1
    }
  done
  CXXFLAGS+=(-DTILEC_FUZZ_FULL -I"$ROOT/dialect/include"
             -I"$BUILD/dialect/include" -I"$BUILD/compiler/include")
  GPU_LIBS=()
  if [[ $VARIANT == gpu ]]; then
    [[ -f "$BUILD/lib/libTilecCudaEmitter.a" ]] || {
      echo "error: $BUILD/lib/libTilecCudaEmitter.a missing; ninja -C $BUILD TilecCudaEmitter" >&2
      exit 1
    }
    CXXFLAGS+=(-DTILEC_FUZZ_GPU)
    GPU_LIBS=("$BUILD/lib/libTilecCudaEmitter.a")
  fi
  # Every source of the front end (instrumented), whatever files it is split into.
  SOURCES=("$FE"/*.cpp "$ROOT/compiler/Driver/Driver.cpp" "$ROOT/tests/fuzz/ParserFuzzer.cpp")
  LLVM_LIBDIR="$("$LLVM_CONFIG" --libdir)"
  # The tile dialect and passes come uninstrumented from build/; MLIR and
  # LLVM from the shared libraries.
  LIBS=("${GPU_LIBS[@]}" "$BUILD/lib/libTilecPipeline.a" "$BUILD/lib/libTilecTransforms.a"
        "$BUILD/lib/libTilecLayoutAttrs.a" "$BUILD/compiler/Lowering/Layout/libTilecLayout.a"
        "$BUILD/lib/libTilecTileDialect.a"
        -L"$LLVM_LIBDIR" -Wl,-rpath,"$LLVM_LIBDIR" -lMLIR -lLLVM)
fi

OBJS=()
for src in "${SOURCES[@]}"; do
  obj="$OUT/obj/$(basename "$src" .cpp).o"
  if [[ ! -f "$obj" || "$src" -nt "$obj" || "$0" -nt "$obj" ]]; then
    echo "compiling $(basename "$src")"
    "$CXX" "${CXXFLAGS[@]}" $SAN -c "$src" -o "$obj"
  fi
  OBJS+=("$obj")
done
echo "linking $OUT/fuzzer"
"$CXX" $SAN "${OBJS[@]}" "${LIBS[@]}" -o "$OUT/fuzzer"
[[ $BUILD_ONLY == 1 ]] && exit 0

# Seeds: the real kernels and the front end's lit tests (every construct and
# diagnostic), plus the corpus grown by earlier runs.
SEEDS="$OUT/seeds"
mkdir -p "$SEEDS"
cp "$ROOT"/kernels/*.tile "$ROOT"/kernels/*/*.tile "$SEEDS/"
while IFS= read -r f; do
  rel="${f#"$ROOT"/tests/lit/}"
  cp "$f" "$SEEDS/lit-${rel//\//-}"
done < <(find "$ROOT/tests/lit" -name '*.tile' | sort)

cd "$OUT"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
if [[ $REPLAY == 1 ]]; then
  echo "replaying $(ls seeds | wc -l) seeds ($VARIANT), then ${TILEC_FUZZ_RUNS:-20000} mutations from seed 1"
  ./fuzzer -runs=0 -timeout=5 -rss_limit_mb=4096 -artifact_prefix="$OUT/crashes/" seeds
  rm -rf "$OUT/ci-corpus" && mkdir -p "$OUT/ci-corpus" && cp seeds/* "$OUT/ci-corpus/"
  exec ./fuzzer -seed=1 -runs="${TILEC_FUZZ_RUNS:-20000}" -dict="$ROOT/tests/fuzz/tile.dict" -max_len=4096 \
    -timeout=5 -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$OUT/crashes/" ci-corpus
fi
echo "fuzzing ($VARIANT) for $SECONDS_TO_RUN s; crashes -> $OUT/crashes/"
exec ./fuzzer -dict="$ROOT/tests/fuzz/tile.dict" -max_len=4096 -timeout=5 -rss_limit_mb=4096 \
  -max_total_time="$SECONDS_TO_RUN" -print_final_stats=1 \
  -artifact_prefix="$OUT/crashes/" corpus seeds
