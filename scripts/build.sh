#!/usr/bin/env bash
# Installs what is missing, then configures (once) and builds tilec with Ninja.
#   BUILD_DIR   build directory (default: build)
#   BUILD_TYPE  CMake build type (default: Release)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
BUILD_TYPE="${BUILD_TYPE:-Release}"

bash "$ROOT/scripts/setup.sh"

# ccache hits across clones in different folders (CI builds a fresh clone).
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}"

if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="$BUILD_TYPE"
fi
cmake --build "$BUILD_DIR"
