#!/usr/bin/env python3
"""tilec's flash attention and gemm beside their peers, in one process, on the same inputs.

Attention (forward and backward, bf16): tilec's kernels/flash_attention/*.tile through the Python package (each
atomics strategy asked for), PyTorch's scaled_dot_product_attention with its FlashAttention-2 and cuDNN backends,
and FlexAttention (torch.compile'd: Triton). Shapes: 16k tokens, hidden 2048 (32 heads at d 64, 16 at d 128), seq
1024-8192 and 1000 (a tail), causal and not, MHA and GQA groups 4.
GEMM (bf16 in, f32 accumulate): kernels/examples/gemm.tile's gemm_nn against torch.matmul (bf16 out), 4096^3,
8192^3 and 4000^3.

Method: CUDA events around each call, with the GPU kept busy by a sleep kernel while the call is enqueued (so host
overhead is not timed for any method); 5 warm-ups, median of 20 per (method, shape); a shape's methods are timed
interleaved (call i of every method, then call i + 1), so they share the GPU's clock and thermal drift; the whole
sweep repeats --reps times, each repetition a row of the CSV (report.py takes the median over them and flags shapes
whose repetitions spread too far apart to compare).
Inputs: random normal, several times the 50 MB L2 together. tilec works in (batch, seq, heads, dim), SDPA in
(batch, heads, seq, dim): the same values, transposed once, outside the timing. The backward times what a caller
runs: tilec's preprocess (delta), zeroing dQ/dK/dV (the kernels accumulate) and the attn_bwd entry; the peers'
out.backward on a retained forward.
FLOPs: forward 4·B·Hq·S²·d (halved when causal), backward 2.5x forward; gemm 2·M·N·K.

A peer is reported only for what it really ran. FlexAttention gets its own compiled function per shape
(torch.compile(dynamic=False, fullgraph=True), kept across repetitions), with Dynamo's recompile limit raised to hold
every shape and set to fail instead of falling back to eager (unfused) code, and AOTAutograd's donated buffers off
(the benchmark calls backward repeatedly on one retained forward graph, which donated buffers forbid). A shape whose
compile fails, compiles no graph or breaks its graph, or whose timed FlexAttention call takes more than
--flex-max-slowdown times FlashAttention-2's time at the same shape and pass (an unfused fallback runs 10-50x
slower), gets "failed: ..." rows (no time) in the CSV, which report.py shows as failed. A backend that refuses a
shape is reported the same way.

Usage (GPU machine, repo root, after scripts/gpu-bundle.sh):
  TILEC_EXECUTABLE=bundle/bin/tilec TILEC_C_LIBRARY=bundle/bin/libtilec_c.so TILEC_KERNELS_DIR=bundle/kernels \\
    PYTHONPATH=python python3 tools/bench-attention/bench_attention.py --out results.csv
Then, anywhere: python3 tools/bench-attention/report.py results.csv (table + plot for docs/performance.md).
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import tilec

SDPA = {"fa2": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}


def attention_shapes(seqs):
    tokens, hidden = 16384, 2048
    for dim in (64, 128):
        heads = hidden // dim
        for seq in seqs:
            for causal in (False, True):
                for groups in (1, 4):
                    yield max(1, tokens // seq), seq, heads, groups, dim, causal


def timed(run, warmup=5, reps=20):
    """Median seconds of `run` over `reps` calls (see timed_interleaved)."""
    return timed_interleaved([run], warmup, reps)[0]


def timed_interleaved(runs, warmup=5, reps=20):
    """Median seconds of each of `runs` over `reps` calls, CUDA events around each call. The calls are interleaved
    (round i times every run once, in order) so that all methods of a shape sample the same stretch of the GPU's
    clock and thermal drift: back-to-back blocks of 20 calls per method made the tilec/peer ratios move by up to
    10 % between repetitions on an H100, more than the effects measured. A sleep kernel keeps the GPU
    busy while each call is enqueued, so host-side launch overhead does not show up as GPU time."""
    for run in runs:
        for _ in range(warmup):
            run()
    torch.cuda.synchronize()
    times = [[] for _ in runs]
    for _ in range(reps):
        for run, t in zip(runs, times):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(200_000)  # ~0.1 ms at 2 GHz: longer than any host-side enqueue here
            start.record()
            run()
            end.record()
            torch.cuda.synchronize()
            t.append(start.elapsed_time(end) * 1e-3)
    return [statistics.median(t) for t in times]


_tilec_modules = {}


def tilec_attention(dim, groups, causal, atomics, defines):
    """Compiled once per configuration (the shapes are run-time dims)."""
    key = (dim, groups, causal, atomics, tuple(sorted(defines.items())))
    if key not in _tilec_modules:
        _tilec_modules[key] = TilecAttention(dim, groups, causal, atomics, defines)
    return _tilec_modules[key]


class TilecAttention:
    def __init__(self, dim, groups, causal, atomics, defines):
        kdir = os.environ.get("TILEC_KERNELS_DIR", "kernels") + "/flash_attention/"
        opts = dict(dim=dim, groups=groups, causal=causal, **defines)
        self.fwd = tilec.compile(kdir + "fwd.tile", **opts)
        self.pre = tilec.compile(kdir + "bwd_preprocess.tile", dim=dim)
        if atomics == "deterministic":
            self.bwd = tilec.compile(kdir + "bwd.tile", deterministic=True, **opts)
        else:
            self.bwd = tilec.compile(kdir + "bwd.tile", atomics=atomics, **opts)


def bench_attention(batch, seq, heads, groups, dim, causal, strategies, peers, defines, flex, flex_max_slowdown):
    dev = torch.device("cuda")
    kv = heads // groups
    gen = torch.Generator(device=dev).manual_seed(1234 + seq + dim)
    q = torch.randn(batch, heads, seq, dim, device=dev, dtype=torch.bfloat16, generator=gen)
    k = torch.randn(batch, kv, seq, dim, device=dev, dtype=torch.bfloat16, generator=gen)
    v = torch.randn(batch, kv, seq, dim, device=dev, dtype=torch.bfloat16, generator=gen)
    do = torch.randn(batch, heads, seq, dim, device=dev, dtype=torch.bfloat16, generator=gen)
    flops = 4.0 * batch * heads * seq * seq * dim * (0.5 if causal else 1.0)
    rows = []     # (method, pass, seconds or None, note) in the order measured
    runs = []     # (index into rows, the call), timed together once every method is set up

    # tilec: (batch, seq, heads, dim)
    Q, K, V, dO = (t.transpose(1, 2).contiguous() for t in (q, k, v, do))
    O = torch.empty_like(Q)
    lse = torch.empty(batch, heads, seq, device=dev, dtype=torch.float32)
    delta = torch.empty_like(lse)
    dQ, dK, dV = torch.empty_like(Q), torch.empty_like(K), torch.empty_like(V)

    def measure(method, pas, run):
        runs.append((len(rows), run))
        rows.append((method, pas, None, ""))

    def failed(method, note, passes=("fwd", "bwd")):
        for pas in passes:
            rows.append((method, pas, None, "failed: " + note))

    def tilec_backward(m):
        def backward():
            m.pre.attn_bwd_preprocess(O, dO, delta)
            dQ.zero_(), dK.zero_(), dV.zero_()
            m.bwd.attn_bwd(Q, K, V, dO, lse, delta, dQ, dK, dV)
        return backward
    for atomics in strategies:
        try:
            m = tilec_attention(dim, groups, causal, atomics, defines)
        except tilec.CompileError as e:  # e.g. --deterministic where dQ cannot be split
            failed(f"tilec-{atomics}", str(e).splitlines()[0][:100], ("bwd",))
            continue
        if atomics == strategies[0]:
            measure("tilec", "fwd", lambda m=m: m.fwd.attn_fwd(Q, K, V, O, lse))
        m.fwd.attn_fwd(Q, K, V, O, lse)  # O and lse for the backward (the timed forward rewrites the same values)
        measure(f"tilec-{atomics}", "bwd", tilec_backward(m))

    # peers: (batch, heads, seq, dim); each keeps its own forward graph for its backward.
    qg, kg, vg = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
    for name in peers:
        try:
            if name == "flex":
                if flex is None:
                    continue
                fn, watch = flex.for_shape(batch, seq, heads, groups, dim, causal)
                out = fn(qg, kg, vg)

                def forward(fn=fn):
                    with torch.no_grad():
                        fn(qg, kg, vg)
            else:
                watch = None
                with sdpa_kernel([SDPA[name]]):
                    out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal, enable_gqa=groups > 1)

                def forward(name=name):
                    with sdpa_kernel([SDPA[name]]), torch.no_grad():
                        F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal, enable_gqa=groups > 1)
            forward()  # a backend that refuses the shape refuses here or in backward(), before anything is timed

            def backward(out=out, name=name):
                qg.grad = kg.grad = vg.grad = None
                with sdpa_kernel([SDPA.get(name, SDPBackend.FLASH_ATTENTION)]):
                    out.backward(do, retain_graph=True)
            backward()
            if watch is not None:
                problem = watch()  # the shape's first calls compiled what they should have, without graph breaks
                if problem:
                    failed(name, problem)
                    continue
            measure(name, "fwd", forward)
            measure(name, "bwd", backward)
        except Exception as e:  # a backend may refuse a shape; a compile may fail (recompile limit, ...)
            failed(name, f"{type(e).__name__}: {str(e)[:80]}")
    for (i, _), sec in zip(runs, timed_interleaved([run for _, run in runs])):
        rows[i] = rows[i][:2] + (sec, rows[i][3])
    rows = flex_sanity(rows, flex_max_slowdown)
    qg.grad = kg.grad = vg.grad = None
    torch.cuda.empty_cache()
    out_rows = []
    for method, pas, s, note in rows:
        f = flops * (2.5 if pas == "bwd" else 1.0)
        out_rows.append((method, pas, batch, seq, heads, groups, dim, int(causal), s, f, note))
    return out_rows


def flex_sanity(rows, max_slowdown):
    """FlexAttention's timed rows, replaced by failures where a pass took more than max_slowdown times
    FlashAttention-2's time at the same shape (cuDNN's where FA2 did not run): the sign of a call that ran unfused
    code after all (an eager fallback is 10-50x slower, a compiled FlexAttention within about 1.5x of FA2)."""
    times = {(m, p): sec for m, p, sec, _ in rows if sec}
    slow = []
    for pas in ("fwd", "bwd"):
        flex_s = times.get(("flex", pas))
        ref = times.get(("fa2", pas)) or times.get(("cudnn", pas))
        if flex_s and ref and flex_s > max_slowdown * ref:
            slow.append(f"{pas} {flex_s / ref:.1f}x the SDPA reference's time (> {max_slowdown:g}x: unfused fallback?)")
    if not slow:
        return rows
    note = "failed: " + "; ".join(slow)
    return [(m, p, None, note) if m == "flex" else (m, p, sec, n) for m, p, sec, n in rows]


class FlexPeer:
    """FlexAttention, one compiled function per attention shape.

    torch.compile caches compiled graphs on flex_attention's code object, whatever the wrapper, and falls back to
    running the function uncompiled (eager: unfused, 10-50x slower) once a code object holds Dynamo's recompile
    limit of graphs (8 by default): one torch.compile serving every shape silently timed unfused code after the
    eighth. So: the limits are raised to hold every shape this run compiles (two graphs a shape: with and without
    grad), hitting them raises instead of falling back, each shape gets its own torch.compile(dynamic=False,
    fullgraph=True) (no dynamic-shape graph shared between shapes; a graph break raises), and for_shape returns a
    check that the shape's first calls compiled at least one new graph and broke none."""

    def __init__(self, flex_attention, create_block_mask, shapes):
        self.flex_attention, self.create_block_mask = flex_attention, create_block_mask
        self.compiled, self.masks = {}, {}
        configure_dynamo(2 * shapes + 8)

    def for_shape(self, batch, seq, heads, groups, dim, causal):
        """(fn(q, k, v), watch): watch() after the shape's first forward and backward returns a failure note or None."""
        from torch._dynamo.utils import counters
        key = (batch, seq, heads, groups, dim, causal)
        first = key not in self.compiled
        if first:
            self.compiled[key] = torch.compile(self.flex_attention, dynamic=False, fullgraph=True)
        compiled = self.compiled[key]
        if causal and seq not in self.masks:
            self.masks[seq] = self.create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, seq, seq,
                                                     device="cuda")
        mask = self.masks[seq] if causal else None

        def fn(q, k, v):
            return compiled(q, k, v, block_mask=mask, enable_gqa=groups > 1)
        graphs_before = counters["stats"]["unique_graphs"]
        breaks_before = sum(counters["graph_break"].values())

        def watch():
            if sum(counters["graph_break"].values()) != breaks_before:
                return "graph break in the compiled FlexAttention"
            if first and counters["stats"]["unique_graphs"] == graphs_before:
                return "no graph compiled for this shape (eager fallback?)"
            return None
        return fn, watch


