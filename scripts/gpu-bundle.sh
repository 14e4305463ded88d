#!/usr/bin/env bash
# Builds the GPU test binaries and benchmarks (no MLIR/LLVM, stripped, libstdc++ linked statically) and collects
# them into a bundle directory that travels to the GPU machine, where scripts/gpu-run.sh runs them.
#
#   scripts/gpu-bundle.sh [BUILD_DIR] [BUNDLE_DIR]      defaults: build-gpu bundle
#
# To add a binary: build its target from a directory that is processed with
# TILEC_BUILD_COMPILER=OFF, then list it below — GPU_TESTS are Catch2 test binaries, BENCHMARKS are run with no
# arguments, HELPERS are copied but not run.
set -euo pipefail

GPU_TESTS=(tilec_gpu_tests tilec_runtime_tests)
BENCHMARKS=(tilec-bench-runtime)
HELPERS=(tilec_cache_race_helper)
# Built in a second tree with the compiler (LLVM/MLIR linked statically, no ExecutionEngine): `tilec` itself and
# the tests that compile .tile sources on the GPU machine.
COMPILER_GPU_TESTS=(tilec_compiler_gpu_tests)
COMPILER_TOOLS=(tilec tilec-bench-attention)
MAX_BUNDLE_MB=60

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${1:-build-gpu}"
bundle_dir="${2:-bundle}"
jobs="${TILEC_BUNDLE_JOBS:-$(nproc)}"

cmake -G Ninja -S "$repo" -B "$build_dir" \
  -DTILEC_BUILD_COMPILER=OFF \
  -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_EXE_LINKER_FLAGS=-static-libstdc++ -static-libgcc" >/dev/null
cmake --build "$build_dir" -j "$jobs" --target "${GPU_TESTS[@]}" "${BENCHMARKS[@]}" "${HELPERS[@]}" tilec_stand_in_driver
compiler_build_dir="${build_dir}-compiler"
cmake -G Ninja -S "$repo" -B "$compiler_build_dir" \
  -DTILEC_STATIC_LLVM=ON -DTILEC_CLI_WITH_CPU_RUN=OFF \
  -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_EXE_LINKER_FLAGS=-static-libstdc++ -static-libgcc" \
  "-DCMAKE_SHARED_LINKER_FLAGS=-static-libstdc++ -static-libgcc" >/dev/null
CCACHE_BASEDIR="$repo" cmake --build "$compiler_build_dir" -j "$jobs" --target "${COMPILER_GPU_TESTS[@]}" "${COMPILER_TOOLS[@]}" \
  tilec_compiler tilec_c

# examples/host built against the installed package of that tree (tilec::runtime and tilec::compiler), as an
# outside host would build it: the .tcm and the run-time .tile paths, run on the GPU by gpu-run.sh.
host_work="$(mktemp -d)"
trap 'rm -rf "$host_work"' EXIT
cmake --install "$compiler_build_dir" --prefix "$host_work/prefix" --component Unspecified >/dev/null
# The C API library and the flash-attention kernels are their own component (what `pip install .` takes).
cmake --install "$compiler_build_dir" --prefix "$host_work/prefix" --component tilec_c >/dev/null
cmake -G Ninja -S "$repo/examples/host" -B "$host_work/build" -DCMAKE_PREFIX_PATH="$host_work/prefix" \
  -DCMAKE_BUILD_TYPE=Release "-DCMAKE_EXE_LINKER_FLAGS=-static-libstdc++ -static-libgcc" >/dev/null
cmake --build "$host_work/build" >/dev/null

