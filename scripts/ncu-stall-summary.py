#!/usr/bin/env python3
"""Sums ncu's per-SASS-instruction warp-stall samples over a kernel (scripts/gpu-steps.sh's `ncusrc` step writes
them as ncu-sass-<strategy>.csv, its `ncukernels` step as ncu-kernel-sass-<kernel>.csv.xz), and for the split
strategy over its three parts: before the last-block arrival, the arrival itself (the 45 instructions before the
block barrier's B2R.RESULT and the two after), and the last block's sum after it.

  python3 scripts/ncu-stall-summary.py ncu-sass-fp32.csv ncu-sass-split.csv > summary.txt"""
import collections
import csv
import lzma
import sys


def load(path):
    rows = list(csv.reader(lzma.open(path, "rt") if path.endswith(".xz") else open(path)))
    start = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    header = rows[start]
    return header, [dict(zip(header, r)) for r in rows[start + 1:] if len(r) == len(header)]


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


SAMPLES = "Warp Stall Sampling (All Samples)"
for path in sys.argv[1:]:
    header, code = load(path)
    strategy = path.rsplit("-", 1)[-1].removesuffix(".xz").removesuffix(".csv")
    kernel = "kernel" if "ncu-kernel-sass-" in path else "attn_bwd_main"
    reasons = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    parts = [("whole kernel", code)]
    barrier = [i for i, x in enumerate(code) if "B2R.RESULT" in x["Source"]]
    if barrier:
        k = barrier[0]
        parts += [("before the arrival", code[:k - 45]),
                  ("arrival (MEMBAR.ALL.GPU, ATOMG, block barrier)", code[k - 45:k + 2]),
                  ("after the arrival (last block sums the slices)", code[k + 2:])]
    for name, part in parts:
        totals = collections.Counter()
        for x in part:
            for r in reasons:
                totals[r] += number(x[r])
        samples = sum(number(x[SAMPLES]) for x in part)
        print(f"{kernel} {strategy:5s} {name}: {int(samples)} warp samples; " +
              ", ".join(f"{r[6:]} {int(v)}" for r, v in totals.most_common(6)))
    for x in sorted(code, key=lambda x: -number(x[SAMPLES]))[:8]:
        top = max(reasons, key=lambda r: number(x[r]))
        print(f"   {int(number(x[SAMPLES])):6d}  {x['Source'].strip()[:64]:64s} {top[6:]}")
