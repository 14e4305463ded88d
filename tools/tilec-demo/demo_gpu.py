#!/usr/bin/env python3
"""tilec's flash-attention demo on the GPU (what scripts/demo.sh runs where there is one).

1. Correctness: kernels/flash_attention/*.tile (forward, backward preprocess, backward) through the tilec Python
   package, against attention computed in float64 by PyTorch on the same bf16 inputs: relative norm
   ||tilec - ref|| / ||ref|| for O, dQ, dK and dV, for d 64 and 128, causal and not, MHA and GQA groups 4, at
   seq 1000 (a tail: not a multiple of the 64-row blocks), each atomics strategy. Bound: 1e-2.
2. Speed: forward and backward TFLOP/s at the standard shapes (16k tokens, hidden 2048, seq 4096), each strategy:
   CUDA events, 5 warm-ups, median of 20 (tools/bench-attention/bench_attention.py has the method and the peers).

Needs torch with CUDA and the tilec executable and libtilec_c.so (TILEC_EXECUTABLE, TILEC_C_LIBRARY: demo.sh sets
them from a build or a GPU bundle). Exit status 1 when an error is above the bound.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench-attention"))
from bench_attention import tilec_attention, timed  # noqa: E402

BOUND = 1e-2
STRATEGIES = ("fp32", "split")


def reference(q, k, v, do, causal, groups):
    """O and the gradients in float64, (batch, heads, seq, dim)."""
    q, k, v = (t.double().requires_grad_(True) for t in (q, k, v))
    kk = k.repeat_interleave(groups, dim=1)
    vv = v.repeat_interleave(groups, dim=1)
    s = q @ kk.transpose(-1, -2) / q.shape[-1] ** 0.5
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    o = torch.softmax(s, dim=-1) @ vv
    o.backward(do.double())
    return o.detach(), q.grad, k.grad, v.grad


def run_tilec(m, q, k, v, do):
    """tilec's forward and backward on (batch, heads, seq, dim) tensors; returns O, dQ, dK, dV in that layout."""
    Q, K, V, dO = (t.transpose(1, 2).contiguous() for t in (q, k, v, do))
    batch, seq, heads, _ = Q.shape
    O = torch.empty_like(Q)
    lse = torch.empty(batch, heads, seq, device=q.device, dtype=torch.float32)
    delta = torch.empty_like(lse)
    dQ, dK, dV = torch.zeros_like(Q), torch.zeros_like(K), torch.zeros_like(V)
    m.fwd.attn_fwd(Q, K, V, O, lse)
    m.pre.attn_bwd_preprocess(O, dO, delta)
    m.bwd.attn_bwd(Q, K, V, dO, lse, delta, dQ, dK, dV)
    return tuple(t.transpose(1, 2) for t in (O, dQ, dK, dV))


def main():
    dev = torch.device("cuda")
    print(f"# tilec flash-attention demo on {torch.cuda.get_device_name(0)}")
    print("## errors against float64 (relative norm), batch 2, seq 1000, 8 query heads")
    print(f"{'dim':>4} {'groups':>6} {'causal':>6} {'atomics':>8} {'O':>9} {'dQ':>9} {'dK':>9} {'dV':>9}")
    worst = 0.0
    for dim in (64, 128):
        for groups in (1, 4):
            for causal in (False, True):
                gen = torch.Generator(device=dev).manual_seed(dim * 10 + groups + causal)
                b, h, s = 2, 8, 1000
                q = torch.randn(b, h, s, dim, device=dev, dtype=torch.bfloat16, generator=gen)
                k = torch.randn(b, h // groups, s, dim, device=dev, dtype=torch.bfloat16, generator=gen)
                v = torch.randn(b, h // groups, s, dim, device=dev, dtype=torch.bfloat16, generator=gen)
                do = torch.randn(b, h, s, dim, device=dev, dtype=torch.bfloat16, generator=gen)
                ref = reference(q, k, v, do, causal, groups)
                for atomics in STRATEGIES:
                    got = run_tilec(tilec_attention(dim, groups, causal, atomics, {}), q, k, v, do)
                    errs = [((g.double() - r).norm() / r.norm()).item() for g, r in zip(got, ref)]
                    errs = [e if e == e else float("inf") for e in errs]  # NaN never passes
                    worst = max(worst, *errs)
                    print(f"{dim:>4} {groups:>6} {str(causal).lower():>6} {atomics:>8} "
                          + " ".join(f"{e:9.2e}" for e in errs), flush=True)
    print()
    print("## speed, 16k tokens, hidden 2048, seq 4096 (median of 20, CUDA events)")
    print(f"{'dim':>4} {'causal':>6} {'pass':>4} {'atomics':>8} {'ms':>8} {'TFLOP/s':>8}")
    for dim in (64, 128):
        heads, seq = 2048 // dim, 4096
        batch = 16384 // seq
        for causal in (False, True):
            gen = torch.Generator(device=dev).manual_seed(7)
            Q, K, V, dO = (torch.randn(batch, seq, heads, dim, device=dev, dtype=torch.bfloat16, generator=gen)
                           for _ in range(4))
            O, dQ, dK, dV = (torch.empty_like(Q) for _ in range(4))
            lse = torch.empty(batch, heads, seq, device=dev, dtype=torch.float32)
            delta = torch.empty_like(lse)
            flops = 4.0 * batch * heads * seq * seq * dim * (0.5 if causal else 1.0)
            for i, atomics in enumerate(STRATEGIES):
                m = tilec_attention(dim, 1, causal, atomics, {})
                if i == 0:
                    t = timed(lambda: m.fwd.attn_fwd(Q, K, V, O, lse))
                    print(f"{dim:>4} {str(causal).lower():>6} {'fwd':>4} {'-':>8} {t * 1e3:8.3f} "
                          f"{flops / t / 1e12:8.1f}", flush=True)
                m.fwd.attn_fwd(Q, K, V, O, lse)

                def backward():
                    m.pre.attn_bwd_preprocess(O, dO, delta)
                    dQ.zero_(), dK.zero_(), dV.zero_()
                    m.bwd.attn_bwd(Q, K, V, dO, lse, delta, dQ, dK, dV)
                t = timed(backward)
                print(f"{dim:>4} {str(causal).lower():>6} {'bwd':>4} {atomics:>8} {t * 1e3:8.3f} "
                      f"{2.5 * flops / t / 1e12:8.1f}", flush=True)
    print()
    ok = worst <= BOUND
    print(f"largest error {worst:.2e} (bound {BOUND:g}): {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
