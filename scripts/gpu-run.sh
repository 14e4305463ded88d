#!/usr/bin/env bash
# Runs every GPU test binary and benchmark of a bundle made by scripts/gpu-bundle.sh, on the GPU machine, from the
# repository root. One log per binary in OUTDIR, plus summary.txt; exits non-zero when any test binary failed.
#
#   scripts/gpu-run.sh OUTDIR [BUNDLE_DIR]      default bundle: bundle
#
# TILEC_GPU_STEPS picks steps (default: all): tests benchmarks sanitize sass hosts cases sdpa python kernelfuzz
# (random kernels, GPU against the CPU backend: tools/kernel-fuzz) fallback (on a Hopper GPU, the compiler GPU tests
# and the GPU-vs-CPU cases again for sm_90: the mma.sync path that GPUs without wgmma take)
# asan (the host code of the runtime GPU tests under AddressSanitizer, from bundle-asan/: scripts/gpu-bundle-asan.sh).
# The tests step leaves out the compiler tests tagged [nvrtc] (NVRTC builds of every kernel and their ptxas figures:
# no GPU needed, and CI's ctest runs them with the same NVRTC 13.0; about half of the step's time on an H100) but
# for the [timing] one (cold NVRTC compile and warm disk-cache load, measured on this machine); TILEC_GPU_NVRTC=1
# runs them all here too.
set -uo pipefail
steps=" ${TILEC_GPU_STEPS:-tests benchmarks sanitize sass hosts cases sdpa python kernelfuzz fallback} "
step() { [[ "$steps" == *" $1 "* ]]; }

