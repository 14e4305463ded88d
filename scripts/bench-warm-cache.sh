#!/usr/bin/env bash
# The first disk-cache hit of a fresh process (docs/runtime.md, Measurements): warms a private cache with one compile,
# then starts N fresh processes of tilec_cache_race_helper that each time their one Runtime::compile (a disk hit)
# and say whether libnvrtc got mapped, with the toolkit visible and with TILEC_NVRTC_LIBRARY pointing nowhere.
# Prints every process's line, then min / median / max per case.
#
#   scripts/bench-warm-cache.sh HELPER [N]      HELPER: build/tests/unit/runtime/tilec_cache_race_helper (default N 21)
set -euo pipefail
helper="${1:?usage: $0 HELPER [N]}"
n="${2:-21}"
cache="$(mktemp -d)"
trap 'rm -rf "$cache"' EXIT
echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(uname -n), $(nproc) cores; helper $helper"
echo "warm-up: $("$helper" "$cache" bench --report)"
summary() {
  sort -n | awk '{ v[NR] = $1 } END { printf "min %d us, median %d us, max %d us (%d runs)\n", v[1], v[int((NR + 1) / 2)], v[NR], NR }'
}
for case in toolkit no-nvrtc; do
  times=()
  for ((i = 0; i < n; ++i)); do
    if [[ "$case" == toolkit ]]; then
      line="$("$helper" "$cache" bench --report)"
    else
      line="$(TILEC_NVRTC_LIBRARY=/nonexistent/libnvrtc.so "$helper" "$cache" bench --report)"
    fi
    echo "$case: $line"
    times+=("$(sed -E 's/.*microseconds=([0-9]+).*/\1/' <<<"$line")")
  done
  echo "$case: $(printf '%s\n' "${times[@]}" | summary)"
done
