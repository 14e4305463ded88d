#!/usr/bin/env bash
# Runs the steps named in GPU_STEPS on the GPU machine, in order, while the time budget lasts, from the repository
# root with the bundle of scripts/gpu-bundle.sh carried as bundle/ (and, for the A/B steps, older or other tilec
# executables packed with xz under bench-ab/). It is meant for a machine lent for a limited time: each step names the
# seconds it needs, a step that no longer fits is skipped, and every output is packed after each step, so a run
# cut off at the machine's limit still returns the logs of the steps it finished.
#
#   GPU_STEPS="bench:180 tests:75 cases:60 sass:5" OUT=/path/to/out bash scripts/gpu-steps.sh
#
# Variables:
#   GPU_STEPS   "name:seconds ..." (required): the steps below, each with the time it needs (see docs/development.md)
#   GPU_BUDGET  seconds this run may take in all (default 580)
#   OUT         where the step log ($OUT/steps.log) and the packed outputs ($OUT/run.tgz) go (required)
# Outputs land in $R = /tmp/run, packed into $OUT/run.tgz after every step.
#
# Steps:
#   bench     bench_attention.py on the bundle (every attention shape, the peers, the GEMM) -> $R/bench.csv, bench.log
#   ab        attention A/B: this bundle's tilec against an older one (bench-ab/tilec-old.xz), FA2 as the only peer,
#             in the order of GPU_AB_ORDER (default "new old new old") at GPU_AB_SEQS (default 1024)  -> $R/ab/
#   splitsan  compute-sanitizer memcheck/initcheck/racecheck of the split backward at a tail shape
#   compile   tilec-bench-attention --compile-times (cold NVRTC compile, warm disk-cache load) -> $R/compile-times.txt
#   demo      scripts/demo.sh (the README's main job) on the GPU                       -> $R/demo.log
#   fallback  the compiler GPU tests for sm_90 (no wgmma)
#   fallbackcases  the GPU-vs-CPU cases (bundle/refs) with TILEC_CUDA_ARCH=sm_90: every kernel on the mma.sync branch
#   fallbackfuzz   the bundle's fuzz kernels (bundle/kernel-fuzz) on the GPU against the CPU backend, TILEC_CUDA_ARCH=sm_90
#   ncu       time, DRAM bytes and registers of every attn_bwd kernel, fp32 against split, at GPU_NCU_SHAPE
#             ("dim seq heads kv_heads causal", default "64 1024 32 8 1"); with bench-ab/tilec-old.xz the
#             old compiler's split too                          -> $R/ncu-new-fp32.csv, ncu-new-split.csv, ncu-old-split.csv
#   ncusrc    warp-state sampling of attn_bwd_main (its third launch) for each strategy of GPU_NCUSRC_STRATEGIES
#             (default "fp32 split"), same shape as ncu
#             -> $R/ncu-stalls-<strategy>.csv (details page), ncu-sass-<strategy>.csv (samples per SASS instruction)
#   ncukernels     ncu details and per-SASS samples of one launch each of attn_fwd, the fp32 attn_bwd_main
#             (GPU_NCUK_SHAPE, default "128 4096 16 16 0"), gemm_nn 4096^3 and torch.matmul's kernel 4096^3
#             -> $R/ncu-kernel-<fwd|bwd|gemm|cublas>.csv, ncu-kernel-sass-<...>.csv.xz (~60-120 s);
#             scripts/ncu-stall-summary.py sums the samples
#   abgemm    GEMM A/B: gemm.tile's benchmark through each tilec of GPU_ABGEMM_TILECS ("bundle", or an xz of another
#             tilec under bench-ab/; default "bundle bench-ab/tilec-alt.xz" twice), at each configuration of
#             GPU_ABGEMM_CONFIGS (gemm.tile constants, comma-separated: "stages=3 stages=4,block_n=256"; default
#             stages=N for each N of GPU_ABGEMM_STAGES, "3 4")  -> $R/abgemm/, $R/abgemm.log
#   altcases  another tilec (GPU_ALT_TILEC, default bench-ab/tilec-alt.xz): every GPU-vs-CPU case against the
#             bundle's references, compute-sanitizer memcheck/racecheck of its gemm_nn
#   runtimetests   the runtime's GPU tests alone (tilec_gpu_tests, tilec_runtime_tests: seconds, not the ~60 s of `tests`)
#   gpurunfallback gpu-run.sh's own `fallback` step (compiler GPU tests + GPU-vs-CPU cases with TILEC_CUDA_ARCH=sm_90)
#   anything else: that step of scripts/gpu-run.sh (tests cases sanitize sass hosts sdpa python kernelfuzz benchmarks
#             asan), its summary lines in the step log
set -u
OUT=${OUT:?OUT names the folder for steps.log and run.tgz}
mkdir -p "$OUT"
start=$(date +%s); deadline=$((start + ${GPU_BUDGET:-580}))
left() { echo $((deadline - $(date +%s))); }
log() { echo "[$(($(date +%s) - start))s] $*" | tee -a "$OUT/steps.log"; }
# Unpacks a tilec packed with xz (bench-ab/<name>.xz) to /tmp/<name>, runnable; prints that path.
unpack_tilec() { local dest="/tmp/$(basename "$1" .xz)"; xz -dc "$1" > "$dest" && chmod +x "$dest" && echo "$dest"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee -a "$OUT/steps.log"
export TILEC_C_LIBRARY=bundle/bin/libtilec_c.so TILEC_KERNELS_DIR=bundle/kernels PYTHONPATH=python
# Every output goes to $R, packed into $OUT/run.tgz after each step: the device returns at most 8 files. A machine
# can come back with an earlier call's /tmp/run, so it starts empty.
R=/tmp/run
rm -rf "$R" && mkdir -p "$R"
scripts/bundle-unpack.sh bundle
for s in ${GPU_STEPS:?GPU_STEPS names the steps to run, e.g. "bench:180 tests:75"}; do
  name=${s%%:*} need=${s#*:}
  if (( $(left) < need )); then log "skip $name (left $(left)s, needs ~${need}s)"; continue; fi
  t=$(( $(left) - 5 ))
  case $name in
  bench)
    TILEC_EXECUTABLE=bundle/bin/tilec timeout $t python3 tools/bench-attention/bench_attention.py --out "$R/bench.csv" \
      --reps 3 --flex-seqs 4096 > "$R/bench.log" 2>&1
    log "bench rc=$?" ;;
  ab)
    old=$(unpack_tilec bench-ab/tilec-old.xz)
    mkdir -p /tmp/run/ab
    for v in ${GPU_AB_ORDER:-new old new old}; do
      exe=bundle/bin/tilec; [[ $v == old ]] && exe=$old
      TILEC_EXECUTABLE=$exe timeout $(( $(left) - 5 )) python3 tools/bench-attention/bench_attention.py \
        --out "/tmp/run/ab/$v-$(date +%s).csv" --reps 1 --seqs ${GPU_AB_SEQS:-1024} --peers fa2 --no-gemm >> /tmp/run/ab/ab.log 2>&1
      log "ab $v rc=$?"
    done ;;
  splitsan)
    for tool in memcheck initcheck racecheck; do
      LD_LIBRARY_PATH="$PWD/bundle/bin" timeout $(( $(left) - 5 )) compute-sanitizer --tool $tool --error-exitcode 3 \
        bundle/bin/tilec run bundle/kernels/flash_attention/bwd.tile --kernel attn_bwd --target cuda --atomics=split \
        -D dim=128 -D groups=2 -D causal=true --dim batch=1 --dim seq=300 --dim kv_heads=2 > /tmp/run/san-$tool-split.log 2>&1
      log "sanitizer $tool split rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/run/san-$tool-split.log | tail -n 1)"
    done ;;
  compile)
    LD_LIBRARY_PATH="$PWD/bundle/bin" CUDA_CACHE_DISABLE=1 timeout $t bundle/bin/tilec-bench-attention bundle/kernels \
      --compile-times > "$R/compile-times.txt" 2>&1
    log "compile-times rc=$? $(tr '\n' '|' < "$R/compile-times.txt" | tail -c 600)" ;;
  ncu)
    runs="new:fp32 new:split"; [[ -f bench-ab/tilec-old.xz ]] && runs+=" old:split"
    for r in $runs; do
      v=${r%%:*} a=${r#*:} exe=bundle/bin/tilec
      [[ $v == old ]] && exe=$(unpack_tilec bench-ab/tilec-old.xz)
      TILEC_EXECUTABLE=$exe timeout $(( $(left) - 5 )) ncu --clock-control none --csv -k regex:attn_bwd \
        --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread \
        python3 scripts/ncu-attention-once.py $a ${GPU_NCU_SHAPE:-64 1024 32 8 1} > "$R/ncu-$v-$a.csv" 2>&1
      log "ncu $v $a rc=$?"
    done ;;
  ncusrc)
    ncu --help 2>&1 | grep -A4 -E 'print-source|--page' > /tmp/run/ncu-help.txt
    for a in ${GPU_NCUSRC_STRATEGIES:-fp32 split}; do
      TILEC_EXECUTABLE=bundle/bin/tilec timeout $(( $(left) - 5 )) ncu --clock-control none --section WarpStateStats \
        --section SourceCounters -k regex:attn_bwd_main -s 2 -c 1 -f -o /tmp/run/src-$a \
        python3 scripts/ncu-attention-once.py $a ${GPU_NCU_SHAPE:-64 1024 32 8 1} > /tmp/run/src-$a.log 2>&1
      log "ncusrc $a rc=$?"
      ncu --import /tmp/run/src-$a.ncu-rep --page details --csv > "$R/ncu-stalls-$a.csv" 2>&1
      ncu --import /tmp/run/src-$a.ncu-rep --page source --csv --print-source sass > "$R/ncu-sass-$a.csv" 2>&1
      log "ncusrc $a source page rc=$? $(wc -c < "$R/ncu-sass-$a.csv") bytes"
    done ;;
  abgemm)
    # GEMM A/B: gemm.tile's benchmark shapes through each tilec of GPU_ABGEMM_TILECS in turn ("bundle", or an xz of
    # another tilec under bench-ab/), at each configuration of GPU_ABGEMM_CONFIGS (gemm.tile constants, comma-separated:
    # "stages=3 stages=4,block_n=256"; default: stages=N for each N of GPU_ABGEMM_STAGES), one repetition each
    # -> $R/abgemm/<tilec>-<configuration>-*.csv, and the benchmark's output in $R/abgemm.log, each run headed there.
    mkdir -p "$R/abgemm"
    configs=${GPU_ABGEMM_CONFIGS:-$(for st in ${GPU_ABGEMM_STAGES:-3 4}; do printf 'stages=%s ' "$st"; done)}
    for v in ${GPU_ABGEMM_TILECS:-bundle bench-ab/tilec-alt.xz bundle bench-ab/tilec-alt.xz}; do
      exe=bundle/bin/tilec tag=bundle
      if [[ $v != bundle ]]; then tag=$(basename "$v" .xz); exe=$(unpack_tilec "$v"); fi
      for cfg in $configs; do
        defines=(); for d in ${cfg//,/ }; do defines+=(--gemm-D "$d"); done
        echo "# abgemm $tag $cfg" >> "$R/abgemm.log"
        TILEC_EXECUTABLE=$exe timeout $(( $(left) - 5 )) python3 tools/bench-attention/bench_attention.py \
          --out "$R/abgemm/$tag-${cfg//[=,]/_}-$(date +%s).csv" --reps 1 --no-attention "${defines[@]}" \
          >> "$R/abgemm.log" 2>&1
        log "abgemm $tag $cfg rc=$?"
      done
    done ;;
  altcases)
    # Another compiler's kernels (GPU_ALT_TILEC: an xz of a tilec under bench-ab/, e.g. a branch's) against this bundle's
    # CPU references, every GPU-vs-CPU case, then compute-sanitizer memcheck and racecheck of its gemm main loop.
    alt=$(unpack_tilec "${GPU_ALT_TILEC:-bench-ab/tilec-alt.xz}")
    TILEC_KERNELS_DIR=bundle/kernels timeout $t scripts/gpu-cpu-cases.sh check "$alt" bundle/refs \
      /tmp/run/cases-alt > /tmp/run/cases-alt.log 2>&1
    log "altcases rc=$? $(tail -n 1 /tmp/run/cases-alt.log)"
    for tool in memcheck racecheck; do
      LD_LIBRARY_PATH="$PWD/bundle/bin" timeout $(( $(left) - 5 )) compute-sanitizer --tool $tool --error-exitcode 3 \
        "$alt" run bundle/kernels/examples/gemm.tile --kernel gemm_nn --target cuda --dim m=200 --dim n=260 \
        --dim k=1000 > /tmp/run/san-$tool-alt.log 2>&1
      log "altcases sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/run/san-$tool-alt.log | tail -n 1)"
    done ;;
  ncukernels)
    # Where the kernels' time goes: one launch each (the third: warm) of the forward, the fp32 backward's main kernel
    # (GPU_NCUK_SHAPE: "dim seq heads kv_heads causal", default d128 seq 4096 non-causal MHA) and
    # gemm_nn at 4096^3, with torch.matmul's kernel at 4096^3 beside it; ncu's details page per kernel (speed of
    # light, occupancy, launch, warp states, memory and compute workloads, scheduler) and its per-SASS samples.
    for target in fwd bwd gemm cublas; do
      case $target in
      fwd) kernel=regex:attn_fwd skip=2 script="ncu-attention-once.py fp32 ${GPU_NCUK_SHAPE:-128 4096 16 16 0}" ;;
      bwd) kernel=regex:attn_bwd_main skip=2 script="ncu-attention-once.py fp32 ${GPU_NCUK_SHAPE:-128 4096 16 16 0}" ;;
      gemm) kernel=regex:gemm_nn skip=2 script="ncu-gemm-once.py 4096" ;;
      cublas) kernel='regex:nvjet|xmma|cutlass|cublas' skip=0 script="ncu-gemm-once.py 4096" ;; # torch.matmul's one launch
      esac
      TILEC_EXECUTABLE=bundle/bin/tilec timeout $(( $(left) - 5 )) ncu --clock-control none --section SpeedOfLight \
        --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
        --section ComputeWorkloadAnalysis --section SchedulerStats --section SourceCounters -k "$kernel" -s $skip -c 1 \
        -f -o /tmp/run/kernel-$target python3 scripts/$script > /tmp/run/kernel-$target.log 2>&1
      log "ncukernels $target rc=$? $(tail -n 1 /tmp/run/kernel-$target.log)"
      ncu --import /tmp/run/kernel-$target.ncu-rep --page details --csv > "$R/ncu-kernel-$target.csv" 2>&1
      ncu --import /tmp/run/kernel-$target.ncu-rep --page source --csv --print-source sass > /tmp/sass-$target.csv 2>&1 \
        && xz -c /tmp/sass-$target.csv > "$R/ncu-kernel-sass-$target.csv.xz"
      log "ncukernels $target pages rc=$? $(wc -c < "$R/ncu-kernel-$target.csv") bytes"
    done ;;
  demo)
    TILEC_BUNDLE=bundle timeout $t scripts/demo.sh > "$R/demo.log" 2>&1; log "demo rc=$?" ;;
  fallback)
    LD_LIBRARY_PATH="$PWD/bundle/bin" TILEC_CUDA_ARCH=sm_90 CUDA_CACHE_DISABLE=1 TILEC_CACHE=0 \
      timeout $t bundle/bin/tilec_compiler_gpu_tests "[gpu]" > /tmp/run/fallback-sm90.log 2>&1
    log "fallback sm_90 rc=$? $(tail -n 3 /tmp/run/fallback-sm90.log | tr '\n' '|')" ;;
  fallbackcases)
    TILEC_CUDA_ARCH=sm_90 TILEC_KERNELS_DIR=bundle/kernels timeout $t scripts/gpu-cpu-cases.sh check bundle/bin/tilec \
      bundle/refs /tmp/run/cases-sm90 > /tmp/run/cases-sm90.log 2>&1
    log "fallbackcases sm_90 rc=$? $(tail -n 1 /tmp/run/cases-sm90.log)" ;;
  fallbackfuzz)
    TILEC_CUDA_ARCH=sm_90 timeout $t python3 tools/kernel-fuzz/kernel_fuzz.py --tilec bundle/bin/tilec \
      --against bundle/kernel-fuzz > /tmp/run/kernel-fuzz-sm90.log 2>&1
    log "fallbackfuzz sm_90 rc=$? $(tail -n 1 /tmp/run/kernel-fuzz-sm90.log)" ;;
  runtimetests)
    for b in tilec_gpu_tests tilec_runtime_tests; do
      LD_LIBRARY_PATH="$PWD/bundle/bin" CUDA_CACHE_DISABLE=1 timeout $(( $(left) - 5 )) bundle/bin/$b --durations yes \
        > /tmp/run/$b.log 2>&1
      log "$b rc=$? $(grep -E '^(All tests passed|test cases:)' /tmp/run/$b.log | tail -n 1)"
    done ;;
  gpurunfallback)
    mkdir -p /tmp/run/gpurunfallback
    TILEC_GPU_STEPS=fallback timeout $t scripts/gpu-run.sh /tmp/run/gpurunfallback bundle > /tmp/run/gpurunfallback.out 2>&1
    log "gpu-run.sh fallback rc=$? $(grep -v '^gpu-run:' /tmp/run/gpurunfallback/summary.txt | tr '\n' '|')" ;;
  *)
    mkdir -p /tmp/run/$name
    TILEC_GPU_STEPS="$name" timeout $t scripts/gpu-run.sh /tmp/run/$name bundle > /tmp/run/$name.out 2>&1
    log "$name rc=$? $(grep -v '^gpu-run:' /tmp/run/$name/summary.txt | tr '\n' '|')" ;;
  esac
  # After every step, so a call cut off at the device's limit still brings back the logs of the steps it finished.
  tar czf "$OUT/.run.tgz" --exclude='*.ncu-rep' -C /tmp run && mv "$OUT/.run.tgz" "$OUT/run.tgz"
done
log "done"