rm -rf "$bundle_dir"
mkdir -p "$bundle_dir/bin" "$bundle_dir/include/tilec"
# The device headers are embedded in every binary; the copy is for reading and for nvcc experiments on the machine.
cp -r "$repo/runtime/include/tilec/device" "$bundle_dir/include/tilec/"
# Data the GPU tests read (tests/gpu/PlanGpuTest.cpp looks in <bin>/../data): the plan files tilec emits.
mkdir -p "$bundle_dir/data"
cp "$repo"/tests/gpu/data/*.plan "$bundle_dir/data/"
# The ahead-of-time path: flash attention compiled here by `tilec compile` (NVRTC, sm_90a) into .tcm module files
# that tests/gpu/ModuleFileGpuTest.cpp loads with the runtime alone.
for k in attn_fwd:fwd attn_bwd_preprocess:bwd_preprocess attn_bwd:bwd; do
  "$compiler_build_dir/bin/tilec" compile "$repo/kernels/flash_attention/${k#*:}.tile" --arch=sm_90a \
    -o "$bundle_dir/data/${k%%:*}.tcm"
done
# The CPU backend's results for scripts/gpu-cpu-cases.sh (the GPU machine has no CPU backend): made here by a tilec
# built with it (scripts/build.sh's), from the same seeds the GPU half uses.
reference_tilec="${TILEC_REFERENCE_TILEC:-$repo/build/bin/tilec}"
if [[ ! -x "$reference_tilec" ]]; then
  echo "gpu-bundle: $reference_tilec not found: run scripts/build.sh first (or set TILEC_REFERENCE_TILEC)" >&2
  exit 1
fi
"$repo/scripts/gpu-cpu-cases.sh" refs "$reference_tilec" "$bundle_dir/refs"
# Packed (23 MB of .npy, mostly bf16 values stored as f32, take 5 MB), so that the bundle leaves room in the device's
# 64 MiB copy for a second carry (bundle-asan/, an older tilec for A/B runs); gpu-run.sh unpacks it
# (scripts/bundle-unpack.sh).
tar -C "$bundle_dir" -cJf "$bundle_dir/refs.tar.xz" refs && rm -rf "$bundle_dir/refs"
# Random kernels (tools/kernel-fuzz) and the regression kernels (tools/kernel-fuzz/regressions, under every atomics
# strategy), with the CPU backend's outputs for them, for gpu-run.sh's kernelfuzz step: TILEC_KERNEL_FUZZ="COUNT SEED"
# (default "20 12"). Packed like refs/ (bundle-unpack.sh): 1000 kernels are 69 MB of .npy, 7.2 MB packed; making them
# took 381 s on 2 busy cores (--jobs: every core here), with each kernel's shuffled re-run and model check.
read -r kf_count kf_seed <<<"${TILEC_KERNEL_FUZZ:-20 12}"
python3 "$repo/tools/kernel-fuzz/kernel_fuzz.py" --tilec "$reference_tilec" --count "$kf_count" --seed "$kf_seed" \
  --cpu --refs "$bundle_dir/kernel-fuzz" --regressions "$repo/tools/kernel-fuzz/regressions" --jobs "$jobs" \
  --no-coverage --keep "$(mktemp -d)" >"$bundle_dir/kernel-fuzz.log" 2>&1 ||
  { echo "gpu-bundle: the kernel fuzzer's CPU half failed:" >&2; cat "$bundle_dir/kernel-fuzz.log" >&2; exit 1; }
tar -C "$bundle_dir" -cJf "$bundle_dir/kernel-fuzz.tar.xz" kernel-fuzz && rm -rf "$bundle_dir/kernel-fuzz"
# The .tile kernels the compiler tests compile (they look in <bin>/../kernels).
cp -r "$repo/kernels" "$bundle_dir/kernels"
find "$bundle_dir/kernels" -type f ! -name '*.tile' -delete

find_binary() {
  local found
  found="$(find "$build_dir" -type f -name "$1" -perm -u+x | head -n 1)"
  [[ -n "$found" ]] || { echo "gpu-bundle: built target $1 not found under $build_dir" >&2; exit 1; }
  echo "$found"
}

for name in "${COMPILER_GPU_TESTS[@]}" "${COMPILER_TOOLS[@]}"; do
  found="$(find "$compiler_build_dir/" -type f -name "$name" -perm -u+x | head -n 1)"
  [[ -n "$found" ]] || { echo "gpu-bundle: built target $name not found under $compiler_build_dir" >&2; exit 1; }
  cp "$found" "$bundle_dir/bin/$name"
  strip "$bundle_dir/bin/$name"
  if ldd "$bundle_dir/bin/$name" | grep -E -i 'libLLVM|libMLIR|libfmt|libcuda|libnvrtc|libz3|libzstd|libxml|not found'; then
    echo "gpu-bundle: $name has a forbidden or missing shared-library dependency (above)" >&2
    exit 1
  fi
done

for name in tilec-run-module tilec-compile-and-run; do
  cp "$host_work/build/$name" "$bundle_dir/bin/$name"
  strip "$bundle_dir/bin/$name"
done
# The binaries that use tilec::compiler find it through LD_LIBRARY_PATH=bundle/bin (gpu-run.sh).
cp -P "$host_work"/prefix/lib*/libtilec_compiler.so* "$bundle_dir/bin/"
strip "$bundle_dir/bin/"libtilec_compiler.so.*.*.*
# The runtime's C API, which the Python package loads with ctypes (python/tilec/_capi.py).
cp "$host_work"/prefix/lib*/libtilec_c.so "$bundle_dir/bin/"
strip "$bundle_dir/bin/libtilec_c.so"
if ldd "$bundle_dir/bin/"libtilec_compiler.so.*.*.* | grep -E -i 'libLLVM|libMLIR|libfmt|libcuda|libnvrtc|libz3|libzstd|libxml|not found'; then
  echo "gpu-bundle: libtilec_compiler.so has a forbidden or missing shared-library dependency (above)" >&2
  exit 1
fi

# The stand-in driver the runtime tests load from beside their binary (race and DeviceBuffer tests, no GPU needed).
cp "$(find "$build_dir" -name libtilec_stand_in_driver.so | head -n 1)" "$bundle_dir/bin/"
for name in "${GPU_TESTS[@]}" "${BENCHMARKS[@]}" "${HELPERS[@]}"; do
  cp "$(find_binary "$name")" "$bundle_dir/bin/$name"
  strip "$bundle_dir/bin/$name"
  # The bundle must run on a machine with only the CUDA driver and toolkit: no LLVM/MLIR, fmt or CUDA link deps.
  if ldd "$bundle_dir/bin/$name" | grep -E -i 'libLLVM|libMLIR|libfmt|libcuda|libnvrtc|not found'; then
    echo "gpu-bundle: $name has a forbidden or missing shared-library dependency (above)" >&2
    exit 1
  fi
done

printf '%s\n' "${GPU_TESTS[@]}" "${COMPILER_GPU_TESTS[@]}" >"$bundle_dir/tests.list"
printf '%s\n' "${BENCHMARKS[@]}" >"$bundle_dir/benchmarks.list"
{
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git -C "$repo" rev-parse HEAD 2>/dev/null || echo none)$(git -C "$repo" diff --quiet 2>/dev/null || echo ' (dirty)')"
  echo "compiler: $(c++ --version | head -n 1)"
} >"$bundle_dir/MANIFEST"

size_mb=$(du -sm "$bundle_dir" | cut -f1)
if ((size_mb >= MAX_BUNDLE_MB)); then
  echo "gpu-bundle: $bundle_dir is ${size_mb} MB, over the ${MAX_BUNDLE_MB} MB limit" >&2
  exit 1
fi
echo "gpu-bundle: $bundle_dir ready (${size_mb} MB): ${GPU_TESTS[*]} ${BENCHMARKS[*]}"
