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

# name | file (under kernels/) | kernel | options
CASES=(
  "softmax_77x1000|examples/softmax.tile|softmax|--dim rows=77 --dim cols=1000"
  "row_stats_1000|examples/reductions.tile|row_stats|--dim rows=1000"
  "count_labels_1000|examples/reductions.tile|count_labels|--dim n=1000 --zero counts --zero totals"
  "gemm_nn_77x130x200|examples/gemm.tile|gemm_nn|--dim m=77 --dim n=130 --dim k=200"
  "gemm_nt_77x130x200|examples/gemm.tile|gemm_nt|--dim m=77 --dim n=130 --dim k=200"
  "gemm_tn_77x130x200|examples/gemm.tile|gemm_tn|--dim m=77 --dim n=130 --dim k=200"
  "gemm_tt_77x130x200|examples/gemm.tile|gemm_tt|--dim m=77 --dim n=130 --dim k=200"
  "column_sums_fp32_1000|examples/atomics.tile|column_sums|--dim rows=1000 --zero S32 --zero S16 --zero Sb --zero E16 --zero E32 --atomics=fp32"
  "column_sums_split_1000|examples/atomics.tile|column_sums|--dim rows=1000 --zero S32 --zero S16 --zero Sb --zero E16 --zero E32 --atomics=split"
  "column_sums_native_1000|examples/atomics.tile|column_sums|--dim rows=1000 --zero S32 --zero S16 --zero Sb --zero E16 --zero E32 --atomics=native"
  "histogram_fp32|histogram.tile|histogram|--dim rows=64 --dim cols=40 --zero H --zero T --atomics=fp32"
  "histogram_split|histogram.tile|histogram|--dim rows=64 --dim cols=40 --zero H --zero T --atomics=split"
  "histogram_native|histogram.tile|histogram|--dim rows=64 --dim cols=40 --zero H --zero T --atomics=native --tolerance 5e-2"
  "attn_fwd_d64_s77|flash_attention/fwd.tile|attn_fwd|-D dim=64 --dim batch=2 --dim seq=77 --dim kv_heads=2"
  "attn_fwd_d128_gqa2_causal_s77|flash_attention/fwd.tile|attn_fwd|-D dim=128 -D groups=2 -D causal=true --dim batch=1 --dim seq=77 --dim kv_heads=2"
  "attn_bwd_preprocess_d64_s77|flash_attention/bwd_preprocess.tile|attn_bwd_preprocess|-D dim=64 --dim batch=1 --dim seq=77 --dim heads=2"
  "attn_bwd_d64_fp32_s77|flash_attention/bwd.tile|attn_bwd|-D dim=64 --dim batch=1 --dim seq=77 --dim kv_heads=2 --zero dQ --zero dK --zero dV"
  "attn_bwd_d128_gqa2_causal_split_s77|flash_attention/bwd.tile|attn_bwd|-D dim=128 -D groups=2 -D causal=true --dim batch=1 --dim seq=77 --dim kv_heads=2 --zero dQ --zero dK --zero dV --atomics=split"
  "attn_bwd_d64_gqa4_causal_native_s77|flash_attention/bwd.tile|attn_bwd|-D dim=64 -D groups=4 -D causal=true --dim batch=1 --dim seq=77 --dim kv_heads=1 --zero dQ --zero dK --zero dV --atomics=native --tolerance 5e-2"
  "attn_fwd_d64_stages3_s300|flash_attention/fwd.tile|attn_fwd|-D dim=64 -D stages=3 --dim batch=1 --dim seq=300 --dim kv_heads=2"
  "attn_bwd_d128_gqa2_causal_stages3_s300|flash_attention/bwd.tile|attn_bwd|-D dim=128 -D groups=2 -D causal=true -D stages=3 --dim batch=1 --dim seq=300 --dim kv_heads=1 --zero dQ --zero dK --zero dV"
  "attn_bwd_d128_split_s77|flash_attention/bwd.tile|attn_bwd|-D dim=128 --dim batch=1 --dim seq=77 --dim kv_heads=2 --zero dQ --zero dK --zero dV --atomics=split"
)

mode="${1:-}"
tilec="${2:-}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kernels="${TILEC_KERNELS_DIR:-$repo/kernels}"
if [[ "$mode" == refs && $# -eq 3 ]]; then
  out="$3"
  mkdir -p "$out"
  for c in "${CASES[@]}"; do
    IFS='|' read -r name file kernel options <<<"$c"
    # --tolerance belongs to the comparison, not to the reference run.
    options="${options/--tolerance */}"
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
