#!/usr/bin/env bash
# Installs every Debian package the build and the tests need (clang-22 and its sanitizer runtimes: scripts/sanitize.sh). Idempotent: packages
# already present are not downloaded again, and apt's lists are refreshed only when
# something is missing.
set -euo pipefail

PACKAGES=(
  cmake ninja-build ccache g++ pkg-config
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libfmt-dev catch2 libdlpack-dev libxxhash-dev zlib1g-dev libzstd-dev
  clang-22 libclang-rt-22-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The Python package's tests (ctest's python.pytest) need numpy and pytest, from PyPI.
if ! python3 -c "import numpy, pytest" 2>/dev/null; then
  echo "setup: installing numpy and pytest (pip)"
  python3 -m pip install --quiet --disable-pip-version-check numpy pytest
fi

# ctest's tools.sass-check disassembles CUBINs; this machine's CUDA toolkit has no cuobjdump, NVIDIA ships it (with
# nvdisasm, which it runs) as PyPI wheels. 13.2 is the oldest there; it reads CUDA 13.0's sm_90 CUBINs.
if ! command -v cuobjdump >/dev/null && [[ ! -x "${CUDA_HOME:-/usr/local/cuda}/bin/cuobjdump" ]] &&
  ! python3 -c "import nvidia, pathlib, sys; sys.exit(not any(any(pathlib.Path(p).glob('cu*/bin/cuobjdump')) for p in nvidia.__path__))" 2>/dev/null; then
  echo "setup: installing cuobjdump and nvdisasm (pip: nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm)"
  python3 -m pip install --quiet --disable-pip-version-check nvidia-cuda-cuobjdump==13.5.37 nvidia-cuda-nvdisasm==13.5.37
fi

# The CUDA toolkit (NVRTC and its headers) comes with this kind of machine; say so
# plainly when it is absent rather than failing deep inside CMake.
if [[ -z "${CUDA_HOME:-}" && ! -d /usr/local/cuda ]]; then
  echo "setup: warning: no CUDA toolkit found (set CUDA_HOME); NVRTC-based parts will be skipped" >&2
fi
echo "setup: all packages present"
