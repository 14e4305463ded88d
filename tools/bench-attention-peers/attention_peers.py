#!/usr/bin/env python3
"""Flash-attention backward of the peers tilec measures itself against.

Times the backward pass of torch.nn.functional.scaled_dot_product_attention
with its FlashAttention-2 and cuDNN backends on the benchmark's standard shapes
(16k tokens, hidden 2048: 32 heads at d=64 or 16 heads at d=128;
seq 1k-8k; causal and not; MHA and GQA). Method: CUDA events around each
backward call, 5 warm-up calls, median of 30; inputs are several times the L2
cache; each timed call recomputes the graph's backward from a retained forward
(retain_graph=True) so only the backward kernels are timed.
FLOPs: forward 4*B*Hq*S^2*d (half if causal), backward 2.5x forward.

Usage: python3 tools/bench-attention-peers/attention_peers.py [--out results.csv]
"""
import argparse
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"fa2": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}


def shapes():
    tokens, hidden = 16384, 2048
    for dim in (64, 128):
        heads = hidden // dim
        for seq in (1024, 2048, 4096, 8192):
            for causal in (False, True):
                for groups in (1, 4):
                    yield tokens // seq, seq, heads, groups, dim, causal


def time_backward(backend, batch, seq, heads, groups, dim, causal, warmup=5, reps=30):
    dev = torch.device("cuda")
    kv_heads = heads // groups
    # [B, H, S, D] as SDPA expects; K/V carry heads/groups heads for GQA.
    q = torch.randn(batch, heads, seq, dim, device=dev, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(batch, kv_heads, seq, dim, device=dev, dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(batch, kv_heads, seq, dim, device=dev, dtype=torch.bfloat16, requires_grad=True)
    grad = torch.randn(batch, heads, seq, dim, device=dev, dtype=torch.bfloat16)
    with sdpa_kernel([BACKENDS[backend]]):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=groups > 1)
        times = []
        for i in range(warmup + reps):
            q.grad = k.grad = v.grad = None
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            out.backward(grad, retain_graph=True)
            end.record()
            torch.cuda.synchronize()
            if i >= warmup:
                times.append(start.elapsed_time(end) * 1e-3)
    seconds = statistics.median(times)
    flops = 2.5 * 4 * batch * heads * seq * seq * dim * (0.5 if causal else 1.0)
    return seconds, flops / seconds / 1e12


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    props = torch.cuda.get_device_properties(0)
    print(f"# {props.name}, torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"cuDNN {torch.backends.cudnn.version()}")
    header = "backend,batch,seq,heads,groups,dim,causal,ms,tflops"
    print(header)
    rows = [header]
    for shape in shapes():
        for backend in BACKENDS:
            try:
                seconds, tflops = time_backward(backend, *shape)
                row = f"{backend},{','.join(str(int(x)) for x in shape)},{seconds * 1e3:.3f},{tflops:.1f}"
            except Exception as e:  # a backend may not support a shape (e.g. GQA)
                row = f"{backend},{','.join(str(int(x)) for x in shape)},n/a,n/a  # {type(e).__name__}: {str(e)[:80]}"
            print(row, flush=True)
            rows.append(row)
            torch.cuda.empty_cache()
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    sys.exit(main())
