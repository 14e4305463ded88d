#!/usr/bin/env bash
# The GPU against the CPU backend on the same inputs, for every kernel in kernels/ (each flash-attention variant and
# atomics strategy below) at shapes with tails. Two halves, because the GPU machine has no CPU backend (MLIR's
# ExecutionEngine stays out of the bundle):
#
#   scripts/gpu-cpu-cases.sh refs  TILEC OUT_DIR            on a CPU machine, TILEC built with the CPU backend:
#                                                           runs each case with --target cpu, writes OUT_DIR/<case>/
#   scripts/gpu-cpu-cases.sh check TILEC REF_DIR LOG_DIR    on the GPU machine: runs each case with --target cuda
#                                                           and --reference REF_DIR/<case> (exit 1 on a mismatch)
#
# Both halves make their inputs with the same seed through the same code (runtime::makeHostArguments): the input
# tensors compare with error 0 in the logs, which shows that the two runs saw the same inputs.
set -uo pipefail

mode="${1:-}"
tilec="${2:-}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kernels="${TILEC_KERNELS_DIR:-$repo/kernels}"
# The cases: tests/gpu-compiler/cpu-backend-cases.txt (also read by the Catch2 test CpuBackendGpuTest.cpp). The refs
# half copies it into OUT_DIR/cases.txt, so that a reference directory says which cases it holds.
cases_file="${TILEC_CPU_CASES:-$repo/tests/gpu-compiler/cpu-backend-cases.txt}"
CASES=()
while IFS= read -r line; do
  [[ -z "$line" || "$line" == \#* ]] || CASES+=("$line")
done <"$cases_file"
if [[ "$mode" == refs && $# -eq 3 ]]; then
  out="$3"
  mkdir -p "$out"
  cp "$cases_file" "$out/cases.txt"
  for c in "${CASES[@]}"; do
    IFS='|' read -r name file kernel options <<<"$c"
    # --tolerance belongs to the comparison, not to the reference run.
    options="${options/--tolerance */}"
    # Like with like: the GPU legalizes atomics with fp32 by default, while the CPU alone runs them as written
    # (a bf16 dQ would then round every partial sum: 2.5e-3 apart at d64, once mistaken for a GPU difference).
    [[ "$options" == *--atomics=* || "$options" == *--deterministic* ]] || options+=" --atomics=fp32"
    # shellcheck disable=SC2086
    "$tilec" run "$kernels/$file" --kernel "$kernel" --target cpu --seed 11 $options --output-dir "$out/$name" \
      >"$out/$name.log" 2>&1 || { echo "gpu-cpu-cases: reference run $name failed:" >&2; cat "$out/$name.log" >&2; exit 1; }
  done
  echo "gpu-cpu-cases: ${#CASES[@]} reference runs in $out"
elif [[ "$mode" == check && $# -eq 4 ]]; then
  refs="$3"
  logs="$4"
  mkdir -p "$logs"
  failures=0
  for c in "${CASES[@]}"; do
    IFS='|' read -r name file kernel options <<<"$c"
    # shellcheck disable=SC2086
    "$tilec" run "$kernels/$file" --kernel "$kernel" --target cuda --seed 11 $options --reference "$refs/$name" \
      >"$logs/$name.log" 2>&1
    status=$?
    worst=$(grep -oE 'vs reference: [0-9.e+-]+' "$logs/$name.log" | awk '{print $3}' | sort -g | tail -n 1)
    printf '%-40s exit %d  largest error %s\n' "$name" "$status" "${worst:-?}"
    ((status == 0)) || failures=$((failures + 1))
  done
  echo "gpu-cpu-cases: $failures of ${#CASES[@]} cases differ from the CPU backend"
  ((failures == 0))
else
  echo "usage: $0 refs TILEC OUT_DIR | $0 check TILEC REF_DIR LOG_DIR" >&2
  exit 2
fi
