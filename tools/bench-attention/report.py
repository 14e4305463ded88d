#!/usr/bin/env python3
"""Tables and a plot from bench_attention.py's CSV.

  python3 tools/bench-attention/report.py results.csv [--doc docs/performance.md] [--plot docs/x.png] [--check]

Per (method, pass, shape): the median over the CSV's repetitions of each repetition's median time, and the spread
(max - min) / median across repetitions. Prints Markdown; with --doc, replaces the text between the markers
<!-- bench-attention:begin --> and <!-- bench-attention:end --> in that file; with --plot, writes TFLOP/s against
seq per head dim and pass (tilec and the peers; solid MHA non-causal, dashed causal). The plot needs matplotlib.

A row whose spread (the largest among its methods) is above --max-spread (default 10 %) is marked "noisy": its
repetitions disagree by more than the differences its ratios would show, so it cannot be compared. A peer that
bench_attention.py reports as failed at a shape (a refused shape, a failed compile, an unfused fallback) shows as
"failed" in its cell, with the reason listed under the table.

With --check, also judges the CSV against the performance bars of docs/performance.md: prints one line per bar
with its worst shape, PASS or FAIL, and exits 1 when a bar fails or has no data to judge; then one NOISY line per
noisy row (information: the bars are judged on the medians all the same).
"""
import argparse
import collections
import csv
import re
import statistics
import sys

PEERS = ("fa2", "cudnn", "flex")
MAX_SPREAD = 0.10  # a row whose repetitions spread more than this is marked noisy
NAMES = {"fa2": "FA2", "cudnn": "cuDNN", "flex": "Flex", "tilec": "tilec", "tilec-fp32": "tilec fp32",
         "tilec-split": "tilec split", "tilec-native": "tilec native", "tilec-deterministic": "tilec det."}


def load(path):
    rows, header = [], None
    with open(path) as f:
        lines = [line for line in f if not line.startswith("#")]
    for r in csv.DictReader(lines):
        rows.append(r)
    with open(path) as f:
        header = f.readline().strip("# \n")
    return rows, header


def summarize(rows):
    """{(method, pass, key...): (median ms, spread, tflops at median, n)}"""
    groups = collections.defaultdict(list)
    for r in rows:
        if r["ms"] in ("n/a", ""):
            continue
        key = (r["method"], r["pass"], int(r["batch"]), int(r["seq"]), int(r["heads"]), int(r["groups"]),
               int(r["dim"]), int(r["causal"]))
        groups[key].append((float(r["ms"]), float(r["tflops"])))
    out = {}
    for key, vals in groups.items():
        ms = [v[0] for v in vals]
        med = statistics.median(ms)
        flops_per_ms = statistics.median(v[0] * v[1] for v in vals)  # constant per shape
        out[key] = (med, (max(ms) - min(ms)) / med if med else 0.0, flops_per_ms / med, len(ms))
    return out


def failures(rows):
    """{(method, pass, batch, seq, heads, groups, dim, causal): note} for the rows bench_attention.py wrote without
    a time because the method failed at that shape (note "failed: ..."; older CSVs: any note on an untimed
    attention row)."""
    out = {}
    for r in rows:
        if r["ms"] not in ("n/a", "") or r["pass"] not in ("fwd", "bwd"):
            continue
        note = (r.get("note") or "").strip()
        if note:
            key = (r["method"], r["pass"], int(r["batch"]), int(r["seq"]), int(r["heads"]), int(r["groups"]),
                   int(r["dim"]), int(r["causal"]))
            out[key] = note.removeprefix("failed: ")
    return out


def spread_cell(spread, max_spread):
    if spread is None:
        return "—"
    return f"{100 * spread:.1f} %" + (" (noisy)" if spread > max_spread else "")


def attention_spreads(s):
    """{shape: the largest spread among the shape's methods}"""
    out = {}
    for k, v in s.items():
        if k[1] in ("fwd", "bwd"):
            out[k[2:]] = max(out.get(k[2:], 0.0), v[1])
    return out


def fmt(x, spec=".1f"):
    return "—" if x is None else format(x, spec)