def configure_dynamo(limit):
    """Dynamo and AOTAutograd settings for FlexPeer (names of torch 2.4-2.11; the older spelling where the newer is
    missing)."""
    import torch._dynamo
    cfg = torch._dynamo.config

    def set_first(names, value):
        for name in names:
            if hasattr(cfg, name):
                setattr(cfg, name, value(getattr(cfg, name)))
                return name
        return None
    set_first(("recompile_limit", "cache_size_limit"), lambda old: max(int(old), limit))
    set_first(("accumulated_recompile_limit", "accumulated_cache_size_limit"), lambda old: max(int(old), 4 * limit))
    cfg.suppress_errors = False  # Dynamo refuses fail_on_recompile_limit_hit together with suppress_errors
    if set_first(("fail_on_recompile_limit_hit", "fail_on_cache_limit_hit"), lambda old: True) is None:
        print("bench_attention: this torch cannot fail on Dynamo's recompile limit; relying on the graph count and "
              "the slowdown check", file=sys.stderr)
    import torch._functorch.config as functorch_config
    if hasattr(functorch_config, "donated_buffer"):
        # backward() runs many times on one retained graph; a graph compiled with donated buffers refuses that
        # ("compiled with non-empty donated buffers which requires ... retain_graph=False").
        functorch_config.donated_buffer = False


