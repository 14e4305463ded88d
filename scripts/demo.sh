#!/usr/bin/env bash
# The README's main job. Today: parse, verify and print a sample kernel with
# tile-opt (later: the flash-attention demo).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
export BUILD_DIR

bash "$ROOT/scripts/build.sh" >/dev/null
echo "== tile-opt examples/ir/softmax_rows.mlir (parsed, verified, canonicalized) =="
"$BUILD_DIR/bin/tile-opt" "$ROOT/examples/ir/softmax_rows.mlir" -canonicalize \
  -tile-shared-memory-budget
