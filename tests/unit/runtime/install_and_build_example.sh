#!/usr/bin/env bash
# Installs the build tree to a fresh prefix, then configures, builds and runs examples/host against the installed
# tilec package only (find_package(tilec) + tilec::runtime), as an outside host project would.
#
#   install_and_build_example.sh BUILD_DIR SOURCE_DIR CMAKE_COMMAND [CXX_COMPILER [FLAGS]]
#
# CXX_COMPILER and FLAGS (compile and link) build the host as the package was built: the sanitizer configuration
# passes clang++ and -fsanitize=... so that the instrumented package links.
set -euo pipefail
build_dir="$1"
source_dir="$2"
cmake="${3:-cmake}"
host_compiler=()
if [[ -n "${4:-}" ]]; then host_compiler=(-DCMAKE_CXX_COMPILER="$4"); fi
host_flags=()
if [[ -n "${5:-}" ]]; then host_flags=(-DCMAKE_CXX_FLAGS="$5" -DCMAKE_EXE_LINKER_FLAGS="$5"); fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

"$cmake" --install "$build_dir" --prefix "$prefix" >"$work/install.log"

for expected in include/tilec/runtime/Runtime.h include/tilec/runtime/Module.h include/tilec/device/mma_sm80.cuh \
  include/tilec/third_party/dlpack/dlpack.h include/tilec_c.h \
  lib/libtilec_runtime.a lib/cmake/tilec/tilecConfig.cmake lib/cmake/tilec/tilecTargets.cmake \
  lib/cmake/tilec/tilecConfigVersion.cmake; do
  if [[ ! -e "$prefix/$expected" ]]; then
    # GNUInstallDirs may choose lib64 or a multiarch libdir.
    alternative="$(find "$prefix" -path "*/${expected#lib/}" -print -quit)"
    [[ -n "$alternative" ]] || { echo "install is missing $expected" >&2; cat "$work/install.log" >&2; exit 1; }
  fi
done

generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
"$cmake" "${generator[@]}" -S "$source_dir/examples/host" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release "${host_compiler[@]}" "${host_flags[@]}" >"$work/configure.log" || { cat "$work/configure.log" >&2; exit 1; }
"$cmake" --build "$work/build" >"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }

# Nothing from the source or build tree may have leaked into the example's compile lines.
if grep -R -- "$source_dir/runtime" "$work/build/CMakeFiles" "$work/build/build.ninja" 2>/dev/null | head -n 1 | grep -q .; then
  echo "examples/host was built against the source tree, not the installed package" >&2
  exit 1
fi

TILEC_CACHE=0 "$work/build/tilec-host-example"

# The ahead-of-time path: a module file from the build tree's tilec, loaded by the installed runtime alone (and
# run where there is a GPU: the backward pass, GQA 2, on random inputs).
if [[ -x "$build_dir/bin/tilec" ]]; then
  "$build_dir/bin/tilec" compile "$source_dir/kernels/flash_attention/bwd.tile" -D groups=2 --arch=sm_90a \
    -o "$work/bwd.tcm"
  "$work/build/tilec-run-module" "$work/bwd.tcm" attn_bwd --dim batch=1 --dim seq=300 --dim kv_heads=2 \
    --zero dQ --zero dK --zero dV | tee "$work/run-module.log"
  grep -q "^entry attn_bwd$" "$work/run-module.log"
fi

# The just-in-time path: tilec::compiler from the package compiles .tile source at run time.
if [[ -f "$work/build/build.ninja" || -f "$work/build/Makefile" ]] && [[ -e "$prefix/include/tilec/Jit/GpuProgram.h" ]]; then
  [[ -x "$work/build/tilec-compile-and-run" ]] || { echo "tilec::compiler is installed but the example was not built" >&2; exit 1; }
  # The library exports tilec's API only: MLIR and LLVM stay inside.
  lib="$(find "$prefix" -name 'libtilec_compiler.so' -print -quit)"
  if nm -D --defined-only "$lib" | c++filt | grep -E ' (mlir|llvm)::' | head -n 3 | grep .; then
    echo "libtilec_compiler.so exports MLIR/LLVM symbols (above)" >&2
    exit 1
  fi
  TILEC_CACHE=0 "$work/build/tilec-compile-and-run" "$source_dir/kernels/flash_attention/bwd.tile" -D groups=2 \
    attn_bwd --dim batch=1 --dim seq=300 --dim kv_heads=2 --zero dQ --zero dK --zero dV | tee "$work/jit.log"
  grep -q "attn_bwd_main: [0-9]* registers" "$work/jit.log"
  # A compile error surfaces as the compiler's file:line:col diagnostic.
  printf 'kernel k(X: f32[n])\n  grid(1) threads(32) as (b):\n    copy(Y, X)\n' >"$work/bad.tile"
  if "$work/build/tilec-compile-and-run" "$work/bad.tile" k 2>"$work/bad.log"; then
    echo "a kernel with an error compiled" >&2
    exit 1
  fi
  grep -q "bad.tile:3:" "$work/bad.log" || { cat "$work/bad.log" >&2; exit 1; }
fi
