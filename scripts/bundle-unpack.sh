#!/usr/bin/env bash
# Unpacks what scripts/gpu-bundle.sh packed to keep the bundle small for the trip to the GPU machine (the device
# copies at most 64 MiB): BUNDLE/refs.tar.xz, the CPU backend's results for the GPU-vs-CPU cases (about 23 MB of
# .npy files, 5 MB packed), into BUNDLE/refs, and BUNDLE/kernel-fuzz.tar.xz, the fuzzed kernels and their CPU
# outputs, into BUNDLE/kernel-fuzz. Does nothing for a directory that exists or was not packed.
#
#   scripts/bundle-unpack.sh [BUNDLE_DIR]      default: bundle
set -euo pipefail
bundle_dir="${1:-bundle}"
if [[ -f "$bundle_dir/refs.tar.xz" && ! -d "$bundle_dir/refs" ]]; then
  tar -C "$bundle_dir" -xJf "$bundle_dir/refs.tar.xz"
fi
if [[ -f "$bundle_dir/kernel-fuzz.tar.xz" && ! -d "$bundle_dir/kernel-fuzz" ]]; then
  tar -C "$bundle_dir" -xJf "$bundle_dir/kernel-fuzz.tar.xz"
fi