def make_flex(shapes):
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    except ImportError:
        return None
    return FlexPeer(flex_attention, create_block_mask, shapes)


def bench_gemm(shapes, defines):
    rows = []
    kdir = os.environ.get("TILEC_KERNELS_DIR", "kernels")
    mod = tilec.compile(kdir + "/examples/gemm.tile", kernel="gemm_nn", **defines)
    for m, n, k in shapes:
        gen = torch.Generator(device="cuda").manual_seed(m + n + k)
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=gen)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16, generator=gen)
        c = torch.empty(m, n, device="cuda", dtype=torch.float32)
        flops = 2.0 * m * n * k
        tilec_s, torch_s = timed_interleaved([lambda: mod.gemm_nn(a, b, c), lambda: torch.matmul(a, b)])
        rows.append(("tilec", "gemm", m, n, k, tilec_s, flops))
        rows.append(("torch.matmul", "gemm", m, n, k, torch_s, flops))
        ref = (a.float() @ b.float())
        err = ((c - ref).norm() / ref.norm()).item()
        rows.append(("tilec-relerr", "gemm", m, n, k, err, 0.0))
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True, help="CSV to write (one row per method, pass, shape and repetition)")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="seq 4096 only (same as --seqs 4096)")
    p.add_argument("--seqs", default="1000,1024,2048,4096,8192", help="sequence lengths of the attention shapes")
    p.add_argument("--strategies", default="fp32,split", help="tilec atomics strategies (fp32, split, native, "
                   "deterministic)")
    p.add_argument("--peers", default="fa2,cudnn,flex")
    p.add_argument("--flex-seqs", default="1024,2048,4096,8192", help="seqs at which FlexAttention runs (MHA "
                   "shapes; each shape is its own torch.compile)")
    p.add_argument("--flex-max-slowdown", type=float, default=3.0, help="FlexAttention taking more than this many "
                   "times FlashAttention-2's time at a shape is reported as failed (an unfused fallback)")
    p.add_argument("--no-attention", action="store_true")
    p.add_argument("--no-gemm", action="store_true")
    p.add_argument("-D", action="append", default=[], help="override a constant of the flash-attention kernels: "
                   "name=value")
    p.add_argument("--gemm-D", action="append", default=[], help="override a constant of gemm.tile: name=value")
    args = p.parse_args()

    def parse(items):
        out = {}
        for d in items:
            name, value = d.split("=", 1)
            out[name] = int(value) if value.lstrip("-").isdigit() else value
        return out
    defines, gemm_defines = parse(args.D), parse(args.gemm_D)
    strategies = args.strategies.split(",")
    seqs = (4096,) if args.quick else tuple(int(x) for x in args.seqs.split(",") if x)
    peers = [x for x in args.peers.split(",") if x]
    flex_seqs = {int(s) for s in args.flex_seqs.split(",") if s}

    def peers_of(shape):  # FlexAttention compiles per shape: MHA at --flex-seqs only
        return [x for x in peers if x != "flex" or (shape[1] in flex_seqs and shape[3] == 1)]
    shapes = [] if args.no_attention else list(attention_shapes(seqs))
    flex = None
    if "flex" in peers:
        flex = make_flex(sum("flex" in peers_of(shape) for shape in shapes))
    props = torch.cuda.get_device_properties(0)
    with open(args.out, "w") as f:
        f.write(f"# {props.name}, torch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN "
                f"{torch.backends.cudnn.version()}, {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        f.write("rep,method,pass,batch,seq,heads,groups,dim,causal,ms,tflops,note\n")
        for rep in range(1, args.reps + 1):
            for shape in shapes:
                for (method, pas, b, s, h, g, d, c, sec, flops, note) in bench_attention(
                        *shape, strategies, peers_of(shape), defines, flex, args.flex_max_slowdown):
                    ms = f"{sec * 1e3:.4f}" if sec else "n/a"
                    tf = f"{flops / sec / 1e12:.1f}" if sec else "n/a"
                    line = f"{rep},{method},{pas},{b},{s},{h},{g},{d},{c},{ms},{tf},{note.replace(',', ';')}"
                    print(line, flush=True)
                    f.write(line + "\n")
            if not args.no_gemm:
                for (method, pas, m, n, k, value, flops) in bench_gemm(
                        [(4096, 4096, 4096), (8192, 8192, 8192), (4000, 4000, 4000)], gemm_defines):
                    if method == "tilec-relerr":
                        line = f"{rep},{method},{pas},{m},{n},{k},0,0,0,n/a,n/a,relative error {value:.3e}"
                    else:
                        line = f"{rep},{method},{pas},{m},{n},{k},0,0,0,{value * 1e3:.4f},{flops / value / 1e12:.1f},"
                    print(line, flush=True)
                    f.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
