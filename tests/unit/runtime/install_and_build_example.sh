#!/usr/bin/env bash
# Installs the build tree to a fresh prefix, then configures, builds and runs examples/host against the installed
# tilec package only (find_package(tilec) + tilec::runtime), as an outside host project would.
#
#   install_and_build_example.sh BUILD_DIR SOURCE_DIR CMAKE_COMMAND
set -euo pipefail
build_dir="$1"
source_dir="$2"
cmake="${3:-cmake}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

"$cmake" --install "$build_dir" --prefix "$prefix" >"$work/install.log"

for expected in include/tilec/runtime/Runtime.h include/tilec/runtime/Module.h include/tilec/device/mma_sm80.cuh \
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
  -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" || { cat "$work/configure.log" >&2; exit 1; }
"$cmake" --build "$work/build" >"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }

# Nothing from the source or build tree may have leaked into the example's compile lines.
if grep -R -- "$source_dir/runtime" "$work/build/CMakeFiles" "$work/build/build.ninja" 2>/dev/null | head -n 1 | grep -q .; then
  echo "examples/host was built against the source tree, not the installed package" >&2
  exit 1
fi

TILEC_CACHE=0 "$work/build/tilec-host-example"

# The ahead-of-time path: a module file from the build tree's tilec, loaded by the installed runtime alone.
if [[ -x "$build_dir/bin/tilec" ]]; then
  "$build_dir/bin/tilec" compile "$source_dir/kernels/flash_attention/fwd.tile" --arch=sm_90a -o "$work/fwd.tcm"
  "$work/build/tilec-run-module" "$work/fwd.tcm" --run | tee "$work/run-module.log"
  grep -q "^entry attn_fwd$" "$work/run-module.log"
fi