def attention_table(s, failed=None, max_spread=MAX_SPREAD):
    failed = failed or {}
    spreads = attention_spreads(s)
    shapes = sorted({k[2:] for k in s if k[1] in ("fwd", "bwd")}, key=lambda k: (k[4], k[5], k[1], k[3]))
    methods_bwd = sorted({k[0] for k in s if k[1] == "bwd" and k[0].startswith("tilec")})
    lines = []
    head = ["d", "seq", "B×H", "causal", "GQA", "tilec fwd", "FA2 fwd", "cuDNN fwd", "Flex fwd", "fwd/FA2"]
    head += [NAMES.get(m, m) + " bwd" for m in methods_bwd] + ["FA2 bwd", "cuDNN bwd", "Flex bwd"]
    head += ["bwd/FA2", "bwd/cuDNN", "split/fp32 time", "spread"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for (b, seq, h, g, d, c) in shapes:
        def tf(method, pas):
            v = s.get((method, pas, b, seq, h, g, d, c))
            return v[2] if v else None

        def ms(method, pas):
            v = s.get((method, pas, b, seq, h, g, d, c))
            return v[0] if v else None

        def cell(method, pas):
            t = tf(method, pas)
            return "failed" if t is None and (method, pas, b, seq, h, g, d, c) in failed else fmt(t)
        row = [str(d), str(seq), f"{b}×{h}", "yes" if c else "no", str(g)]
        row += [cell("tilec", "fwd"), cell("fa2", "fwd"), cell("cudnn", "fwd"), cell("flex", "fwd")]
        row.append(fmt(tf("tilec", "fwd") / tf("fa2", "fwd") if tf("tilec", "fwd") and tf("fa2", "fwd") else None,
                       ".2f"))
        row += [cell(m, "bwd") for m in methods_bwd]
        row += [cell("fa2", "bwd"), cell("cudnn", "bwd"), cell("flex", "bwd")]
        main = "tilec-fp32" if "tilec-fp32" in methods_bwd else (methods_bwd[0] if methods_bwd else None)
        t = tf(main, "bwd") if main else None
        row.append(fmt(t / tf("fa2", "bwd") if t and tf("fa2", "bwd") else None, ".2f"))
        row.append(fmt(t / tf("cudnn", "bwd") if t and tf("cudnn", "bwd") else None, ".2f"))
        sp, fp = ms("tilec-split", "bwd"), ms("tilec-fp32", "bwd")
        row.append(fmt(sp / fp if sp and fp else None, ".2f"))
        row.append(spread_cell(spreads.get((b, seq, h, g, d, c)), max_spread))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def failure_lines(failed):
    """One line per failed method and shape (both passes with the same reason in one line)."""
    merged = collections.defaultdict(list)
    for (method, pas, b, seq, h, g, d, c), note in failed.items():
        merged[(method, b, seq, h, g, d, c, note)].append(pas)
    lines = []
    for (method, b, seq, h, g, d, c, note), passes in sorted(merged.items()):
        lines.append(f"- {NAMES.get(method, method)} {'/'.join(sorted(passes, reverse=True))} at d={d} seq={seq} "
                     f"{'causal' if c else 'non-causal'} GQA {g}: {note}")
    return lines


def gemm_spreads(rows):
    """{(M, N, K): the larger spread of tilec's and torch.matmul's times over the repetitions}"""
    g = collections.defaultdict(list)
    for r in rows:
        if r["pass"] == "gemm" and r["method"] in ("tilec", "torch.matmul"):
            g[(r["method"], (int(r["batch"]), int(r["seq"]), int(r["heads"])))].append(float(r["ms"]))
    out = {}
    for (method, shape), v in g.items():
        med = statistics.median(v)
        out[shape] = max(out.get(shape, 0.0), (max(v) - min(v)) / med if med else 0.0)
    return out


def gemm_table(rows, max_spread=MAX_SPREAD):
    g = collections.defaultdict(list)
    errs = {}
    for r in rows:
        if r["pass"] != "gemm":
            continue
        shape = (int(r["batch"]), int(r["seq"]), int(r["heads"]))
        if r["method"] == "tilec-relerr":
            errs[shape] = r["note"].replace("relative error ", "")
            continue
        g[(r["method"], shape)].append((float(r["ms"]), float(r["tflops"])))
    if not g:
        return ""
    lines = ["| M×N×K | tilec ms | tilec TFLOP/s | torch.matmul ms | torch.matmul TFLOP/s | tilec / torch | "
             "tilec rel. error vs f32 | spread |", "|---|---|---|---|---|---|---|---|"]
    for shape in sorted({k[1] for k in g}):
        t, m = g.get(("tilec", shape)), g.get(("torch.matmul", shape))
        if not t or not m:
            continue
        tm, mm = statistics.median(x[0] for x in t), statistics.median(x[0] for x in m)
        flops = 2.0 * shape[0] * shape[1] * shape[2]
        spread = max((max(x[0] for x in v) - min(x[0] for x in v)) / statistics.median(x[0] for x in v)
                     for v in (t, m))
        lines.append(f"| {shape[0]}×{shape[1]}×{shape[2]} | {tm:.3f} | {flops / tm / 1e9:.1f} | {mm:.3f} | "
                     f"{flops / mm / 1e9:.1f} | {mm / tm:.2f} | {errs.get(shape, '—')} | "
                     f"{spread_cell(spread, max_spread)} |")
    return "\n".join(lines)


STANDARD_SEQS = (1000, 1024, 2048, 4096, 8192)


def check(s, rows):
    """The bars, each judged on the medians over repetitions: [(bar, verdict, worst shape)]; verdict is PASS, FAIL
    or NO DATA."""
    def ratio(num, den, key):
        a, b = s.get((num,) + key), s.get((den,) + key)
        return a[2] / b[2] if a and b else None  # TFLOP/s ratio (same flops: time ratio inverted)

    def judge(name, items, bound, higher_is_better=True):
        items = [(v, k) for v, k in items if v is not None]
        if not items:
            return (name, "NO DATA", "")
        worst = min(items) if higher_is_better else max(items)
        ok = worst[0] >= bound if higher_is_better else worst[0] <= bound
        b, seq, h, g, d, c = worst[1]
        where = f"worst {worst[0]:.3f} at d={d} seq={seq} {'causal' if c else 'non-causal'} GQA {g} ({len(items)} shapes)"
        return (name, "PASS" if ok else "FAIL", where)

    shapes = sorted({k[2:] for k in s if k[1] == "bwd" and k[0] == "tilec-fp32" and k[3] in STANDARD_SEQS})
    bwd = {k: ratio("tilec-fp32", "fa2", ("bwd",) + k) for k in shapes}
    d128_long = [k for k in shapes if k[4] == 128 and k[5] == 0 and k[1] >= 2048]
    others = [k for k in shapes if k not in d128_long]
    fwd_shapes = sorted({k[2:] for k in s if k[1] == "fwd" and k[0] == "tilec" and k[6] == 128 and k[3] >= 2048})
    split_shapes = sorted({k[2:] for k in s if k[1] == "bwd" and k[0] == "tilec-split" and k[3] in STANDARD_SEQS})

    def time_ratio(key):
        a, b = s.get(("tilec-split", "bwd") + key), s.get(("tilec-fp32", "bwd") + key)
        return a[0] / b[0] if a and b else None

    out = [
        judge("backward fp32 / FA2 >= 1.0, d=128 non-causal seq >= 2k", [(bwd[k], k) for k in d128_long], 1.0),
        judge("backward fp32 / FA2 >= 0.9, every other shape", [(bwd[k], k) for k in others], 0.9),
        judge("forward / FA2 >= 1.0, d=128 seq >= 2k",
              [(ratio("tilec", "fa2", ("fwd",) + k), k) for k in fwd_shapes], 1.0),
        judge("split time / fp32 time <= 1.10", [(time_ratio(k), k) for k in split_shapes], 1.10, False),
    ]
    gemm = collections.defaultdict(list)
    for r in rows:
        if r["pass"] == "gemm" and r["method"] in ("tilec", "torch.matmul"):
            gemm[(r["method"], (int(r["batch"]), int(r["seq"]), int(r["heads"])))].append(float(r["ms"]))
    for n in (4096, 8192):
        t, m = gemm.get(("tilec", (n, n, n))), gemm.get(("torch.matmul", (n, n, n)))
        name = f"GEMM {n}^3 / torch.matmul >= 0.6"
        if not t or not m:
            out.append((name, "NO DATA", ""))
            continue
        r = statistics.median(m) / statistics.median(t)
        out.append((name, "PASS" if r >= 0.6 else "FAIL", f"{r:.3f}"))
    return out


def noisy(s, rows, max_spread=MAX_SPREAD):
    """Lines naming every row whose spread is above max_spread (attention shapes, then GEMM shapes)."""
    out = []
    for (b, seq, h, g, d, c), sp in sorted(attention_spreads(s).items(), key=lambda kv: (kv[0][4], kv[0][5],
                                                                                         kv[0][3], kv[0][1])):
        if sp > max_spread:
            out.append(f"attention d={d} seq={seq} {'causal' if c else 'non-causal'} GQA {g}: spread "
                       f"{100 * sp:.1f} %")
    for (m, n, k), sp in sorted(gemm_spreads(rows).items()):
        if sp > max_spread:
            out.append(f"GEMM {m}x{n}x{k}: spread {100 * sp:.1f} %")
    return out


def plot(s, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, 2, figsize=(12, 8), sharex=True)
    colors = {"tilec": "C0", "tilec-fp32": "C0", "tilec-split": "C4", "fa2": "C1", "cudnn": "C2", "flex": "C3"}
    for col, d in enumerate((64, 128)):
        for row, pas in enumerate(("fwd", "bwd")):
            ax = axes[row][col]
            for method in sorted({k[0] for k in s if k[1] == pas}):
                for causal, style in ((0, "-"), (1, "--")):
                    pts = sorted((k[3], v[2]) for k, v in s.items()
                                 if k[0] == method and k[1] == pas and k[6] == d and k[7] == causal and k[5] == 1)
                    if pts:
                        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", ms=3,
                                color=colors.get(method), label=f"{NAMES.get(method, method)}"
                                + (" causal" if causal else ""))
            ax.set_title(f"{pas}, d={d} (MHA, 16k tokens)")
            ax.set_xscale("log", base=2)
            ax.set_ylabel("TFLOP/s")
            ax.grid(alpha=0.3)
            if row == 1:
                ax.set_xlabel("seq")
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("csv")
    p.add_argument("--doc")
    p.add_argument("--plot")
    p.add_argument("--check", action="store_true", help="judge the CSV against the performance bars")
    p.add_argument("--max-spread", type=float, default=MAX_SPREAD, help="rows whose spread over the repetitions "
                   "is above this fraction are marked noisy (default 0.10)")
    args = p.parse_args()
    if args.plot:
        # Before anything is written: a missing matplotlib must not leave the page rewritten and the plot stale.
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            sys.exit("report: --plot needs matplotlib (pip install matplotlib, or python3-matplotlib on Debian); "
                     "nothing written")
    rows, header = load(args.csv)
    s = summarize(rows)
    failed = failures(rows)
    reps = max((v[3] for v in s.values()), default=0)
    text = (f"Machine and versions: {header}. Each figure: the median over {reps} repetitions of the median of 20 "
            "timed calls; spread: the largest (max - min) / median over the repetitions among the shape's "
            f"methods, marked noisy above {100 * args.max_spread:.0f} % (too unsteady to compare). TFLOP/s: "
            "forward 4·B·H·S²·d (halved when causal), backward 2.5× that.\n\n"
            + attention_table(s, failed, args.max_spread) + "\n")
    if failed:
        text += "\nFailed (no time reported):\n\n" + "\n".join(failure_lines(failed)) + "\n"
    gt = gemm_table(rows, args.max_spread)
    if gt:
        text += "\nGEMM (bf16 inputs, f32 accumulation; tilec writes f32, torch.matmul bf16):\n\n" + gt + "\n"
    if args.doc:
        doc = open(args.doc).read()
        pat = re.compile(r"(<!-- bench-attention:begin -->\n).*?(<!-- bench-attention:end -->)", re.S)
        if not pat.search(doc):
            sys.exit(f"report: {args.doc} has no <!-- bench-attention:begin --> ... end markers")
        open(args.doc, "w").write(pat.sub(lambda m: m.group(1) + text + m.group(2), doc))
    else:
        print(text)
    if args.plot:
        plot(s, args.plot)
    if args.check:
        verdicts = check(s, rows)
        for name, verdict, where in verdicts:
            print(f"{verdict:8s} {name}" + (f": {where}" if where else ""))
        for line in noisy(s, rows, args.max_spread):
            print(f"{'NOISY':8s} {line}")
        return 0 if all(v == "PASS" for _, v, _ in verdicts) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
