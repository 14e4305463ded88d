#!/usr/bin/env bash
# The CUDA C++ tilec emits for every shipped kernel, at its defaults and at every GPU-vs-CPU case's -D options, for
# the wgmma (sm_90a) and mma.sync (sm_90, sm_80) paths, one file each in OUT_DIR: run it before and after a change
# to the GPU lowering and `diff -r` the two directories to see exactly what the change does to the emitted code.
#
#   scripts/cuda-snapshot.sh TILEC OUT_DIR
set -euo pipefail
tilec="${1:?usage: $0 TILEC OUT_DIR}"
out="${2:?usage: $0 TILEC OUT_DIR}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$out"
emit() { # name file options...
  local name="$1" file="$2"
  shift 2
  for arch in sm_90a sm_90 sm_80; do
    "$tilec" "$repo/kernels/$file" --emit=cuda --arch="$arch" "$@" -o "$out/$name.$arch.cu" \
      >"$out/$name.$arch.log" 2>&1 || echo "exit $?" >>"$out/$name.$arch.log"
  done
}
while IFS= read -r file; do
  emit "$(echo "${file%.tile}" | tr '/' '_')" "$file"
done < <(cd "$repo/kernels" && find . -name '*.tile' | sed 's|^\./||' | sort)
while IFS='|' read -r name file kernel options; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  # Only the options that change the code: -D constants, the atomics strategy and --deterministic.
  args=()
  read -ra words <<<"$options"
  for ((i = 0; i < ${#words[@]}; ++i)); do
    case "${words[i]}" in
    -D) args+=(-D "${words[i + 1]}"); ((++i)) ;;
    --atomics=* | --deterministic) args+=("${words[i]}") ;;
    --dim | --zero | --tolerance) ((++i)) ;;
    esac
  done
  emit "case_$name" "$file" "${args[@]}"
done <"$repo/tests/gpu-compiler/cpu-backend-cases.txt"
echo "cuda-snapshot: $(ls "$out"/*.cu | wc -l) CUDA files in $out"
