"""report.py on synthetic benchmark CSVs: every bar of --check passes on a CSV built to pass, and each bar fails on
its own when one shape is moved just past it (so a check that cannot fail would fail here); a row whose repetitions
spread too far is marked noisy, and a peer reported as failed shows as failed rather than as a time."""
import csv
import io
import os
import subprocess
import sys

import pytest

REPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "report.py")
FIELDS = ["rep", "method", "pass", "batch", "seq", "heads", "groups", "dim", "causal", "ms", "tflops", "note"]
SEQS = (1000, 1024, 2048, 4096, 8192)


def flops(seq, dim, causal, pas, batch=2, heads=8):
    f = 4.0 * batch * heads * seq * seq * dim * (0.5 if causal else 1.0)
    return f * (2.5 if pas == "bwd" else 1.0)


def rows(scale=None, rep_scale=None):
    """Three repetitions of every method at every shape; scale[(method, pass, seq, groups, dim, causal)] multiplies
    that entry's time, rep_scale[(rep, method, pass, seq, groups, dim, causal)] that entry's time in one repetition."""
    scale = scale or {}
    rep_scale = rep_scale or {}
    # Times relative to FA2's: comfortably inside every bar.
    speed = {("tilec", "fwd"): 1.1, ("fa2", "fwd"): 1.0, ("cudnn", "fwd"): 1.2, ("tilec-fp32", "bwd"): 1.1,
             ("tilec-split", "bwd"): 1.05, ("fa2", "bwd"): 1.0, ("cudnn", "bwd"): 1.5}
    out = []
    for rep in (1, 2, 3):
        for seq in SEQS:
            for groups in (1, 4):
                for dim in (64, 128):
                    for causal in (0, 1):
                        for (method, pas), sp in speed.items():
                            f = flops(seq, dim, causal, pas)
                            ms = f / (300e9 * sp) * scale.get((method, pas, seq, groups, dim, causal), 1.0)
                            ms *= rep_scale.get((rep, method, pas, seq, groups, dim, causal), 1.0)
                            out.append(dict(rep=rep, method=method, batch=2, seq=seq, heads=8, groups=groups,
                                            dim=dim, causal=causal, ms=f"{ms:.6f}", tflops=f"{f / ms / 1e9:.3f}",
                                            note="", **{"pass": pas}))
        for n in (4000, 4096, 8192):
            f = 2.0 * n ** 3
            for method, tf in (("tilec", 450.0), ("torch.matmul", 650.0)):
                ms = f / (tf * 1e9) * scale.get((method, "gemm", n), 1.0)
                out.append(dict(rep=rep, method=method, batch=n, seq=n, heads=n, groups=1, dim=0, causal=0,
                                ms=f"{ms:.6f}", tflops=f"{f / ms / 1e9:.3f}", note="", **{"pass": "gemm"}))
    return out


def run_report(tmp_path, table, *args):
    path = tmp_path / "bench.csv"
    buf = io.StringIO()
    buf.write("# synthetic, for test_report.py\n")
    w = csv.DictWriter(buf, fieldnames=FIELDS)
    w.writeheader()
    w.writerows(table)
    path.write_text(buf.getvalue())
    return subprocess.run([sys.executable, REPORT, str(path), *args], capture_output=True, text=True)


def run_check(tmp_path, table):
    p = run_report(tmp_path, table, "--check")
    verdicts = [line for line in p.stdout.splitlines() if line.startswith(("PASS", "FAIL", "NO DATA"))]
    return p.returncode, verdicts


def test_every_bar_passes(tmp_path):
    code, verdicts = run_check(tmp_path, rows())
    assert len(verdicts) == 6, verdicts
    assert all(v.startswith("PASS") for v in verdicts), verdicts
    assert code == 0


@pytest.mark.parametrize("scale,bar", [
    # 1.1x FA2 becomes 0.99x at one d=128 non-causal long shape (GQA 4).
    ({("tilec-fp32", "bwd", 4096, 4, 128, 0): 1.1 / 0.99}, "d=128 non-causal seq >= 2k"),
    # 1.1x FA2 becomes 0.89x at the tail shape, causal d=64.
    ({("tilec-fp32", "bwd", 1000, 1, 64, 1): 1.1 / 0.89}, "every other shape"),
    ({("tilec", "fwd", 2048, 1, 128, 1): 1.1 / 0.99}, "forward / FA2"),
    # split takes 1.1 / 1.05 = 1.048x fp32's time; 1.06x that is 1.11x.
    ({("tilec-split", "bwd", 1024, 4, 128, 0): 1.06}, "split time"),
    # 450 / 650 = 0.69x torch.matmul; 1.2x the time is 0.58x.
    ({("tilec", "gemm", 8192): 1.2}, "GEMM 8192"),
])
def test_each_bar_fails_on_its_own(tmp_path, scale, bar):
    code, verdicts = run_check(tmp_path, rows(scale))
    failing = [v for v in verdicts if not v.startswith("PASS")]
    assert len(failing) == 1 and bar in failing[0] and failing[0].startswith("FAIL"), verdicts
    assert code == 1


