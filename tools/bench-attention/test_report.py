"""report.py --check on synthetic benchmark CSVs: every bar passes on a CSV built to pass, and each bar fails on its
own when one shape is moved just past it (so a check that cannot fail would fail here)."""
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


def rows(scale=None):
    """Three repetitions of every method at every shape; scale[(method, pass, seq, groups, dim, causal)] multiplies
    that entry's time."""
    scale = scale or {}
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


def run_check(tmp_path, table):
    path = tmp_path / "bench.csv"
    buf = io.StringIO()
    buf.write("# synthetic, for test_report.py\n")
    w = csv.DictWriter(buf, fieldnames=FIELDS)
    w.writeheader()
    w.writerows(table)
    path.write_text(buf.getvalue())
    p = subprocess.run([sys.executable, REPORT, str(path), "--check"], capture_output=True, text=True)
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
