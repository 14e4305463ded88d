#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs every
# test (lit files and Catch2 test cases) through ctest. GPU tests skip with a
# message where there is no CUDA driver. Then the sanitizer job (scripts/sanitize.sh: the canary check and the same
# tests under ASan + UBSan); TILEC_SANITIZE_TESTS=0 skips it for a quick local run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
export BUILD_DIR

bash "$ROOT/scripts/build.sh"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j2 "$@"

if [[ "${TILEC_SANITIZE_TESTS:-1}" != 0 ]]; then
  bash "$ROOT/scripts/sanitize.sh" "$@"
fi
