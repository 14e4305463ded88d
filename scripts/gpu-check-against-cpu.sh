#!/usr/bin/env bash
# On the GPU machine: the GPU against the CPU backend's references made on a CPU machine from the same seeds, for the
# GPU-vs-CPU cases (scripts/gpu-cpu-cases.sh) and for generated kernels (tools/kernel-fuzz, --refs there, --against
# here), then compute-sanitizer memcheck and racecheck on the cases of kernels/examples/parallel_regions.tile. Every
# step that fails or skips makes the exit status 1.
#
#   scripts/gpu-check-against-cpu.sh BUNDLE OUT
#
# BUNDLE holds `tilec` (built with -DTILEC_STATIC_LLVM=ON -DTILEC_CLI_WITH_CPU_RUN=OFF), refs.tar.xz (a refs/
# directory of scripts/gpu-cpu-cases.sh refs) and fuzzrefs.tar.xz (kernel-fuzz --refs directories, one per seed).
set -uo pipefail
bundle="${1:?usage: $0 BUNDLE OUT}"
out="${2:?usage: $0 BUNDLE OUT}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
mkdir -p "$out"
cp "$bundle/tilec" "$work/tilec" && chmod +x "$work/tilec"
tar -xJf "$bundle/refs.tar.xz" -C "$work" && tar -xJf "$bundle/fuzzrefs.tar.xz" -C "$work" || exit 1
failed=0
step() { # name command...
  local name="$1"
  shift
  local start=$SECONDS
  "$@" >"$out/$name.log" 2>&1
  local status=$?
  echo "$name: exit $status in $((SECONDS - start)) s" | tee -a "$out/summary.log"
  ((status == 0)) || failed=1
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/gpu.txt" 2>&1 || failed=1
step cases env TILEC_KERNELS_DIR="$repo/kernels" bash "$repo/scripts/gpu-cpu-cases.sh" check "$work/tilec" \
  "$work/refs" "$out/cases"
for refs in "$work"/fuzzrefs*/; do
  step "fuzz-$(basename "$refs")" python3 "$repo/tools/kernel-fuzz/kernel_fuzz.py" --tilec "$work/tilec" --jobs 8 \
    --against "$refs"
done
# The sanitizers on the whole-tile ops inside parallel loops and their shared copies.
while IFS='|' read -r name file kernel options; do
  [[ "$name" == parallel_* ]] || continue
  for tool in memcheck racecheck; do
    # shellcheck disable=SC2086
    step "$tool-$name" compute-sanitizer --tool "$tool" --error-exitcode 3 "$work/tilec" run "$repo/kernels/$file" \
      --kernel "$kernel" --target cuda --seed 11 $options --reference "$work/refs/$name"
  done
done <"$repo/tests/gpu-compiler/cpu-backend-cases.txt"
echo "gpu-check-against-cpu: $( ((failed)) && echo FAILED || echo passed)" | tee -a "$out/summary.log"
exit "$failed"