def test_missing_data_is_not_a_pass(tmp_path):
    table = [r for r in rows() if r["pass"] != "gemm"]
    code, verdicts = run_check(tmp_path, table)
    assert sum(v.startswith("NO DATA") for v in verdicts) == 2, verdicts
    assert code == 1


def table_rows(text, d, seq, causal, groups):
    """The attention table's rows for one shape (d | seq | B×H | causal | GQA | ...)."""
    start = f"| {d} | {seq} | "
    return [line for line in text.splitlines() if line.startswith(start)
            and line.split(" | ")[3] == ("yes" if causal else "no") and line.split(" | ")[4] == str(groups)]


def test_noisy_rows_are_flagged(tmp_path):
    # One repetition of FA2's backward 20 % slower at one shape: a 20 % spread there, none anywhere else.
    table = rows(rep_scale={(3, "fa2", "bwd", 2048, 4, 64, 1): 1.2})
    p = run_report(tmp_path, table)
    assert p.returncode == 0, p.stderr
    noisy = [line for line in p.stdout.splitlines() if "(noisy)" in line]
    assert noisy == table_rows(p.stdout, 64, 2048, True, 4), noisy
    assert "20.0 % (noisy)" in noisy[0]
    # --check names the row and judges the bars as before (they still pass: noisy is information, not a verdict).
    p = run_report(tmp_path, table, "--check")
    lines = [line for line in p.stdout.splitlines() if line.startswith("NOISY")]
    assert lines == ["NOISY    attention d=64 seq=2048 causal GQA 4: spread 20.0 %"], lines
    assert p.returncode == 0
    # A looser limit drops the mark; a GEMM row is flagged the same way.
    assert "(noisy)" not in run_report(tmp_path, table, "--max-spread", "0.25").stdout
    table = rows()
    for r in table:
        if r["rep"] == 2 and r["method"] == "torch.matmul" and r["seq"] == 4096:
            r["ms"] = f"{float(r['ms']) * 1.15:.6f}"
    p = run_report(tmp_path, table, "--check")
    assert [line for line in p.stdout.splitlines() if line.startswith("NOISY")] == \
        ["NOISY    GEMM 4096x4096x4096: spread 15.0 %"], p.stdout


def test_failed_peer_is_marked_not_timed(tmp_path):
    # FlexAttention ran at one shape (270 TFLOP/s) and failed at another (bench_attention.py writes no time there,
    # and a "failed: " note).
    table = rows()
    for rep in (1, 2, 3):
        for seq, note in ((4096, ""), (2048, "failed: fwd 12.0x the SDPA reference's time (> 3x: unfused fallback?)")):
            for pas in ("fwd", "bwd"):
                f = flops(seq, 64, 0, pas)
                ms = "n/a" if note else f"{f / 270e9:.6f}"
                tf = "n/a" if note else f"{f / (f / 270e9) / 1e9:.3f}"
                table.append(dict(rep=rep, method="flex", batch=2, seq=seq, heads=8, groups=1, dim=64, causal=0,
                                  ms=ms, tflops=tf, note=note, **{"pass": pas}))
    p = run_report(tmp_path, table)
    assert p.returncode == 0, p.stderr
    head = cells(next(line for line in p.stdout.splitlines() if line.startswith("| d |")))
    flex = [head.index("Flex fwd"), head.index("Flex bwd")]
    [ok] = table_rows(p.stdout, 64, 4096, False, 1)
    [bad] = table_rows(p.stdout, 64, 2048, False, 1)
    assert [cells(ok)[i] for i in flex] == ["270.0", "270.0"], ok
    assert [cells(bad)[i] for i in flex] == ["failed", "failed"], bad
    assert "failed" not in ok and bad.count("failed") == 2, bad
    assert "- Flex fwd/bwd at d=64 seq=2048 non-causal GQA 1: fwd 12.0x the SDPA reference's time" in p.stdout


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]
