#!/usr/bin/env bash
# On the GPU machine: the GPU against the CPU backend's references made on a CPU machine from the same seeds, for the
# GPU-vs-CPU cases (scripts/gpu-cpu-cases.sh) and for generated kernels (tools/kernel-fuzz, --refs there, --against
# here), then compute-sanitizer memcheck and racecheck on the cases of kernels/examples/parallel_regions.tile and on a
# sample of the generated kernels. Every step that fails or skips makes the exit status 1.
#
#   scripts/gpu-check-against-cpu.sh BUNDLE OUT
#
# GPU_CHECK_STEPS (default "cases fuzz sanitizers") names the steps to run, so that a machine lent for a limited time
# can take them in several calls; GPU_CHECK_FUZZ (default: every fuzzrefs* directory of the archive) names the
# --refs directories of the fuzz step.
#
# BUNDLE holds `tilec` or bin/tilec (built with -DTILEC_STATIC_LLVM=ON -DTILEC_CLI_WITH_CPU_RUN=OFF, as
# scripts/gpu-bundle.sh builds it), refs.tar.xz (a refs/ directory of scripts/gpu-cpu-cases.sh refs) and
# fuzzrefs.tar.xz (kernel-fuzz --refs directories, one per seed).
set -uo pipefail
bundle="${1:?usage: $0 BUNDLE OUT}"
out="${2:?usage: $0 BUNDLE OUT}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
mkdir -p "$out"
# The tilec of scripts/gpu-bundle.sh's bundle (bin/tilec), or one copied alone into BUNDLE.
tilec_exe="$bundle/bin/tilec"
[[ -f "$tilec_exe" ]] || tilec_exe="$bundle/tilec"
cp "$tilec_exe" "$work/tilec" && chmod +x "$work/tilec"
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
steps=" ${GPU_CHECK_STEPS:-cases fuzz sanitizers} "
for s in $steps; do
  [[ "$s" == cases || "$s" == fuzz || "$s" == sanitizers ]] || { echo "unknown step '$s' in GPU_CHECK_STEPS" >&2; exit 2; }
done
if [[ "$steps" == *" cases "* ]]; then
  step cases env TILEC_KERNELS_DIR="$repo/kernels" bash "$repo/scripts/gpu-cpu-cases.sh" check "$work/tilec" \
    "$work/refs" "$out/cases"
fi
if [[ "$steps" == *" fuzz "* ]]; then
  for refs in ${GPU_CHECK_FUZZ:-$(cd "$work" && echo fuzzrefs*)}; do
    [[ -d "$work/$refs" ]] || { echo "no directory $refs in $bundle/fuzzrefs.tar.xz" | tee -a "$out/summary.log"; failed=1; continue; }
    step "fuzz-$refs" python3 "$repo/tools/kernel-fuzz/kernel_fuzz.py" --tilec "$work/tilec" --jobs 8 \
      --against "$work/$refs"
  done
fi
# The sanitizers on the whole-tile ops inside parallel loops and their shared copies.
[[ "$steps" == *" sanitizers "* ]] && while IFS='|' read -r name file kernel options; do
  [[ "$name" == parallel_* ]] || continue
  for tool in memcheck racecheck; do
    # shellcheck disable=SC2086
    step "$tool-$name" compute-sanitizer --tool "$tool" --error-exitcode 3 "$work/tilec" run "$repo/kernels/$file" \
      --kernel "$kernel" --target cuda --seed 11 $options --reference "$work/refs/$name"
  done
done <"$repo/tests/gpu-compiler/cpu-backend-cases.txt"
# And on an even sample of the generated kernels (GPU_CHECK_SAN_SAMPLE of the first fuzz directory, default 25).
if [[ "$steps" == *" sanitizers "* ]]; then
  first=$(cd "$work" && echo fuzzrefs* | cut -d' ' -f1)
  for tool in memcheck racecheck; do
    step "$tool-generated" python3 "$repo/tools/kernel-fuzz/kernel_fuzz.py" --tilec "$work/tilec" --jobs 4 \
      --against "$work/$first" --sanitize "$tool" --sample "${GPU_CHECK_SAN_SAMPLE:-25}"
  done
fi
echo "gpu-check-against-cpu: $( ((failed)) && echo FAILED || echo passed)" | tee -a "$out/summary.log"
exit "$failed"
