#!/usr/bin/env bash
# The README's main job: the flash-attention demo.
#
# On a machine with a CUDA GPU and PyTorch: the kernels of kernels/flash_attention run on the GPU
# (tools/tilec-demo/demo_gpu.py): errors against float64 per shape and atomics strategy, then forward and backward
# TFLOP/s. tilec comes from a build here when LLVM/MLIR 22 is installed (scripts/build.sh), else from a GPU bundle
# made on a build machine (scripts/gpu-bundle.sh; TILEC_BUNDLE, default ./bundle).
# Elsewhere: installs what is missing, builds, and runs the kernels on the CPU reference backend (forward, backward
# preprocess and backward, checked against float64).
#   TILEC_DEMO_TARGET=cpu|gpu   force one (default: gpu where a GPU and torch are present)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
export BUILD_DIR

target="${TILEC_DEMO_TARGET:-}"
if [[ -z "$target" ]]; then
  target=cpu
  if nvidia-smi -L >/dev/null 2>&1 && python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    target=gpu
  fi
fi

if [[ "$target" == gpu ]]; then
  bundle="${TILEC_BUNDLE:-$ROOT/bundle}"
  if [[ -d /usr/lib/llvm-22/lib/cmake/mlir ]]; then
    bash "$ROOT/scripts/build.sh" >/dev/null
    bin="$BUILD_DIR/bin" lib="$BUILD_DIR/runtime/libtilec_c.so" kernels="$ROOT/kernels"
  elif [[ -x "$bundle/bin/tilec" ]]; then
    bin="$bundle/bin" lib="$bundle/bin/libtilec_c.so" kernels="$bundle/kernels"
    export LD_LIBRARY_PATH="$bundle/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  else
    echo "demo: a GPU is here but neither LLVM/MLIR 22 (to build tilec) nor a GPU bundle ($bundle, from" >&2
    echo "      scripts/gpu-bundle.sh on a build machine); set TILEC_DEMO_TARGET=cpu for the CPU demo" >&2
    exit 2
  fi
  TILEC_EXECUTABLE="$bin/tilec" TILEC_C_LIBRARY="$lib" TILEC_KERNELS_DIR="$kernels" PYTHONPATH="$ROOT/python" \
    exec python3 "$ROOT/tools/tilec-demo/demo_gpu.py" "$@"
fi

bash "$ROOT/scripts/build.sh" >/dev/null
echo "== tilec kernels/flash_attention/bwd.tile --emit=mlir (first lines) =="
ir="$(mktemp)"
trap 'rm -f "$ir"' EXIT
"$BUILD_DIR/bin/tilec" "$ROOT/kernels/flash_attention/bwd.tile" --emit=mlir -o "$ir"
head -n 12 "$ir"
echo
"$BUILD_DIR/bin/tilec-demo" "$@"
