#!/usr/bin/env bash
# Session 12, one device call: the issue-10 benchmark first, then as many GPU-script steps as fit before the deadline.
set -u
OUT=${OUT:?}
start=$(date +%s); deadline=$((start + ${S12_BUDGET:-585}))
left() { echo $((deadline - $(date +%s))); }
log() { echo "[$(($(date +%s) - start))s] $*" | tee -a "$OUT/s12.log"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee -a "$OUT/s12.log"
export TILEC_EXECUTABLE=bundle/bin/tilec TILEC_C_LIBRARY=bundle/bin/libtilec_c.so TILEC_KERNELS_DIR=bundle/kernels PYTHONPATH=python
log "bench start"
timeout $(( $(left) - 20 )) python3 tools/bench-attention/bench_attention.py --out "$OUT/bench.csv" --reps 3 --flex-seqs 4096 > /tmp/bench.log 2>&1
log "bench rc=$?"
mkdir -p /tmp/run
for s in "tests 170" "cases 90" "sass 20" "hosts 30" "demo 45" "sdpa 60" "python 60" "sanitize 200" "kernelfuzz 100"; do
  set -- $s
  if (( $(left) < $2 )); then log "skip $1 (left $(left)s, needs ~$2s)"; continue; fi
  if [[ $1 == demo ]]; then
    TILEC_BUNDLE=bundle timeout $(( $(left) - 5 )) scripts/demo.sh > /tmp/run/demo.log 2>&1; log "demo rc=$?"
  else
    mkdir -p /tmp/run/$1
    TILEC_KERNEL_FUZZ="80 12" TILEC_GPU_STEPS="$1" timeout $(( $(left) - 5 )) scripts/gpu-run.sh /tmp/run/$1 bundle > /tmp/run/$1.out 2>&1
    log "$1 rc=$? $(grep -v '^gpu-run:' /tmp/run/$1/summary.txt | tr '\n' '|')"
  fi
done
cp /tmp/bench.log "$OUT/bench.log"
tar czf "$OUT/run.tgz" -C /tmp run
log "done"
