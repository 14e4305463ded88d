#!/usr/bin/env bash
# The README's main job: installs what is missing, builds, then runs the
# flash-attention demo. Today the kernels run on the CPU reference backend
# (forward, backward preprocess and backward, checked against float64); the
# GPU path joins when the CUDA lowering lands.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
export BUILD_DIR

bash "$ROOT/scripts/build.sh" >/dev/null
echo "== tilec kernels/flash_attention/bwd.tile --emit=mlir (first lines) =="
ir="$(mktemp)"
trap 'rm -f "$ir"' EXIT
"$BUILD_DIR/bin/tilec" "$ROOT/kernels/flash_attention/bwd.tile" --emit=mlir -o "$ir"
head -n 12 "$ir"
echo
"$BUILD_DIR/bin/tilec-demo" "$@"