if (($# < 1)); then
  echo "usage: $0 OUTDIR [BUNDLE_DIR]" >&2
  exit 2
fi
out_dir="$1"
bundle_dir="${2:-bundle}"
if [[ ! -f "$bundle_dir/tests.list" ]]; then
  echo "gpu-run: $bundle_dir/tests.list not found; run scripts/gpu-bundle.sh first (and carry the bundle)" >&2
  exit 2
fi
mkdir -p "$out_dir"
"$(dirname "${BASH_SOURCE[0]}")/bundle-unpack.sh" "$bundle_dir" || { echo "gpu-run: could not unpack $bundle_dir/refs.tar.xz" >&2; exit 2; }
# libtilec_compiler.so (tilec::compiler) travels next to the binaries that use it.
export LD_LIBRARY_PATH="$(cd "$bundle_dir/bin" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
summary="$out_dir/summary.txt"
: >"$summary"

{
  cat "$bundle_dir/MANIFEST" 2>/dev/null
  echo "host: $(hostname)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "nvidia-smi: unavailable"
  echo "CUDA_HOME=${CUDA_HOME:-} (NVRTC is loaded from it, else /usr/local/cuda)"
} >"$out_dir/environment.txt"

# A private disk cache, so that stale entries from earlier runs cannot hide anything.
cache_dir="$(mktemp -d)"
trap 'rm -rf "$cache_dir"' EXIT
export TILEC_CACHE_DIR="$cache_dir"
# NVRTC (>= 12.9) would otherwise serve repeated compiles from the CUDA compute cache: no ptxas -v output for the
# tests to check, and "cold" compile times that are not cold.
export CUDA_CACHE_DISABLE=1

# The closing line of a Catch2 binary's log ("All tests passed (...)" or "test cases: ...").
catch2_result() { grep -E "^(All tests passed|test cases:)" "$1" | tail -n 1; }

failures=0
step tests && while read -r name; do
  [[ -n "$name" ]] || continue
  log="$out_dir/$name.log"
  start_ms=$(($(date +%s%N) / 1000000))
  filter=()
  [[ "$name" == tilec_compiler_gpu_tests && "${TILEC_GPU_NVRTC:-0}" != 1 ]] && filter=("~[nvrtc],[timing]")
  "$bundle_dir/bin/$name" "${filter[@]}" --durations yes >"$log" 2>&1
  status=$?
  elapsed_ms=$(($(date +%s%N) / 1000000 - start_ms))
  result=$(catch2_result "$log")
  skipped=$(grep -c "SKIPPED:" "$log")
  printf '%-28s exit %d  %s  (%d ms, %d skip warnings)%s\n' "$name" "$status" "$result" "$elapsed_ms" "$skipped" \
    "${filter:+ (without [nvrtc] but [timing]; TILEC_GPU_NVRTC=1 runs them)}" | tee -a "$summary"
  ((status == 0)) || failures=$((failures + 1))
done <"$bundle_dir/tests.list"

step benchmarks && while read -r name; do
  [[ -n "$name" ]] || continue
  log="$out_dir/$name.log"
  "$bundle_dir/bin/$name" >"$log" 2>&1
  status=$?
  printf '%-28s exit %d  (benchmark, see %s)\n' "$name" "$status" "$log" | tee -a "$summary"
  ((status == 0)) || failures=$((failures + 1))
done <"$bundle_dir/benchmarks.list"

# Device-code checks: compute-sanitizer memcheck and racecheck on the compiler tests tagged [sanitize] (flash
# attention at a tail shape, integer and bf16 atomics), and tensor-core instructions in the flash-attention SASS.
if step sanitize && [[ -x "$bundle_dir/bin/tilec_compiler_gpu_tests" ]] && command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    log="$out_dir/sanitizer-$tool.log"
    compute-sanitizer --tool "$tool" --error-exitcode 3 "$bundle_dir/bin/tilec_compiler_gpu_tests" "[sanitize]" \
      >"$log" 2>&1
    status=$?
    printf '%-28s exit %d  %s\n' "sanitizer $tool" "$status" "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 1)" |
      tee -a "$summary"
    ((status == 0)) || failures=$((failures + 1))
  done
  # Software-pipelined loops long enough to reuse every buffer (seq 300: five 64-row blocks), 2 and 3 stages, forward
  # and backward (the [sanitize] cases above run two iterations only).
  for tool in memcheck racecheck; do
    log="$out_dir/sanitizer-$tool-pipelined.log"
    : >"$log"
    status=0
    for stages in 2 3; do
      for kernel in fwd:attn_fwd bwd:attn_bwd; do
        compute-sanitizer --tool "$tool" --error-exitcode 3 "$bundle_dir/bin/tilec" run \
          "$bundle_dir/kernels/flash_attention/${kernel%%:*}.tile" --kernel "${kernel#*:}" --target cuda \
          -D dim=64 -D groups=2 -D causal=true -D stages="$stages" --dim batch=1 --dim seq=300 --dim kv_heads=2 \
          >>"$log" 2>&1 || status=$?
      done
    done
    printf '%-28s exit %d  %s\n' "sanitizer $tool pipelined" "$status" \
      "$(grep -c -E 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' "$log") of 4 runs clean" | tee -a "$summary"
    ((status == 0)) || failures=$((failures + 1))
  done
  # The split strategy's backward at a tail shape: partial slices stored once and not zeroed, summed by the last
  # block of each tile after its arrival (tile.arrive_last). memcheck: bad accesses; initcheck: a read of a slice
  # element no block wrote; racecheck: the block's shared memory around the arrival.
  for tool in memcheck initcheck racecheck; do
    log="$out_dir/sanitizer-$tool-split.log"
    compute-sanitizer --tool "$tool" --error-exitcode 3 "$bundle_dir/bin/tilec" run \
      "$bundle_dir/kernels/flash_attention/bwd.tile" --kernel attn_bwd --target cuda --atomics=split \
      -D dim=128 -D groups=2 -D causal=true --dim batch=1 --dim seq=300 --dim kv_heads=2 >"$log" 2>&1
    status=$?
    printf '%-28s exit %d  %s\n' "sanitizer $tool split" "$status" \
      "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 1)" | tee -a "$summary"
    ((status == 0)) || failures=$((failures + 1))
  done
fi
if step sass && [[ -x "$bundle_dir/bin/tilec" ]] && command -v cuobjdump >/dev/null; then
  # At the default head dim (128) every gemm of both kernels runs on wgmma (HGMMA) on sm_90a (at d64 the backward's
  # dQ gemm stays on mma.sync, HMMA). ctest's tools.sass-check checks more variants, the gemm and sm_90 without a GPU.
  for kernel in fwd bwd; do
    cubin="$out_dir/attn_$kernel.cubin"
    if "$bundle_dir/bin/tilec" "$bundle_dir/kernels/flash_attention/$kernel.tile" --emit=cubin -o "$cubin"; then
      sass="$(cuobjdump -sass "$cubin")"
      hmma=$(grep -c HMMA <<<"$sass")
      hgmma=$(grep -c HGMMA <<<"$sass")
      printf '%-28s %d HGMMA, %d HMMA, %d LDSM in the SASS\n' "attn_$kernel" "$hgmma" "$hmma" \
        "$(grep -c LDSM <<<"$sass")" | tee -a "$summary"
      ((hgmma > 0)) || failures=$((failures + 1))
    else
      failures=$((failures + 1))
    fi
  done
fi

# A host built against the installed package (examples/host) runs the flash-attention backward from a .tcm file and
# compiled from .tile source at run time (tilec::compiler).
if step hosts && [[ -x "$bundle_dir/bin/tilec-compile-and-run" ]]; then
  log="$out_dir/examples-host.log"
  {
    "$bundle_dir/bin/tilec" compile "$bundle_dir/kernels/flash_attention/bwd.tile" -D groups=4 -o "$out_dir/bwd.tcm" &&
      "$bundle_dir/bin/tilec-run-module" "$out_dir/bwd.tcm" attn_bwd --dim batch=2 --dim seq=1000 --dim kv_heads=2 \
        --zero dQ --zero dK --zero dV &&
      "$bundle_dir/bin/tilec-compile-and-run" \
        "$bundle_dir/kernels/flash_attention/bwd.tile" -D groups=4 attn_bwd --dim batch=2 --dim seq=1000 \
        --dim kv_heads=2 --zero dQ --zero dK --zero dV
  } >"$log" 2>&1
  status=$?
  ran=$(grep -c "attn_bwd ran on the GPU" "$log")
  printf '%-28s exit %d  attn_bwd ran %d of 2 times (.tcm, .tile at run time)\n' "examples/host" "$status" "$ran" |
    tee -a "$summary"
  ((status == 0 && ran == 2)) || failures=$((failures + 1))
fi
# Every kernel in kernels/ on the GPU against the CPU backend's results on the same inputs (made when bundling).
# check_cases LABEL NAME: logs in OUTDIR/NAME and OUTDIR/NAME.log; the caller's environment picks the target.
check_cases() {
  TILEC_KERNELS_DIR="$bundle_dir/kernels" scripts/gpu-cpu-cases.sh check "$bundle_dir/bin/tilec" "$bundle_dir/refs" \
    "$out_dir/$2" >"$out_dir/$2.log" 2>&1
  local status=$?
  printf '%-28s exit %d  %s\n' "$1" "$status" "$(tail -n 1 "$out_dir/$2.log")" | tee -a "$summary"
  ((status == 0)) || failures=$((failures + 1))
}
if step cases && [[ -d "$bundle_dir/refs" ]]; then
  check_cases "gpu vs cpu backend" gpu-cpu-cases
fi
# The mma.sync path (no wgmma): what every GPU but sm_90a runs. On a Hopper GPU the default target is sm_90a, so the
# compiler GPU tests and the GPU-vs-CPU cases run again with TILEC_CUDA_ARCH=sm_90, which the tests, tilec run and
# the kernels' WGMMA constant follow. Elsewhere the steps above already ran that path.
if step fallback; then
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1)
  if [[ "$cap" == 9.0 ]]; then
    log="$out_dir/fallback-sm90-tests.log"
    TILEC_CUDA_ARCH=sm_90 "$bundle_dir/bin/tilec_compiler_gpu_tests" "[gpu]" --durations yes >"$log" 2>&1
    status=$?
    printf '%-28s exit %d  %s\n' "sm_90 compiler gpu tests" "$status" \
      "$(catch2_result "$log")" | tee -a "$summary"
    ((status == 0)) || failures=$((failures + 1))
    [[ -d "$bundle_dir/refs" ]] && TILEC_CUDA_ARCH=sm_90 check_cases "sm_90 gpu vs cpu backend" gpu-cpu-cases-sm90
  elif [[ -z "$cap" ]]; then
    printf '%-28s skipped: nvidia-smi named no GPU\n' "sm_90 fallback" | tee -a "$summary"
  else
    printf '%-28s skipped: compute capability %s is not 9.0; the steps above ran its path\n' "sm_90 fallback" \
      "$cap" | tee -a "$summary"
  fi
fi
# Random well-formed kernels (tools/kernel-fuzz) and the regression kernels: each on the GPU against the CPU
# backend's outputs on the same inputs. The bundle's tilec has no CPU backend, so scripts/gpu-bundle.sh made the
# kernels and those outputs (bundle/kernel-fuzz, TILEC_KERNEL_FUZZ="COUNT SEED" there); findings are printed in
# OUTDIR/kernel-fuzz.log. A missing bundle/kernel-fuzz, a missing reference and a machine without a GPU fail the
# step. TILEC_KERNEL_FUZZ_JOBS kernels at a time (default 4: NVRTC compiles on the host's cores).
if step kernelfuzz; then
  python3 tools/kernel-fuzz/kernel_fuzz.py --tilec "$bundle_dir/bin/tilec" --against "$bundle_dir/kernel-fuzz" \
    --jobs "${TILEC_KERNEL_FUZZ_JOBS:-4}" >"$out_dir/kernel-fuzz.log" 2>&1
  status=$?
  printf '%-28s exit %d  %s\n' "kernel fuzz (gpu vs cpu)" "$status" "$(tail -n 1 "$out_dir/kernel-fuzz.log")" |
    tee -a "$summary"
  ((status == 0)) || failures=$((failures + 1))
fi
# Flash attention against PyTorch's SDPA in float32 (needs torch on the machine).
if step sdpa && python3 -c "import torch, numpy" 2>/dev/null; then
  python3 tools/attention-vs-sdpa/attention_vs_sdpa.py "$bundle_dir/bin/tilec" "$bundle_dir/kernels" \
    >"$out_dir/attention-vs-sdpa.log" 2>&1
  status=$?
  printf '%-28s exit %d  %s\n' "attention vs sdpa" "$status" "$(tail -n 1 "$out_dir/attention-vs-sdpa.log")" | tee -a "$summary"
  ((status == 0)) || failures=$((failures + 1))
fi

# The Python package on torch CUDA tensors (python/tests/test_gpu.py): tilec.flash_attention against SDPA, argument
# errors before launch, a toy layer trained with each. pytest where the machine has it, else the file's own runner.
if step python && python3 -c "import torch" 2>/dev/null; then
  log="$out_dir/python.log"
  runner=(python3 -m pytest -q -s python/tests/test_gpu.py)
  python3 -c "import pytest" 2>/dev/null || runner=(python3 python/tests/test_gpu.py)
  TILEC_EXECUTABLE="$bundle_dir/bin/tilec" TILEC_C_LIBRARY="$bundle_dir/bin/libtilec_c.so" \
    TILEC_KERNELS_DIR="$bundle_dir/kernels" "${runner[@]}" >"$log" 2>&1
  status=$?
  printf '%-28s exit %d  %s\n' "python (torch)" "$status" "$(grep -E 'passed|failed|PASSED|FAILED' "$log" | tail -n 1)" |
    tee -a "$summary"
  ((status == 0)) || failures=$((failures + 1))
fi
# Host code under AddressSanitizer + UBSan on the GPU machine: the runtime GPU tests from bundle-asan/.
# protect_shadow_gap=0: the CUDA driver maps memory where ASan would otherwise protect its shadow gap.
asan_dir="${TILEC_ASAN_BUNDLE:-bundle-asan}"
if step asan && [[ -d "$asan_dir/bin" ]]; then
  for name in tilec_gpu_tests tilec_runtime_tests; do
    log="$out_dir/asan-$name.log"
    LD_LIBRARY_PATH="$(cd "$asan_dir/bin" && pwd)" \
      ASAN_OPTIONS="protect_shadow_gap=0:allow_user_poisoning=0:abort_on_error=1:detect_leaks=1" \
      UBSAN_OPTIONS="print_stacktrace=1:abort_on_error=1:halt_on_error=1" \
      "$asan_dir/bin/$name" >"$log" 2>&1
    status=$?
    printf '%-28s exit %d  %s\n' "asan $name" "$status" \
      "$(grep -E '^(All tests passed|test cases:)|ERROR: (Address|Leak)Sanitizer|runtime error' "$log" | head -n 1)" |
      tee -a "$summary"
    ((status == 0)) || failures=$((failures + 1))
  done
fi
echo "gpu-run: $failures failing binaries; logs in $out_dir" | tee -a "$summary"
((failures == 0))
